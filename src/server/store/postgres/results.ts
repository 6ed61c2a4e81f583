import { randomUUID } from 'node:crypto'
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
import type { Sql } from './index.js'
import type { Clock } from '../../../runner/clock.js'

/*
 * Results of check runs. Every write is one statement (an upsert), so that several servers
 * recording results of the same check never lose an update: longest/shortest runs are kept
 * with GREATEST/LEAST by the database, and the flags of a status move only for a run newer
 * than the one they come from. The alert state is a read then a write: callers do both in one
 * transaction, and the read locks the check's alert state until that transaction ends.
 */

interface StatusRow {
  body: string
  check_id: string
  has_failures: boolean
  has_errors: boolean
  is_degraded: boolean
  longest_run: number | null
  shortest_run: number | null
  last_run_location: string | null
  last_check_run_id: string | null
  ssl_days_remaining: number | null
  last_response_time: number | null
  created_at: string
  updated_at: string | null
}

const status = (row: StatusRow): CheckStatusRecord => ({
  name: (JSON.parse(row.body) as { name: string }).name,
  checkId: row.check_id,
  hasFailures: row.has_failures,
  hasErrors: row.has_errors,
  isDegraded: row.is_degraded,
  longestRun: row.longest_run,
  shortestRun: row.shortest_run,
  lastRunLocation: row.last_run_location,
  lastCheckRunId: row.last_check_run_id,
  sslDaysRemaining: row.ssl_days_remaining,
  lastResponseTime: row.last_response_time,
  created_at: row.created_at,
  updated_at: row.updated_at,
})

// a newer run (or the same instant) sets the flags; every run takes part in longest/shortest
const NEWER = `excluded.last_started_at >= check_statuses.last_started_at`
// a failure with an error that is not older than the newest one kept becomes it
const NEWER_ERROR = `excluded.error_seen IS NOT NULL AND (check_statuses.error_seen IS NULL OR excluded.error_seen >= check_statuses.error_seen)`
/** A run's status: the newest run's flags, the newest error, the extremes of every run. */
const STATUS_UPSERT = `
  INSERT INTO check_statuses (check_id, account_id, has_failures, has_errors, is_degraded, longest_run, shortest_run,
    last_run_location, last_check_run_id, ssl_days_remaining, last_response_time, last_started_at, created_at, updated_at,
    error_hash, error_seen, error_message)
  VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, $6, $10, $11, $11, $12, $13, $14)
  ON CONFLICT (check_id) DO UPDATE SET
    error_hash         = CASE WHEN ${NEWER_ERROR} THEN excluded.error_hash ELSE check_statuses.error_hash END,
    error_seen         = CASE WHEN ${NEWER_ERROR} THEN excluded.error_seen ELSE check_statuses.error_seen END,
    error_message      = CASE WHEN ${NEWER_ERROR} THEN excluded.error_message ELSE check_statuses.error_message END,
    has_failures       = CASE WHEN ${NEWER} THEN excluded.has_failures ELSE check_statuses.has_failures END,
    has_errors         = CASE WHEN ${NEWER} THEN excluded.has_errors ELSE check_statuses.has_errors END,
    is_degraded        = CASE WHEN ${NEWER} THEN excluded.is_degraded ELSE check_statuses.is_degraded END,
    last_run_location  = CASE WHEN ${NEWER} THEN excluded.last_run_location ELSE check_statuses.last_run_location END,
    last_check_run_id  = CASE WHEN ${NEWER} THEN excluded.last_check_run_id ELSE check_statuses.last_check_run_id END,
    ssl_days_remaining = CASE WHEN ${NEWER} THEN excluded.ssl_days_remaining ELSE check_statuses.ssl_days_remaining END,
    last_response_time = CASE WHEN ${NEWER} THEN excluded.last_response_time ELSE check_statuses.last_response_time END,
    last_started_at    = GREATEST(check_statuses.last_started_at, excluded.last_started_at),
    longest_run        = GREATEST(check_statuses.longest_run, excluded.longest_run),
    shortest_run       = LEAST(check_statuses.shortest_run, excluded.shortest_run),
    updated_at         = excluded.updated_at`

