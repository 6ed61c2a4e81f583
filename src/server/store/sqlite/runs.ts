import { randomBytes, randomUUID } from 'node:crypto'
import type { Db } from './migrations.js'
import type {
  AgentStore,
  CheckResultRecord,
  ClaimedRun,
  CompleteOutcome,
  PlanOutcome,
  ResultQuery,
  ResultStore,
  RunStore,
  ScheduleStore,
  SessionRecord,
  SessionStore,
  SkipCount,
  SkipReason,
  StoredResultInput,
} from '../index.js'
import type { CheckGroup, MaintenanceWindow } from '../../../schema/index.js'
import type { Exec } from './index.js'
import { leaseOf, parseRunId, resultOfClaim, resultRecord as recordOfRun, type RunRow } from '../run-rows.js'
import { columnsOf, compactValues, dayOf, digest, fullDetails, isPassing, leanDetails, shapeOf, type ColumnValues } from '../compact-rows.js'
import { compactResults } from './compact.js'
import type { Clock } from '../../../runner/clock.js'

/*
 * Due runs are rows of check_runs. A claim is one UPDATE … WHERE (due, lease free) … RETURNING
 * inside an IMMEDIATE transaction, so two processes on the file never hold the same run: the
 * second waits for the write lock and then no longer sees the run as free. Each claim bumps
 * `claim_seq`; the run id handed out is "<row id>.<claim_seq>", so a runner whose lease expired
 * and was claimed again can no longer complete the run (its claim number is old).
 */

interface ResultRow {
  id: string
  check_id: string
  session_id: string | null
  run_id: string
  run_location: string
  result_type: 'FINAL' | 'ATTEMPT'
  status: string
  has_failures: number
  has_errors: number
  is_degraded: number
  response_time: number | null
  started_at: string
  stopped_at: string
  error: string | null
  details: string
  created_at: string
}

/**
 * A UUID (version 7 layout) whose first 48 bits are the time in ms: rows written one after the
 * other get ids that sort together, so their unique index grows at its end (a write of the
 * last page) instead of at a random page per row.
 */
