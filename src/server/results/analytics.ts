/**
 * Analytics from recorded results (README "Analytics"). Every FINAL result becomes a sample of
 * its check's hourly rollup row (per location, status code and status) in the transaction that
 * records it; a query reads the rows of its window and aggregates them:
 * - rows wholly inside the window and inside one bucket add their totals (count, sum, sum of
 *   squares, min, max) as they are;
 * - rows cut by the window's edges or by sub-hour buckets, and every row when a percentile is
 *   asked for, are read run by run.
 * So every figure is computed from the recorded runs themselves: percentiles by nearest rank
 * over the values of the runs in the bucket, the standard deviation over the same values
 * (population: divided by n), averages and sums exactly.
 */
import type { RunResult } from '../../runner/types.js'
import { checkTypeEntry, metricSpecs, type AnalyticsCheckType, type AnalyticsQuery, type MetricSpec, type QuickRange } from '../../schema/index.js'
import type { AnalyticsRollupRow, AnalyticsSample, AnalyticsStore, MetricTotals, Repositories } from '../store/index.js'

const MINUTE = 60_000
const HOUR = 3_600_000
const DAY = 86_400_000

/** Result fields analytics read, beyond RunResult. */
type SampledResult = RunResult & { attempts?: unknown[]; heartbeatState?: string }

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)
const round3 = (value: number): number => Math.round(value * 1000) / 1000

/** The measured values of a result, by the metric names of its check type (check-types.ts). */
function valuesOf(type: string, result: SampledResult): Record<string, number> {
  const entry = checkTypeEntry(type)
  return entry ? entry.values({ responseTime: result.responseTime, details: (result.details ?? {}) as unknown as Record<string, unknown> }) : {}
}

/** Pages of a browser run its analytics keep apart (groupBy=pageIndex): the first 20 it opened. */
export const ANALYTICS_PAGES = 20
const VITALS = ['TTFB', 'FCP', 'LCP', 'CLS', 'TBT'] as const
/** `retries@<page>`: the marker of a run that opened the page (its count) and the run's retries (its sum). */
const PAGE_MARKER = /^retries@(\d+)$/

/**
 * The values a run keeps per page it opened, as `<metric>@<pageIndex>`: the page's web vitals,
 * the run's time, and `retries@<pageIndex>` (every run that opened the page has it). They ride
 * in the run's own rollup row, so grouping by page reads the same rows (pageRows).
 */
function pageValues(details: Record<string, unknown>, values: Record<string, number>, retries: number): Record<string, number> {
  const out: Record<string, number> = {}
  const pages = Array.isArray(details.pages) ? (details.pages as Array<{ index?: unknown; webVitals?: Record<string, unknown> | null }>) : []
  for (const page of pages) {
    const p = page?.index
    if (typeof p !== 'number' || !Number.isInteger(p) || p < 0 || p >= ANALYTICS_PAGES) continue
    out[`retries@${p}`] = retries
    if (finite(values.responseTime)) out[`responseTime@${p}`] = values.responseTime
    for (const name of VITALS) if (finite(page.webVitals?.[name])) out[`${name}@${p}`] = page.webVitals[name] as number
  }
  return out
}

/** One FINAL result as a sample of its check's analytics. */
export function analyticsSample(checkType: string, result: SampledResult): AnalyticsSample | undefined {
  const at = Date.parse(result.startedAt)
  if (!Number.isFinite(at)) return undefined
  const failed = result.hasFailures || result.hasErrors
  const entry = checkTypeEntry(checkType)
  // a heartbeat check's statuses are its events' states; a run's, success or failure
  const status = entry?.runs === 'pings' ? (result.heartbeatState ?? (failed ? 'FAILING' : 'RECEIVED')) : failed ? 'failure' : 'success'
  const retries = Array.isArray(result.attempts) ? result.attempts.length : Math.max(0, (finite(result.attempt) ? result.attempt : 1) - 1)
  const details = (result.details ?? {}) as unknown as Record<string, unknown>
  const statusCode = entry?.groupBy.includes('statusCode') && finite(details.statusCode) ? details.statusCode : null
  const values = valuesOf(checkType, result)
  const pages = entry?.groupBy.includes('pageIndex') ? pageValues(details, values, retries) : {}
  return { at, runLocation: String(result.runLocation ?? 'unknown'), statusCode, status, retries, values: { ...values, ...pages } }
}

