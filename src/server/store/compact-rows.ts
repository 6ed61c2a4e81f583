import { createHash } from 'node:crypto'
import type { CheckResultRecord } from './index.js'

/*
 * What both stores share about how results are kept, besides the SQL.
 *
 * A result is kept in full (a row of check_results: every column and the runner's result as
 * JSON) when someone will read its detail: a retry (ATTEMPT), a run of a check session, a
 * result that did not come from a run (heartbeats), and a run whose answer changed: its shape
 * (its details, the runner's result without the columns' fields, and for a run that did not
 * pass cleanly its status, flags and error too) differs from that of its template, the last
 * template of its check and location made the same UTC day of its kind: passing (status PASSED,
 * no failure, error or degradation) or not (a failure, an error, a degraded run). Such a row is
 * a template (`is_template`). Every other run (with its template's shape: a steady target's
 * passes, and the failures of an outage that keep failing the same way) is a compact row of its
 * day's partition (SQLite: a table per UTC day, PostgreSQL: a partition per UTC day of
 * `result_runs`): integers only (the check's and the location's integer keys, times in ms, the
 * response time in thousandths of a ms; on PostgreSQL, and for a failing run on SQLite, the
 * template's seq too), ~30 bytes on SQLite. Reading a compact row puts its template's status,
 * flags, error and details back with its own times: the same record, field for field, as a full
 * row would answer. (PostgreSQL then packs an ended hour's compact rows into one row per check,
 * location and template: see postgres/compact.ts.)
 *
 * Full and compact rows draw their `seq` from one counter (check_results' own), so lists
 * merge them in the order they were written. A compact row's id is a UUID made from its
 * creation time and its seq (see compactId): it names its partition and its row.
 */

export const DAY_MS = 86_400_000

/** Days since 1970-01-01 (UTC) of a time in ms. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS)

const PARTITION = /^result_runs_(\d{4})(\d{2})(\d{2})$/

/** The name of a day's partition: result_runs_YYYYMMDD. */
export function partitionName(day: number): string {
  return `result_runs_${new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '')}`
}

/** The day of a partition's name; undefined for another name. */
export function partitionDay(name: string): number | undefined {
  const m = PARTITION.exec(name)
  return m ? dayOf(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined
}

/** The fields of a result kept in columns of check_results (and of a compact row). */
export const COLUMN_FIELDS = [
  'checkId',
  'runLocation',
  'resultType',
  'startedAt',
  'stoppedAt',
  'responseTime',
  'hasFailures',
  'hasErrors',
  'isDegraded',
  'status',
  'error',
] as const
export type ColumnField = (typeof COLUMN_FIELDS)[number]
export type ColumnValues = Record<ColumnField, unknown>

/** The fields of a runner's result (src/runner RunResult), in its order. */
const RESULT_ORDER = [
  'checkId',
  'name',
  'checkType',
  'runLocation',
  'resultType',
  'attempt',
  'startedAt',
  'stoppedAt',
  'responseTime',
  'hasFailures',
  'hasErrors',
  'isDegraded',
  'timedOut',
  'aborted',
  'status',
  'failureKind',
  'error',
  'assertions',
  'details',
]

/** The columns of a record, as the fields of the runner's result. */
export function columnsOf(record: CheckResultRecord): ColumnValues {
  return {
    checkId: record.checkId,
    runLocation: record.runLocation,
    resultType: record.resultType,
    startedAt: record.startedAt,
    stoppedAt: record.stoppedAt,
    responseTime: record.responseTime,
    hasFailures: record.hasFailures,
    hasErrors: record.hasErrors,
    isDegraded: record.isDegraded,
    status: record.status,
    error: record.error,
  }
}

/** The stored JSON of a result: without the fields equal to its columns'. */
export function leanDetails(details: Record<string, unknown>, columns: ColumnValues): string {
  const lean: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(details)) {
    if (key in columns && columns[key as ColumnField] === value) continue
    lean[key] = value
  }
  return JSON.stringify(lean)
}

/** Details as stored before (every field), or lean: the runner's order of fields, columns filled in. */
export function fullDetails(stored: Record<string, unknown>, columns: ColumnValues): Record<string, unknown> {
  if ('startedAt' in stored && 'status' in stored) return stored
  const out: Record<string, unknown> = {}
  for (const key of RESULT_ORDER) {
    if (key in stored) out[key] = stored[key]
    else if (key in columns) out[key] = columns[key as ColumnField]
  }
  for (const [key, value] of Object.entries(stored)) if (!(key in out)) out[key] = value
  return out
}

/** A short digest of a lean text: what the template caches compare. */
export const digest = (text: string): string => createHash('sha1').update(text).digest('base64')

// 12 bits after the version nibble that mark a compact row's id (a random id has them by chance
// once in 4,096; its row must then also have the id's creation time to the ms)
const MARK = 0xc0d

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0')

