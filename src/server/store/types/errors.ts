/** What a store throws when the database cannot take a call or a constraint refuses a write; its pools' state. (Re-exported by ../index.ts.) */

/**
 * The database cannot take the call now: PostgreSQL is restarting or unreachable, a SQLite file
 * is locked by another process beyond the busy timeout, its disk is full or it cannot be written.
 * Nothing of the call was stored, except when the database went away during a commit (then the
 * outcome is unknown, as for any lost answer). The server answers 503 with Retry-After, and its
 * background work tries again; nothing needs restarting once the database is back.
 */
export class StoreUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'StoreUnavailable'
  }
}

/**
 * The database is up, but every connection of the server's pool stayed busy for the whole wait
 * for one (PostgreSQL: `--db-pool-size` connections, all in transactions or statements): the
 * server is overloaded, not cut off. A StoreUnavailable, so it is answered 503 with Retry-After
 * and background work waits it out the same way; told apart in the log, the answer's message,
 * the metrics and the readiness probe (which it does not fail).
 */
export class StorePoolSaturated extends StoreUnavailable {
  constructor(
    message: string,
    readonly pool: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'StorePoolSaturated'
  }
}

/** The connections of a pool, now (PostgreSQL; for the metrics). */
export interface PoolStats {
  /** `main` (requests, recording, planning, claims), `auth` (key look-ups, the rate limit) or `lease` (lease extensions, readiness) */
  pool: string
  size: number
  total: number
  idle: number
  waiting: number
  /** times a wait for a connection ran out (the pool saturated) */
  saturated: number
}

/** Raised by a write that a unique constraint refuses (another writer may have got there first). */
export class UniqueViolation extends Error {
  constructor(
    readonly field: 'variable.key' | 'statusPage.url' | 'statusPage.customDomain',
    readonly value: string,
  ) {
    super(`${field} ${value} is taken`)
  }
}
