import type { Sql } from './index.js'

/** A key's fixed window as the database counts it for every server. */
export interface SharedWindow {
  count: number
  /** ms */
  resetAt: number
}

/*
 * The rate limit's windows in the database, so that a key has one limit however many servers
 * answer it: one upsert per request counts it (a window that ended starts again at 1).
 */
export function rateWindowRepository(sql: Sql) {
  return {
    /** counts one request of the key (when `spend`) and answers the window as it now stands */
    async hit(keyHash: string, max: number, windowMs: number, now: number, spend: boolean): Promise<SharedWindow> {
      if (!spend) {
        const [row] = await sql.rows<{ started_at: number; count: number }>(`SELECT started_at, count FROM rate_windows WHERE key_hash = $1`, [keyHash])
        if (!row || row.started_at + windowMs <= now) return { count: 0, resetAt: now + windowMs }
        return { count: row.count, resetAt: row.started_at + windowMs }
      }
      // a request over the limit is not counted, so the count stays at most max + 1
      const [row] = await sql.rows<{ started_at: number; count: number }>(
        `
        INSERT INTO rate_windows (key_hash, started_at, count) VALUES ($1, $2::bigint, 1)
        ON CONFLICT (key_hash) DO UPDATE SET
          started_at = CASE WHEN rate_windows.started_at + $3::bigint <= $2::bigint THEN $2::bigint ELSE rate_windows.started_at END,
          count      = CASE WHEN rate_windows.started_at + $3::bigint <= $2::bigint THEN 1 ELSE LEAST(rate_windows.count + 1, $4::int + 1) END
        RETURNING started_at, count`,
        [keyHash, now, windowMs, max],
      )
      return { count: row.count, resetAt: row.started_at + windowMs }
    },
  }
}