/** Adds a FINAL result to its check's rollup: inside the transaction that records the result. */
export async function recordAnalytics(tx: Repositories, account: string, checkId: string, checkType: string, result: SampledResult): Promise<void> {
  const sample = analyticsSample(checkType, result)
  if (sample) await tx.analytics.record(account, checkId, sample)
}

// ---------------------------------------------------------------------------------------------
// Reading

/** Statuses counted as passing and as failing in `availability`; others (LATE, EARLY) count in neither. */
const PASSING = new Set(['success', 'RECEIVED', 'GRACE'])
const FAILING = new Set(['failure', 'FAILING'])

const startOfUtcDay = (ms: number) => Math.floor(ms / DAY) * DAY
/** Monday 00:00 UTC of the week of ms. */
const startOfUtcWeek = (ms: number) => startOfUtcDay(ms) - ((new Date(ms).getUTCDay() + 6) % 7) * DAY
const startOfUtcMonth = (ms: number, monthsBack = 0) => {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - monthsBack, 1)
}

/** The window [from, to) of a query, in ms: from / to when given, else the quick range (UTC). */
export function analyticsWindow(query: Pick<AnalyticsQuery, 'from' | 'to' | 'quickRange'>, now: number): { from: number; to: number } | { error: string } {
  let from: number
  let to: number
  if (query.from !== undefined || query.to !== undefined) {
    to = query.to ?? now
    from = query.from ?? to - DAY
  } else {
    const ranges: Record<QuickRange, () => [number, number]> = {
      last24Hours: () => [now - DAY, now],
      last7Days: () => [now - 7 * DAY, now],
      last30Days: () => [now - 30 * DAY, now],
      thisWeek: () => [startOfUtcWeek(now), now],
      thisMonth: () => [startOfUtcMonth(now), now],
      lastWeek: () => [startOfUtcWeek(now) - 7 * DAY, startOfUtcWeek(now)],
      lastMonth: () => [startOfUtcMonth(now, 1), startOfUtcMonth(now)],
    }
    ;[from, to] = ranges[query.quickRange]()
  }
  if (!(from < to)) return { error: `from must be before to (got from ${new Date(from).toISOString()}, to ${new Date(to).toISOString()})` }
  return { from, to }
}

interface MetricAcc {
  n: number
  sum: number
  sumsq: number
  min: number
  max: number
  /** every value, when a percentile is asked for (all rows are then read run by run) */
  values: number[] | undefined
  sorted?: Float64Array
}

interface Bucket {
  start: number
  group: string | number | null
  runs: number
  passed: number
  failed: number
  retries: number
  metrics: Map<string, MetricAcc>
}

export interface AnalyticsAnswer {
  from: number
  to: number
  /** every entry of every page, in order (the route slices a page) */
  entries: Array<Record<string, unknown>>
  metadata: Record<string, { unit: string; label: string; aggregation: string }>
}