/** The id of a compact row: UUID layout (version 7), the creation time in ms, MARK, then the seq. */
export function compactId(created: number, seq: number): string {
  const time = hex(created, 12)
  const low = hex(seq, 15)
  // variant 10 in the two high bits of the fourth group
  const variant = hex(0x8000 | parseInt(low.slice(0, 3), 16), 4)
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${hex(MARK, 3)}-${variant}-${low.slice(3)}`
}

const COMPACT_ID = /^([0-9a-f]{8})-([0-9a-f]{4})-7([0-9a-f]{3})-([89ab][0-9a-f]{3})-([0-9a-f]{12})$/

/** The creation time and seq a compact row's id names; undefined for any other id. */
export function parseCompactId(id: string): { created: number; seq: number } | undefined {
  const m = COMPACT_ID.exec(id)
  if (!m || parseInt(m[3], 16) !== MARK) return undefined
  const created = parseInt(m[1] + m[2], 16)
  const seq = parseInt(hex(parseInt(m[4], 16) & 0xfff, 3) + m[5], 16)
  return Number.isSafeInteger(seq) ? { created, seq } : undefined
}

/** A compact row's own values: times in ms (started), ms after it (dur, made), response time in thousandths of a ms. */
export interface CompactValues {
  started: number
  dur: number
  made: number
  rt: number | null
}

const MAX_INT = 2 ** 31 - 1

function exactMs(text: string): number | undefined {
  const ms = Date.parse(text)
  return Number.isFinite(ms) && ms >= 0 && new Date(ms).toISOString() === text ? ms : undefined
}

/** The columns a compact row takes from its template: what a run's outcome is, besides its times. */
export interface TemplateColumns {
  status: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  error: string | null
  /** its stored (lean) details */
  details: string
}

/** A passing run's columns (and a template missing: a compact row of a database damaged by hand answers as a pass). */
export const PASSING = { status: 'PASSED', hasFailures: false, hasErrors: false, isDegraded: false, error: null } as const

/** Whether a result passed cleanly: a template of passing runs (SQL: PASSING_SQL). */
export const isPassing = (r: Omit<TemplateColumns, 'details'>): boolean =>
  r.status === 'PASSED' && !r.hasFailures && !r.hasErrors && !r.isDegraded && r.error === null

/** isPassing over check_results' columns, in both dialects. */
export const PASSING_SQL = `(status = 'PASSED' AND NOT has_failures AND NOT has_errors AND NOT is_degraded AND error IS NULL)`

/**
 * What a compact row must share with its template: a passing run its lean details (as always),
 * any other also its status, flags and error (the columns a compact row does not keep).
 */
export function shapeOf(r: Omit<TemplateColumns, 'details'>, details: string): string {
  return isPassing(r) ? details : JSON.stringify([r.status, r.hasFailures, r.hasErrors, r.isDegraded, r.error, details])
}

/**
 * The compact values of a record, when it may be kept compact: a FINAL result of a scheduled
 * run (no session), passing or not, whose times are ISO texts to the ms and whose response time
 * is whole thousandths of a ms. Undefined: kept in full.
 */
export function compactValues(record: CheckResultRecord): CompactValues | undefined {
  if (record.resultType !== 'FINAL' || record.sessionId !== null) return undefined
  const started = exactMs(record.startedAt)
  const stopped = exactMs(record.stoppedAt)
  const created = exactMs(record.created_at)
  if (started === undefined || stopped === undefined || created === undefined) return undefined
  const dur = stopped - started
  const made = created - stopped
  if (dur < 0 || made < 0 || dur > MAX_INT || made > MAX_INT) return undefined
  let rt: number | null = null
  if (record.responseTime !== null) {
    rt = Math.round(record.responseTime * 1000)
    if (rt / 1000 !== record.responseTime || Math.abs(rt) > MAX_INT) return undefined
  }
  return { started, dur, made, rt }
}

/** A compact row read back, with its check's id, its location's name and its template's columns and stored (lean) details. */
export function compactRecord(row: CompactValues & { seq: number; checkId: string; location: string }, template: TemplateColumns): CheckResultRecord {
  const stopped = row.started + row.dur
  const created = stopped + row.made
  const id = compactId(created, row.seq)
  const record: CheckResultRecord = {
    id,
    checkId: row.checkId,
    sessionId: null,
    // the run's own row is kept 10 minutes (check_runs); no route answers a result's run id
    runId: id,
    runLocation: row.location,
    resultType: 'FINAL',
    status: template.status,
    hasFailures: template.hasFailures,
    hasErrors: template.hasErrors,
    isDegraded: template.isDegraded,
    responseTime: row.rt === null ? null : row.rt / 1000,
    startedAt: new Date(row.started).toISOString(),
    stoppedAt: new Date(stopped).toISOString(),
    error: template.error,
    details: {},
    created_at: new Date(created).toISOString(),
  }
  record.details = fullDetails(JSON.parse(template.details) as Record<string, unknown>, columnsOf(record))
  return record
}

/** The newest template of a check and location (of one kind: passing or not): its seq, its UTC day and the digest of its shape. */
export interface TemplateHint {
  seq: number
  day: number
  digest: string
}
