import { randomUUID } from 'node:crypto'
import type { Db } from './migrations.js'
import type { HeartbeatEventRecord, HeartbeatRecord, HeartbeatStore } from '../index.js'
import type { Exec } from './index.js'

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
export function heartbeatRepository(db: Db, exec: Exec): HeartbeatStore {
  const upsert = db.prepare(`INSERT INTO heartbeats (check_id, account_id, token, period_ms, grace_ms, since) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (check_id) DO UPDATE SET period_ms = excluded.period_ms, grace_ms = excluded.grace_ms`)
  const byToken = db.prepare(`SELECT * FROM heartbeats WHERE token = ?`)
  const byCheck = db.prepare(`SELECT * FROM heartbeats WHERE check_id = ? AND account_id = ?`)
  const ping = db.prepare(`UPDATE heartbeats SET since = max(since, ?) WHERE check_id = ?`)
  const overdue = db.prepare(`SELECT * FROM heartbeats WHERE ${NEXT_MISSED} + period_ms + grace_ms < ?`)
  const markFailing = db.prepare(`UPDATE heartbeats SET failed_since = ? WHERE check_id = ? AND ${NEXT_MISSED} = ?`)
  const insertEvent = db.prepare(`INSERT INTO heartbeat_events (id, check_id, account_id, state, at, source, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?)`)
  const events = db.prepare(
    `SELECT * FROM (SELECT * FROM heartbeat_events WHERE check_id = ? AND account_id = ? AND at >= ? AND at < ? ORDER BY at DESC, seq DESC LIMIT ?) ORDER BY at, seq`,
  )
  const prune = db.prepare(`DELETE FROM heartbeat_events WHERE at < ?`)
  const one = db.prepare(`SELECT * FROM heartbeat_events WHERE id = ? AND check_id = ? AND account_id = ?`)
  return {
    save: (account, checkId, token, periodMs, graceMs, now) => exec(() => void upsert.run(checkId, account, token, periodMs, graceMs, now)),
    byToken: (token) =>
      exec(() => {
        const row = byToken.get(token) as Row | undefined
        return row && record(row)
      }),
    get: (account, checkId) =>
      exec(() => {
        const row = byCheck.get(checkId, account) as Row | undefined
        return row && record(row)
      }),
    ping: (checkId, at) => exec(() => void ping.run(at, checkId)),
    overdue: (now) => exec(() => (overdue.all(now) as Row[]).map(record)),
    markFailing: (checkId, start) => exec(() => markFailing.run(start, checkId, start).changes > 0),
    addEvent: (account, e) =>
      exec(() => {
        const id = randomUUID()
        insertEvent.run(id, e.checkId, account, e.state, e.at, e.source, e.userAgent)
        return { id, ...e }
      }),
    events: (account, checkId, from, to, limit) => exec(() => (events.all(checkId, account, from, to, limit ?? -1) as EventRow[]).map(event)),
    pruneEvents: (before) => exec(() => prune.run(before).changes),
    event: (account, checkId, id) =>
      exec(() => {
        const row = one.get(id, checkId, account) as EventRow | undefined
        return row && event(row)
      }),
  }
}
