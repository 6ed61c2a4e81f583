import { createHash } from 'node:crypto'
import { isTimeoutError, Transport, CONNECT_TIMEOUT, type TransportResponse } from './http.js'
import { ApiError, apiErrorFor, NetworkError, NotFoundError, RateLimitError, ServerError, type ApiErrorBody, type RequestInfo } from './errors.js'
import { Pacer, rateLimitFigures } from './pacing.js'
import { backoffDelay, DEFAULT_BACKOFF, sleep, type BackoffOptions } from './backoff.js'
import { addSecret, redact, redactUrl } from './redact.js'
import { UserError } from '../errors.js'
import { openPageCache, type PageCache } from './page-cache.js'
import type { ReadLog } from './paging.js'

export interface ApiClientOptions {
  /** Base URL of the service, e.g. `https://api.example.com` or `http://127.0.0.1:4000`. */
  baseUrl: string
  apiKey?: string
  /** Sent as `x-service-account` when known. */
  accountId?: string
  /** Per-request timeout in milliseconds (headers and body). Default 30 000. */
  timeoutMs?: number
  /** Connections kept open to the service. Default 8. */
  connections?: number
  /** Keeps requests under the server's rate limit (see pacing.ts); false turns pacing off. */
  pacer?: Pacer | false
  /** Times a request answered 429 is sent again after Retry-After. Default 6. */
  rateLimitRetries?: number
  /**
   * Retries of a GET, PUT or DELETE after a 5xx, a timeout or a lost connection (exponential
   * backoff, full jitter). A POST is retried only when it certainly never reached the server;
   * otherwise its outcome is unknown and the caller must look before creating again.
   * Default 4 retries, 200 ms base, 5 s cap.
   */
  retry?: Partial<BackoffOptions>
  /** Allows a plain http:// URL to a host that is not this machine (the key travels in clear). */
  insecureHttp?: boolean
  /**
   * A folder where list pages are kept between commands and read again with `If-None-Match`
   * (page-cache.ts); none: every page is read whole.
   */
  pageCacheDir?: string
}

/** What the client went through, for reports. */
export interface ClientStats {
  /** Requests sent (answered or not). */
  requests: number
  /** Requests sent again after a 5xx, a timeout or a lost connection. */
  retries: number
  /** Answers 429 waited out. */
  rateLimited: number
}

/** A query's parameters; a list is sent as the parameter repeated (`tag=a&tag=b`). */
export type Query = Record<string, string | number | boolean | readonly string[] | undefined>

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Path below the base URL, starting with `/v1/`. */
  path: string
  query?: Query
  body?: unknown
  /** A file sent as the body, as it is read (`application/octet-stream`), instead of a JSON body. */
  file?: { path: string; length: number }
  /** Headers of this request alone (`If-None-Match`: a 304 is then an answer, not an error). */
  headers?: Record<string, string>
  /**
   * How long this request may wait for its answer, instead of the client's timeout: a long poll
   * the server holds open (a session's completion, up to `maxWaitSeconds`) needs that long and
   * the client's own timeout beyond it.
   */
  timeoutMs?: number
  /** A success's body as the bytes received (a screenshot, a trace), not parsed. */
  binary?: boolean
  /**
   * Every answer is resolved, an error status too (`monitors api` prints it as it came): the
   * rate limit and the retries still apply, and a request that got no answer still throws.
   */
  anyStatus?: boolean
}

export interface ApiResponse<T = unknown> {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: T
  /** A retried DELETE found the resource gone: an earlier attempt whose answer was lost deleted it. */
  gone?: boolean
}

/**
 * The HTTP client of the Monitoring API, on keep-alive connections (http.ts). Every request goes
 * through `send()`: authentication headers, timeout, error mapping and counting live there, and
 * so will pacing and retries. Redirects are never followed (a redirect is an error naming its
 * target): an API key must not travel to another origin.
 */
export class ApiClient {
  readonly baseUrl: string
  readonly accountId: string | undefined
  private readonly pool: Transport
  private readonly basePath: string
  private readonly headers: Record<string, string>
  private readonly timeoutMs: number
  private readonly pacer: Pacer | undefined
  private readonly rateLimitRetries: number
  private readonly backoff: BackoffOptions
  private readonly counters: ClientStats = { requests: 0, retries: 0, rateLimited: 0 }
  private readonly pageCacheDir: string | undefined
  private readonly apiKey: string | undefined

