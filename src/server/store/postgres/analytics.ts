import type { AnalyticsRollupRow, AnalyticsSample, AnalyticsStore, MetricTotals, RollupRuns } from '../index.js'
import type { Sql } from './index.js'
import { groupByRow, merge, type Key } from '../analytics-rows.js'
import { dropPartition, ensure, GRACE_MS, partitionsOf } from './compact.js'
import type { Clock } from '../../../runner/clock.js'

/*
 * Analytics rollups: one row per check, UTC hour, location, status code and status, as in
 * SQLite (the samples are merged by the same code). Updating that row for each run would leave
 * a dead row version per run (MVCC) for autovacuum; so a result, inside the transaction that
 * records it, appends a delta instead: a row of `analytics_deltas` (partitioned by hour, one
 * partition per UTC hour) with its key and its samples. Once an hour has ended (and GRACE_MS
 * more), the prune merges its deltas, in the order they were written, into the hour's rollup
 * rows (one write per row and hour), moves the watermark (`result_retention.rollups_ms`) past
 * it in the same transaction, and drops the partition. Reads merge the deltas of the hours not
 * merged yet into the rows they read, in the same order: the same values, field for field, as
 * merging each result into its row as it came. A result of an hour merged already (an import,
 * a late agent) goes to its row at once, as before: the upsert that locks the row, then its
 * write. Rows are taken in key order, so two transactions adding several rows wait on each
 * other, not deadlock.
 *
 * analytics_rollups is partitioned by range of hour_start, one partition per UTC day
 * (analytics_rollups_YYYYMMDD), made ahead by the prune (today and tomorrow) or by the first
 * row of its day. Retention moves `result_retention.rollups_cutoff_ms` (the first hour still
 * answered: reads leave out the hours before it) and drops the days wholly before it: no row
 * is deleted, so nothing is left for autovacuum.
 */

const HOUR = 3_600_000
const DAY = 86_400_000

const EMPTY_RUNS = JSON.stringify({ seconds: [], retries: [], values: {} })

interface Row {
  hour_start: number
  run_location: string
  status_code: number
  status: string
  runs: number
  retries: number
  totals: string
  samples?: string
}

interface Delta {
  check_id: string
  hour_start: number | string
  run_location: string
  status_code: number
  status: string
  samples: string
}

type Values = { runs: number; retries: number; totals: Record<string, MetricTotals>; samples: RollupRuns }
type DeltaSample = Pick<AnalyticsSample, 'at' | 'retries' | 'values'>

const compare = (a: Key, b: Key): number =>
  a.hourStart - b.hourStart ||
  (a.runLocation < b.runLocation ? -1 : a.runLocation > b.runLocation ? 1 : 0) ||
  a.statusCode - b.statusCode ||
  (a.status < b.status ? -1 : a.status > b.status ? 1 : 0)

const TAKE = `
  INSERT INTO analytics_rollups (check_id, account_id, hour_start, run_location, status_code, status, runs, retries, totals, samples)
  VALUES ($1, $2, $3, $4, $5, $6, 0, 0, '{}', $7)
  ON CONFLICT (check_id, hour_start, run_location, status_code, status) DO UPDATE SET runs = analytics_rollups.runs
  RETURNING runs, retries, totals, samples`

const WRITE = `
  UPDATE analytics_rollups SET runs = $6, retries = $7, totals = $8, samples = $9
  WHERE check_id = $1 AND hour_start = $2 AND run_location = $3 AND status_code = $4 AND status = $5`

const deltaName = (hourStart: number): string => `analytics_deltas_${new Date(hourStart).toISOString().slice(0, 13).replace(/[-T]/g, '')}`

/** The delta's row, when its hour is not merged yet and its partition is there: one statement. */
const APPEND = `
  INSERT INTO analytics_deltas (check_id, account_id, hour_start, run_location, status_code, status, samples)
  SELECT $1, $2, $3, $4, $5, $6, $7 WHERE $3 >= (SELECT rollups_ms FROM result_retention WHERE id = 1) AND to_regclass($8) IS NOT NULL`

const UNMERGED = `hour_start >= (SELECT rollups_ms FROM result_retention WHERE id = 1)`

