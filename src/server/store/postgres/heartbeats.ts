import { randomUUID } from 'node:crypto'
import type { HeartbeatEventRecord, HeartbeatRecord, HeartbeatStore } from '../index.js'
import type { Sql } from './index.js'

interface Row {
  check_id: string
  account_id: string
  token: string
  period_ms: number
  grace_ms: number
  since: number
  failed_since: number | null
}
interface EventRow {
  id: string
  check_id: string
  state: string
  at: number
  source: string | null
  user_agent: string | null
}

const record = (r: Row): HeartbeatRecord => ({
  checkId: r.check_id,
  account: r.account_id,
  token: r.token,
  periodMs: r.period_ms,
  graceMs: r.grace_ms,
  since: r.since,
  failedSince: r.failed_since,
})
/** The start of the check's first period not recorded as FAILING (HeartbeatRecord.failedSince). */
const NEXT_MISSED = '(CASE WHEN failed_since IS NULL OR failed_since < since THEN since ELSE failed_since + period_ms END)'
const event = (r: EventRow): HeartbeatEventRecord => ({ id: r.id, checkId: r.check_id, state: r.state, at: r.at, source: r.source, userAgent: r.user_agent })

/** Ping tokens, periods and events of heartbeat checks. */
export function heartbeatRepository(sql: Sql): HeartbeatStore {
  return {
    save: async (account, checkId, token, periodMs, graceMs, now) => {
      await sql.run(
        `INSERT INTO heartbeats (check_id, account_id, token, period_ms, grace_ms, since) VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (check_id) DO UPDATE SET period_ms = excluded.period_ms, grace_ms = excluded.grace_ms`,
        [checkId, account, token, periodMs, graceMs, now],
      )
    },
    byToken: async (token) => {
      const [row] = await sql.rows<Row>(`SELECT * FROM heartbeats WHERE token = $1`, [token])
      return row && record(row)
    },
    get: async (account, checkId) => {
      const [row] = await sql.rows<Row>(`SELECT * FROM heartbeats WHERE check_id = $1 AND account_id = $2`, [checkId, account])
      return row && record(row)
    },
    ping: async (checkId, at) => {
      await sql.run(`UPDATE heartbeats SET since = GREATEST(since, $1) WHERE check_id = $2`, [at, checkId])
    },
    overdue: async (now) => (await sql.rows<Row>(`SELECT * FROM heartbeats WHERE ${NEXT_MISSED} + period_ms + grace_ms < $1`, [now])).map(record),
    // a compare-and-set: of the processes sweeping one database, one records each period
    markFailing: async (checkId, start) =>
      (await sql.run(`UPDATE heartbeats SET failed_since = $2 WHERE check_id = $1 AND ${NEXT_MISSED} = $2`, [checkId, start])) > 0,
    addEvent: async (account, e) => {
      const id = randomUUID()
      await sql.run(`INSERT INTO heartbeat_events (id, check_id, account_id, state, at, source, user_agent) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
        id,
        e.checkId,
        account,
        e.state,
        e.at,
        e.source,
        e.userAgent,
      ])
      return { id, ...e }
    },
    events: async (account, checkId, from, to, limit) =>
      (
        await sql.rows<EventRow>(
          `SELECT * FROM (SELECT * FROM heartbeat_events WHERE check_id = $1 AND account_id = $2 AND at >= $3 AND at < $4 ORDER BY at DESC, seq DESC LIMIT $5) e
       ORDER BY at, seq`,
          [checkId, account, from, to, limit ?? null],
        )
      ).map(event),
    pruneEvents: (before) => sql.run(`DELETE FROM heartbeat_events WHERE at < $1`, [before]),
    event: async (account, checkId, id) => {
      const [row] = await sql.rows<EventRow>(`SELECT * FROM heartbeat_events WHERE id = $1 AND check_id = $2 AND account_id = $3`, [id, checkId, account])
      return row && event(row)
    },
  }
}
