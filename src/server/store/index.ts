/**
 * The storage seam of the local server. Routes validate a request (shared zod schemas), call
 * a Store and present its records; they hold no SQL and no data of their own. A Store is
 * asynchronous and transactional so that any database can sit behind it: SQLite (./sqlite,
 * the embedded default) and PostgreSQL (./postgres, the same files one for one), with several
 * server processes on one database.
 *
 * Rules every implementation keeps:
 * - Nothing is assumed about other processes: a record read may change before the next call
 *   unless both happen in one `transaction`. Uniqueness (variable keys, page urls) comes
 *   from the database's constraints and surfaces as `UniqueViolation`, never from a read
 *   made first.
 * - A store may keep answers in memory only when every read proves them current against the
 *   database itself (see sqlite/page-cache.ts).
 * - Ids and timestamps are assigned by the store. Records are plain JSON values.
 */

export * from './types/alert-deliveries.js'
export * from './types/analytics.js'
export * from './types/checks.js'
export * from './types/errors.js'
export * from './types/heartbeats.js'
export * from './types/keys.js'
export * from './types/paging.js'
export * from './types/private-locations.js'
export * from './types/resources.js'
export * from './types/result-state.js'
export * from './types/scheduling.js'
export * from './types/status-pages.js'
export * from './types/store.js'
export * from './types/subscribers.js'