/** The hours inside the retention: those before the cutoff wait for their day's partition to be dropped. */
const RETAINED = `hour_start >= (SELECT rollups_cutoff_ms FROM result_retention WHERE id = 1)`

const rollupsName = (day: number): string => `analytics_rollups_${new Date(day * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`

/** Makes the rollups' partition of the day of an hour (its start, ms) unless it exists. */
const ensureRollups = (sql: Sql, hourStart: number) => {
  const day = Math.floor(hourStart / DAY)
  return ensure(sql, 'analytics_rollups', rollupsName(day), day * DAY, (day + 1) * DAY)
}

// the order of SQLite's primary key (byte order of the text), whatever the database's collation
const ORDER = `hour_start, run_location COLLATE "C", status_code, status COLLATE "C"`

const keyOfRow = (row: { hour_start: number | string; run_location: string; status_code: number; status: string }): Key => ({
  hourStart: Number(row.hour_start),
  runLocation: row.run_location,
  statusCode: row.status_code,
  status: row.status,
})
const keyText = (checkId: string, k: Key) => `${checkId}\u0000${k.hourStart}\u0000${k.runLocation}\u0000${k.statusCode}\u0000${k.status}`

/** Merges deltas (in the order written) into rows (in ORDER), by check: the rows as if each delta had been merged when it came. */
function withDeltas(rows: Array<Row & { check_id: string }>, deltas: Delta[], withSamples: boolean): Array<AnalyticsRollupRow & { checkId: string }> {
  const out = new Map<string, AnalyticsRollupRow & { checkId: string }>()
  for (const row of rows) out.set(keyText(row.check_id, keyOfRow(row)), { checkId: row.check_id, ...rollupRow(row) })
  for (const d of deltas) {
    const key = keyOfRow(d)
    const id = keyText(d.check_id, key)
    let row = out.get(id)
    if (!row) {
      row = {
        checkId: d.check_id,
        hourStart: key.hourStart,
        runLocation: key.runLocation,
        statusCode: key.statusCode === -1 ? null : key.statusCode,
        status: key.status,
        runs: 0,
        retries: 0,
        totals: {},
        samples: JSON.parse(EMPTY_RUNS) as RollupRuns,
      }
      out.set(id, row)
    }
    row.samples ??= JSON.parse(EMPTY_RUNS) as RollupRuns
    merge(
      row as Values,
      key.hourStart,
      (JSON.parse(d.samples) as DeltaSample[]).map((s) => ({ ...s, runLocation: key.runLocation, statusCode: null, status: key.status })),
    )
  }
  const list = [...out.values()].sort(
    (a, b) =>
      (a.checkId < b.checkId ? -1 : a.checkId > b.checkId ? 1 : 0) ||
      compare({ ...a, statusCode: a.statusCode ?? -1 }, { ...b, statusCode: b.statusCode ?? -1 }),
  )
  if (!withSamples) for (const row of list) delete row.samples
  return list
}

/** Adds samples to a row at once: the upsert that locks it, then its write (a result of an hour merged already). */
async function addNow(tx: Sql, account: string, checkId: string, key: Key, added: AnalyticsSample[]): Promise<void> {
  await ensureRollups(tx, key.hourStart)
  const [old] = await tx.rows<{ runs: number; retries: number; totals: string; samples: string }>(TAKE, [
    checkId,
    account,
    key.hourStart,
    key.runLocation,
    key.statusCode,
    key.status,
    EMPTY_RUNS,
  ])
  const row = {
    runs: old.runs,
    retries: old.retries,
    totals: JSON.parse(old.totals) as Record<string, MetricTotals>,
    samples: JSON.parse(old.samples) as RollupRuns,
  }
  merge(row, key.hourStart, added)
  await tx.run(WRITE, [
    checkId,
    key.hourStart,
    key.runLocation,
    key.statusCode,
    key.status,
    row.runs,
    row.retries,
    JSON.stringify(row.totals),
    JSON.stringify(row.samples),
  ])
}

/**
 * Adds samples (of one check): a delta per row, or the row itself for an hour merged already. A
 * missing partition (seldom: the prune makes this hour's and the next one's ahead) is made in
 * this transaction, as compact rows' are.
 */
