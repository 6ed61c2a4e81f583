import { UserError } from '../errors.js'
/**
 * Errors of the Monitoring API, one class per kind of answer. Every one is a `UserError`: not a
 * bug in monitors (a refused request is the key's, the project's or the service's), so the CLI
 * prints its message as one line, never a stack. Messages name the
 * request (method and path) and say what to do; they never contain the API key.
 */

export interface ApiErrorBody {
  statusCode?: number
  error?: string
  message?: string
  attributes?: Record<string, unknown>
}

export interface RequestInfo {
  method: string
  path: string
}

export class ApiError extends UserError {
  readonly status: number
  readonly body: ApiErrorBody | undefined
  readonly request: RequestInfo

  constructor(message: string, status: number, request: RequestInfo, body?: ApiErrorBody) {
    super(message)
    this.name = new.target.name
    this.status = status
    this.request = request
    this.body = body
  }
}

const where = (r: RequestInfo) => `${r.method} ${r.path}`

export class UnauthorizedError extends ApiError {
  constructor(request: RequestInfo, body?: ApiErrorBody) {
    super(
      `${where(request)} was refused (401 ${body?.message ?? 'Unauthorized'}): the API key is missing or invalid. ` +
        'Set MONITORING_API_KEY or pass --api-key.',
      401,
      request,
      body,
    )
  }
}

export class ForbiddenError extends ApiError {
  constructor(request: RequestInfo, body?: ApiErrorBody) {
    // a refusal the server explains (a key of a private location claiming another's runs) is said as it is
    const said = body?.message && body.message !== 'Forbidden' ? body.message : undefined
    super(
      said
        ? `${where(request)} was refused (403 Forbidden): ${said}.`
        : `${where(request)} was refused (403 Forbidden): the API key's role does not allow this request ` +
            '(a read key may only read, an agent key only claim runs), or the key does not belong to the account ' +
            'given in MONITORING_ACCOUNT_ID / --account-id.',
      403,
      request,
      body,
    )
  }
}

export class RateLimitError extends ApiError {
  /** Seconds to wait before retrying, from `Retry-After` when the server sent it. */
  readonly retryAfterSeconds: number | undefined
  constructor(request: RequestInfo, body: ApiErrorBody | undefined, retryAfterSeconds: number | undefined) {
    const wait = retryAfterSeconds !== undefined ? ` Retry in ${retryAfterSeconds} s` : ' Retry later'
    super(`${where(request)} was rate limited (429 ${body?.message ?? 'Too Many Requests'}).${wait}, or lower --concurrency.`, 429, request, body)
    this.retryAfterSeconds = retryAfterSeconds
  }
}

export class ValidationError extends ApiError {
  /** Field paths the server named in `attributes.keys`. */
  readonly keys: string[]
  constructor(request: RequestInfo, body?: ApiErrorBody) {
    const keys = Array.isArray(body?.attributes?.keys) ? (body!.attributes!.keys as unknown[]).map(String) : []
    const fields = keys.length > 0 ? ` (fields: ${keys.join(', ')})` : ''
    super(`${where(request)} was rejected (400): ${body?.message ?? 'Bad Request'}${fields}`, 400, request, body)
    this.keys = keys
  }
}

export class NotFoundError extends ApiError {
  constructor(request: RequestInfo, body?: ApiErrorBody) {
    super(`${where(request)}: ${body?.message ?? 'Not Found'} (404)`, 404, request, body)
  }
}

export class ConflictError extends ApiError {
  constructor(request: RequestInfo, body?: ApiErrorBody) {
    super(`${where(request)}: ${body?.message ?? 'Conflict'} (409)`, 409, request, body)
  }
}

export class ServerError extends ApiError {
  constructor(status: number, request: RequestInfo, body?: ApiErrorBody) {
    super(`${where(request)} failed on the server (${status} ${body?.message ?? body?.error ?? ''})`.replace(/ \)$/, ')'), status, request, body)
  }
}

/** The request never got an answer: connection refused, DNS failure, timeout. */
export class NetworkError extends UserError {
  readonly request: RequestInfo
  readonly code: string | undefined
  /** False when the request certainly never reached the server (connection refused, no DNS). */
  readonly maybeSent: boolean
  constructor(message: string, request: RequestInfo, code?: string, maybeSent = true) {
    super(message)
    this.name = 'NetworkError'
    this.request = request
    this.code = code
    this.maybeSent = maybeSent
  }
}

/** Maps an HTTP error answer to its error class. */
export function apiErrorFor(
  status: number,
  request: RequestInfo,
  body: ApiErrorBody | undefined,
  headers: Record<string, string | string[] | undefined>,
): ApiError {
  switch (status) {
    case 400:
      return new ValidationError(request, body)
    case 401:
      return new UnauthorizedError(request, body)
    case 403:
      return new ForbiddenError(request, body)
    case 404:
      return new NotFoundError(request, body)
    case 409:
      return new ConflictError(request, body)
    case 429: {
      const raw = headers['retry-after']
      const seconds = Number(Array.isArray(raw) ? raw[0] : raw)
      return new RateLimitError(request, body, Number.isFinite(seconds) ? seconds : undefined)
    }
    default:
      if (status >= 500) return new ServerError(status, request, body)
      if (status >= 300 && status < 400) {
        const location = headers.location
        return new ApiError(
          `${where(request)} answered with a redirect (${status}${location ? ` to ${location}` : ''}); redirects are not followed: check the API URL.`,
          status,
          request,
          body,
        )
      }
      return new ApiError(`${where(request)} failed (${status} ${body?.message ?? body?.error ?? ''})`.trim(), status, request, body)
  }
}
