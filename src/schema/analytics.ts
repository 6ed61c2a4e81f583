import { z } from 'zod'
import { CHECK_TYPES } from './enums.js'
import { CHECK_TYPE_TABLE, SERVICE_CHECK_TYPES, type AnalyticsGroup, type MeasuredMetric, type ServiceCheckType } from './check-types.js'
import { DECIMAL_TEXT, pageQuerySchema } from './paging.js'

/*
 * Analytics of the Monitoring API: the metric names of each check type (the spec's list for
 * API checks, the reference's for DNS, ICMP and heartbeat checks), what each one means, and
 * the query of GET /v1/analytics/<type>/{id}. README "Analytics" says how each is computed.
 */

/** The check types with analytics (every type the service serves: check-types.ts), and the path segment of their route. */
export const ANALYTICS_ROUTES = Object.fromEntries(SERVICE_CHECK_TYPES.map((t) => [t, CHECK_TYPE_TABLE[t].analyticsRoute])) as {
  [K in ServiceCheckType]: (typeof CHECK_TYPE_TABLE)[K]['analyticsRoute']
}
export type AnalyticsCheckType = ServiceCheckType

export const AGGREGATIONS = ['avg', 'max', 'median', 'min', 'p50', 'p90', 'p95', 'p99', 'stddev', 'sum'] as const
export type Aggregation = (typeof AGGREGATIONS)[number]

export type MetricUnit = MeasuredMetric['unit']

/** Measured metrics of each type, in the order of the reference (check-types.ts). */
export const MEASURED_METRICS: Record<AnalyticsCheckType, readonly MeasuredMetric[]> = Object.fromEntries(
  SERVICE_CHECK_TYPES.map((t) => [t, CHECK_TYPE_TABLE[t].metrics as readonly MeasuredMetric[]]),
) as Record<AnalyticsCheckType, readonly MeasuredMetric[]>

/** What a requested metric is: a measured metric with its aggregation, availability or retries. */
export type MetricSpec =
  | { kind: 'measured'; name: string; base: string; aggregation: Aggregation; unit: MetricUnit; label: string }
  | { kind: 'availability'; name: 'availability'; aggregation: 'avg'; unit: 'percentage'; label: string }
  | { kind: 'retries'; name: 'retries'; aggregation: 'sum'; unit: 'count'; label: string }

const AGGREGATION_LABEL: Record<Aggregation, string> = {
  avg: 'average',
  max: 'max',
  median: 'median',
  min: 'min',
  p50: 'p50',
  p90: 'p90',
  p95: 'p95',
  p99: 'p99',
  stddev: 'standard deviation',
  sum: 'sum',
}

/** Every metric of a type: base metrics, availability, retries, then the suffixed forms. */
export function metricSpecs(type: AnalyticsCheckType): MetricSpec[] {
  const measured = MEASURED_METRICS[type]
  const base: MetricSpec[] = measured.map((m) => ({
    kind: 'measured',
    name: m.name,
    base: m.name,
    aggregation: 'avg',
    unit: m.unit,
    label: `${m.label} (average)`,
  }))
  const suffixed: MetricSpec[] = measured.flatMap((m) =>
    AGGREGATIONS.map(
      (a): MetricSpec => ({
        kind: 'measured',
        name: `${m.name}_${a}`,
        base: m.name,
        aggregation: a,
        unit: m.unit,
        label: `${m.label} (${AGGREGATION_LABEL[a]})`,
      }),
    ),
  )
  return [
    ...base,
    { kind: 'availability', name: 'availability', aggregation: 'avg', unit: 'percentage', label: 'Availability (passing runs out of all runs)' },
    { kind: 'retries', name: 'retries', aggregation: 'sum', unit: 'count', label: 'Retries (attempts retried before the final result)' },
    ...suffixed,
  ]
}

/** GET /v1/analytics/metrics?checkType=: the names of a type's metrics; none for types this server does not run. */
export function metricNames(checkType: string): string[] {
  return checkType in ANALYTICS_ROUTES ? metricSpecs(checkType as AnalyticsCheckType).map((m) => m.name) : []
}

