import type { CheckResultRecord, Page, ResultQuery } from '../index.js'
import {
  compactId, compactRecord, DAY_MS, dayOf, parseCompactId, partitionDay, partitionName, type CompactValues,
} from '../compact-rows.js'
import type { Sql } from './index.js'
import { resultRecord, type ResultRow } from './runs.js'

/*
 * Compact result rows on PostgreSQL (see ../compact-rows.ts): `result_runs`, partitioned by
 * range of `created` (ms), one partition per UTC day (result_runs_YYYYMMDD), made ahead by the
 * prune (today and tomorrow) or by the first row of its day, and dropped whole once the day is
 * past the retention. Its seq comes from check_results' identity sequence, so lists merge both.
 */

/** Results that stopped before this time (ms) are no longer answered. */
export async function retentionCutoff(sql: Sql): Promise<number> {
  const [row] = await sql.rows<{ cutoff_ms: string | number }>(`SELECT cutoff_ms FROM result_retention WHERE id = 1`)
  return row ? Number(row.cutoff_ms) : 0
}

/** Makes the day's partition unless it exists: one maker at a time (an advisory lock of the transaction). */
export async function ensurePartition(sql: Sql, day: number): Promise<void> {
  const name = partitionName(day)
  await sql.atomic(async (tx) => {
    const [found] = await tx.rows<{ t: string | null }>(`SELECT to_regclass($1)::text AS t`, [name])
    if (found?.t) return
    await tx.rows(`SELECT pg_advisory_xact_lock(hashtext('result_runs'))`)
    await tx.run(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF result_runs FOR VALUES FROM (${day * DAY_MS}) TO (${(day + 1) * DAY_MS})`)
  })
}

/** Writes a compact row in the caller's transaction; answers its id. */
export async function compactRow(tx: Sql, checkSeq: number, location: string, template: number, values: CompactValues): Promise<string> {
  const created = values.started + values.dur + values.made
  const insert = () => tx.rows<{ seq: string | number }>(`
    INSERT INTO result_runs (seq, chk, loc, tpl, created, made, dur, rt)
    SELECT nextval(pg_get_serial_sequence('check_results', 'seq')), $1, l.id, $2, $3, $4, $5, $6
    FROM result_locations l WHERE l.name = $7 AND to_regclass($8) IS NOT NULL
    RETURNING seq`, [checkSeq, template, created, values.made, values.dur, values.rt, location, partitionName(dayOf(created))])
  let [row] = await insert()
  if (!row) {
    // the location's key or the day's partition is not there yet (seldom: once each)
    const [known] = await tx.rows(`SELECT 1 FROM result_locations WHERE name = $1`, [location])
    if (!known) await tx.run(`INSERT INTO result_locations (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [location])
    await ensurePartition(tx, dayOf(created))
    ;[row] = await insert()
  }
  return compactId(created, Number(row.seq))
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

async function records(sql: Sql, rows: Array<CompactRow & { check_id: string }>): Promise<Map<number, CheckResultRecord>> {
  const templates = [...new Set(rows.map((r) => Number(r.tpl)))]
  const details = new Map((await sql.rows<{ seq: string | number; details: string }>(
    `SELECT seq, details FROM check_results WHERE seq = ANY($1::bigint[])`, [templates])).map((t) => [Number(t.seq), t.details]))
  const out = new Map<number, CheckResultRecord>()
  for (const r of rows) {
    const stopped = Number(r.created) - r.made
    out.set(Number(r.seq), compactRecord({
      seq: Number(r.seq), checkId: r.check_id, location: r.loc_name, started: stopped - r.dur, dur: r.dur, made: r.made, rt: r.rt,
    }, details.get(Number(r.tpl)) ?? '{}'))
  }
  return out
}

const COMPACT = `SELECT r.seq, l.name AS loc_name, r.tpl, r.created, r.made, r.dur, r.rt, c.id AS check_id
  FROM result_runs r JOIN result_locations l ON l.id = r.loc JOIN checks c ON c.seq = r.chk`

/** A compact row by its id, when it is the account's and inside the retention. */
export async function getCompact(sql: Sql, account: string, id: string): Promise<CheckResultRecord | undefined> {
  const parsed = parseCompactId(id)
  if (!parsed) return undefined
  const rows = await sql.rows<CompactRow & { check_id: string }>(`${COMPACT}
    WHERE r.created = $1 AND r.seq = $2 AND c.account_id = $3 AND r.created - r.made >= (SELECT cutoff_ms FROM result_retention WHERE id = 1)`,
  [parsed.created, parsed.seq, account])
  return rows.length === 0 ? undefined : (await records(sql, rows)).get(parsed.seq)
}

const COLUMNS = `id, check_id, session_id, run_id, run_location, result_type, status, has_failures, has_errors, is_degraded,
  response_time, started_at, stopped_at, error, details, created_at`

/**
 * A check's results, full and compact, newest first, with the filters asked for (each null when
 * not: $9 hasFailures, $10 location, $11 and $12 the start time's range as text, $13 and $14 in
 * ms). Compact rows are passing FINAL results (none has failures or is an attempt); their start is
 * their creation less their delays (so one started at or after `from` was created after it too).
 */
export async function listResults(sql: Sql, account: string, query: ResultQuery): Promise<Page<CheckResultRecord>> {
  const cutoff = await retentionCutoff(sql)
  const [check] = await sql.rows<{ seq: string | number }>(`SELECT seq FROM checks WHERE id = $1 AND account_id = $2`, [query.checkId, account])
  const withCompact = check !== undefined && query.resultType !== 'ATTEMPT' && query.hasFailures !== true
  // the days' partitions inside the retention only (created >= the cutoff's day)
  const union = `SELECT seq, false AS compact FROM check_results
      WHERE account_id = $1 AND check_id = $2 AND ($3::text IS NULL OR result_type = $3) AND stopped_at >= $4
        AND ($9::boolean IS NULL OR has_failures = $9) AND ($10::text IS NULL OR run_location = $10)
        AND ($11::text IS NULL OR started_at >= $11) AND ($12::text IS NULL OR started_at < $12)
    UNION ALL
    SELECT seq, true FROM result_runs WHERE $5 AND chk = $6 AND created >= $7 AND created - made >= $8
      AND ($10::text IS NULL OR loc = (SELECT id FROM result_locations WHERE name = $10))
      AND ($13::bigint IS NULL OR (created >= $13 AND created - made - dur >= $13)) AND ($14::bigint IS NULL OR created - made - dur < $14)`
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())
  const params = [account, query.checkId, query.resultType ?? null, new Date(cutoff).toISOString(), withCompact, check ? Number(check.seq) : -1,
    dayOf(cutoff) * DAY_MS, cutoff, query.hasFailures ?? null, query.location ?? null, iso(query.from), iso(query.to), query.from ?? null, query.to ?? null]
  const page = await sql.rows<{ seq: string | number; compact: boolean }>(`${union} ORDER BY seq DESC LIMIT $15 OFFSET $16`, [...params, query.limit, query.offset])
  const [{ n }] = await sql.rows<{ n: string | number }>(`SELECT count(*) AS n FROM (${union}) u`, params)
  const seqs = (compact: boolean) => page.filter((p) => p.compact === compact).map((p) => Number(p.seq))
  const full = new Map((await sql.rows<ResultRow & { seq: string | number }>(`SELECT seq, ${COLUMNS} FROM check_results WHERE seq = ANY($1::bigint[])`, [seqs(false)]))
    .map((row) => [Number(row.seq), resultRecord(row)]))
  const compactRows = seqs(true).length === 0 ? [] : await sql.rows<CompactRow & { check_id: string }>(`${COMPACT}
    WHERE r.seq = ANY($1::bigint[]) AND r.chk = $2 AND r.created >= $3`, [seqs(true), Number(check?.seq), dayOf(cutoff) * DAY_MS])
  const compacts = await records(sql, compactRows)
  const items = page.map((p) => (p.compact ? compacts.get(Number(p.seq)) : full.get(Number(p.seq))))
  return { items: items.filter((r): r is CheckResultRecord => r !== undefined), total: Number(n) }
}

/** Sets the cutoff and drops the partitions of days wholly before it. */
export async function dropPartitions(sql: Sql, before: number): Promise<void> {
  await sql.run(`UPDATE result_retention SET cutoff_ms = $1 WHERE id = 1`, [before])
  const partitions = await sql.rows<{ name: string }>(`SELECT c.relname AS name FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'result_runs'`)
  for (const { name } of partitions) {
    const day = partitionDay(name)
    if (day !== undefined && (day + 1) * DAY_MS <= before) await sql.run(`DROP TABLE IF EXISTS ${name}`)
  }
}
