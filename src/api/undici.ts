import { createRequire } from 'node:module'
import type { Dispatcher, Pool } from 'undici'

/**
 * undici's connection pool, its `request` and its errors, loaded without undici's index: the
 * index also loads fetch, WebSocket, caches and mocks, which costs a CLI run more than 100 ms
 * of start-up on every command. The pool and request live in undici's own files; should a
 * future undici move them, the full package is used instead.
 */
export interface UndiciParts {
  Pool: typeof Pool
  request: (dispatcher: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>
  /** Names of undici's timeout errors (HeadersTimeoutError, BodyTimeoutError). */
  isTimeout: (error: unknown) => boolean
}

const require = createRequire(import.meta.url)
let parts: UndiciParts | undefined

export function undici(): UndiciParts {
  if (parts) return parts
  const isTimeout = (error: unknown) =>
    ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'].includes((error as { code?: string })?.code ?? '')
  try {
    const PoolClass = require('undici/lib/dispatcher/pool.js') as typeof Pool
    const api = require('undici/lib/api/index.js') as { request?: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData> }
    if (typeof PoolClass === 'function' && typeof api.request === 'function') {
      const request = api.request
      parts = { Pool: PoolClass, request: (dispatcher, options) => request.call(dispatcher, options), isTimeout }
      return parts
    }
  } catch {
    // fall through to the full package
  }
  const full = require('undici') as typeof import('undici')
  parts = { Pool: full.Pool, request: (dispatcher, options) => dispatcher.request(options), isTimeout }
  return parts
}