export const metricsQuerySchema = z.object({ checkType: z.enum(CHECK_TYPES) })

export const QUICK_RANGES = ['last24Hours', 'last7Days', 'last30Days', 'thisWeek', 'thisMonth', 'lastWeek', 'lastMonth'] as const
export type QuickRange = (typeof QUICK_RANGES)[number]

/** A comma-separated list (or a repeated parameter): its items, trimmed, without empties. */
const list = (value: unknown): unknown => {
  if (value === undefined) return undefined
  const items = (Array.isArray(value) ? value : [value])
    .flatMap((v) => String(v).split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '')
  return items
}

/** A time of the query: unix seconds (a value of 1e11 or more is taken as milliseconds) or an ISO date / date-time. */
const time = z.string().transform((text, ctx) => {
  const trimmed = text.trim()
  let ms: number
  if (/^\d+(\.\d+)?$/.test(trimmed)) {
    const n = Number(trimmed)
    ms = n >= 1e11 ? n : n * 1000
  } else {
    ms = /^\d{4}-\d{2}-\d{2}/.test(trimmed) ? Date.parse(trimmed) : Number.NaN
  }
  if (!Number.isFinite(ms)) {
    ctx.addIssue({ code: 'custom', message: `must be a unix timestamp in seconds or an ISO 8601 date or date-time (got ${JSON.stringify(text.slice(0, 40))})` })
    return z.NEVER
  }
  return Math.floor(ms)
})

/** The query of GET /v1/analytics/<type>/{id}: the spec's parameters, per type. */
export function analyticsQuerySchema(type: AnalyticsCheckType) {
  const names = new Set(metricNames(type))
  const bases = MEASURED_METRICS[type].map((m) => m.name)
  const allowed =
    bases.length > 0
      ? `${bases.join(', ')}, availability or retries, or one of ${bases.join(', ')} with a suffix ${AGGREGATIONS.map((a) => `_${a}`).join(', ')}`
      : 'availability or retries'
  const entry = CHECK_TYPE_TABLE[type]
  const statuses = entry.statusFilters as readonly [string, ...string[]]
  const groups = entry.groupBy as readonly [AnalyticsGroup, ...AnalyticsGroup[]]
  return z.object({
    from: time.optional(),
    to: time.optional(),
    quickRange: z.enum(QUICK_RANGES).default('last24Hours'),
    aggregationInterval: z
      .string()
      .transform((text, ctx) => {
        // a whole number however it is written (`60`, `60.0`, `6e1`), as for limit and page
        const n = Number(text)
        if (!DECIMAL_TEXT.test(text) || !Number.isInteger(n) || !(n >= 1 && n <= 43200)) {
          ctx.addIssue({ code: 'custom', message: `must be a whole number of minutes from 1 to 43200 (got ${JSON.stringify(text.slice(0, 40))})` })
          return z.NEVER
        }
        return n
      })
      .optional(),
    filterByStatus: z.preprocess(list, z.array(z.enum(statuses)).min(1)).optional(),
    groupBy:
      groups.length === 0
        ? z
            .unknown()
            .superRefine((value, ctx) => {
              if (value !== undefined) ctx.addIssue({ code: 'custom', message: `${type.toLowerCase()} analytics are not grouped: leave groupBy out` })
            })
            .transform(() => undefined)
            .optional()
        : z.enum(groups).optional(),
    metrics: z
      .preprocess(
        (v) => list(v) ?? [],
        z.array(z.string()).superRefine((items, ctx) => {
          if (items.length === 0) {
            ctx.addIssue({ code: 'custom', message: `is required: one or more of ${allowed}, comma-separated` })
            return
          }
          for (const item of items) {
            if (!names.has(item)) {
              ctx.addIssue({ code: 'custom', message: `"${item.slice(0, 60)}" is not a metric of ${type} checks: use ${allowed} (comma-separated)` })
              return
            }
          }
        }),
      )
      .transform((items) => [...new Set(items)]),
    limit: pageQuerySchema.shape.limit,
    page: pageQuerySchema.shape.page,
  })
}

export type AnalyticsQuery = z.output<ReturnType<typeof analyticsQuerySchema>>
