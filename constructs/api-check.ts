import type { ApiCheckInput } from '../src/schema/api-check.js'
import { Construct } from './construct.js'
import type { CheckProps } from './check.js'
import type { Snippet } from './snippet.js'

type Request = ApiCheckInput['request']

/** A header or query parameter of an API check's request. */
export interface ApiKeyValueProps {
  /**
   * Name of the header or query parameter.
   * @example key: 'Authorization'
   */
  key: string
  /**
   * Its value; `{{VARIABLE}}` references are resolved from the account's variables at run time.
   * @example value: 'Bearer {{API_TOKEN}}'
   */
  value: string
  /**
   * Kept for the hosted service's editor; no effect on runs.
   * @defaultValue false
   * @example locked: true
   */
  locked?: boolean
  /**
   * A secret value: read back as "" by the service, masked in plans and run results, never in
   * the lock file or saved plans.
   * @defaultValue false
   * @example secret: true
   */
  secret?: boolean
}

/** The HTTP request an API check makes and what it asserts on the answer. */
export interface ApiRequestProps {
  /**
   * HTTP method: GET, POST, PUT, HEAD, DELETE or PATCH.
   * @defaultValue required
   * @example method: 'GET'
   */
  method: Request['method']
  /**
   * `http://` or `https://` URL, at most 2048 characters; may hold `{{VARIABLE}}` references.
   * @example url: 'https://shop.example.com/api/health'
   */
  url: string
  /**
   * Follow redirects.
   * @defaultValue true
   * @example followRedirects: false
   */
  followRedirects?: boolean
  /**
   * Accept an invalid or expired TLS certificate.
   * @defaultValue false
   * @example skipSSL: true
   */
  skipSSL?: boolean
  /**
   * IPv4 or IPv6.
   * @defaultValue 'IPv4'
   * @example ipFamily: 'IPv6'
   */
  ipFamily?: Request['ipFamily']
  /**
   * Request body.
   * @defaultValue ''
   * @example body: '{"sku":"A-1"}'
   */
  body?: string
  /**
   * How the body is sent: NONE, JSON, FORM, RAW or GRAPHQL.
   * @defaultValue 'NONE'
   * @example bodyType: 'JSON'
   */
  bodyType?: Request['bodyType']
  /**
   * Request headers.
   * @defaultValue []
   * @example headers: [{ key: 'X-Api-Key', value: '{{API_KEY}}', secret: true }]
   */
  headers?: ApiKeyValueProps[]
  /**
   * Query parameters appended to the URL.
   * @defaultValue []
   * @example queryParameters: [{ key: 'region', value: 'eu' }]
   */
  queryParameters?: ApiKeyValueProps[]
  /**
   * Assertions on the response: source STATUS_CODE, JSON_BODY (with a JSON path in `property`),
   * HEADERS (header name in `property`), TEXT_BODY or RESPONSE_TIME.
   * @defaultValue []
   * @example assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }, { source: 'JSON_BODY', property: '$.status', comparison: 'EQUALS', target: 'ok' }]
   */
  assertions?: Request['assertions']
  /**
   * HTTP basic authentication; the password is a secret (read back as "", masked in plans).
   * @defaultValue undefined (none)
   * @example basicAuth: { username: 'monitor', password: '{{SHOP_PASSWORD}}' }
   */
  basicAuth?: { username: string; password: string } | null
}

export interface ApiCheckProps extends Omit<CheckProps, 'frequency'> {
  /**
   * The HTTP request the check makes.
   * @example request: { method: 'GET', url: 'https://shop.example.com/api/health' }
   */
  request: ApiRequestProps
  /**
   * Minutes between runs: 0 (sub-minute, then `frequencyOffset` 10, 20 or 30 seconds), 1, 2, 5,
   * 10, 15, 30, 60, 120, 180, 360, 720 or 1440.
   * @defaultValue 10
   * @example frequency: 0, frequencyOffset: 10
   */
  frequency?: ApiCheckInput['frequency']
  /**
   * Milliseconds after which a run is degraded, 0-45000.
   * @defaultValue 5000
   * @example degradedResponseTime: 1000
   */
  degradedResponseTime?: number | null
  /**
   * Milliseconds after which a run fails, 0-45000.
   * @defaultValue 20000
   * @example maxResponseTime: 3000
   */
  maxResponseTime?: number | null
  /**
   * A snippet run before the request, as its setup script: a `Snippet` construct of this project
   * (it becomes the snippet's id when the plan is applied). It may change `request` (url,
   * headers, queryParameters, body) and `process.env`. See docs/scripts.md.
   * @defaultValue null (none)
   * @example setupSnippetId: authHelper
   */
  setupSnippetId?: Snippet | null
  /**
   * A snippet run after the response, before the assertions, as its teardown script: a `Snippet`
   * construct of this project. It sees `response` (statusCode, headers, body) and may change it.
   * @defaultValue null (none)
   * @example tearDownSnippetId: cleanUp
   */
  tearDownSnippetId?: Snippet | null
  /**
   * Node.js code run before the request (after the setup snippet, when both are given).
   * @defaultValue null (none)
   * @example localSetupScript: "request.headers['X-Request-Id'] = crypto.randomUUID()"
   */
  localSetupScript?: string | null
  /**
   * Node.js code run after the response, before the assertions (after the teardown snippet).
   * @defaultValue null (none)
   * @example localTearDownScript: "if (response.statusCode === 204) response.body = '{}'"
   */
  localTearDownScript?: string | null
}

/**
 * An API check: makes an HTTP request from each location and asserts on the response.
 *
 * @example
 * new ApiCheck('shop-api', {
 *   name: 'Shop API',
 *   request: {
 *     method: 'GET',
 *     url: 'https://shop.example.com/api/health',
 *     assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
 *   },
 * })
 */
export class ApiCheck extends Construct<ApiCheckProps> {
  /**
   * @param logicalId id of the check in code, unique among API checks: letters, digits and `_ - / # .`
   * @param props the check's API fields
   */
  constructor(logicalId: string, props: ApiCheckProps) {
    super('api-check', 'ApiCheck', logicalId, props)
  }
}
