import { z } from 'zod'
import { checkBody } from './omit.js'
import { COMPARISONS } from './enums.js'
import { checkCommonShape, readOnlyShape, sslCheckDomainSchema } from './check.js'
import { crossField } from './cross-field.js'
import { frequencyOffsetProblem } from './rules.js'

/** Vocabularies of API checks (reference/openapi-excerpt.json: ChecksV1ApiRequest, ChecksV1ApiAssertion). */
export const API_METHODS = ['GET', 'POST', 'PUT', 'HEAD', 'DELETE', 'PATCH'] as const
export const API_BODY_TYPES = ['NONE', 'JSON', 'FORM', 'RAW', 'GRAPHQL'] as const
export const API_IP_FAMILIES = ['IPv4', 'IPv6'] as const
export const API_ASSERTION_SOURCES = ['STATUS_CODE', 'JSON_BODY', 'HEADERS', 'TEXT_BODY', 'RESPONSE_TIME'] as const

/** Longest URL an API check may request. */
export const API_URL_MAX_LENGTH = 2048

/**
 * A header or query parameter. `secret: true` keeps the value out of every run result and
 * message (it is masked as `********`); `locked` is kept for the hosted service's editor.
 */
export const apiKeyValueSchema = z.object({
  key: z.string().min(1),
  value: z.string(),
  locked: z.boolean().default(false),
  secret: z.boolean().default(false),
})

export const basicAuthSchema = z.object({
  username: z.string(),
  password: z.string(),
})

/**
 * One assertion of an API check:
 * - STATUS_CODE: the response's status code (a number);
 * - JSON_BODY: the body parsed as JSON, read at the JSON path in `property` (`$.data[0].id`;
 *   empty: the whole document);
 * - HEADERS: the response header named in `property` (case-insensitive; empty: all headers as
 *   an object, for HAS_KEY);
 * - TEXT_BODY: the body as text;
 * - RESPONSE_TIME: the total response time in ms.
 * `regex`, when set, is applied to the text value of HEADERS and TEXT_BODY and the assertion
 * compares its first capture group (or the whole match).
 */
export const apiAssertionSchema = z
  .object({
    source: z.enum(API_ASSERTION_SOURCES),
    comparison: z.enum(COMPARISONS),
    property: z.string().default(''),
    target: z.string().default(''),
    regex: z.string().nullable().default(''),
  })
  .check(
    crossField((v, add) => {
      if (typeof v.regex === 'string' && v.regex !== '') {
        try {
          new RegExp(v.regex)
        } catch (error) {
          add({ path: ['regex'], message: `is not a valid regular expression: ${(error as Error).message}`, input: v.regex })
        }
      }
    }),
  )

/** `http://` or `https://` URL; `{{VARIABLE}}` references are resolved at run time. */
const apiUrlSchema = z
  .string()
  .min(1)
  .max(API_URL_MAX_LENGTH)
  .check(
    z.superRefine((url, ctx) => {
      // a URL that starts with a variable ({{GROUP_BASE_URL}}/health, a group's base URL) is checked once resolved, at run time
      if (/^\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}/.test(url)) return
      if (!/^https?:\/\//i.test(url)) {
        ctx.addIssue({ code: 'custom', message: `must start with http:// or https:// (got "${url.slice(0, 80)}")`, input: url })
        return
      }
      if (url.includes('{{')) return // checked once the variables are resolved, at run time
      try {
        new URL(url)
      } catch {
        ctx.addIssue({ code: 'custom', message: `is not a valid URL (got "${url.slice(0, 80)}")`, input: url })
      }
    }),
  )

export const apiRequestSchema = z.object({
  method: z.enum(API_METHODS),
  url: apiUrlSchema,
  followRedirects: z.boolean().default(true),
  skipSSL: z.boolean().default(false),
  ipFamily: z.enum(API_IP_FAMILIES).default('IPv4'),
  body: z.string().default(''),
  bodyType: z.enum(API_BODY_TYPES).default('NONE'),
  headers: z.array(apiKeyValueSchema).default([]),
  queryParameters: z.array(apiKeyValueSchema).default([]),
  assertions: z.array(apiAssertionSchema).default([]),
  basicAuth: basicAuthSchema.nullish(),
})