export function timeOrderedId(time: number): string {
  const bytes = randomBytes(16)
  bytes.writeUIntBE(Math.max(0, Math.floor(time)) % 2 ** 48, 0, 6)
  bytes[6] = (bytes[6] & 0x0f) | 0x70
  bytes[8] = (bytes[8] & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

function columnValues(row: ResultRow): ColumnValues {
  return {
    checkId: row.check_id,
    runLocation: row.run_location,
    resultType: row.result_type,
    startedAt: row.started_at,
    stoppedAt: row.stopped_at,
    responseTime: row.response_time,
    hasFailures: row.has_failures === 1,
    hasErrors: row.has_errors === 1,
    isDegraded: row.is_degraded === 1,
    status: row.status,
    error: row.error,
  }
}

function resultRecord(row: ResultRow): CheckResultRecord {
  return {
    id: row.id,
    checkId: row.check_id,
    sessionId: row.session_id,
    runId: row.run_id,
    runLocation: row.run_location,
    resultType: row.result_type,
    status: row.status,
    hasFailures: row.has_failures === 1,
    hasErrors: row.has_errors === 1,
    isDegraded: row.is_degraded === 1,
    responseTime: row.response_time,
    startedAt: row.started_at,
    stoppedAt: row.stopped_at,
    error: row.error,
    details: fullDetails(JSON.parse(row.details) as Record<string, unknown>, columnValues(row)),
    created_at: row.created_at,
  }
}

/**
 * Whether a stored check body says `activated: false`. Inside a JSON string a quote is escaped,
 * so the text `"activated":false` appears only as a key and its value: parsed to be sure only then.
 */
function deactivated(body: string): boolean {
  return body.includes('"activated":false') && (JSON.parse(body) as { activated?: boolean }).activated === false
}

/** Rows one prune statement deletes at most: a few ms of the write lock. */
export const PRUNE_BATCH = 1000

/**
 * Runs a batch delete until it deletes less than a batch, letting the event loop run between
 * batches (runs in flight record their results, due runs are claimed): a large prune never
 * holds the database, nor the process, for long.
 */
async function inBatches(batch: () => Promise<number>): Promise<number> {
  let total = 0
  for (;;) {
    const removed = await batch()
    total += removed
    if (removed < PRUNE_BATCH) return total
    await new Promise((resolve) => setImmediate(resolve))
  }
}

type ClaimQuery = Parameters<RunStore['claim']>[0]
type FindRun = (account: string | undefined, runId: string) => { row: RunRow; claim: number } | undefined

/** The counts of skipped runs, per check, hour of their due time, location and reason (see run_skips). */
function skipCounter(db: Db) {
  const upsert = db.prepare(`INSERT INTO run_skips (check_id, account_id, hour_start, location, reason, skipped, last_due_at)
    VALUES (@checkId, @account, @hour, @location, @reason, 1, @dueAt)
    ON CONFLICT (check_id, hour_start, location, reason) DO UPDATE SET
      skipped = skipped + 1, last_due_at = max(last_due_at, excluded.last_due_at)`)
  const typeOf = db.prepare(`SELECT check_type FROM checks WHERE id = ?`).pluck()
  /** Counts the runs skipped (inside the caller's transaction) and answers them by reason, check type and location. */
  return (rows: ReadonlyArray<{ check_id: string; account_id: string; location: string; due_at: number; skip_reason: SkipReason }>): SkipCount[] => {
    const out = new Map<string, SkipCount>()
    for (const row of rows) {
      upsert.run({
        checkId: row.check_id,
        account: row.account_id,
        hour: row.due_at - (row.due_at % 3_600_000),
        location: row.location,
        reason: row.skip_reason,
        dueAt: row.due_at,
      })
      const checkType = String(typeOf.get(row.check_id) ?? '')
      const key = `${row.skip_reason}\u0000${checkType}\u0000${row.location}`
      const count = out.get(key) ?? { reason: row.skip_reason, checkType, location: row.location, count: 0 }
      count.count++
      out.set(key, count)
    }
    return [...out.values()]
  }
}

/**
 * Planning is idempotent: a run of a key planned before (or of a check gone) is not added again.
 * A run planned as skipped is a row skipped already, counted when this insert made it.
 */
function planTransaction(db: Db) {
  const insertRun =
    db.prepare(`INSERT OR IGNORE INTO check_runs (id, run_key, account_id, check_id, location, due_at, stale_at, session_id, state, skip_reason, done_at)
    SELECT @id, @key, @account, @checkId, @location, @dueAt, @staleAt, @sessionId,
      CASE WHEN @skipReason IS NULL THEN 'due' ELSE 'skipped' END, @skipReason, CASE WHEN @skipReason IS NULL THEN NULL ELSE @dueAt END
    WHERE EXISTS (SELECT 1 FROM checks WHERE id = @checkId AND account_id = @account)`)
  const count = skipCounter(db)
  return db.transaction((runs: Parameters<RunStore['plan']>[0]): PlanOutcome => {
    let added = 0
    const skipped: Array<{ check_id: string; account_id: string; location: string; due_at: number; skip_reason: SkipReason }> = []
    for (const run of runs) {
      const changes = insertRun.run({
        id: timeOrderedId(run.dueAt),
        key: run.key,
        account: run.account,
        checkId: run.checkId,
        location: run.location,
        dueAt: run.dueAt,
        staleAt: run.staleAt,
        sessionId: run.sessionId,
        skipReason: run.skipReason ?? null,
      }).changes
      if (changes === 0) continue
      if (run.skipReason)
        skipped.push({ check_id: run.checkId, account_id: run.account, location: run.location, due_at: run.dueAt, skip_reason: run.skipReason })
      else added++
    }
    return { added, skipped: count(skipped) }
  })
}

/**
 * Skips the scheduled runs never claimed that a newer due run of their check supersedes (late),
 * and counts them (see RunStore.skipLate).
 */
function skipLateTransaction(db: Db) {
  const skip = db.prepare(`UPDATE check_runs SET state = 'skipped', done_at = @now, skip_reason = 'late'
    WHERE seq IN (
      SELECT o.seq FROM check_runs o
      WHERE o.state = 'due' AND o.claim_seq = 0 AND o.session_id IS NULL AND o.due_at <= @now
        AND EXISTS (SELECT 1 FROM check_runs n WHERE n.check_id = o.check_id AND n.session_id IS NULL AND n.due_at > o.due_at AND n.due_at <= @now))
    RETURNING check_id, account_id, location, due_at, skip_reason, coalesce(waiting_since, due_at) AS since`)
  // the runs that stay (their check's newest due) wait since the oldest skipped for them
  const carry = db.prepare(`UPDATE check_runs SET waiting_since = min(coalesce(waiting_since, due_at), @since)
    WHERE check_id = @checkId AND state = 'due' AND claim_seq = 0 AND session_id IS NULL AND due_at <= @now`)
  const count = skipCounter(db)
  return db.transaction((now: number): SkipCount[] => {
    const rows = (
      skip.all({ now }) as Array<{ check_id: string; account_id: string; location: string; due_at: number; skip_reason: SkipReason; since: number }>
    ).sort((a, b) => (a.check_id < b.check_id ? -1 : a.check_id > b.check_id ? 1 : a.due_at - b.due_at))
    const since = new Map<string, number>()
    for (const row of rows) since.set(row.check_id, Math.min(since.get(row.check_id) ?? Infinity, row.since))
    for (const [checkId, at] of since) carry.run({ checkId, since: at, now })
    return count(rows)
  })
}

function claimTransaction(db: Db) {
  const claim = db.prepare(`UPDATE check_runs
    SET claim_seq = claim_seq + 1, lease_owner = @owner, lease_expires_at = @until, claimed_at = @now
    WHERE seq IN (
      SELECT r.seq FROM check_runs r
      WHERE r.state = 'due' AND r.due_at <= @now
        AND (r.lease_expires_at IS NULL OR r.lease_expires_at <= @now)
        AND (@account IS NULL OR r.account_id = @account)
        AND (@anyLocation = 1 OR r.location IN (SELECT value FROM json_each(@locations)))
        AND (@skipAgents = 0 OR NOT EXISTS (
          SELECT 1 FROM agent_locations a WHERE a.account_id = r.account_id AND a.location = r.location AND a.expires_at > @now))
        AND (@skipAgents = 0 OR NOT EXISTS (
          SELECT 1 FROM private_locations p WHERE p.account_id = r.account_id AND p.slug_name = r.location))
        AND (@skipTypes IS NULL OR NOT EXISTS (
          SELECT 1 FROM checks c WHERE c.id = r.check_id AND c.check_type IN (SELECT value FROM json_each(@skipTypes))))
        AND (@onlyTypes IS NULL OR EXISTS (
          SELECT 1 FROM checks c WHERE c.id = r.check_id AND c.check_type IN (SELECT value FROM json_each(@onlyTypes))))
      ORDER BY coalesce(r.waiting_since, r.due_at), r.due_at, r.seq
      LIMIT @max)
    RETURNING id, account_id, check_id, location, due_at, session_id, claim_seq, lease_expires_at`)
  const checkBody = db.prepare(`SELECT body FROM checks WHERE id = ?`).pluck()
  // a scheduled run of a check deactivated since it was planned: not run
  const skipRun = db.prepare(`UPDATE check_runs SET state = 'skipped', done_at = @now, lease_expires_at = NULL, skip_reason = 'paused' WHERE id = @id`)
  return db.transaction((q: ClaimQuery): ClaimedRun[] => {
    const rows = claim.all({
      owner: q.owner,
      until: q.now + q.leaseMs,
      now: q.now,
      account: q.account ?? null,
      anyLocation: q.locations === undefined ? 1 : 0,
      locations: JSON.stringify(q.locations ?? []),
      skipAgents: q.skipAgentLocations ? 1 : 0,
      skipTypes: q.skipCheckTypes ? JSON.stringify(q.skipCheckTypes) : null,
      onlyTypes: q.onlyCheckTypes ? JSON.stringify(q.onlyCheckTypes) : null,
      max: q.max,
    }) as Array<RunRow>
    const runs: ClaimedRun[] = []
    for (const row of rows.sort((a, b) => a.due_at - b.due_at)) {
      const body = checkBody.get(row.check_id) as string | undefined
      if (body === undefined) continue
      if (row.session_id === null && deactivated(body)) {
        skipRun.run({ now: q.now, id: row.id })
        continue
      }
      runs.push({
        runId: `${row.id}.${row.claim_seq}`,
        account: row.account_id,
        checkId: row.check_id,
        location: row.location,
        dueAt: row.due_at,
        leaseExpiresAt: row.lease_expires_at as number,
        sessionId: row.session_id,
        checkJson: body,
      })
    }
    return runs
  })
}

/** The run a run id names, with its claim number; none when another account's or of a claim not made yet. */
function runFinder(db: Db): FindRun {
  const runById = db.prepare(`SELECT * FROM check_runs WHERE id = ?`)
  return (account, runId) => {
    const parsed = parseRunId(runId)
    if (!parsed) return undefined
    const row = runById.get(parsed.id) as RunRow | undefined
    if (!row || (account !== undefined && row.account_id !== account) || parsed.claim > row.claim_seq) return undefined
    return { row, claim: parsed.claim }
  }
}

function extendTransaction(db: Db, find: FindRun) {
  const extend = db.prepare(`UPDATE check_runs SET lease_expires_at = @until WHERE id = @id AND claim_seq = @claim AND state = 'due'`)
  return db.transaction((account: string | undefined, runId: string, leaseMs: number, now: number): number | 'lost' | 'unknown' | 'completed' => {
    const found = find(account, runId)
    if (!found) return 'unknown'
    // this claim's result is recorded already (an extension that crossed it): not lost
    if (found.row.state === 'done' && found.row.done_claim === found.claim) return 'completed'
    const until = now + leaseMs
    return extend.run({ until, id: found.row.id, claim: found.claim }).changes > 0 ? until : 'lost'
  })
}

interface ResultOfRun {
  row: RunRow
  runId: string
  now: number
  createdAt: string
  check: { name?: unknown; checkType?: unknown } | undefined
  /** the check's integer key (checks.seq) */
  checkSeq: number
}

/**
 * Writes one result of a claimed run: the run's check, location and time window, whatever the
 * runner said. A FINAL run whose shape is its template's (the newest of its kind, passing or
 * failing, of the same check, location and UTC day) is a compact row (a failing one naming its
 * template); any other is a full row, and a template when it could have been compact.
 */
function resultWriter(db: Db): (run: ResultOfRun, sent: StoredResultInput, resultType: 'FINAL' | 'ATTEMPT') => CheckResultRecord {
  const insertResult = db.prepare(`INSERT INTO check_results
    (id, account_id, check_id, session_id, run_id, run_location, result_type, status, has_failures, has_errors, is_degraded,
     response_time, started_at, stopped_at, error, details, created_at, is_template)
    VALUES (@id, @account, @checkId, @sessionId, @runId, @runLocation, @resultType, @status, @hasFailures, @hasErrors, @isDegraded,
     @responseTime, @startedAt, @stoppedAt, @error, @details, @createdAt, @template)`)
  const compact = compactResults(db)
  return ({ row, runId, now, createdAt, check, checkSeq }, sent, resultType) => {
    const result = resultOfClaim(sent, { row, now, check })
    const full = { ...result, resultType }
    const record = recordOfRun(result, { id: timeOrderedId(now), row, runId, resultType, createdAt, details: full })
    const details = leanDetails(full, columnsOf(record))
    const values = compactValues(record)
    if (values && checkSeq > 0) {
      const passing = isPassing(record)
      const hash = digest(shapeOf(record, details))
      const template = compact.template(record.checkId, record.runLocation, passing)
      if (template && template.day === dayOf(now) && template.digest === hash) {
        const id = compact.insert(record, checkSeq, values, passing ? undefined : template.seq)
        return { ...record, id, runId: id }
      }
    }
    insertResult.run({
      id: record.id,
      account: row.account_id,
      checkId: record.checkId,
      sessionId: record.sessionId,
      runId,
      runLocation: record.runLocation,
      resultType,
      status: record.status,
      hasFailures: record.hasFailures ? 1 : 0,
      hasErrors: record.hasErrors ? 1 : 0,
      isDegraded: record.isDegraded ? 1 : 0,
      responseTime: record.responseTime,
      startedAt: record.startedAt,
      stoppedAt: record.stoppedAt,
      error: record.error,
      details,
      createdAt,
      template: values ? 1 : 0,
    })
    return record
  }
}

function completeTransaction(db: Db, find: FindRun) {
  const checkOf = db.prepare(`SELECT seq, body FROM checks WHERE id = ?`)
  const finish = db.prepare(`UPDATE check_runs SET state = 'done', done_claim = @claim, done_at = @now, lease_expires_at = NULL WHERE id = @id`)
  const write = resultWriter(db)
  return db.transaction((account: string | undefined, runId: string, final: StoredResultInput, attempts: StoredResultInput[], now: number): CompleteOutcome => {
    const found = find(account, runId)
    if (!found) return { outcome: 'unknown' }
    const { row, claim } = found
    if (row.state === 'done') return row.done_claim === claim ? { outcome: 'duplicate' } : { outcome: 'lost' }
    if (row.claim_seq !== claim) return { outcome: 'lost' }
    const ofCheck = checkOf.get(row.check_id) as { seq: number; body: string } | undefined
    const body = ofCheck?.body as string
    const check = body === undefined ? undefined : (JSON.parse(body) as { name?: unknown; checkType?: unknown })
    const run: ResultOfRun = { row, runId, now, createdAt: new Date(now).toISOString(), check, checkSeq: ofCheck?.seq ?? 0 }
    const written = attempts.map((a) => write(run, a, 'ATTEMPT'))
    const finalRecord = write(run, final, 'FINAL')
    finish.run({ claim, now, id: row.id })
    return {
      outcome: 'completed',
      final: finalRecord,
      attempts: written,
      run: {
        runId,
        account: row.account_id,
        checkId: row.check_id,
        location: row.location,
        dueAt: row.due_at,
        leaseExpiresAt: row.lease_expires_at ?? now,
        sessionId: row.session_id,
        checkJson: body,
      },
    }
  })
}

export function runRepository(db: Db, exec: Exec): RunStore {
  // in batches (see PRUNE_BATCH); the (state, due_at) index finds the oldest first
  const pruneRuns = db.prepare(`DELETE FROM check_runs
    WHERE seq IN (SELECT seq FROM check_runs WHERE state IN ('done', 'skipped') AND due_at < @before AND done_at < @before LIMIT ${PRUNE_BATCH})
       OR seq IN (SELECT seq FROM check_runs WHERE state = 'due' AND due_at < @oldest LIMIT ${PRUNE_BATCH})`)
  const pruneAgents = db.prepare(`DELETE FROM agent_locations WHERE expires_at < @now`)
  const plan = planTransaction(db)
  const claimRuns = claimTransaction(db)
  const find = runFinder(db)
  const extendRun = extendTransaction(db, find)
  const complete = completeTransaction(db, find)
  const skipLate = skipLateTransaction(db)
  const backlog = db.prepare(`SELECT location, count(*) AS n, min(due_at) AS oldest FROM check_runs
    WHERE state = 'due' AND claim_seq = 0 AND due_at <= @now AND (@account IS NULL OR account_id = @account)
    GROUP BY location ORDER BY location`)
  const skippedRows = db.prepare(`SELECT check_id, location, reason, sum(skipped) AS n, max(last_due_at) AS last FROM run_skips
    WHERE account_id = @account AND hour_start >= @from AND hour_start < @to AND (@checkId IS NULL OR check_id = @checkId)
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`)
  const pruneSkips = db.prepare(`DELETE FROM run_skips WHERE hour_start < ?`)
  return {
    plan: (runs) => exec(() => (runs.length === 0 ? { added: 0, skipped: [] } : plan.immediate(runs))),
    skipLate: (now) => exec(() => skipLate.immediate(now)),
    backlog: (now, account) =>
      exec(() =>
        (backlog.all({ now, account: account ?? null }) as Array<{ location: string; n: number; oldest: number }>).map((r) => ({
          location: r.location,
          due: r.n,
          oldestDueAt: r.oldest,
        })),
      ),
    skipped: (account, fromHour, toHour, checkId) =>
      exec(() =>
        (
          skippedRows.all({ account, from: fromHour, to: toHour, checkId: checkId ?? null }) as Array<{
            check_id: string
            location: string
            reason: SkipReason
            n: number
            last: number
          }>
        ).map((r) => ({ checkId: r.check_id, location: r.location, reason: r.reason, count: r.n, lastDueAt: r.last })),
      ),
    pruneSkipped: (before) => exec(() => pruneSkips.run(before - 3_600_000 + 1).changes),
    claim: (query) => exec(() => claimRuns.immediate(query)),
    extend: (account, runId, leaseMs, now) => exec(() => extendRun.immediate(account, runId, leaseMs, now)),
    // the transaction's write lock holds every row
    lock: async () => undefined,
    lease: (account, runId, now) =>
      exec(() => {
        const found = find(account, runId)
        return found ? leaseOf(found.row, found.claim, now) : 'unknown'
      }),
    complete: (account, runId, final, attempts, now) => exec(() => complete.immediate(account, runId, final, attempts, now)),
    prune: async (before, now) => {
      await exec(() => pruneAgents.run({ now }))
      // a due run older than a day was never going to run (no runner serves its location)
      return inBatches(() => exec(() => pruneRuns.run({ before, now, oldest: now - 86_400_000 }).changes))
    },
  }
}

const RESULT_COLUMNS = `id, check_id, session_id, run_id, run_location, result_type, status, has_failures, has_errors, is_degraded,
  response_time, started_at, stopped_at, error, details, created_at`

// full rows inside the retention (a template outlives its own cutoff until its day is dropped), with
// the filters asked for (each combination its own statement, so that a range of start times uses its index)
const fullRows = (query: ResultQuery) =>
  [
    `SELECT seq, -1 AS day, 0 AS f FROM check_results WHERE account_id = @account AND check_id = @checkId AND stopped_at >= @cutoffText`,
    query.resultType !== undefined ? ' AND result_type = @type' : '',
    query.hasFailures !== undefined ? ' AND has_failures = @failures' : '',
    query.location !== undefined ? ' AND run_location = @location' : '',
    query.from !== undefined ? ' AND started_at >= @fromText' : '',
    query.to !== undefined ? ' AND started_at < @toText' : '',
  ].join('')

const cutoffText = (cutoff: number) => new Date(cutoff).toISOString()

/** GET /v1/check-results/{checkId}: the read of a check's results, full and compact. */
function listTransaction(db: Db, compact: ReturnType<typeof compactResults>) {
  const bySeq = db.prepare(`SELECT ${RESULT_COLUMNS} FROM check_results WHERE seq = ?`)
  const checkSeq = db.prepare(`SELECT seq FROM checks WHERE id = ? AND account_id = ?`).pluck()
  /** A check's results, full and compact, newest first: one read transaction (a day dropped meanwhile is not half seen). */
  return db.transaction((account: string, query: ResultQuery) => {
    const cutoff = compact.cutoff()
    const chk = checkSeq.get(query.checkId, account) as number | undefined
    // compact rows are FINAL results: none is an attempt (their flags: see compact.parts)
    const loc = query.location === undefined ? undefined : compact.locationKey(query.location)
    const withCompact = chk !== undefined && query.resultType !== 'ATTEMPT' && (query.location === undefined || loc !== undefined)
    const parts = [
      fullRows(query),
      ...(withCompact ? compact.parts(cutoff, { location: loc !== undefined, from: query.from, to: query.to, failures: query.hasFailures }) : []),
    ]
    const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())
    const params = {
      account,
      checkId: query.checkId,
      type: query.resultType ?? null,
      cutoffText: cutoffText(cutoff),
      cutoff,
      chk: chk ?? -1,
      failures: query.hasFailures === undefined ? null : query.hasFailures ? 1 : 0,
      location: query.location ?? null,
      loc: loc ?? -1,
      fromText: iso(query.from),
      toText: iso(query.to),
      from: query.from ?? null,
      to: query.to ?? null,
    }
    const pairs = compact.run<Array<{ seq: number; day: number; f: number }>>(
      `${parts.join(' UNION ALL ')} ORDER BY seq DESC LIMIT ${Math.trunc(query.limit)} OFFSET ${Math.trunc(query.offset)}`,
      params,
      'all',
    )
    const total = compact.run<{ n: number }>(`SELECT ${parts.map((p) => `(SELECT count(*) FROM (${p}))`).join(' + ')} AS n`, params, 'get').n
    const compacts = compact.rows(
      pairs.filter((p) => p.day >= 0),
      query.checkId,
    )
    const items = pairs.map((p) => (p.day >= 0 ? compacts.get(p.seq) : resultRecord(bySeq.get(p.seq) as ResultRow)))
    return { items: items.filter((r): r is CheckResultRecord => r !== undefined), total }
  })
}

export function resultRepository(db: Db, exec: Exec, clock: Clock): ResultStore {
  const columns = RESULT_COLUMNS
  const compact = compactResults(db)
  const byId = db.prepare(`SELECT ${columns} FROM check_results WHERE id = ? AND account_id = ? AND stopped_at >= ?`)
  const ofSession = db.prepare(`SELECT ${columns} FROM check_results WHERE session_id = ? AND account_id = ? ORDER BY seq`)
  const add = db.prepare(`INSERT INTO check_results
    (id, account_id, check_id, session_id, run_id, run_location, result_type, status, has_failures, has_errors, is_degraded,
     response_time, started_at, stopped_at, error, details, created_at)
    VALUES (@id, @account, @checkId, NULL, @id, @runLocation, 'FINAL', @status, @hasFailures, @hasErrors, @isDegraded,
     @responseTime, @startedAt, @stoppedAt, @error, @details, @createdAt)
    ON CONFLICT (id) DO NOTHING`)
  // a template stays while compact rows of its day may name it: until its whole day is past the cutoff
  const prune = db.prepare(`DELETE FROM check_results WHERE seq IN (SELECT seq FROM check_results
    WHERE stopped_at < @before AND (NOT is_template OR created_at < @dayStart) LIMIT ${PRUNE_BATCH})`)
  const pruneSessions = db.prepare(`DELETE FROM check_sessions WHERE started_at < ?`)
  const list = listTransaction(db, compact)
  return {
    list: (account, query) => exec(() => list.deferred(account, query)),
    get: (account, id) =>
      exec(() => {
        const row = byId.get(id, account, cutoffText(compact.cutoff())) as ResultRow | undefined
        return row ? resultRecord(row) : compact.get(account, id)
      }),
    ofSession: (account, sessionId) => exec(() => (ofSession.all(sessionId, account) as ResultRow[]).map(resultRecord)),
    add: (account, checkId, id, result) =>
      exec(
        () =>
          add.run({
            id,
            account,
            checkId,
            runLocation: result.runLocation,
            status: result.status,
            hasFailures: result.hasFailures ? 1 : 0,
            hasErrors: result.hasErrors ? 1 : 0,
            isDegraded: result.isDegraded ? 1 : 0,
            responseTime: result.responseTime,
            startedAt: result.startedAt,
            stoppedAt: result.stoppedAt,
            error: result.error,
            // every field kept (not lean): read back as it is
            details: JSON.stringify({ ...result, resultType: 'FINAL' }),
            createdAt: new Date(clock.now()).toISOString(),
          }).changes === 1,
      ),
    prune: async (before) => {
      const ms = Date.parse(before)
      // whole days go at once; the rest of the day the cutoff falls in is no longer answered
      await exec(() => compact.drop(ms))
      const dayStart = new Date(dayOf(ms) * 86_400_000).toISOString()
      const total = await inBatches(() => exec(() => prune.run({ before, dayStart }).changes))
      await exec(() => pruneSessions.run(before))
      return total
    },
  }
}

export function sessionRepository(db: Db, exec: Exec): SessionStore {
  const insert = db.prepare(`INSERT INTO check_sessions (id, account_id, check_id, check_type, name, run_locations, started_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)`)
  const insertRun = db.prepare(`INSERT INTO check_runs (id, run_key, account_id, check_id, location, due_at, stale_at, session_id)
    VALUES (?, ?, ?, ?, ?, ?, NULL, ?)`)
  const byId = db.prepare(`SELECT id, check_id, check_type, name, run_locations, started_at FROM check_sessions WHERE id = ? AND account_id = ?`)
  const create = db.transaction((account: string, check: { id: string; checkType: string; name: string }, locations: string[], now: number): SessionRecord => {
    const id = randomUUID()
    const startedAt = new Date(now).toISOString()
    insert.run(id, account, check.id, check.checkType, check.name, JSON.stringify(locations), startedAt)
    for (const location of locations) insertRun.run(randomUUID(), `session:${id}:${location}`, account, check.id, location, now, id)
    return { id, checkId: check.id, checkType: check.checkType, name: check.name, runLocations: locations, startedAt }
  })
  return {
    create: (account, check, locations, now) => exec(() => create.immediate(account, check, locations, now)),
    get: (account, id) =>
      exec(() => {
        const row = byId.get(id, account) as
          | { id: string; check_id: string; check_type: string; name: string; run_locations: string; started_at: string }
          | undefined
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
      }),
  }
}

export function agentRepository(db: Db, exec: Exec): AgentStore {
  const forget = db.prepare(`DELETE FROM agent_locations WHERE account_id = @account AND agent_id = @agent
    AND location NOT IN (SELECT value FROM json_each(@locations))`)
  const upsert = db.prepare(`INSERT INTO agent_locations (account_id, location, agent_id, expires_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (account_id, location, agent_id) DO UPDATE SET expires_at = excluded.expires_at`)
  const beat = db.transaction((account: string, agentId: string, locations: string[], until: number) => {
    forget.run({ account, agent: agentId, locations: JSON.stringify(locations) })
    for (const location of locations) upsert.run(account, location, agentId, until)
  })
  return {
    heartbeat: (account, agentId, locations, until) => exec(() => beat.immediate(account, agentId, locations, until)),
  }
}

export function scheduleRepository(db: Db, exec: Exec): ScheduleStore {
  const checks = db.prepare(`SELECT account_id AS account, id, body AS json FROM checks ORDER BY seq`)
  const windows = db.prepare(`SELECT account_id, body FROM maintenance_windows`)
  const groups = db.prepare(`SELECT account_id, id, body FROM check_groups`)
  const version = db.prepare(`SELECT n FROM schedule_version`).pluck()
  return {
    allChecks: () => exec(() => checks.all() as Array<{ account: string; id: string; json: string }>),
    allMaintenanceWindows: () =>
      exec(() =>
        (windows.all() as Array<{ account_id: string; body: string }>).map((row) => ({
          account: row.account_id,
          window: JSON.parse(row.body) as MaintenanceWindow,
        })),
      ),
    allCheckGroups: () =>
      exec(() =>
        (groups.all() as Array<{ account_id: string; id: number; body: string }>).map((row) => ({
          account: row.account_id,
          id: row.id,
          group: JSON.parse(row.body) as CheckGroup,
        })),
      ),
    scheduleVersion: () => exec(() => String(version.get())),
  }
}
