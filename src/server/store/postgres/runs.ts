import { randomUUID } from 'node:crypto'
import type {
  AgentStore,
  CheckResultRecord,
  ClaimedRun,
  CompleteOutcome,
  PlanOutcome,
  ResultStore,
  RunStore,
  ScheduleStore,
  SessionStore,
  SkipCount,
  SkipReason,
  StoredResultInput,
} from '../index.js'
import type { CheckGroup, MaintenanceWindow } from '../../../schema/index.js'
import type { Sql } from './index.js'
import { leaseOf, parseRunId, resultOfClaim, resultRecord as recordOfRun, type RunRow } from '../run-rows.js'
import { columnsOf, compactValues, dayOf, fullDetails, isPassing, leanDetails, PASSING_SQL, shapeOf, type CompactValues } from '../compact-rows.js'
import { compactRow, dropPartitions, getCompact, listResults, makeAhead, packHours, retentionCutoff } from './compact.js'
import type { Clock } from '../../../runner/clock.js'

/*
 * Due runs are rows of check_runs, shared by every server and agent on the database.
 * - Planning inserts with ON CONFLICT (run_key) DO NOTHING: one row per check, location and
 *   due time, however many servers plan the same due time (a run planned as skipped, too).
 * - Before claiming, the runs a newer due run of their check supersedes are skipped as late
 *   (SKIP_LATE), counted with their check, hour, location and reason in run_skips.
 * - A claim is one statement: the due rows are picked with FOR UPDATE SKIP LOCKED (a row
 *   another claimer is taking is passed over, never waited for or taken twice) and leased in
 *   the same UPDATE. Each claim bumps `claim_seq`; the run id handed out is
 *   "<row id>.<claim_seq>", so a runner whose lease expired and was claimed again can no longer
 *   complete the run.
 * - Completing locks the run's row (FOR UPDATE) in the caller's transaction: of two posts of
 *   the same run, the second sees it done.
 */

export interface ResultRow {
  id: string
  check_id: string
  session_id: string | null
  run_id: string
  run_location: string
  result_type: 'FINAL' | 'ATTEMPT'
  status: string
  has_failures: boolean
  has_errors: boolean
  is_degraded: boolean
  response_time: number | null
  started_at: string
  stopped_at: string
  error: string | null
  details: string
  created_at: string
}

export const resultRecord = (row: ResultRow): CheckResultRecord =>
  withDetails({
    id: row.id,
    checkId: row.check_id,
    sessionId: row.session_id,
    runId: row.run_id,
    runLocation: row.run_location,
    resultType: row.result_type,
    status: row.status,
    hasFailures: row.has_failures,
    hasErrors: row.has_errors,
    isDegraded: row.is_degraded,
    responseTime: row.response_time,
    startedAt: row.started_at,
    stoppedAt: row.stopped_at,
    error: row.error,
    details: JSON.parse(row.details) as Record<string, unknown>,
    created_at: row.created_at,
  })

/** Details stored lean (without the columns' fields) or whole (rows written before): whole. */
function withDetails(record: CheckResultRecord): CheckResultRecord {
  record.details = fullDetails(record.details, columnsOf(record))
  return record
}

const CLAIM = `
  WITH picked AS (
    SELECT r.seq FROM check_runs r JOIN checks c ON c.id = r.check_id
    WHERE r.state = 'due' AND r.due_at <= $1
      AND (r.lease_expires_at IS NULL OR r.lease_expires_at <= $1)
      AND ($2::text IS NULL OR r.account_id = $2)
      AND ($3::text[] IS NULL OR r.location = ANY($3::text[]))
      AND (NOT $4::boolean OR NOT EXISTS (
        SELECT 1 FROM agent_locations a WHERE a.account_id = r.account_id AND a.location = r.location AND a.expires_at > $1))
      AND (NOT $4::boolean OR NOT EXISTS (
        SELECT 1 FROM private_locations p WHERE p.account_id = r.account_id AND p.slug_name = r.location))
      AND (r.session_id IS NOT NULL OR c.activated)
      AND ($8::text[] IS NULL OR NOT (c.check_type = ANY($8::text[])))
      AND ($9::text[] IS NULL OR c.check_type = ANY($9::text[]))
    ORDER BY coalesce(r.waiting_since, r.due_at), r.due_at, r.seq
    LIMIT $5
    FOR UPDATE OF r SKIP LOCKED)
  UPDATE check_runs r SET claim_seq = r.claim_seq + 1, lease_owner = $6, lease_expires_at = $7, claimed_at = $1
  FROM picked, checks c
  WHERE r.seq = picked.seq AND c.id = r.check_id
  RETURNING r.id, r.account_id, r.check_id, r.location, r.due_at, r.session_id, r.claim_seq, r.lease_expires_at, c.body`

