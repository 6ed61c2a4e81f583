import type { CheckResultRecord, Page, ResultQuery } from '../index.js'
import { compactId, compactRecord, DAY_MS, dayOf, parseCompactId, partitionName, PASSING, type CompactValues, type TemplateColumns } from '../compact-rows.js'
import type { Sql } from './index.js'
import { resultRecord, type ResultRow } from './runs.js'

/*
 * Compact result rows on PostgreSQL (see ../compact-rows.ts), in two stages:
 *
 * - `result_runs`: a row per run as it is written, partitioned by range of `created` (ms), one
 *   partition per UTC hour (result_runs_YYYYMMDDHH; a database written before holds day
 *   partitions, result_runs_YYYYMMDD, until they are packed). Made ahead by the prune (this
 *   hour and the next), or by the first row of its hour.
 * - `result_blocks`: once an hour has ended (and GRACE_MS more, for transactions that started
 *   in it), the prune packs its partition into one row per check, location, template and hour
 *   (its runs' values in one int4[5][n] array: seq − base, created − hour, made, dur, rt) and
 *   drops it, in one transaction. A row costs PostgreSQL 28 bytes before its data and each index
 *   entry about 16 more: a block pays them once for an hour of runs (60 at frequency 1), 20
 *   bytes a run after that. Partitioned by range of `hour`, one partition per UTC day
 *   (result_blocks_YYYYMMDD), made ahead by the prune (today and tomorrow).
 *
 * Both are dropped whole, partition by partition, once past the retention: no row is deleted
 * or updated, so nothing is left for autovacuum. Reads answer the union of both stages, so a
 * result reads the same before and after its hour is packed. Seqs come from check_results'
 * identity sequence, so lists merge full and compact rows.
 */

export const HOUR_MS = 3_600_000
/** How long after its hour's end a staging partition is packed: no transaction that writes a run stays open that long. */
export const GRACE_MS = 2 * 60_000

const hourName = (hour: number): string => `result_runs_${new Date(hour * HOUR_MS).toISOString().slice(0, 13).replace(/[-T]/g, '')}`
const blockName = (day: number): string => partitionName(day).replace('result_runs_', 'result_blocks_')

/** Results that stopped before this time (ms) are no longer answered. */
export async function retentionCutoff(sql: Sql): Promise<number> {
  const [row] = await sql.rows<{ cutoff_ms: string | number }>(`SELECT cutoff_ms FROM result_retention WHERE id = 1`)
  return row ? Number(row.cutoff_ms) : 0
}

/**
 * Makes a partition of `parent` for [from, to) under `name` unless it (or `also`) exists: one maker at a time (an
 * advisory lock of the transaction). Made as a table, then attached: attaching locks the parent against other
 * attaches and detaches only (SHARE UPDATE EXCLUSIVE), not against the transactions writing to it.
 */
export async function ensure(sql: Sql, parent: string, name: string, from: number, to: number, also?: string): Promise<void> {
  const exists = async (q: Sql) =>
    Boolean((await q.rows<{ t: string | null }>(`SELECT coalesce(to_regclass($1), to_regclass($2))::text AS t`, [name, also ?? name]))[0]?.t)
  if (await exists(sql)) return
  await sql.atomic(async (tx) => {
    await tx.rows(`SELECT pg_advisory_xact_lock(hashtext($1))`, [parent])
    if (await exists(tx)) return
    await tx.run(`CREATE TABLE IF NOT EXISTS ${name} (LIKE ${parent} INCLUDING DEFAULTS)`)
    const [attached] = await tx.rows(`SELECT 1 FROM pg_inherits WHERE inhrelid = $1::regclass`, [name])
    if (!attached) await tx.run(`ALTER TABLE ${parent} ATTACH PARTITION ${name} FOR VALUES FROM (${from}) TO (${to})`)
  })
}

/** Makes the staging partition of an hour (hours since 1970) unless it, or its day's partition of before, exists. */
export async function ensurePartition(sql: Sql, hour: number): Promise<void> {
  await ensure(sql, 'result_runs', hourName(hour), hour * HOUR_MS, (hour + 1) * HOUR_MS, partitionName(dayOf(hour * HOUR_MS)))
}

/** Makes a day's partition of the packed blocks unless it exists. */
export async function ensureBlocks(sql: Sql, day: number): Promise<void> {
  await ensure(sql, 'result_blocks', blockName(day), day * DAY_MS, (day + 1) * DAY_MS)
}

/**
 * Writes a compact row in the caller's transaction; answers its id, or undefined for a run of an
 * hour packed already (a clock behind the packer's by more than GRACE_MS): that one is kept in full.
 */