/** Nearest rank: the smallest value with at least p % of the values at or below it. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]
}

function aggregate(acc: MetricAcc | undefined, spec: Extract<MetricSpec, { kind: 'measured' }>): number | null {
  if (!acc || acc.n === 0) return null
  switch (spec.aggregation) {
    case 'avg':
      return round3(acc.sum / acc.n)
    case 'sum':
      return round3(acc.sum)
    case 'min':
      return round3(acc.min)
    case 'max':
      return round3(acc.max)
    case 'stddev': {
      const mean = acc.sum / acc.n
      if (acc.values) {
        let squares = 0
        for (const v of acc.values) squares += (v - mean) * (v - mean)
        return round3(Math.sqrt(squares / acc.n))
      }
      return round3(Math.sqrt(Math.max(0, acc.sumsq / acc.n - mean * mean)))
    }
    default: {
      if (!acc.values || acc.values.length === 0) return null
      acc.sorted ??= Float64Array.from(acc.values).sort()
      const p = spec.aggregation === 'median' ? 50 : Number(spec.aggregation.slice(1))
      return round3(percentile(acc.sorted as unknown as number[], p))
    }
  }
}

const PERCENTILES = new Set(['median', 'p50', 'p90', 'p95', 'p99'])

type MeasuredSpec = Extract<MetricSpec, { kind: 'measured' }>

/** What a query asks of the rows: which metrics, over which buckets, grouped how. */
interface AnalyticsPlan {
  from: number
  to: number
  asked: MetricSpec[]
  /** the measured metrics' bases, read from the rows */
  bases: Set<string>
  /** a percentile is asked for: every value is kept */
  runByRun: boolean
  /** the bucket length in ms; none: one bucket for the whole window */
  interval: number | undefined
  statuses: Set<string> | undefined
  groupBy: AnalyticsQuery['groupBy']
}

function analyticsPlan(type: AnalyticsCheckType, query: AnalyticsQuery, window: { from: number; to: number }): AnalyticsPlan {
  const specs = new Map(metricSpecs(type).map((m) => [m.name, m]))
  const asked = query.metrics.map((name) => specs.get(name) as MetricSpec)
  const measured = asked.filter((m): m is MeasuredSpec => m.kind === 'measured')
  return {
    from: window.from,
    to: window.to,
    asked,
    bases: new Set(measured.map((m) => m.base)),
    runByRun: measured.some((m) => PERCENTILES.has(m.aggregation)),
    interval: query.aggregationInterval === undefined ? undefined : query.aggregationInterval * MINUTE,
    statuses: query.filterByStatus ? new Set<string>(query.filterByStatus) : undefined,
    groupBy: query.groupBy,
  }
}

/**
 * The rollup rows of a window: run by run for every hour when percentiles or sub-hour buckets
 * are asked for; else only the hours the window's edges cut, and the whole hours as totals.
 */
async function windowRows(
  repos: { analytics: Pick<AnalyticsStore, 'rows'> },
  account: string,
  checkId: string,
  plan: AnalyticsPlan,
): Promise<AnalyticsRollupRow[]> {
  const { from, to, interval } = plan
  const read = (start: number, end: number, samples: boolean) => repos.analytics.rows(account, checkId, start, end, samples)
  const firstHour = Math.floor(from / HOUR) * HOUR
  const endHour = Math.ceil(to / HOUR) * HOUR
  const wholeFrom = Math.ceil(from / HOUR) * HOUR
  const wholeTo = Math.floor(to / HOUR) * HOUR
  const everyRun = plan.runByRun || (interval !== undefined && interval % HOUR !== 0)
  if (everyRun || wholeFrom >= wholeTo) return read(firstHour, endHour, true)
  const rows: AnalyticsRollupRow[] = []
  if (firstHour < wholeFrom) rows.push(...(await read(firstHour, wholeFrom, true)))
  rows.push(...(await read(wholeFrom, wholeTo, false)))
  if (wholeTo < endHour) rows.push(...(await read(wholeTo, endHour, true)))
  return rows
}

/** A rollup row, or the part of one about a page (pageRows). */
type GroupedRow = AnalyticsRollupRow & { pageIndex?: number }

/**
 * The page parts of a rollup row, one per page its runs opened: the runs that opened the page
 * (`retries@<page>` counts them and sums their retries) with the values kept for the page, by
 * their metric names (the run's other metrics, its error counts, are not told apart by page).
 */