/**
 * The runs a newer due run of their check supersedes leave the claim's way, skipped as late
 * (rows being claimed right now are left alone), and are counted per check, hour of their due
 * time, location and reason in the same statement (in key order: two servers skipping runs of
 * the same checks take the counts' rows in one order). Answers them by check type and location.
 */
const SKIP_LATE = `
  WITH skipped AS (
    UPDATE check_runs r SET state = 'skipped', done_at = $1, skip_reason = 'late'
    WHERE r.seq IN (
      SELECT o.seq FROM check_runs o
      WHERE o.state = 'due' AND o.claim_seq = 0 AND o.session_id IS NULL AND o.due_at <= $1
        AND EXISTS (SELECT 1 FROM check_runs n WHERE n.check_id = o.check_id AND n.session_id IS NULL AND n.due_at > o.due_at AND n.due_at <= $1)
      FOR UPDATE SKIP LOCKED)
    RETURNING r.seq, r.check_id, r.account_id, r.location, r.due_at, r.skip_reason, coalesce(r.waiting_since, r.due_at) AS since),
  -- the runs that stay (their check's newest due) wait since the oldest skipped for them
  carried AS (
    UPDATE check_runs n SET waiting_since = LEAST(coalesce(n.waiting_since, n.due_at), w.since)
    FROM (SELECT check_id, min(since) AS since FROM skipped GROUP BY check_id) w
    WHERE n.check_id = w.check_id AND n.state = 'due' AND n.claim_seq = 0 AND n.session_id IS NULL AND n.due_at <= $1
      AND n.seq NOT IN (SELECT seq FROM skipped)),
  counted AS (${countSkips('skipped')})
  SELECT s.skip_reason AS reason, c.check_type, s.location, count(*)::int AS n FROM skipped s JOIN checks c ON c.id = s.check_id GROUP BY 1, 2, 3`

/** The upsert of the counts of skipped runs `rows` holds (check_id, account_id, location, due_at, skip_reason), in key order. */
function countSkips(rows: string): string {
  return `INSERT INTO run_skips (check_id, account_id, hour_start, location, reason, skipped, last_due_at)
    SELECT check_id, account_id, due_at - due_at % 3600000 AS hour_start, location, skip_reason, count(*)::int, max(due_at)
    FROM ${rows} WHERE skip_reason IS NOT NULL GROUP BY check_id, account_id, hour_start, location, skip_reason
    ORDER BY check_id COLLATE "C", hour_start, location COLLATE "C", skip_reason COLLATE "C"
    ON CONFLICT (check_id, hour_start, location, reason) DO UPDATE SET
      skipped = run_skips.skipped + excluded.skipped, last_due_at = GREATEST(run_skips.last_due_at, excluded.last_due_at)`
}

const skipCounts = (rows: Array<{ reason: SkipReason; check_type: string; location: string; n: number }>): SkipCount[] =>
  rows.map((r) => ({ reason: r.reason, checkType: r.check_type, location: r.location, count: Number(r.n) }))

/** The run a run id names, locked for the caller's transaction, with its claim number; none when another account's or of a claim not made yet. */
async function findRun(db: Sql, account: string | undefined, runId: string): Promise<{ row: RunRow; claim: number } | undefined> {
  const parsed = parseRunId(runId)
  if (!parsed) return undefined
  const [row] = await db.rows<RunRow>(`SELECT * FROM check_runs WHERE id = $1 FOR UPDATE`, [parsed.id])
  if (!row || (account !== undefined && row.account_id !== account) || parsed.claim > row.claim_seq) return undefined
  return { row, claim: parsed.claim }
}