/**
 * Frequency and offset of an API check (and of a TCP check: the spec's two sub-minute types):
 * frequency 0 (sub-minute) is allowed and then needs `frequencyOffset` 10, 20 or 30 (seconds
 * between runs); other frequencies follow the spec's offset ranges, as for every check.
 */
export const apiCheckRules = crossField((value, add) => {
  if (value.frequency === 0 && (value.frequencyOffset === undefined || value.frequencyOffset === null)) {
    add({
      path: ['frequencyOffset'],
      message: 'is required when frequency is 0: 10, 20 or 30 (seconds between runs)',
      input: value.frequencyOffset,
    })
    return
  }
  const problem = frequencyOffsetProblem(value.frequency ?? 10, value.frequencyOffset)
  if (problem) add({ path: ['frequencyOffset'], message: problem, input: value.frequencyOffset })
})

/**
 * Body of POST /v1/checks/api and PUT /v1/checks/api/{id} (reference: ChecksV1ApiCheckCreate).
 * `degradedResponseTime` and `maxResponseTime` default to 5000 and 20000 ms, range 0–45000.
 */
export const apiCheckSchema = z
  .object({
    ...checkCommonShape,
    ...readOnlyShape,
    checkType: z.literal('API').optional(),
    sslCheckDomain: sslCheckDomainSchema.optional(),
    degradedResponseTime: z.number().min(0).max(45000).nullable().default(5000),
    maxResponseTime: z.number().min(0).max(45000).nullable().default(20000),
    request: apiRequestSchema,
    setupSnippetId: z.number().int().nullish(),
    tearDownSnippetId: z.number().int().nullish(),
    localSetupScript: z.string().nullish(),
    localTearDownScript: z.string().nullish(),
  })
  .check(apiCheckRules)
  .transform((value) => checkBody(value, 'API' as const))

export type ApiCheckInput = z.input<typeof apiCheckSchema>
export type ApiCheck = z.output<typeof apiCheckSchema>
export type ApiRequest = z.output<typeof apiRequestSchema>
export type ApiAssertion = z.output<typeof apiAssertionSchema>

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * An API check as reads answer it: its secret values (`request.basicAuth.password`, the value of
 * every header and query parameter marked `secret`) are stored, since runs need them, but read
 * back as "", like a secret variable's value. Returns a copy; anything else is left as it is.
 */
export function blankApiSecrets<T>(check: T): T {
  if (!isObject(check) || !isObject(check.request)) return check
  const request: Record<string, unknown> = { ...check.request }
  for (const field of ['headers', 'queryParameters']) {
    const items = request[field]
    if (Array.isArray(items)) request[field] = items.map((v: unknown) => (isObject(v) && v.secret === true ? { ...v, value: '' } : v))
  }
  if (isObject(request.basicAuth)) request.basicAuth = { ...request.basicAuth, password: '' }
  return { ...check, request } as T
}

/**
 * The secret values of an API check that reads answer as "" (see blankApiSecrets): their paths
 * (as plans name them) and one canonical text of paths and values, or undefined when none is set
 * (an empty value, e.g. read from an unset environment variable, counts as not set).
 */
export function apiSecretValues(check: Record<string, unknown>): { text: string; paths: string[] } | undefined {
  if (!isObject(check.request)) return undefined
  const request = check.request
  const pairs: Array<[string, string]> = []
  for (const field of ['headers', 'queryParameters']) {
    const items = request[field]
    if (!Array.isArray(items)) continue
    for (const v of items) {
      if (isObject(v) && v.secret === true && typeof v.value === 'string' && v.value !== '') pairs.push([`request.${field}[${String(v.key)}].value`, v.value])
    }
  }
  if (isObject(request.basicAuth) && typeof request.basicAuth.password === 'string' && request.basicAuth.password !== '') {
    pairs.push(['request.basicAuth.password', request.basicAuth.password])
  }
  if (pairs.length === 0) return undefined
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  return { text: JSON.stringify(pairs), paths: pairs.map(([path]) => path) }
}