async function add(tx: Sql, account: string, checkId: string, samples: AnalyticsSample[]): Promise<void> {
  for (const { key, samples: added } of groupByRow(samples).sort((a, b) => compare(a.key, b.key))) {
    added.sort((a, b) => a.at - b.at)
    const text = JSON.stringify(added.map((s): DeltaSample => ({ at: s.at, retries: s.retries, values: s.values })))
    const params = [checkId, account, key.hourStart, key.runLocation, key.statusCode, key.status, text, deltaName(key.hourStart)]
    if ((await tx.run(APPEND, params)) === 1) continue
    const [{ merged, cutoff }] = await tx.rows<{ merged: number | string; cutoff: number | string }>(
      `SELECT rollups_ms AS merged, rollups_cutoff_ms AS cutoff FROM result_retention WHERE id = 1`,
    )
    // an hour past the retention is not answered any more: nothing to add to
    if (key.hourStart < Number(cutoff)) continue
    if (key.hourStart < Number(merged)) {
      await addNow(tx, account, checkId, key, added)
      continue
    }
    await ensureDeltas(tx, key.hourStart)
    if ((await tx.run(APPEND, params)) !== 1) await addNow(tx, account, checkId, key, added)
  }
}

/** Makes the deltas' partition of an hour (its start, ms) unless it exists. */
const ensureDeltas = (sql: Sql, hourStart: number) => ensure(sql, 'analytics_deltas', deltaName(hourStart), hourStart, hourStart + HOUR)

/**
 * Merges the deltas of each hour that ended GRACE_MS before `now` into its rows, oldest hour
 * first: locked against writers, merged, the watermark moved, in one transaction; then dropped.
 */
async function mergeHours(sql: Sql, now: number): Promise<void> {
  for (const p of await partitionsOf(sql, 'analytics_deltas')) {
    if (p.to + GRACE_MS > now) break
    await ensureRollups(sql, p.from)
    await sql.atomic(async (tx) => {
      await tx.run(`LOCK TABLE ${p.name} IN SHARE MODE`)
      // a deleted check's deltas go with the partition (its rollup rows went with it)
      const deltas = await tx.rows<Delta & { account_id: string }>(`SELECT check_id, account_id, hour_start, run_location, status_code, status, samples
        FROM ${p.name} d WHERE EXISTS (SELECT 1 FROM checks c WHERE c.id = d.check_id) ORDER BY id`)
      const accounts = new Map(deltas.map((d) => [d.check_id, d.account_id]))
      const keys = [...new Set(deltas.map((d) => d.check_id))]
      const rows =
        keys.length === 0
          ? []
          : await tx.rows<Row & { check_id: string }>(
              `SELECT check_id, hour_start, run_location, status_code, status, runs, retries, totals, samples
        FROM analytics_rollups WHERE check_id = ANY($1::text[]) AND hour_start >= $2 AND hour_start < $3`,
              [keys, p.from, p.to],
            )
      const touched = new Set(deltas.map((d) => keyText(d.check_id, keyOfRow(d))))
      for (const row of withDeltas(rows, deltas, true)) {
        if (!touched.has(keyText(row.checkId, { ...row, statusCode: row.statusCode ?? -1 }))) continue
        await tx.run(
          `INSERT INTO analytics_rollups (check_id, account_id, hour_start, run_location, status_code, status, runs, retries, totals, samples)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (check_id, hour_start, run_location, status_code, status)
          DO UPDATE SET runs = excluded.runs, retries = excluded.retries, totals = excluded.totals, samples = excluded.samples`,
          [
            row.checkId,
            accounts.get(row.checkId),
            row.hourStart,
            row.runLocation,
            row.statusCode ?? -1,
            row.status,
            row.runs,
            row.retries,
            JSON.stringify(row.totals),
            JSON.stringify(row.samples),
          ],
        )
      }
      await tx.run(`UPDATE result_retention SET rollups_ms = greatest(rollups_ms, $1) WHERE id = 1`, [p.to])
    })
    await dropPartition(sql, 'analytics_deltas', p.name)
  }
}

