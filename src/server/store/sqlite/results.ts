import { randomUUID } from 'node:crypto'
import type { Db } from './migrations.js'
import type {
  AlertNotificationRecord,
  AlertState,
  AlertStore,
  CheckStatusRecord,
  CheckStatusStore,
  ErrorGroupRecord,
  ErrorGroupStore,
  LastError,
} from '../index.js'
import type { Exec } from './index.js'
import type { Clock } from '../../../runner/clock.js'

/*
 * Results of check runs. Every write is one statement (an upsert), so that several processes
 * recording results of the same check never lose an update: longest/shortest runs are kept
 * with MAX/MIN by the database, and the flags of a status move only for a run newer than the
 * one they come from. The alert state is a read then a write: callers do both in one
 * transaction (see ../../results).
 */

interface StatusRow {
  name: string
  check_id: string
  has_failures: number
  has_errors: number
  is_degraded: number
  longest_run: number | null
  shortest_run: number | null
  last_run_location: string | null
  last_check_run_id: string | null
  ssl_days_remaining: number | null
  last_response_time: number | null
  created_at: string
  updated_at: string | null
}

function status(row: StatusRow): CheckStatusRecord {
  return {
    name: row.name,
    checkId: row.check_id,
    hasFailures: row.has_failures === 1,
    hasErrors: row.has_errors === 1,
    isDegraded: row.is_degraded === 1,
    longestRun: row.longest_run,
    shortestRun: row.shortest_run,
    lastRunLocation: row.last_run_location,
    lastCheckRunId: row.last_check_run_id,
    sslDaysRemaining: row.ssl_days_remaining,
    lastResponseTime: row.last_response_time,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

export function checkStatusRepository(db: Db, exec: Exec, clock: Clock): CheckStatusStore {
  const now = () => new Date(clock.now()).toISOString()
  const accountOf = db.prepare(`SELECT account_id FROM checks WHERE id = ?`).pluck()
  const forget = db.prepare(`DELETE FROM recorded_results WHERE recorded_at < ?`)
  const claim = db.prepare(`INSERT INTO recorded_results (result_id, check_id, recorded_at) VALUES (?, ?, ?) ON CONFLICT (result_id) DO NOTHING`)
  // a newer run (or the same instant) sets the flags; every run takes part in longest/shortest
  const newer = `excluded.last_started_at >= check_statuses.last_started_at`
  // a failure with an error that is not older than the newest one kept becomes it
  const newerError = `excluded.error_seen IS NOT NULL AND (check_statuses.error_seen IS NULL OR excluded.error_seen >= check_statuses.error_seen)`
  const errorBefore = db.prepare(`SELECT error_hash, error_seen, error_message FROM check_statuses WHERE check_id = ?`)
  const upsert = db.prepare(`
    INSERT INTO check_statuses (check_id, account_id, has_failures, has_errors, is_degraded, longest_run, shortest_run,
      last_run_location, last_check_run_id, ssl_days_remaining, last_response_time, last_started_at, created_at, updated_at,
      error_hash, error_seen, error_message)
    VALUES (@checkId, @account, @hasFailures, @hasErrors, @isDegraded, @responseTime, @responseTime,
      @runLocation, @checkRunId, @sslDaysRemaining, @responseTime, @startedAt, @time, @time, @errorHash, @errorSeen, @errorMessage)
    ON CONFLICT (check_id) DO UPDATE SET
      error_hash         = CASE WHEN ${newerError} THEN excluded.error_hash ELSE check_statuses.error_hash END,
      error_seen         = CASE WHEN ${newerError} THEN excluded.error_seen ELSE check_statuses.error_seen END,
      error_message      = CASE WHEN ${newerError} THEN excluded.error_message ELSE check_statuses.error_message END,
      has_failures       = CASE WHEN ${newer} THEN excluded.has_failures ELSE check_statuses.has_failures END,
      has_errors         = CASE WHEN ${newer} THEN excluded.has_errors ELSE check_statuses.has_errors END,
      is_degraded        = CASE WHEN ${newer} THEN excluded.is_degraded ELSE check_statuses.is_degraded END,
      last_run_location  = CASE WHEN ${newer} THEN excluded.last_run_location ELSE check_statuses.last_run_location END,
      last_check_run_id  = CASE WHEN ${newer} THEN excluded.last_check_run_id ELSE check_statuses.last_check_run_id END,
      ssl_days_remaining = CASE WHEN ${newer} THEN excluded.ssl_days_remaining ELSE check_statuses.ssl_days_remaining END,
      last_response_time = CASE WHEN ${newer} THEN excluded.last_response_time ELSE check_statuses.last_response_time END,
      last_started_at    = MAX(check_statuses.last_started_at, excluded.last_started_at),
      longest_run  = CASE WHEN excluded.longest_run IS NULL THEN check_statuses.longest_run
                          WHEN check_statuses.longest_run IS NULL THEN excluded.longest_run
                          ELSE MAX(check_statuses.longest_run, excluded.longest_run) END,
      shortest_run = CASE WHEN excluded.shortest_run IS NULL THEN check_statuses.shortest_run
                          WHEN check_statuses.shortest_run IS NULL THEN excluded.shortest_run
                          ELSE MIN(check_statuses.shortest_run, excluded.shortest_run) END,
      updated_at = excluded.updated_at
  `)
  const columns = `json_extract(c.body, '$.name') AS name, s.check_id, s.has_failures, s.has_errors, s.is_degraded, s.longest_run,
    s.shortest_run, s.last_run_location, s.last_check_run_id, s.ssl_days_remaining, s.last_response_time, s.created_at, s.updated_at`
  const list = db.prepare(`SELECT ${columns} FROM check_statuses s JOIN checks c ON c.id = s.check_id WHERE c.account_id = ? ORDER BY c.seq`)
  const page = db.prepare(`SELECT ${columns} FROM check_statuses s JOIN checks c ON c.id = s.check_id WHERE c.account_id = ? ORDER BY c.seq LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) FROM check_statuses s JOIN checks c ON c.id = s.check_id WHERE c.account_id = ?`).pluck()
  const byId = db.prepare(`SELECT ${columns} FROM check_statuses s JOIN checks c ON c.id = s.check_id WHERE c.account_id = ? AND s.check_id = ?`)

  return {
    accountOf: (checkId) => exec(() => accountOf.get(checkId) as string | undefined),
    claimResult: (resultId, checkId) => exec(() => claim.run(resultId, checkId, now()).changes === 1),
    forgetResultsBefore: (time) => exec(() => forget.run(time).changes),
    record: (account, checkId, update) =>
      exec(() => {
        const { error } = update
        // a failure: the newest error before it (the transaction holds the database's write lock)
        const before = error
          ? (errorBefore.get(checkId) as { error_hash: string | null; error_seen: string | null; error_message: string | null } | undefined)
          : undefined
        upsert.run({
          checkId,
          account,
          hasFailures: update.hasFailures ? 1 : 0,
          hasErrors: update.hasErrors ? 1 : 0,
          isDegraded: update.isDegraded ? 1 : 0,
          responseTime: update.responseTime,
          runLocation: update.runLocation,
          checkRunId: update.checkRunId,
          sslDaysRemaining: update.sslDaysRemaining,
          startedAt: update.startedAt,
          time: now(),
          errorHash: error?.errorHash ?? null,
          errorSeen: error?.seenAt ?? null,
          errorMessage: error?.rawErrorMessage ?? null,
        })
        return before?.error_hash && before.error_seen && before.error_message !== null
          ? ({ errorHash: before.error_hash, seenAt: before.error_seen, rawErrorMessage: before.error_message } satisfies LastError)
          : undefined
      }),
    list: (account) => exec(() => (list.all(account) as StatusRow[]).map(status)),
    page: (account, paging) =>
      exec(() =>
        db.transaction(() => ({
          items: (page.all(account, paging.limit, paging.offset) as StatusRow[]).map(status),
          total: count.get(account) as number,
        }))(),
      ),
    get: (account, checkId) =>
      exec(() => {
        const row = byId.get(account, checkId) as StatusRow | undefined
        return row && status(row)
      }),
  }
}

interface ErrorGroupRow {
  id: string
  check_id: string
  error_hash: string
  raw_error_message: string | null
  cleaned_error_message: string
  first_seen: string
  last_seen: string
  archived_until_next_event: number
  archive_for_ever: number
}

function errorGroup(row: ErrorGroupRow): ErrorGroupRecord {
  return {
    id: row.id,
    checkId: row.check_id,
    errorHash: row.error_hash,
    rawErrorMessage: row.raw_error_message,
    cleanedErrorMessage: row.cleaned_error_message,
    firstSeen: row.first_seen,
    lastSeen: row.last_seen,
    archivedUntilNextEvent: row.archived_until_next_event === 1,
    archiveForEver: row.archive_for_ever === 1,
  }
}

export function errorGroupRepository(db: Db, exec: Exec): ErrorGroupStore {
  // its lastSeen and message those of its check's newest error (in the check's status) when that is its hash and newer (see ../postgres/results.ts)
  const columns = `g.id, g.check_id, g.error_hash,
    CASE WHEN s.error_seen >= g.last_seen THEN s.error_message ELSE g.raw_error_message END AS raw_error_message,
    g.cleaned_error_message, g.first_seen, CASE WHEN s.error_seen > g.last_seen THEN s.error_seen ELSE g.last_seen END AS last_seen,
    g.archived_until_next_event, g.archive_for_ever`
  const groups = `error_groups g LEFT JOIN check_statuses s ON s.check_id = g.check_id AND s.error_hash = g.error_hash`
  // a known hash: the newest message and time win, the group comes back from "archived until
  // the next event"; archive_for_ever is left as it is
  const upsertSql = `
    INSERT INTO error_groups (id, account_id, check_id, error_hash, raw_error_message, cleaned_error_message, first_seen, last_seen)
    VALUES (@id, @account, @checkId, @errorHash, @raw, @cleaned, @seenAt, @seenAt)
    ON CONFLICT (check_id, error_hash) DO UPDATE SET
      raw_error_message = CASE WHEN excluded.last_seen >= error_groups.last_seen THEN excluded.raw_error_message ELSE error_groups.raw_error_message END,
      first_seen = MIN(error_groups.first_seen, excluded.first_seen),
      last_seen  = MAX(error_groups.last_seen, excluded.last_seen),
      archived_until_next_event = 0
  `
  const upsert = db.prepare(upsertSql)
  // the hash the status holds: written only to un-archive it or for an older first failure
  const upsertKnown = db.prepare(`${upsertSql} WHERE error_groups.archived_until_next_event = 1 OR excluded.first_seen < error_groups.first_seen`)
  const leave = db.prepare(
    `UPDATE error_groups SET last_seen = @seenAt, raw_error_message = @raw WHERE check_id = @checkId AND error_hash = @errorHash AND last_seen < @seenAt`,
  )
  const where = `g.account_id = @account AND (@checkId IS NULL OR g.check_id = @checkId)`
  const page = db.prepare(`SELECT ${columns} FROM ${groups} WHERE ${where} ORDER BY g.seq LIMIT @limit OFFSET @offset`)
  const count = db.prepare(`SELECT count(*) FROM error_groups g WHERE ${where}`).pluck()
  const byId = db.prepare(`SELECT ${columns} FROM ${groups} WHERE g.account_id = ? AND g.id = ?`)
  const update = db.prepare(`
    UPDATE error_groups SET
      archive_for_ever = COALESCE(@archiveForEver, archive_for_ever),
      archived_until_next_event = COALESCE(@archivedUntilNextEvent, archived_until_next_event)
    WHERE account_id = @account AND id = @id
  `)
  const get = (account: string, id: string) => {
    const row = byId.get(account, id) as ErrorGroupRow | undefined
    return row && errorGroup(row)
  }
  const flag = (value: boolean | undefined) => (value === undefined ? null : value ? 1 : 0)

  return {
    record: (account, checkId, event, previous) =>
      exec(() => {
        const known = previous?.errorHash === event.errorHash
        // the status moves from the previous error to this one: the previous group keeps what the status held of it
        if (previous && !known && event.seenAt >= previous.seenAt)
          leave.run({ checkId, errorHash: previous.errorHash, seenAt: previous.seenAt, raw: previous.rawErrorMessage })
        ;(known ? upsertKnown : upsert).run({
          id: randomUUID(),
          account,
          checkId,
          errorHash: event.errorHash,
          raw: event.rawErrorMessage,
          cleaned: event.cleanedErrorMessage,
          seenAt: event.seenAt,
        })
      }),
    list: (account, query) =>
      exec(() => {
        const params = { account, checkId: query.checkId ?? null, limit: query.limit, offset: query.offset }
        return { items: (page.all(params) as ErrorGroupRow[]).map(errorGroup), total: count.get(params) as number }
      }),
    get: (account, id) => exec(() => get(account, id)),
    update: (account, id, flags) =>
      exec(() => {
        const changes = update.run({
          account,
          id,
          archiveForEver: flag(flags.archiveForEver),
          archivedUntilNextEvent: flag(flags.archivedUntilNextEvent),
        }).changes
        return changes === 0 ? undefined : get(account, id)
      }),
  }
}

interface NotificationRow {
  id: string
  check_id: string
  kind: AlertNotificationRecord['kind']
  check_run_id: string | null
  created_at: string
}

function notification(row: NotificationRow): AlertNotificationRecord {
  return { id: row.id, checkId: row.check_id, kind: row.kind, checkRunId: row.check_run_id, created_at: row.created_at }
}

export function alertRepository(db: Db, exec: Exec, clock: Clock): AlertStore {
  const now = () => new Date(clock.now()).toISOString()
  const stateOf = db.prepare(`SELECT body FROM alert_states WHERE check_id = ?`).pluck()
  const save = db.prepare(`
    INSERT INTO alert_states (check_id, account_id, body, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (check_id) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at
  `)
  const insert = db.prepare(`INSERT INTO alert_notifications (id, account_id, check_id, kind, check_run_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
  const columns = 'id, check_id, kind, check_run_id, created_at'
  const list = db.prepare(`SELECT ${columns} FROM alert_notifications WHERE account_id = ? ORDER BY seq`)
  const listByCheck = db.prepare(`SELECT ${columns} FROM alert_notifications WHERE account_id = ? AND check_id = ? ORDER BY seq`)

  return {
    state: (checkId) =>
      exec(() => {
        const body = stateOf.get(checkId) as string | undefined
        return body === undefined ? undefined : (JSON.parse(body) as AlertState)
      }),
    save: (account, checkId, state) =>
      exec(() => {
        save.run(checkId, account, JSON.stringify(state), now())
      }),
    notify: (account, checkId, kind, checkRunId) =>
      exec(() => {
        const record = { id: randomUUID(), check_id: checkId, kind, check_run_id: checkRunId, created_at: now() }
        insert.run(record.id, account, checkId, kind, checkRunId, record.created_at)
        return notification(record)
      }),
    notifications: (account, checkId) =>
      exec(() => ((checkId === undefined ? list.all(account) : listByCheck.all(account, checkId)) as NotificationRow[]).map(notification)),
  }
}
