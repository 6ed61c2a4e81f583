import type { Dispatcher, Pool } from 'undici'
import { undici } from './undici.js'
import { apiErrorFor, NetworkError, RateLimitError, type ApiErrorBody, type RequestInfo } from './errors.js'
import { Pacer, rateLimitFigures } from './pacing.js'

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
  /** Times a request answered 429 is sent again after Retry-After. Default 3. */
  rateLimitRetries?: number
}

export type Query = Record<string, string | number | boolean | undefined>

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  /** Path below the base URL, starting with `/v1/`. */
  path: string
  query?: Query
  body?: unknown
}

export interface ApiResponse<T = unknown> {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: T
}

/**
 * The HTTP client of the Monitoring API, on an undici keep-alive pool. Every request goes
 * through `send()`: authentication headers, timeout, error mapping and counting live there, and
 * so will pacing and retries. Redirects are never followed (a redirect is an error naming its
 * target): an API key must not travel to another origin.
 */
export class ApiClient {
  readonly baseUrl: string
  readonly accountId: string | undefined
  private readonly pool: Pool
  private readonly basePath: string
  private readonly headers: Record<string, string>
  private readonly timeoutMs: number
  private count = 0
  private readonly pacer: Pacer | undefined
  private readonly rateLimitRetries: number

  constructor(options: ApiClientOptions) {
    let url: URL
    try {
      url = new URL(options.baseUrl)
    } catch {
      throw Object.assign(new Error(`The API URL "${options.baseUrl}" is not a valid URL (expected e.g. https://api.example.com).`), {
        userError: true,
      })
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw Object.assign(new Error(`The API URL "${options.baseUrl}" must start with http:// or https://.`), { userError: true })
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.basePath = url.pathname.replace(/\/+$/, '')
    this.accountId = options.accountId
    this.timeoutMs = options.timeoutMs ?? 30_000
    this.pacer = options.pacer === false ? undefined : (options.pacer ?? new Pacer())
    this.rateLimitRetries = options.rateLimitRetries ?? 3
    this.pool = new (undici().Pool)(url.origin, { connections: options.connections ?? 8, pipelining: 1 })
    this.headers = { accept: 'application/json', 'user-agent': 'monitors-as-code' }
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`
    if (options.accountId) this.headers['x-service-account'] = options.accountId
  }

  /** Requests sent so far (answered or not). */
  requestCount(): number {
    return this.count
  }

  async close(): Promise<void> {
    await this.pool.close()
  }

  get<T>(path: string, query?: Query) {
    return this.send<T>({ method: 'GET', path, query })
  }
  post<T>(path: string, body: unknown, query?: Query) {
    return this.send<T>({ method: 'POST', path, body, query })
  }
  put<T>(path: string, body: unknown, query?: Query) {
    return this.send<T>({ method: 'PUT', path, body, query })
  }
  delete(path: string) {
    return this.send<unknown>({ method: 'DELETE', path })
  }

  /**
   * The single choke point of every request: paced under the rate limit, and sent again after
   * Retry-After when the service still answers 429 (the request was not processed, so this is
   * safe for every method). Throws an ApiError for any status >= 300.
   */
  async send<T = unknown>(request: ApiRequest): Promise<ApiResponse<T>> {
    for (let attempt = 0; ; attempt++) {
      const slot = await this.pacer?.acquire()
      try {
        const response = await this.sendOnce<T>(request)
        slot?.done(rateLimitFigures(response.headers))
        return response
      } catch (error) {
        slot?.done()
        if (!(error instanceof RateLimitError) || attempt >= this.rateLimitRetries || !this.pacer) throw error
        this.pacer.pause(error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : 1000)
      }
    }
  }

  private async sendOnce<T>(request: ApiRequest): Promise<ApiResponse<T>> {
    const info: RequestInfo = { method: request.method, path: request.path }
    const headers = { ...this.headers }
    let body: string | undefined
    if (request.body !== undefined) {
      body = JSON.stringify(request.body)
      headers['content-type'] = 'application/json'
    }
    this.count++
    let response: Dispatcher.ResponseData
    try {
      response = await undici().request(this.pool, {
        method: request.method,
        path: this.basePath + request.path + queryString(request.query),
        headers,
        body,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      })
    } catch (error) {
      throw networkError(error, info, this.baseUrl, this.timeoutMs)
    }
    let text: string
    try {
      text = await response.body.text()
    } catch (error) {
      throw networkError(error, info, this.baseUrl, this.timeoutMs)
    }
    const contentType = String(response.headers['content-type'] ?? '')
    let parsed: unknown = text
    if (text.length > 0 && contentType.includes('json')) {
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = text
      }
    } else if (text.length === 0) {
      parsed = undefined
    }
    if (response.statusCode >= 300) {
      const errorBody = parsed && typeof parsed === 'object' ? (parsed as ApiErrorBody) : undefined
      throw apiErrorFor(response.statusCode, info, errorBody, response.headers)
    }
    return { status: response.statusCode, headers: response.headers, body: parsed as T }
  }
}

function queryString(query: Query | undefined): string {
  if (!query) return ''
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value))
  const text = params.toString()
  return text ? `?${text}` : ''
}

function networkError(error: unknown, request: RequestInfo, baseUrl: string, timeoutMs: number): NetworkError {
  const code = (error as { code?: string })?.code
  const where = `${request.method} ${request.path}`
  if (undici().isTimeout(error)) {
    return new NetworkError(`${where} timed out after ${timeoutMs / 1000} s (${baseUrl}); raise --timeout to wait longer.`, request, code)
  }
  if (code === 'ECONNREFUSED') return new NetworkError(`Cannot reach ${baseUrl}: connection refused (${where}).`, request, code)
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new NetworkError(`Cannot reach ${baseUrl}: the host name does not resolve (${where}).`, request, code)
  }
  const message = error instanceof Error ? error.message : String(error)
  return new NetworkError(`${where} to ${baseUrl} failed: ${message}`, request, code)
}