export function analyticsRepository(sql: Sql, clock: Clock): AnalyticsStore {
  const read = async (asked: string, params: unknown[], withSamples: boolean) => {
    const where = `${asked} AND ${RETAINED}`
    const columns = `check_id, hour_start, run_location, status_code, status, runs, retries, totals${withSamples ? ', samples' : ''}`
    const rows = await sql.rows<Row & { check_id: string }>(
      `SELECT ${columns} FROM analytics_rollups WHERE ${where} ORDER BY check_id COLLATE "C", ${ORDER}`,
      params,
    )
    // a deleted check's rollup rows go with it (ON DELETE CASCADE); its deltas are left out as they would be
    const deltas = await sql.rows<Delta>(
      `SELECT check_id, hour_start, run_location, status_code, status, samples FROM analytics_deltas d
      WHERE ${where} AND ${UNMERGED} AND EXISTS (SELECT 1 FROM checks c WHERE c.id = d.check_id) ORDER BY id`,
      params,
    )
    if (deltas.length === 0) return rows.map((row) => ({ checkId: row.check_id, ...rollupRow(row) }))
    // a row merged with deltas needs its samples (their order), answered only when asked for
    const full = withSamples
      ? rows
      : await sql.rows<Row & { check_id: string }>(
          `SELECT check_id, hour_start, run_location, status_code, status, runs, retries, totals, samples
      FROM analytics_rollups WHERE ${where} ORDER BY check_id COLLATE "C", ${ORDER}`,
          params,
        )
    return withDeltas(full, deltas, withSamples)
  }
  const strip = ({ checkId: _check, ...row }: AnalyticsRollupRow & { checkId: string }): AnalyticsRollupRow => row
  return {
    record: (account, checkId, sample) => sql.atomic((tx) => add(tx, account, checkId, [sample])),
    recordMany: (account, checkId, samples) => sql.atomic((tx) => add(tx, account, checkId, samples)),
    rows: async (account, checkId, fromHour, toHour, withSamples) =>
      (await read(`check_id = $1 AND account_id = $2 AND hour_start >= $3 AND hour_start < $4`, [checkId, account, fromHour, toHour], withSamples)).map(strip),
    rowsOfAccount: async (account, fromHour, toHour, withSamples) => {
      const byCheck = new Map<string, AnalyticsRollupRow[]>()
      for (const row of await read(`account_id = $1 AND hour_start >= $2 AND hour_start < $3`, [account, fromHour, toHour], withSamples)) {
        let list = byCheck.get(row.checkId)
        if (!list) byCheck.set(row.checkId, (list = []))
        list.push(strip(row))
      }
      return byCheck
    },
    // the hours that ended before `before` are no longer answered (hour_start < before - HOUR + 1); their
    // deltas are dropped unmerged, their days' partitions once the whole day is past
    prune: async (before, now = clock.now()) => {
      await sql.run(`UPDATE result_retention SET rollups_cutoff_ms = greatest(rollups_cutoff_ms, $1) WHERE id = 1`, [before - HOUR + 1])
      for (const p of await partitionsOf(sql, 'analytics_deltas')) if (p.to <= before) await dropPartition(sql, 'analytics_deltas', p.name)
      await mergeHours(sql, now)
      for (const hour of [Math.floor(now / HOUR), Math.floor(now / HOUR) + 1]) await ensureDeltas(sql, hour * HOUR)
      for (const day of [Math.floor(now / DAY), Math.floor(now / DAY) + 1]) await ensureRollups(sql, day * DAY)
      let dropped = 0
      for (const p of await partitionsOf(sql, 'analytics_rollups')) {
        if (p.to > before) continue
        dropped += Number((await sql.rows<{ n: number | string }>(`SELECT count(*) AS n FROM ${p.name}`))[0].n)
        await dropPartition(sql, 'analytics_rollups', p.name)
      }
      return dropped
    },
  }
}

function rollupRow(row: Row): AnalyticsRollupRow {
  return {
    hourStart: row.hour_start,
    runLocation: row.run_location,
    statusCode: row.status_code === -1 ? null : row.status_code,
    status: row.status,
    runs: row.runs,
    retries: row.retries,
    totals: JSON.parse(row.totals) as Record<string, MetricTotals>,
    ...(row.samples !== undefined ? { samples: JSON.parse(row.samples) as RollupRuns } : {}),
  }
}