/**
 * Extends a lease without waiting on any lock: the row is taken with SKIP LOCKED, so an
 * extension never queues behind the transaction recording the run (or a claim of it). A row
 * it passed over is read as committed: still due under this claim (being recorded right now),
 * the lease holds as it is; done under this claim, 'completed'; else lost or unknown.
 */
async function extendRun(
  sql: Sql,
  account: string | undefined,
  runId: string,
  leaseMs: number,
  now: number,
): Promise<number | 'lost' | 'unknown' | 'completed'> {
  const parsed = parseRunId(runId)
  if (!parsed) return 'unknown'
  const until = now + leaseMs
  const changed = await sql.run(
    `UPDATE check_runs SET lease_expires_at = $1 WHERE id = (
      SELECT id FROM check_runs WHERE id = $2 AND claim_seq = $3 AND state = 'due' AND ($4::text IS NULL OR account_id = $4) FOR UPDATE SKIP LOCKED)`,
    [until, parsed.id, parsed.claim, account ?? null],
  )
  if (changed > 0) return until
  const [row] = await sql.rows<RunRow>(`SELECT * FROM check_runs WHERE id = $1`, [parsed.id])
  if (!row || (account !== undefined && row.account_id !== account) || parsed.claim > row.claim_seq) return 'unknown'
  if (row.state === 'done' && row.done_claim === parsed.claim) return 'completed'
  if (row.state === 'due' && row.claim_seq === parsed.claim) return row.lease_expires_at ?? until
  return 'lost'
}

/**
 * Inserts the runs not planned yet; a run planned as skipped is a row already skipped, counted
 * in the same statement. Only the rows this statement inserted are counted, so however many
 * servers plan the same due times, each run is counted once.
 */
async function planRuns(sql: Sql, runs: Parameters<RunStore['plan']>[0]): Promise<PlanOutcome> {
  if (runs.length === 0) return { added: 0, skipped: [] }
  // in key order, so two servers planning the same runs take their keys in the same order
  const rows = await sql.rows<{ reason: SkipReason | null; check_type: string; location: string; n: number }>(
    `
    WITH inserted AS (
      INSERT INTO check_runs (id, run_key, account_id, check_id, location, due_at, stale_at, session_id, state, skip_reason, done_at)
      SELECT u.id, u.run_key, u.account_id, u.check_id, u.location, u.due_at, u.stale_at, u.session_id,
        CASE WHEN u.skip_reason IS NULL THEN 'due' ELSE 'skipped' END, u.skip_reason, CASE WHEN u.skip_reason IS NULL THEN NULL ELSE u.due_at END
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::text[])
        AS u(id, run_key, account_id, check_id, location, due_at, stale_at, session_id, skip_reason)
      WHERE EXISTS (SELECT 1 FROM checks c WHERE c.id = u.check_id AND c.account_id = u.account_id)
      ORDER BY u.run_key
      ON CONFLICT (run_key) DO NOTHING
      RETURNING check_id, account_id, location, due_at, skip_reason),
    counted AS (${countSkips('inserted')})
    SELECT i.skip_reason AS reason, c.check_type, i.location, count(*)::int AS n FROM inserted i JOIN checks c ON c.id = i.check_id GROUP BY 1, 2, 3`,
    [
      runs.map(() => randomUUID()),
      runs.map((r) => r.key),
      runs.map((r) => r.account),
      runs.map((r) => r.checkId),
      runs.map((r) => r.location),
      runs.map((r) => r.dueAt),
      runs.map((r) => r.staleAt),
      runs.map((r) => r.sessionId),
      runs.map((r) => r.skipReason ?? null),
    ],
  )
  const added = rows.filter((r) => r.reason === null).reduce((n, r) => n + Number(r.n), 0)
  return { added, skipped: skipCounts(rows.filter((r): r is typeof r & { reason: SkipReason } => r.reason !== null)) }
}