export async function compactRow(tx: Sql, checkSeq: number, location: string, template: number, values: CompactValues): Promise<string | undefined> {
  const created = values.started + values.dur + values.made
  const hour = Math.floor(created / HOUR_MS)
  const insert = () =>
    tx.rows<{ seq: string | number }>(
      `
    INSERT INTO result_runs (seq, chk, loc, tpl, created, made, dur, rt)
    SELECT nextval(pg_get_serial_sequence('check_results', 'seq')), $1, l.id, $2, $3, $4, $5, $6
    FROM result_locations l WHERE l.name = $7 AND coalesce(to_regclass($8), to_regclass($9)) IS NOT NULL AND $3 >= (SELECT packed_ms FROM result_retention WHERE id = 1)
    RETURNING seq`,
      [checkSeq, template, created, values.made, values.dur, values.rt, location, hourName(hour), partitionName(dayOf(created))],
    )
  let [row] = await insert()
  if (!row) {
    // the location's key or the hour's partition is not there yet (seldom: once each)
    const [known] = await tx.rows(`SELECT 1 FROM result_locations WHERE name = $1`, [location])
    if (!known) await tx.run(`INSERT INTO result_locations (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [location])
    await ensurePartition(tx, hour)
    ;[row] = await insert()
  }
  return row ? compactId(created, Number(row.seq)) : undefined
}

interface CompactRow {
  seq: string | number
  loc_name: string
  tpl: string | number
  created: string | number
  made: number
  dur: number
  rt: number | null
}

/** The runs of blocks as rows of result_runs' columns (`b` the block, `where` on it). */
const blockRuns = (where: string) => `SELECT b.base + b.v[1][i] AS seq, b.chk, b.loc, b.tpl, b.hour + b.v[2][i] AS created,
    b.v[3][i] AS made, b.v[4][i] AS dur, b.v[5][i] AS rt
  FROM result_blocks b CROSS JOIN LATERAL generate_series(1, array_length(b.v, 2)) AS i WHERE ${where}`

/** Compact rows of both stages, with their location's name and check's id: `runs` filters result_runs, `blocks` result_blocks (b), `all` both. */
const compactRows = (runs: string, blocks: string, all = 'true') => `SELECT r.seq, l.name AS loc_name, r.tpl, r.created, r.made, r.dur, r.rt, c.id AS check_id
  FROM (SELECT seq, chk, loc, tpl, created, made, dur, rt FROM result_runs WHERE ${runs} UNION ALL ${blockRuns(blocks)}) r
  JOIN result_locations l ON l.id = r.loc JOIN checks c ON c.seq = r.chk WHERE ${all}`

/** The staging rows still answered from result_runs: those of hours not packed yet. */
const UNPACKED = `created >= (SELECT packed_ms FROM result_retention WHERE id = 1)`

/** The records of compact rows: each its own times and its template's columns and details. */
async function records(sql: Sql, rows: Array<CompactRow & { check_id: string }>): Promise<Map<number, CheckResultRecord>> {
  const seqs = [...new Set(rows.map((r) => Number(r.tpl)))]
  const templates = new Map(
    (
      await sql.rows<{
        seq: string | number
        status: string
        has_failures: boolean
        has_errors: boolean
        is_degraded: boolean
        error: string | null
        details: string
      }>(
        `SELECT seq, status, has_failures, has_errors, is_degraded, error, details FROM check_results
    WHERE seq = ANY($1::bigint[])`,
        [seqs],
      )
    ).map((t): [number, TemplateColumns] => [
      Number(t.seq),
      {
        status: t.status,
        hasFailures: t.has_failures,
        hasErrors: t.has_errors,
        isDegraded: t.is_degraded,
        error: t.error,
        details: t.details,
      },
    ]),
  )
  const out = new Map<number, CheckResultRecord>()
  for (const r of rows) {
    const stopped = Number(r.created) - r.made
    out.set(
      Number(r.seq),
      compactRecord(
        {
          seq: Number(r.seq),
          checkId: r.check_id,
          location: r.loc_name,
          started: stopped - r.dur,
          dur: r.dur,
          made: r.made,
          rt: r.rt,
        },
        templates.get(Number(r.tpl)) ?? { ...PASSING, details: '{}' },
      ),
    )
  }
  return out
}

/** A compact row by its id, when it is the account's (and, when given, the check's) and inside the retention. */
export async function getCompact(sql: Sql, account: string, id: string, checkId?: string): Promise<CheckResultRecord | undefined> {
  const parsed = parseCompactId(id)
  if (!parsed) return undefined
  const hour = Math.floor(parsed.created / HOUR_MS) * HOUR_MS
  const rows = await sql.rows<CompactRow & { check_id: string }>(
    compactRows(
      `created = $1 AND seq = $2 AND ${UNPACKED}`,
      `b.hour = $4 AND ($5::text IS NULL OR b.chk = (SELECT seq FROM checks WHERE id = $5 AND account_id = $3)) AND $2 - b.base = ANY(b.v[1:1]::bigint[])`,
      `r.created = $1 AND r.seq = $2 AND c.account_id = $3 AND r.created - r.made >= (SELECT cutoff_ms FROM result_retention WHERE id = 1)`,
    ),
    [parsed.created, parsed.seq, account, hour, checkId ?? null],
  )
  return rows.length === 0 ? undefined : (await records(sql, rows)).get(parsed.seq)
}

const COLUMNS = `id, check_id, session_id, run_id, run_location, result_type, status, has_failures, has_errors, is_degraded,
  response_time, started_at, stopped_at, error, details, created_at`

/** A compact row's `hasFailures` is its template's: the filter $9 on it (a block's runs share their template). */
const TEMPLATE_FAILURES = (tpl: string) => `($9::boolean IS NULL OR (SELECT t.has_failures FROM check_results t WHERE t.seq = ${tpl}) = $9)`

/** The compact runs of a list (both stages), with the filters of listResults' parameters. */
const LIST_COMPACT = `SELECT seq, true FROM result_runs WHERE $5 AND chk = $6 AND created >= $7 AND created - made >= $8 AND ${UNPACKED}
      AND ($10::text IS NULL OR loc = (SELECT id FROM result_locations WHERE name = $10))
      AND ($13::bigint IS NULL OR (created >= $13 AND created - made - dur >= $13)) AND ($14::bigint IS NULL OR created - made - dur < $14)
      AND ${TEMPLATE_FAILURES('tpl')}
    UNION ALL
    SELECT seq, true FROM (${blockRuns(`$5 AND b.chk = $6 AND b.hour >= $7 AND ($13::bigint IS NULL OR b.hour + ${HOUR_MS} > $13)
      AND ($10::text IS NULL OR b.loc = (SELECT id FROM result_locations WHERE name = $10)) AND ${TEMPLATE_FAILURES('b.tpl')}`)}) k
    WHERE created - made >= $8
      AND ($13::bigint IS NULL OR (created >= $13 AND created - made - dur >= $13)) AND ($14::bigint IS NULL OR created - made - dur < $14)`

/**
 * A check's results, full and compact, newest first, with the filters asked for (each null when
 * not: $9 hasFailures, $10 location, $11 and $12 the start time's range as text, $13 and $14 in
 * ms). Compact rows are FINAL results (none is an attempt), their flags their template's; their
 * start is their creation less their delays (so one started at or after `from` was created after it too).
 */
export async function listResults(sql: Sql, account: string, query: ResultQuery): Promise<Page<CheckResultRecord>> {
  const cutoff = await retentionCutoff(sql)
  const [check] = await sql.rows<{ seq: string | number }>(`SELECT seq FROM checks WHERE id = $1 AND account_id = $2`, [query.checkId, account])
  const withCompact = check !== undefined && query.resultType !== 'ATTEMPT'
  // the days' partitions inside the retention only (created >= the cutoff's day)
  const union = `SELECT seq, false AS compact FROM check_results
      WHERE account_id = $1 AND check_id = $2 AND ($3::text IS NULL OR result_type = $3) AND stopped_at >= $4
        AND ($9::boolean IS NULL OR has_failures = $9) AND ($10::text IS NULL OR run_location = $10)
        AND ($11::text IS NULL OR started_at >= $11) AND ($12::text IS NULL OR started_at < $12)
    UNION ALL
    ${LIST_COMPACT}`
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())
  const params = [
    account,
    query.checkId,
    query.resultType ?? null,
    new Date(cutoff).toISOString(),
    withCompact,
    check ? Number(check.seq) : -1,
    dayOf(cutoff) * DAY_MS,
    cutoff,
    query.hasFailures ?? null,
    query.location ?? null,
    iso(query.from),
    iso(query.to),
    query.from ?? null,
    query.to ?? null,
  ]
  const page = await sql.rows<{ seq: string | number; compact: boolean }>(`${union} ORDER BY seq DESC LIMIT $15 OFFSET $16`, [
    ...params,
    query.limit,
    query.offset,
  ])
  const [{ n }] = await sql.rows<{ n: string | number }>(`SELECT count(*) AS n FROM (${union}) u`, params)
  const seqs = (compact: boolean) => page.filter((p) => p.compact === compact).map((p) => Number(p.seq))
  const full = new Map(
    (await sql.rows<ResultRow & { seq: string | number }>(`SELECT seq, ${COLUMNS} FROM check_results WHERE seq = ANY($1::bigint[])`, [seqs(false)])).map(
      (row) => [Number(row.seq), resultRecord(row)],
    ),
  )
  const wanted = seqs(true)
  // a run read from either stage: its hour may have been packed between the page's query and this one
  const compactOnes =
    wanted.length === 0
      ? []
      : await sql.rows<CompactRow & { check_id: string }>(
          compactRows(`seq = ANY($1::bigint[]) AND chk = $2 AND created >= $3`, `b.chk = $2 AND b.hour >= $3 AND b.base <= $4`, `r.seq = ANY($1::bigint[])`),
          [wanted, Number(check?.seq), dayOf(cutoff) * DAY_MS, Math.max(...wanted)],
        )
  const compacts = await records(sql, compactOnes)
  const items = page.map((p) => (p.compact ? compacts.get(Number(p.seq)) : full.get(Number(p.seq))))
  return { items: items.filter((r): r is CheckResultRecord => r !== undefined), total: Number(n) }
}

/** The partitions of a partitioned table, with their ranges [from, to), oldest first. */
export async function partitionsOf(sql: Sql, parent: string): Promise<Array<{ name: string; from: number; to: number }>> {
  const rows = await sql.rows<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = $1`,
    [parent],
  )
  const out: Array<{ name: string; from: number; to: number }> = []
  for (const { name, bound } of rows) {
    const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(bound)
    if (m) out.push({ name, from: Number(m[1]), to: Number(m[2]) })
  }
  return out.sort((a, b) => a.from - b.from)
}

/**
 * Drops a partition: detached first (the parent's lock, then the partition's: the order in
 * which statements on the parent take them, so a read in progress is waited for, never
 * deadlocked with), then dropped alone.
 */
export async function dropPartition(sql: Sql, parent: string, name: string): Promise<void> {
  await sql.run(`ALTER TABLE ${parent} DETACH PARTITION ${name}`)
  await sql.run(`DROP TABLE IF EXISTS ${name}`)
}

/** Sets the cutoff and drops the partitions (both stages) wholly before it. */
export async function dropPartitions(sql: Sql, before: number): Promise<void> {
  await sql.run(`UPDATE result_retention SET cutoff_ms = $1 WHERE id = 1`, [before])
  for (const parent of ['result_runs', 'result_blocks']) {
    for (const p of await partitionsOf(sql, parent)) if (p.to <= before) await dropPartition(sql, parent, p.name)
  }
}

/**
 * Packs each staging partition whose range ended GRACE_MS before `now` into blocks, oldest first:
 * in one transaction its rows become blocks and the watermark (`packed_ms`) moves past it, so
 * that every statement reads each run from one stage; then the partition is dropped. The
 * partition is locked against writers first (a transaction still writing to it is waited for);
 * a run written later, for an hour packed already, is kept in full (see compactRow).
 */
export async function packHours(sql: Sql, now: number): Promise<number> {
  let packed = 0
  for (const p of await partitionsOf(sql, 'result_runs')) {
    if (p.to + GRACE_MS > now) break
    for (let day = dayOf(p.from); day * DAY_MS < p.to; day++) await ensureBlocks(sql, day)
    await sql.atomic(async (tx) => {
      await tx.run(`LOCK TABLE ${p.name} IN SHARE MODE`)
      packed += await tx.run(`INSERT INTO result_blocks (chk, loc, tpl, hour, base, v)
        SELECT chk, loc, tpl, hour, base, ARRAY[array_agg((seq - base)::int ORDER BY seq), array_agg((created - hour)::int ORDER BY seq),
          array_agg(made ORDER BY seq), array_agg(dur ORDER BY seq), array_agg(rt ORDER BY seq)]
        FROM (SELECT r.*, min(seq) OVER (PARTITION BY chk, loc, tpl, hour) AS base
          FROM (SELECT *, (created / ${HOUR_MS}) * ${HOUR_MS} AS hour FROM ${p.name}) r) s
        GROUP BY chk, loc, tpl, hour, base`)
      await tx.run(`UPDATE result_retention SET packed_ms = greatest(packed_ms, $1) WHERE id = 1`, [p.to])
    })
    await dropPartition(sql, 'result_runs', p.name)
  }
  return packed
}

/** Makes ahead the partitions rows will go to: staging for this hour and the next, blocks for today and tomorrow. */
export async function makeAhead(sql: Sql, now: number): Promise<void> {
  const hour = Math.floor(now / HOUR_MS)
  for (const h of [hour, hour + 1]) await ensurePartition(sql, h)
  for (const day of [dayOf(now), dayOf(now) + 1]) await ensureBlocks(sql, day)
}