  constructor(options: ApiClientOptions) {
    let url: URL
    try {
      url = new URL(options.baseUrl)
    } catch {
      throw new UserError(`The API URL "${redactUrl(options.baseUrl)}" is not a valid URL (expected e.g. https://api.example.com).`)
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new UserError(`The API URL "${redactUrl(options.baseUrl)}" must start with http:// or https://.`)
    }
    if (url.username || url.password) {
      throw new UserError(`The API URL "${redactUrl(options.baseUrl)}" carries credentials; give the key with MONITORING_API_KEY or --api-key instead.`)
    }
    if (url.protocol === 'http:' && !options.insecureHttp && !isLoopbackHost(url.hostname)) {
      throw new UserError(
        `Refusing to send the API key in clear text to ${url.origin}: use an https:// URL, or pass --insecure-http if this network is trusted.`,
      )
    }
    addSecret(options.apiKey)
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.basePath = url.pathname.replace(/\/+$/, '')
    this.accountId = options.accountId
    this.timeoutMs = options.timeoutMs ?? 30_000
    this.pacer = options.pacer === false ? undefined : (options.pacer ?? new Pacer())
    this.rateLimitRetries = options.rateLimitRetries ?? 6
    this.backoff = { ...DEFAULT_BACKOFF, ...options.retry }
    // connections to this origin only: a redirect is never followed, so the key never leaves it
    // connecting is bounded by the same timeout as waiting for an answer
    this.pool = new Transport(url.origin, { connections: options.connections ?? 8, timeoutMs: this.timeoutMs })
    this.pageCacheDir = options.pageCacheDir
    this.apiKey = options.apiKey
    this.headers = { accept: 'application/json', 'user-agent': 'monitors-as-code' }
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`
    if (options.accountId) this.headers['x-service-account'] = options.accountId
  }

  /** Requests sent so far (answered or not). */
  requestCount(): number {
    return this.counters.requests
  }

  stats(): ClientStats {
    return { ...this.counters }
  }

  /**
   * Milliseconds left of a wait for the rate limit under way (a second or more: see
   * Pacer.waitingUntil), or 0: what a progress display shows as "waiting N s for the rate limit".
   */
  rateLimitWaitMs(now = Date.now()): number {
    const until = this.pacer?.waitingUntil()
    return until === undefined ? 0 : Math.max(0, until - now)
  }

  async close(): Promise<void> {
    await this.pool.close()
  }

  /** How long a request waits for its answer (--timeout), in milliseconds. */
  get requestTimeoutMs(): number {
    return this.timeoutMs
  }

  /**
   * When set, every request sent is counted in it and every list page read is recorded
   * (paging.ts): what a plan read, so that it can be memoized (src/plan/memo.ts).
   */
  readLog: ReadLog | undefined

  get<T>(path: string, query?: Query, headers?: Record<string, string>) {
    if (this.readLog) this.readLog.requests++
    return this.send<T>({ method: 'GET', path, query, headers })
  }

  /** A hash of the API key (never the key): what a cache of this target's answers is kept for. */
  get apiKeyHash(): string {
    return createHash('sha256')
      .update(this.apiKey ?? '')
      .digest('hex')
  }

  /** The kept pages of the list at `path` of this target, when pages are kept (pageCacheDir). */
  pageCache(path: string): PageCache | undefined {
    return this.pageCacheDir === undefined
      ? undefined
      : openPageCache(this.pageCacheDir, { baseUrl: this.baseUrl, accountId: this.accountId, apiKey: this.apiKey }, path)
  }
  post<T>(path: string, body: unknown, query?: Query) {
    if (this.readLog) this.readLog.requests++
    return this.send<T>({ method: 'POST', path, body, query })
  }
  put<T>(path: string, body: unknown, query?: Query) {
    if (this.readLog) this.readLog.requests++
    return this.send<T>({ method: 'PUT', path, body, query })
  }
  delete(path: string) {
    return this.send<unknown>({ method: 'DELETE', path })
  }
  /** PUTs a file's bytes as they are read (sent again, read again, after a transient failure). */
  putFile<T>(path: string, file: { path: string; length: number }, query?: Query) {
    return this.send<T>({ method: 'PUT', path, file, query })
  }

  /**
   * The single choke point of every request:
   * - paced under the rate limit; a 429 waits for Retry-After and is sent again (the request was
   *   not processed, so this is safe for every method), a bounded number of times;
   * - GET, PUT and DELETE are sent again after a 5xx, a timeout or a lost connection, with
   *   exponential backoff and full jitter, a bounded number of times; a DELETE answered 404
   *   after such a retry succeeded (the lost attempt did the work);
   * - a POST is sent again only when it never left this machine (connection refused); when it
   *   may have reached the server, the error says `outcomeUnknown` and the caller decides.
   * Throws an ApiError for any other status >= 300.
   */
  async send<T = unknown>(request: ApiRequest): Promise<ApiResponse<T>> {
    let failures = 0
    let limited = 0
    let uncertain = false
    let answered: ApiResponse<T> | undefined
    // an error answer, resolved when the request asks for every answer
    const refuse = (error: unknown): ApiResponse<T> => {
      if (request.anyStatus && answered && error instanceof ApiError) return answered
      throw error
    }
    for (;;) {
      const slot = await this.pacer?.acquire()
      let error: unknown
      answered = undefined
      try {
        const response = await this.sendOnce<T>(request)
        answered = response
        slot?.done(rateLimitFigures(response.headers))
        if (response.status < 300 || (response.status === 304 && request.headers?.['if-none-match'] !== undefined)) return response
        error = apiErrorFor(response.status, { method: request.method, path: request.path }, redactBody(response.body), response.headers)
      } catch (caught) {
        slot?.done()
        error = caught
      }
      if (error instanceof RateLimitError && this.pacer && limited < this.rateLimitRetries) {
        limited++
        this.counters.rateLimited++
        this.pacer.pause(error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : 1000)
        continue
      }
      if (uncertain && request.method === 'DELETE' && error instanceof NotFoundError) {
        return { status: 404, headers: {}, body: undefined as T, gone: true }
      }
      const transient = error instanceof ServerError || error instanceof NetworkError
      if (!transient) return refuse(error)
      const maybeSent = !(error instanceof NetworkError) || error.maybeSent
      if (request.method === 'POST' && maybeSent) {
        ;(error as { outcomeUnknown?: boolean }).outcomeUnknown = true
        return refuse(error)
      }
      if (failures >= this.backoff.retries) {
        if (failures > 0) (error as Error).message += ` (gave up after ${failures + 1} attempts)`
        return refuse(error)
      }
      if (maybeSent) uncertain = true
      await sleep(backoffDelay(failures, this.backoff))
      failures++
      this.counters.retries++
    }
  }

  /** One attempt: the answer whatever its status, or a NetworkError when none came. */
  private async sendOnce<T>(request: ApiRequest): Promise<ApiResponse<T>> {
    const info: RequestInfo = { method: request.method, path: request.path }
    const headers = request.headers ? { ...this.headers, ...request.headers } : { ...this.headers }
    let body: string | { file: string; length: number } | undefined
    if (request.file) {
      body = { file: request.file.path, length: request.file.length }
      headers['content-type'] = 'application/octet-stream'
    } else if (request.body !== undefined) {
      body = JSON.stringify(request.body)
      headers['content-type'] = 'application/json'
    }
    this.counters.requests++
    let response: TransportResponse
    try {
      response = await this.pool.send({
        method: request.method,
        path: this.basePath + request.path + queryString(request.query),
        headers,
        body,
        timeoutMs: request.timeoutMs,
      })
    } catch (error) {
      throw networkError(error, info, this.baseUrl, request.timeoutMs ?? this.timeoutMs)
    }
    const text = response.text
    const contentType = String(response.headers['content-type'] ?? '')
    let parsed: unknown = text
    if (request.binary && response.statusCode < 300) {
      parsed = response.bytes
    } else if (text.length > 0 && contentType.includes('json')) {
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = text
      }
    } else if (text.length === 0) {
      parsed = undefined
    }
    return { status: response.statusCode, headers: response.headers, body: parsed as T }
  }
}

/** Whether an error says a POST may or may not have been carried out (see ApiClient.send). */
export function isOutcomeUnknown(error: unknown): boolean {
  return (error as { outcomeUnknown?: unknown })?.outcomeUnknown === true
}

/** 127.0.0.0/8, ::1 and localhost: plain http there never crosses a network. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  if (host === '::1' || host === '0:0:0:0:0:0:0:1') return true
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host)
  return v4 !== null && Number(v4[1]) === 127
}

function redactBody(body: unknown): ApiErrorBody | undefined {
  if (!body || typeof body !== 'object') return undefined
  const out = body as ApiErrorBody
  return typeof out.message === 'string' ? { ...out, message: redact(out.message) } : out
}

function queryString(query: Query | undefined): string {
  if (!query) return ''
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (Array.isArray(value)) for (const item of value) params.append(key, item)
    else if (value !== undefined) params.set(key, String(value))
  }
  const text = params.toString()
  return text ? `?${text}` : ''
}

/** Codes meaning the request never left this machine: resending it cannot do anything twice. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', CONNECT_TIMEOUT])

function networkError(error: unknown, request: RequestInfo, baseUrl: string, timeoutMs: number): NetworkError {
  const code = (error as { code?: string })?.code
  const where = `${request.method} ${request.path}`
  const shown = redactUrl(baseUrl)
  const maybeSent = !NOT_SENT.has(code ?? '')
  if (isTimeoutError(error)) {
    return new NetworkError(`${where} timed out after ${timeoutMs / 1000} s (${shown}); raise --timeout to wait longer.`, request, code, maybeSent)
  }
  if (code === CONNECT_TIMEOUT) {
    return new NetworkError(
      `Cannot reach ${shown}: no connection within ${timeoutMs / 1000} s (${where}); raise --timeout to wait longer.`,
      request,
      code,
      false,
    )
  }
  if (code === 'ECONNREFUSED') return new NetworkError(`Cannot reach ${shown}: connection refused (${where}).`, request, code, false)
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new NetworkError(`Cannot reach ${shown}: the host name does not resolve (${where}).`, request, code, false)
  }
  const message = redact(error instanceof Error ? error.message : String(error))
  return new NetworkError(`${where} to ${shown} failed: ${message}`, request, code, maybeSent)
}