async function claimRuns(sql: Sql, q: Parameters<RunStore['claim']>[0]): Promise<ClaimedRun[]> {
  const rows = await sql.rows<RunRow & { body: string }>(CLAIM, [
    q.now,
    q.account ?? null,
    q.locations ?? null,
    q.skipAgentLocations === true,
    q.max,
    q.owner,
    q.now + q.leaseMs,
    q.skipCheckTypes ? [...q.skipCheckTypes] : null,
    q.onlyCheckTypes ? [...q.onlyCheckTypes] : null,
  ])
  return rows
    .sort((a, b) => a.due_at - b.due_at)
    .map(
      (row): ClaimedRun => ({
        runId: `${row.id}.${row.claim_seq}`,
        account: row.account_id,
        checkId: row.check_id,
        location: row.location,
        dueAt: row.due_at,
        leaseExpiresAt: row.lease_expires_at as number,
        sessionId: row.session_id,
        checkJson: row.body,
      }),
    )
}

type ResultToWrite = CheckResultRecord & { detailsText: string; template: boolean }

interface ResultOfRun {
  row: RunRow
  runId: string
  now: number
  createdAt: string
  check: { name?: unknown; checkType?: unknown } | undefined
}

/** One result of a claimed run: the run's check, location and time window, whatever the runner said; its details lean. */
function resultOfRun({ row, runId, now, createdAt, check }: ResultOfRun, sent: StoredResultInput, resultType: 'FINAL' | 'ATTEMPT'): ResultToWrite {
  const result = resultOfClaim(sent, { row, now, check })
  const details = JSON.parse(JSON.stringify({ ...result, resultType })) as Record<string, unknown>
  const record = recordOfRun(result, { id: randomUUID(), row, runId, resultType, createdAt, details })
  return { ...record, detailsText: leanDetails(details, columnsOf(record)), template: false }
}

/** The results of a run, oldest first: the attempts, then the FINAL result (one statement, in this order). */
async function insertResults(tx: Sql, { row, runId, createdAt }: ResultOfRun, records: readonly ResultToWrite[]): Promise<void> {
  if (records.length === 0) return
  await tx.run(
    `
    INSERT INTO check_results (id, account_id, check_id, session_id, run_id, run_location, result_type, status, has_failures, has_errors,
      is_degraded, response_time, started_at, stopped_at, error, details, created_at, is_template)
    SELECT u.id, $1, $2, $3, $4, u.run_location, u.result_type, u.status, u.has_failures, u.has_errors, u.is_degraded, u.response_time,
      u.started_at, u.stopped_at, u.error, u.details, $5, u.template
    FROM unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::boolean[], $11::boolean[], $12::boolean[], $13::float8[],
      $14::text[], $15::text[], $16::text[], $17::text[], $18::boolean[]) WITH ORDINALITY
      AS u(id, run_location, result_type, status, has_failures, has_errors, is_degraded, response_time, started_at, stopped_at, error, details, template, n)
    ORDER BY u.n`,
    [
      row.account_id,
      row.check_id,
      row.session_id,
      runId,
      createdAt,
      records.map((r) => r.id),
      records.map((r) => r.runLocation),
      records.map((r) => r.resultType),
      records.map((r) => r.status),
      records.map((r) => r.hasFailures),
      records.map((r) => r.hasErrors),
      records.map((r) => r.isDegraded),
      records.map((r) => r.responseTime),
      records.map((r) => r.startedAt),
      records.map((r) => r.stoppedAt),
      records.map((r) => r.error),
      records.map((r) => r.detailsText),
      records.map((r) => r.template),
    ],
  )
}

/**
 * The FINAL result as a compact row when it may be one and its shape is that of its check's and
 * location's newest template of its kind (passing, or failing: see ../compact-rows.ts) of the
 * same UTC day (read here: another server may have written one); answers its record then, else
 * marks it a template when it could have been compact.
 */