export function checkStatusRepository(sql: Sql, clock: Clock): CheckStatusStore {
  const now = () => new Date(clock.now()).toISOString()
  // the name is read from the body here, not by the database: a body may hold "\u0000", which jsonb refuses
  const columns = `c.body, s.check_id, s.has_failures, s.has_errors, s.is_degraded, s.longest_run,
    s.shortest_run, s.last_run_location, s.last_check_run_id, s.ssl_days_remaining, s.last_response_time, s.created_at, s.updated_at`

  return {
    accountOf: async (checkId) => (await sql.rows<{ account_id: string }>(`SELECT account_id FROM checks WHERE id = $1`, [checkId]))[0]?.account_id,
    claimResult: async (resultId, checkId) =>
      (await sql.run(`INSERT INTO recorded_results (result_id, check_id, recorded_at) VALUES ($1, $2, $3) ON CONFLICT (result_id) DO NOTHING`, [
        resultId,
        checkId,
        now(),
      ])) === 1,
    forgetResultsBefore: (time) => sql.run(`DELETE FROM recorded_results WHERE recorded_at < $1`, [time]),
    record: async (account, checkId, update) => {
      const { error } = update
      // a failure: the newest error before it, the status locked (FOR UPDATE) until the transaction ends, so that the
      // error groups written after it follow the status the other results of the check see
      const [before] = error
        ? await sql.rows<{ error_hash: string | null; error_seen: string | null; error_message: string | null }>(
            `SELECT error_hash, error_seen, error_message FROM check_statuses WHERE check_id = $1 FOR UPDATE`,
            [checkId],
          )
        : []
      await sql.run(STATUS_UPSERT, [
        checkId,
        account,
        update.hasFailures,
        update.hasErrors,
        update.isDegraded,
        update.responseTime,
        update.runLocation,
        update.checkRunId,
        update.sslDaysRemaining,
        update.startedAt,
        now(),
        error?.errorHash ?? null,
        error?.seenAt ?? null,
        error?.rawErrorMessage ?? null,
      ])
      return lastError(before)
    },
    list: async (account) =>
      (
        await sql.rows<StatusRow>(`SELECT ${columns} FROM check_statuses s JOIN checks c ON c.id = s.check_id WHERE c.account_id = $1 ORDER BY c.seq`, [
          account,
        ])
      ).map(status),
    page: async (account, paging) => {
      // one statement: the page and the total of one snapshot
      const rows = await sql.rows<StatusRow & { total: number }>(
        `SELECT ${columns}, count(*) OVER ()::int AS total
        FROM check_statuses s JOIN checks c ON c.id = s.check_id WHERE c.account_id = $1 ORDER BY c.seq LIMIT $2 OFFSET $3`,
        [account, paging.limit, paging.offset],
      )
      const total =
        rows.length > 0
          ? rows[0].total
          : Number(
              (
                await sql.rows<{ n: string | number }>(
                  `SELECT count(*) AS n FROM check_statuses s JOIN checks c ON c.id = s.check_id WHERE c.account_id = $1`,
                  [account],
                )
              )[0].n,
            )
      return { items: rows.map(status), total }
    },
    get: async (account, checkId) => {
      const [row] = await sql.rows<StatusRow>(
        `SELECT ${columns} FROM check_statuses s JOIN checks c ON c.id = s.check_id WHERE c.account_id = $1 AND s.check_id = $2`,
        [account, checkId],
      )
      return row && status(row)
    },
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
  archived_until_next_event: boolean
  archive_for_ever: boolean
}

const errorGroup = (row: ErrorGroupRow): ErrorGroupRecord => ({
  id: row.id,
  checkId: row.check_id,
  errorHash: row.error_hash,
  rawErrorMessage: row.raw_error_message,
  cleanedErrorMessage: row.cleaned_error_message,
  firstSeen: row.first_seen,
  lastSeen: row.last_seen,
  archivedUntilNextEvent: row.archived_until_next_event,
  archiveForEver: row.archive_for_ever,
})

const lastError = (row: { error_hash: string | null; error_seen: string | null; error_message: string | null } | undefined): LastError | undefined =>
  row?.error_hash && row.error_seen && row.error_message !== null
    ? { errorHash: row.error_hash, seenAt: row.error_seen, rawErrorMessage: row.error_message }
    : undefined

/**
 * A group's columns, its lastSeen and message those of its check's newest error (in the
 * check's status) when that is its hash and newer: a failure repeating the newest error
 * writes its status only (see ErrorGroupStore.record).
 */
const GROUP_COLUMNS = `g.id, g.check_id, g.error_hash,
  CASE WHEN s.error_seen >= g.last_seen THEN s.error_message ELSE g.raw_error_message END AS raw_error_message,
  g.cleaned_error_message, g.first_seen, CASE WHEN s.error_seen > g.last_seen THEN s.error_seen ELSE g.last_seen END AS last_seen,
  g.archived_until_next_event, g.archive_for_ever`
const GROUPS = `error_groups g LEFT JOIN check_statuses s ON s.check_id = g.check_id AND s.error_hash = g.error_hash`

// a known hash: the newest message and time win, the group comes back from "archived until
// the next event"; archive_for_ever is left as it is
const GROUP_UPSERT = `
  INSERT INTO error_groups (id, account_id, check_id, error_hash, raw_error_message, cleaned_error_message, first_seen, last_seen)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
  ON CONFLICT (check_id, error_hash) DO UPDATE SET
    raw_error_message = CASE WHEN excluded.last_seen >= error_groups.last_seen THEN excluded.raw_error_message ELSE error_groups.raw_error_message END,
    first_seen = LEAST(error_groups.first_seen, excluded.first_seen),
    last_seen  = GREATEST(error_groups.last_seen, excluded.last_seen),
    archived_until_next_event = false`

/** The hash the status holds: the row is written only to un-archive it or for an older first failure (no dead row otherwise). */
const GROUP_KNOWN = `${GROUP_UPSERT} WHERE error_groups.archived_until_next_event OR excluded.first_seen < error_groups.first_seen`

export function errorGroupRepository(sql: Sql): ErrorGroupStore {
  const get = async (account: string, id: string) => {
    const [row] = await sql.rows<ErrorGroupRow>(`SELECT ${GROUP_COLUMNS} FROM ${GROUPS} WHERE g.account_id = $1 AND g.id = $2`, [account, id])
    return row && errorGroup(row)
  }
  return {
    record: async (account, checkId, event, previous) => {
      const known = previous?.errorHash === event.errorHash
      // the status moves from the previous error to this one: the previous group keeps what the status held of it
      if (previous && !known && event.seenAt >= previous.seenAt) {
        await sql.run(`UPDATE error_groups SET last_seen = $3, raw_error_message = $4 WHERE check_id = $1 AND error_hash = $2 AND last_seen < $3`, [
          checkId,
          previous.errorHash,
          previous.seenAt,
          previous.rawErrorMessage,
        ])
      }
      await sql.run(known ? GROUP_KNOWN : GROUP_UPSERT, [
        randomUUID(),
        account,
        checkId,
        event.errorHash,
        event.rawErrorMessage,
        event.cleanedErrorMessage,
        event.seenAt,
      ])
    },
    list: async (account, query) => {
      const where = `g.account_id = $1 AND ($2::text IS NULL OR g.check_id = $2)`
      const params = [account, query.checkId ?? null]
      const rows = await sql.rows<ErrorGroupRow & { total: number }>(
        `SELECT ${GROUP_COLUMNS}, count(*) OVER () AS total FROM ${GROUPS} WHERE ${where} ORDER BY g.seq LIMIT $3 OFFSET $4`,
        [...params, query.limit, query.offset],
      )
      // past the last page the window count is not there: counted apart
      const total =
        rows.length > 0
          ? Number(rows[0].total)
          : Number((await sql.rows<{ n: number }>(`SELECT count(*) AS n FROM error_groups g WHERE ${where}`, params))[0].n)
      return { items: rows.map(errorGroup), total }
    },
    get,
    update: async (account, id, flags) => {
      const changed = await sql.run(
        `
        UPDATE error_groups SET
          archive_for_ever = COALESCE($3, archive_for_ever),
          archived_until_next_event = COALESCE($4, archived_until_next_event)
        WHERE account_id = $1 AND id = $2`,
        [account, id, flags.archiveForEver ?? null, flags.archivedUntilNextEvent ?? null],
      )
      return changed === 0 ? undefined : get(account, id)
    },
  }
}

interface NotificationRow {
  id: string
  check_id: string
  kind: AlertNotificationRecord['kind']
  check_run_id: string | null
  created_at: string
}

const notification = (row: NotificationRow): AlertNotificationRecord => ({
  id: row.id,
  checkId: row.check_id,
  kind: row.kind,
  checkRunId: row.check_run_id,
  created_at: row.created_at,
})

export function alertRepository(sql: Sql, clock: Clock): AlertStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, check_id, kind, check_run_id, created_at'
  return {
    state: async (checkId) => {
      // held until the transaction ends: a second result of the check waits for this one's save
      await sql.rows(`SELECT pg_advisory_xact_lock(hashtextextended($1, 7266736174))`, [checkId])
      const [row] = await sql.rows<{ body: string }>(`SELECT body FROM alert_states WHERE check_id = $1`, [checkId])
      return row === undefined ? undefined : (JSON.parse(row.body) as AlertState)
    },
    save: async (account, checkId, state) => {
      await sql.run(
        `INSERT INTO alert_states (check_id, account_id, body, updated_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (check_id) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`,
        [checkId, account, JSON.stringify(state), now()],
      )
    },
    notify: async (account, checkId, kind, checkRunId) => {
      const record = { id: randomUUID(), check_id: checkId, kind, check_run_id: checkRunId, created_at: now() }
      await sql.run(`INSERT INTO alert_notifications (id, account_id, check_id, kind, check_run_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
        record.id,
        account,
        checkId,
        kind,
        checkRunId,
        record.created_at,
      ])
      return notification(record)
    },
    notifications: async (account, checkId) =>
      (
        await sql.rows<NotificationRow>(
          `SELECT ${columns} FROM alert_notifications WHERE account_id = $1 AND ($2::text IS NULL OR check_id = $2) ORDER BY seq`,
          [account, checkId ?? null],
        )
      ).map(notification),
  }
}
