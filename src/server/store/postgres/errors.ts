import { StorePoolSaturated, StoreUnavailable } from '../index.js'

/*
 * Which errors of the driver mean "the database is away" (restarting, shut down, unreachable,
 * out of room) rather than "this statement is wrong": those become StoreUnavailable, which the
 * server answers with 503 and its background work waits out.
 */

/** SQLSTATE classes and codes: connection exception, operator intervention (shutdown), insufficient resources. */
const UNAVAILABLE_CODE = /^(08|57P0[1-3]|53)/

/** Socket errors of the connection to the database. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED'])

/** The driver's own words for a connection that is gone or never came (pg and pg-pool throw plain Errors). */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  // (a pool's wait for a connection: storeError tells it apart when it knows the pool)
  /^timeout exceeded when trying to connect/,
  /not queryable/,
  /^Client network socket disconnected/,
  /^Query read timeout/,
]

export function isUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailable) return true
  if (!(error instanceof Error)) return false
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && (UNAVAILABLE_CODE.test(code) || SOCKET_CODES.has(code))) return true
  return DRIVER_MESSAGES.some((pattern) => pattern.test(error.message))
}

/** The error as the store throws it: StoreUnavailable when the database is away, else unchanged. */
export function unavailableOr(error: unknown): unknown {
  if (error instanceof StoreUnavailable || !isUnavailable(error)) return error
  return new StoreUnavailable(`The PostgreSQL database is unavailable: ${(error as Error).message}`, { cause: error })
}

/** pg-pool's words when a wait for a connection of a full pool ran out (a new connection that times out says otherwise). */
const POOL_TIMEOUT = /^timeout exceeded when trying to connect/

/** A pool as its errors name it. */
export interface NamedPool {
  name: string
  size: number
  waitMs: number
  /** waits that ran out, counted */
  saturated: number
}

/**
 * The error as the store throws it, `pool` being the pool the statement waited on for a
 * connection: StorePoolSaturated when that wait ran out (every connection busy: the database is
 * up), StoreUnavailable when the database is away, else unchanged.
 */
export function storeError(error: unknown, pool?: NamedPool): unknown {
  if (pool && error instanceof Error && !(error instanceof StoreUnavailable) && POOL_TIMEOUT.test(error.message)) {
    pool.saturated++
    return new StorePoolSaturated(
      `The database pool is saturated: all ${pool.size} connections of the ${pool.name} pool stayed busy for ${pool.waitMs / 1000} s (the database is up; the server is overloaded)`,
      pool.name,
      { cause: error },
    )
  }
  return unavailableOr(error)
}