export function pageRows(row: AnalyticsRollupRow): GroupedRow[] {
  const out: GroupedRow[] = []
  for (const [marker, counted] of Object.entries(row.totals)) {
    const page = PAGE_MARKER.exec(marker)?.[1]
    if (page === undefined) continue
    const suffix = `@${page}`
    const ofPage = <T>(entries: Array<[string, T]>) =>
      Object.fromEntries(entries.filter(([name]) => name.endsWith(suffix) && name !== marker).map(([name, v]) => [name.slice(0, -suffix.length), v]))
    const part: GroupedRow = { ...row, runs: counted[0], retries: counted[1], totals: ofPage(Object.entries(row.totals)), pageIndex: Number(page) }
    if (row.samples) {
      const runs = row.samples
      const kept = (runs.values[marker] ?? []).flatMap((value, i) => (value === null ? [] : [i]))
      const values = ofPage(Object.entries(runs.values)) as Record<string, Array<number | null>>
      part.samples = {
        seconds: kept.map((i) => runs.seconds[i]),
        retries: kept.map((i) => runs.retries[i]),
        values: Object.fromEntries(Object.entries(values).map(([name, column]) => [name, kept.map((i) => column[i])])),
      }
    }
    out.push(part)
  }
  return out
}

/** The buckets of a query, filled row by row (whole rows by their totals, cut rows run by run). */
class Buckets {
  private readonly buckets = new Map<string, Bucket>()

  constructor(private readonly plan: AnalyticsPlan) {}

  add(row: AnalyticsRollupRow): void {
    if (this.plan.groupBy === 'pageIndex') for (const part of pageRows(row)) this.addRow(part)
    else this.addRow(row)
  }

  private addRow(row: GroupedRow): void {
    const { from, to, interval, statuses } = this.plan
    if (statuses && !statuses.has(row.status)) return
    const rowEnd = row.hourStart + HOUR
    const whole =
      row.hourStart >= from && rowEnd <= to && (interval === undefined || Math.floor(row.hourStart / interval) === Math.floor((rowEnd - 1) / interval))
    if (whole) this.addWholeRow(row)
    else this.addRunsOf(row)
  }

  /** In start order, then group order. */
  ordered(): Bucket[] {
    return [...this.buckets.values()].sort((a, b) => a.start - b.start || compareGroups(a.group, b.group))
  }

  /** The whole row falls in one bucket: its totals, and its values for percentiles. */
  private addWholeRow(row: GroupedRow): void {
    const bucket = this.bucketAt(row.hourStart, row)
    count(bucket, row.status, row.runs, row.retries)
    for (const base of this.plan.bases) {
      const t = row.totals[base]
      if (!t) continue
      addTotals(metricOf(bucket, base), t)
      if (!this.plan.runByRun) continue
      const values = (metricOf(bucket, base).values ??= [])
      for (const value of row.samples?.values[base] ?? []) if (value !== null) values.push(value)
    }
  }

  /** A row cut by the window or by the buckets: each of its runs inside the window. */
  private addRunsOf(row: GroupedRow): void {
    const runs = row.samples
    if (!runs) return
    for (let i = 0; i < runs.seconds.length; i++) {
      const at = row.hourStart + runs.seconds[i] * 1000
      if (at < this.plan.from || at >= this.plan.to) continue
      const bucket = this.bucketAt(at, row)
      count(bucket, row.status, 1, runs.retries[i])
      for (const base of this.plan.bases) {
        const value = runs.values[base]?.[i]
        if (value === null || value === undefined) continue
        addTotals(metricOf(bucket, base), [1, value, value * value, value, value])
        if (this.plan.runByRun) (metricOf(bucket, base).values ??= []).push(value)
      }
    }
  }

  private bucketAt(at: number, row: GroupedRow): Bucket {
    const { interval, groupBy } = this.plan
    const start = interval === undefined ? this.plan.from : Math.floor(at / interval) * interval
    const group =
      groupBy === 'runLocation' ? row.runLocation : groupBy === 'statusCode' ? row.statusCode : groupBy === 'pageIndex' ? (row.pageIndex ?? null) : null
    const key = `${start}\u0000${String(group)}`
    let bucket = this.buckets.get(key)
    if (!bucket) {
      bucket = { start, group, runs: 0, passed: 0, failed: 0, retries: 0, metrics: new Map() }
      this.buckets.set(key, bucket)
    }
    return bucket
  }
}

function metricOf(bucket: Bucket, name: string): MetricAcc {
  let acc = bucket.metrics.get(name)
  if (!acc) {
    acc = { n: 0, sum: 0, sumsq: 0, min: Infinity, max: -Infinity, values: undefined }
    bucket.metrics.set(name, acc)
  }
  return acc
}