async function writeCompact(tx: Sql, checkSeq: number | undefined, now: number, final: ResultToWrite): Promise<CheckResultRecord | undefined> {
  const values: CompactValues | undefined = checkSeq === undefined ? undefined : compactValues(final)
  if (!values || checkSeq === undefined) return undefined
  const passing = isPassing(final)
  const [template] = await tx.rows<{
    seq: number
    status: string
    has_failures: boolean
    has_errors: boolean
    is_degraded: boolean
    error: string | null
    details: string
    created_at: string
  }>(
    `SELECT seq, status, has_failures, has_errors, is_degraded, error, details, created_at FROM check_results
    WHERE check_id = $1 AND run_location = $2 AND is_template AND ${passing ? '' : 'NOT '}${PASSING_SQL} ORDER BY seq DESC LIMIT 1`,
    [final.checkId, final.runLocation],
  )
  const shape = (t: NonNullable<typeof template>) =>
    shapeOf({ status: t.status, hasFailures: t.has_failures, hasErrors: t.has_errors, isDegraded: t.is_degraded, error: t.error }, t.details)
  if (template && dayOf(Date.parse(template.created_at)) === dayOf(now) && shape(template) === shapeOf(final, final.detailsText)) {
    const id = await compactRow(tx, checkSeq, final.runLocation, Number(template.seq), values)
    if (id === undefined) return undefined
    const { detailsText: _text, template: _template, ...record } = final
    return { ...record, id, runId: id }
  }
  final.template = true
  return undefined
}

async function completeRun(
  tx: Sql,
  account: string | undefined,
  runId: string,
  final: StoredResultInput,
  attempts: StoredResultInput[],
  now: number,
): Promise<CompleteOutcome> {
  const found = await findRun(tx, account, runId)
  if (!found) return { outcome: 'unknown' }
  const { row, claim } = found
  if (row.state === 'done') return row.done_claim === claim ? { outcome: 'duplicate' } : { outcome: 'lost' }
  if (row.claim_seq !== claim) return { outcome: 'lost' }
  const [checkRow] = await tx.rows<{ seq: number; body: string }>(`SELECT seq, body FROM checks WHERE id = $1`, [row.check_id])
  const check = checkRow ? (JSON.parse(checkRow.body) as { name?: unknown; checkType?: unknown }) : undefined
  const run: ResultOfRun = { row, runId, now, createdAt: new Date(now).toISOString(), check }
  const written = attempts.map((a) => resultOfRun(run, a, 'ATTEMPT'))
  const finalRecord = resultOfRun(run, final, 'FINAL')
  const compact = await writeCompact(tx, checkRow ? Number(checkRow.seq) : undefined, now, finalRecord)
  await insertResults(tx, run, compact ? written : [...written, finalRecord])
  await tx.run(`UPDATE check_runs SET state = 'done', done_claim = $1, done_at = $2, lease_expires_at = NULL WHERE id = $3`, [claim, now, row.id])
  const strip = ({ detailsText: _text, template: _template, ...record }: ResultToWrite): CheckResultRecord => withDetails(record)
  return {
    outcome: 'completed',
    final: compact ?? strip(finalRecord),
    attempts: written.map(strip),
    run: {
      runId,
      account: row.account_id,
      checkId: row.check_id,
      location: row.location,
      dueAt: row.due_at,
      leaseExpiresAt: row.lease_expires_at ?? now,
      sessionId: row.session_id,
      checkJson: checkRow?.body ?? '{}',
    },
  }
}

