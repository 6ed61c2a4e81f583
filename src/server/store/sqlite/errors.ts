import { StoreUnavailable } from '../index.js'

/*
 * Which errors of SQLite mean "the file cannot take this now" rather than "this statement is
 * wrong": another process holds its lock beyond the busy timeout, its disk is full, it cannot be
 * written or read. Those become StoreUnavailable, which the server answers with 503 and its
 * background work waits out.
 */

/** Result codes (better-sqlite3's `code`, extended codes included): busy, locked, full, I/O, read-only, cannot open. */
const UNAVAILABLE_CODE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|PROTOCOL|NOLFS)/

export function isUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailable) return true
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && UNAVAILABLE_CODE.test(code)
}

/** The error as the store throws it: StoreUnavailable when the file cannot take the call, else unchanged. */
export function unavailableOr(error: unknown): unknown {
  if (error instanceof StoreUnavailable || !isUnavailable(error)) return error
  const code = (error as { code: string }).code
  return new StoreUnavailable(`The SQLite database is unavailable: ${code} ${(error as Error).message}`, { cause: error })
}
