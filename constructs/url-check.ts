import type { UrlCheckInput } from '../src/schema/url-check.js'
import { Construct } from './construct.js'
import type { CheckProps } from './check.js'

type Request = UrlCheckInput['request']

/** The GET a URL check makes and what it asserts on the status code. */
export interface UrlRequestProps {
  /**
   * `http://` or `https://` URL, at most 2048 characters (no `{{VARIABLE}}` references: use an ApiCheck).
   * @example url: 'https://shop.example.com/'
   */
  url: string
  /**
   * The only method of a URL check.
   * @defaultValue 'GET'
   */
  method?: Request['method']
  /**
   * Follow redirects (at most 10).
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
   * Assertions on the status code: source STATUS_CODE, comparison EQUALS, NOT_EQUALS, LESS_THAN
   * or GREATER_THAN, a status code as target. Without one, 4xx and 5xx fail.
   * @defaultValue []
   * @example assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }]
   */
  assertions?: Request['assertions']
}

export interface UrlCheckProps extends CheckProps {
  /**
   * The request the check makes.
   * @example request: { url: 'https://shop.example.com/' }
   */
  request: UrlRequestProps
  /**
   * Milliseconds after which a run is degraded, 0-45000.
   * @defaultValue 3000
   * @example degradedResponseTime: 1000
   */
  degradedResponseTime?: number | null
  /**
   * Milliseconds after which a run fails, 0-45000.
   * @defaultValue 5000
   * @example maxResponseTime: 3000
   */
  maxResponseTime?: number | null
}

/**
 * A URL check: a GET from each location, its status code and response time asserted; the light
 * cousin of an ApiCheck, without a body, headers, scripts or variables.
 *
 * @example
 * new UrlCheck('shop-home', {
 *   name: 'Shop home',
 *   request: { url: 'https://shop.example.com/', assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
 * })
 */
export class UrlCheck extends Construct<UrlCheckProps> {
  /**
   * @param logicalId id of the check in code, unique among URL checks: letters, digits and `_ - / # .`
   * @param props the check's API fields
   */
  constructor(logicalId: string, props: UrlCheckProps) {
    super('url-check', 'UrlCheck', logicalId, props)
  }
}