export function runRepository(sql: Sql): RunStore {
  return {
    plan: (runs) => planRuns(sql, runs),
    skipLate: async (now) => skipCounts(await sql.rows(SKIP_LATE, [now])),
    backlog: async (now, account) =>
      (
        await sql.rows<{ location: string; n: number; oldest: number }>(
          `
      SELECT location, count(*)::int AS n, min(due_at) AS oldest FROM check_runs
      WHERE state = 'due' AND claim_seq = 0 AND due_at <= $1 AND ($2::text IS NULL OR account_id = $2)
      GROUP BY location ORDER BY location COLLATE "C"`,
          [now, account ?? null],
        )
      ).map((r) => ({ location: r.location, due: Number(r.n), oldestDueAt: Number(r.oldest) })),
    skipped: async (account, fromHour, toHour, checkId) =>
      (
        await sql.rows<{ check_id: string; location: string; reason: SkipReason; n: number; last: number }>(
          `
      SELECT check_id, location, reason, sum(skipped)::int AS n, max(last_due_at) AS last FROM run_skips
      WHERE account_id = $1 AND hour_start >= $2 AND hour_start < $3 AND ($4::text IS NULL OR check_id = $4)
      GROUP BY check_id, location, reason ORDER BY check_id COLLATE "C", location COLLATE "C", reason COLLATE "C"`,
          [account, fromHour, toHour, checkId ?? null],
        )
      ).map((r) => ({ checkId: r.check_id, location: r.location, reason: r.reason, count: Number(r.n), lastDueAt: Number(r.last) })),
    pruneSkipped: (before) => sql.run(`DELETE FROM run_skips WHERE hour_start < $1`, [before - 3_600_000 + 1]),
    claim: (q) => claimRuns(sql, q),
    extend: (account, runId, leaseMs, now) => extendRun(sql, account, runId, leaseMs, now),
    lock: async (runIds) => {
      const ids = [...new Set(runIds.map((runId) => parseRunId(runId)?.id).filter((id): id is string => id !== undefined))].sort()
      if (ids.length > 1) await sql.run(`SELECT id FROM check_runs WHERE id = ANY($1::text[]) ORDER BY id COLLATE "C" FOR UPDATE`, [ids])
    },
    lease: async (account, runId, now) => {
      const parsed = parseRunId(runId)
      if (!parsed) return 'unknown'
      const [row] = await sql.rows<RunRow>(`SELECT * FROM check_runs WHERE id = $1 AND account_id = $2`, [parsed.id, account])
      if (!row || parsed.claim > row.claim_seq) return 'unknown'
      return leaseOf(row, parsed.claim, now)
    },
    complete: (account, runId, final, attempts, now) => sql.atomic((tx) => completeRun(tx, account, runId, final, attempts, now)),
    prune: async (before, now) => {
      await sql.run(`DELETE FROM agent_locations WHERE expires_at < $1`, [now])
      // a due run older than a day was never going to run (no runner serves its location)
      return sql.run(`DELETE FROM check_runs WHERE (state IN ('done', 'skipped') AND done_at < $1) OR (state = 'due' AND due_at < $2)`, [
        before,
        now - 86_400_000,
      ])
    },
  }
}

export function resultRepository(sql: Sql, clock: Clock): ResultStore {
  const columns = `id, check_id, session_id, run_id, run_location, result_type, status, has_failures, has_errors, is_degraded,
    response_time, started_at, stopped_at, error, details, created_at`
  return {
    list: (account, query) => listResults(sql, account, query),
    get: async (account, id, checkId) => {
      const cutoff = new Date(await retentionCutoff(sql)).toISOString()
      const [row] = await sql.rows<ResultRow>(`SELECT ${columns} FROM check_results WHERE id = $1 AND account_id = $2 AND stopped_at >= $3`, [
        id,
        account,
        cutoff,
      ])
      return row ? resultRecord(row) : getCompact(sql, account, id, checkId)
    },
    ofSession: async (account, sessionId) =>
      (await sql.rows<ResultRow>(`SELECT ${columns} FROM check_results WHERE session_id = $1 AND account_id = $2 ORDER BY seq`, [sessionId, account])).map(
        resultRecord,
      ),
    add: async (account, checkId, id, result) =>
      (await sql.run(
        `
      INSERT INTO check_results (id, account_id, check_id, session_id, run_id, run_location, result_type, status, has_failures, has_errors,
        is_degraded, response_time, started_at, stopped_at, error, details, created_at)
      VALUES ($1, $2, $3, NULL, $1, $4, 'FINAL', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
      ON CONFLICT (id) DO NOTHING`,
        [
          id,
          account,
          checkId,
          result.runLocation,
          result.status,
          result.hasFailures,
          result.hasErrors,
          result.isDegraded,
          result.responseTime,
          result.startedAt,
          result.stoppedAt,
          result.error,
          JSON.stringify({ ...result, resultType: 'FINAL' }),
          new Date(clock.now()).toISOString(),
        ],
      )) === 1,
    prune: async (before, now = clock.now()) => {
      const ms = Date.parse(before)
      // whole days go at once; the rest of the day the cutoff falls in is no longer answered
      await dropPartitions(sql, ms)
      // a template stays while compact rows of its day may name it: until its whole day is past the cutoff
      const dayStart = new Date(dayOf(ms) * 86_400_000).toISOString()
      // in batches, so a large prune never holds many rows locked for long
      let total = 0
      for (;;) {
        const removed = await sql.run(
          `DELETE FROM check_results WHERE seq IN (SELECT seq FROM check_results
          WHERE stopped_at < $1 AND (NOT is_template OR created_at < $2) LIMIT 5000)`,
          [before, dayStart],
        )
        total += removed
        if (removed < 5000) break
      }
      await sql.run(`DELETE FROM check_sessions WHERE started_at < $1`, [before])
      // hours ended are packed; the partitions rows will go to are made ahead of them (a partition
      // made while results are written locks its parent)
      await packHours(sql, now)
      await makeAhead(sql, now)
      return total
    },
  }
}

