/**
 * What the providers that speak HTTP share: one request under the server's private-target
 * policy (undici, the context's dispatcher), what its answer means for a retry, and how a URL
 * is shown without its secrets.
 */
import { request } from 'undici'
import { refusalIn } from '../../../runner/targets.js'
import { systemClock } from '../../../runner/clock.js'
import type { SendContext, SendOutcome } from './types.js'
import { refused } from './types.js'

interface KeyValue {
  key?: unknown
  value?: unknown
}

/** The `{key, value}` pairs of a list of headers or query parameters, leaving out items without a key. */
export function pairs(list: unknown): Array<[string, string]> {
  if (!Array.isArray(list)) return []
  return (list as KeyValue[])
    .filter((p) => p && typeof p.key === 'string' && p.key !== '')
    .map((p) => [p.key as string, typeof p.value === 'string' ? p.value : String(p.value ?? '')])
}

/** An http(s) URL with `query` appended to its query; an error text when it is not one. */
export function httpUrl(text: unknown, query: Array<[string, string]> = []): URL | string {
  let url: URL
  try {
    url = new URL(String(text ?? ''))
  } catch {
    return `invalid URL "${String(text ?? '')}"`
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `unsupported URL scheme ${url.protocol} (http or https)`
  for (const [key, value] of query) url.searchParams.append(key, value)
  return url
}

/** A URL as answers show it: its origin and path (`keepPath`), or its origin alone (the path is a token); never credentials or the query. */
export function shownUrl(value: unknown, keepPath: boolean): string {
  try {
    const url = new URL(String(value))
    return keepPath ? `${url.origin}${url.pathname}` : `${url.origin}/…`
  } catch {
    return '(not a URL)'
  }
}

function retryAfter(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (value === undefined) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(value)
  // a date of the other server's clock: against the system's, not this server's
  return Number.isNaN(date) ? undefined : Math.max(0, date - systemClock.now())
}

/** Whether an HTTP status is worth another attempt: 408, 429 and 5xx are; other 4xx (and 3xx: redirects are not followed) are not. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500
}

/** A readable text of an attempt's error: a timeout and a shutdown say so, a network error keeps its code. */
export function errorText(error: unknown, context: SendContext): string {
  if (context.signal.aborted) {
    const reason = context.signal.reason as { name?: string } | undefined
    if (reason?.name === 'TimeoutError') return `timed out after ${context.timeoutMs} ms`
    return 'stopped: the server is shutting down'
  }
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } }
  const code = e?.cause?.code ?? e?.code
  const message = e?.cause?.message ?? e?.message ?? String(error)
  return code && !message.includes(code) ? `${code}: ${message}` : message
}

/**
 * One HTTP request: a 2xx answer delivers; 408, 429 and 5xx (with the receiver's Retry-After)
 * and network errors may be retried; a refusal of the private-target policy and a request HTTP
 * cannot carry are not.
 */
export async function httpAttempt(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  context: SendContext,
): Promise<SendOutcome> {
  try {
    const response = await request(url, {
      method: method as 'POST',
      headers,
      body,
      signal: context.signal,
      headersTimeout: context.timeoutMs,
      bodyTimeout: context.timeoutMs,
      ...(context.dispatcher ? { dispatcher: context.dispatcher } : {}),
    })
    const text = (await response.body.text()).slice(0, 300)
    const status = response.statusCode
    if (status >= 200 && status < 300) return { delivered: true, retryable: false, statusCode: status, error: null }
    const error = `HTTP ${status}${text.trim() ? `: ${text.trim().replace(/\s+/g, ' ').slice(0, 200)}` : ''}`
    return { delivered: false, retryable: retryableStatus(status), statusCode: status, error, retryAfterMs: retryAfter(response.headers['retry-after']) }
  } catch (error) {
    // refused by the private-target policy: not sent, and it will not be later either
    const refusal = refusalIn(error)
    if (refusal) return refused(refusal.message)
    // a request that cannot be made (a header name or value HTTP does not allow) will not work later either
    const invalid = (error as { code?: string }).code === 'UND_ERR_INVALID_ARG'
    return {
      delivered: false,
      retryable: !invalid,
      statusCode: null,
      error: invalid ? `the request cannot be sent: ${(error as Error).message}` : errorText(error, context),
    }
  }
}

/** POSTs a JSON body to an http(s) URL (Slack, Teams, PagerDuty, Opsgenie): the body, the user agent, and `headers`. */
export function postJson(target: unknown, body: unknown, context: SendContext, headers: Record<string, string> = {}): Promise<SendOutcome> {
  const url = httpUrl(target)
  if (typeof url === 'string') return Promise.resolve(refused(url))
  return httpAttempt(url, 'POST', { 'content-type': 'application/json', 'user-agent': context.userAgent, ...headers }, JSON.stringify(body), context)
}