function count(bucket: Bucket, status: string, runs: number, retries: number): void {
  bucket.runs += runs
  bucket.retries += retries
  if (PASSING.has(status)) bucket.passed += runs
  else if (FAILING.has(status)) bucket.failed += runs
}

function addTotals(acc: MetricAcc, t: MetricTotals): void {
  acc.n += t[0]
  acc.sum += t[1]
  acc.sumsq += t[2]
  acc.min = Math.min(acc.min, t[3])
  acc.max = Math.max(acc.max, t[4])
}

/** One entry of the answer: a bucket's start, its group, and each metric asked for. */
function entryOf(bucket: Bucket, plan: AnalyticsPlan): Record<string, unknown> {
  const entry: Record<string, unknown> = { bucketStart: new Date(bucket.start).toISOString() }
  if (plan.groupBy === 'runLocation') entry.runLocation = bucket.group
  if (plan.groupBy === 'statusCode') entry.statusCode = bucket.group
  if (plan.groupBy === 'pageIndex') entry.pageIndex = bucket.group
  for (const spec of plan.asked) {
    if (spec.kind === 'availability') {
      const counted = bucket.passed + bucket.failed
      entry[spec.name] = counted === 0 ? null : round3((bucket.passed / counted) * 100)
    } else if (spec.kind === 'retries') entry[spec.name] = bucket.retries
    else {
      entry[spec.name] = aggregate(bucket.metrics.get(spec.base), spec)
    }
  }
  return entry
}

/**
 * The analytics of one check over a query's window: reads its rollup rows (run by run only
 * where needed) and aggregates them per bucket and group.
 */
export async function analyticsAnswer(
  repos: { analytics: Pick<AnalyticsStore, 'rows'> },
  account: string,
  checkId: string,
  type: AnalyticsCheckType,
  query: AnalyticsQuery,
  window: { from: number; to: number },
): Promise<AnalyticsAnswer> {
  const plan = analyticsPlan(type, query, window)
  const buckets = new Buckets(plan)
  for (const row of await windowRows(repos, account, checkId, plan)) buckets.add(row)
  const entries = buckets.ordered().map((bucket) => entryOf(bucket, plan))
  const metadata = Object.fromEntries(plan.asked.map((m) => [m.name, { unit: m.unit, label: m.label, aggregation: m.aggregation }]))
  return { from: window.from, to: window.to, entries, metadata }
}

/**
 * The analytics of many checks of an account over one window, as `analyticsAnswer` gives each
 * (the same code), from one read of the account's rows: what a list of checks shows costs one
 * query, not one per check.
 */
export async function analyticsAnswers(
  repos: Pick<Repositories, 'analytics'>,
  account: string,
  asked: Array<{ checkId: string; type: AnalyticsCheckType; query: AnalyticsQuery }>,
  window: { from: number; to: number },
): Promise<Map<string, AnalyticsAnswer>> {
  const answers = new Map<string, AnalyticsAnswer>()
  if (asked.length === 0) return answers
  const firstHour = Math.floor(window.from / HOUR) * HOUR
  const endHour = Math.ceil(window.to / HOUR) * HOUR
  const byCheck = await repos.analytics.rowsOfAccount(account, firstHour, endHour, true)
  for (const { checkId, type, query } of asked) {
    const rows = byCheck.get(checkId) ?? []
    // the rows the one-check read would answer (with their samples, which it reads only where it needs them)
    const read = { rows: async (_account: string, _id: string, from: number, to: number) => rows.filter((r) => r.hourStart >= from && r.hourStart < to) }
    answers.set(checkId, await analyticsAnswer({ analytics: read }, account, checkId, type, query, window))
  }
  return answers
}

function compareGroups(a: string | number | null, b: string | number | null): number {
  if (a === b) return 0
  if (a === null) return 1
  if (b === null) return -1
  return typeof a === 'number' && typeof b === 'number' ? a - b : String(a) < String(b) ? -1 : 1
}