export function sessionRepository(sql: Sql): SessionStore {
  return {
    create: (account, check, locations, now) =>
      sql.atomic(async (tx) => {
        const id = randomUUID()
        const startedAt = new Date(now).toISOString()
        await tx.run(`INSERT INTO check_sessions (id, account_id, check_id, check_type, name, run_locations, started_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
          id,
          account,
          check.id,
          check.checkType,
          check.name,
          JSON.stringify(locations),
          startedAt,
        ])
        await tx.run(
          `INSERT INTO check_runs (id, run_key, account_id, check_id, location, due_at, stale_at, session_id)
        SELECT u.id, u.run_key, $1, $2, u.location, $3, NULL, $4 FROM unnest($5::text[], $6::text[], $7::text[]) AS u(id, run_key, location)`,
          [account, check.id, now, id, locations.map(() => randomUUID()), locations.map((l) => `session:${id}:${l}`), locations],
        )
        return { id, checkId: check.id, checkType: check.checkType, name: check.name, runLocations: locations, startedAt }
      }),
    get: async (account, id) => {
      const [row] = await sql.rows<{ id: string; check_id: string; check_type: string; name: string; run_locations: string; started_at: string }>(
        `SELECT id, check_id, check_type, name, run_locations, started_at FROM check_sessions WHERE id = $1 AND account_id = $2`,
        [id, account],
      )
      return (
        row && {
          id: row.id,
          checkId: row.check_id,
          checkType: row.check_type,
          name: row.name,
          runLocations: JSON.parse(row.run_locations) as string[],
          startedAt: row.started_at,
        }
      )
    },
  }
}

export function agentRepository(sql: Sql): AgentStore {
  return {
    heartbeat: (account, agentId, locations, until) =>
      sql.atomic(async (tx) => {
        const unique = [...new Set(locations)].sort()
        await tx.run(`DELETE FROM agent_locations WHERE account_id = $1 AND agent_id = $2 AND NOT (location = ANY($3::text[]))`, [account, agentId, unique])
        await tx.run(
          `INSERT INTO agent_locations (account_id, location, agent_id, expires_at) SELECT $1, l, $2, $3 FROM unnest($4::text[]) AS l
        ON CONFLICT (account_id, location, agent_id) DO UPDATE SET expires_at = excluded.expires_at`,
          [account, agentId, until, unique],
        )
      }),
  }
}

export function scheduleRepository(sql: Sql): ScheduleStore {
  return {
    allChecks: () => sql.rows<{ account: string; id: string; json: string }>(`SELECT account_id AS account, id, body AS json FROM checks ORDER BY seq`),
    allMaintenanceWindows: async () =>
      (await sql.rows<{ account_id: string; body: string }>(`SELECT account_id, body FROM maintenance_windows`)).map((row) => ({
        account: row.account_id,
        window: JSON.parse(row.body) as MaintenanceWindow,
      })),
    allCheckGroups: async () =>
      (await sql.rows<{ account_id: string; id: number; body: string }>(`SELECT account_id, id, body FROM check_groups`)).map((row) => ({
        account: row.account_id,
        id: Number(row.id),
        group: JSON.parse(row.body) as CheckGroup,
      })),
    scheduleVersion: async () => String((await sql.rows<{ n: string }>(`SELECT n FROM schedule_version WHERE id = 1`))[0]?.n ?? randomUUID()),
  }
}
