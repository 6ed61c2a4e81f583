/**
 * The check types this service runs and reports, in ONE table: everything the service side
 * knows of a type besides its request schema (src/schema/<type>) and its prober
 * (src/runner/probers.ts). Every other list of check types is derived from it; a type missing
 * here does not compile (`satisfies Record<ServiceCheckType, …>`), and
 * test/architecture.test.ts fails when a set of check type names is written anywhere else.
 *
 * The spec's whole vocabulary of types is `CHECK_TYPES` in enums.ts: it is what a query
 * parameter `checkType` accepts (the checks list, the metrics list), so every type of the table
 * is one of it (`satisfies CheckTypeTable`: a type the spec does not name does not compile).
 */
import type { CheckType } from './enums.js'

/** A measured value of each run (a base metric; its suffixed forms are `<name>_<aggregation>`). */
export interface MeasuredMetric {
  name: string
  unit: 'milliseconds' | 'percentage' | 'count' | 'score'
  label: string
}

/** What a result gives the analytics of its type: the runner's fields, as stored. */
export interface ResultFigures {
  responseTime: number | null
  details: Record<string, unknown>
}

export interface CheckTypeEntry {
  /** How messages name a check of this type (`API check not found`). */
  label: string
  /** The path segment of its routes: POST /v1/checks/<route>, PUT /v1/checks/<route>/{id}. */
  route: string
  /** GET /v1/analytics/<analyticsRoute>/{id}. */
  analyticsRoute: string
  /** Its measured metrics, in the order of the reference. */
  metrics: readonly MeasuredMetric[]
  /** The measured values of one result, by metric name (a value that is not a finite number is left out). */
  values(result: ResultFigures): Record<string, number>
  /** The metric dashboards and `monitors status` show as its response time (none: null). */
  timeMetric: string | null
  /**
   * How it runs: `probe` — from locations, by a prober (src/runner/probers.ts) on the server's
   * runner, on agents and in `monitors test`, triggered by sessions; `pings` — it waits for
   * pings (heartbeat): never run, never triggered.
   */
  runs: 'probe' | 'pings'
  /** Whether `monitors agent` runs it at a private location (false: its runs there wait for a server's runner). */
  agents: boolean
  /** The values of analytics' `filterByStatus`. */
  statusFilters: readonly string[]
  /** The values of analytics' `groupBy` (none: it is not grouped); `pageIndex`: by the page a run opened, in order. */
  groupBy: readonly AnalyticsGroup[]
  /** Whether `sslDaysRemaining` of its status can be other than null (it may talk TLS). */
  certificates: boolean
  /** Whether its runs get the account's variables, its own environment variables winning (an API check's `{{KEY}}`s, a script's `process.env`). */
  variables: boolean
  /** Whether its runs get the snippets its setup and teardown scripts name (`setupSnippetId`, `tearDownSnippetId`). */
  snippets: boolean
}

/** What analytics' series may be grouped by. */
export type AnalyticsGroup = 'runLocation' | 'statusCode' | 'pageIndex'

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)
const round3 = (value: number): number => Math.round(value * 1000) / 1000

const RUN_STATUSES = ['success', 'failure'] as const
const HEARTBEAT_STATES = ['FAILING', 'EARLY', 'RECEIVED', 'GRACE', 'LATE'] as const

const API = {
  label: 'API check',
  route: 'api',
  analyticsRoute: 'api-checks',
  metrics: [
    { name: 'responseTime', unit: 'milliseconds', label: 'Response time' },
    { name: 'wait', unit: 'milliseconds', label: 'Wait (TLS handshake and sending the request)' },
    { name: 'dns', unit: 'milliseconds', label: 'DNS lookup' },
    { name: 'tcp', unit: 'milliseconds', label: 'TCP connect' },
    { name: 'firstByte', unit: 'milliseconds', label: 'Time to first byte' },
    { name: 'download', unit: 'milliseconds', label: 'Download' },
  ],
  values: ({ responseTime, details }) => {
    const values: Record<string, number> = {}
    if (finite(responseTime)) values.responseTime = responseTime
    const t = (details.timings ?? null) as Record<string, unknown> | null
    if (t) {
      for (const name of ['dns', 'tcp', 'firstByte', 'download'] as const) if (finite(t[name])) values[name] = t[name]
      // wait: what the response time holds besides the other phases (TLS handshake, sending the request, redirects)
      if (finite(t.total) && finite(t.dns) && finite(t.tcp) && finite(t.firstByte) && finite(t.download)) {
        values.wait = Math.max(0, round3(t.total - t.dns - t.tcp - t.firstByte - t.download))
      }
    }
    return values
  },
  timeMetric: 'responseTime',
  runs: 'probe',
  agents: true,
  statusFilters: RUN_STATUSES,
  groupBy: ['runLocation', 'statusCode'],
  certificates: true,
  variables: true,
  snippets: true,
} as const satisfies CheckTypeEntry

const DNS = {
  label: 'DNS check',
  route: 'dns',
  analyticsRoute: 'dns',
  metrics: [{ name: 'total', unit: 'milliseconds', label: 'DNS query time' }],
  values: ({ responseTime }): Record<string, number> => (finite(responseTime) ? { total: responseTime } : {}),
  timeMetric: 'total',
  runs: 'probe',
  agents: true,
  statusFilters: RUN_STATUSES,
  groupBy: ['runLocation'],
  certificates: false,
  variables: false,
  snippets: false,
} as const satisfies CheckTypeEntry

const ICMP = {
  label: 'ICMP check',
  route: 'icmp',
  analyticsRoute: 'icmp',
  metrics: [
    { name: 'packetLoss', unit: 'percentage', label: 'Packet loss' },
    { name: 'latencyMin', unit: 'milliseconds', label: 'Latency (min)' },
    { name: 'latencyMax', unit: 'milliseconds', label: 'Latency (max)' },
    { name: 'latencyAvg', unit: 'milliseconds', label: 'Latency (avg)' },
    { name: 'latencyStdDev', unit: 'milliseconds', label: 'Latency (standard deviation)' },
  ],
  values: ({ details }) => {
    const values: Record<string, number> = {}
    if (finite(details.packetLoss)) values.packetLoss = details.packetLoss
    const latency = (details.latency ?? null) as Record<string, unknown> | null
    if (latency) {
      if (finite(latency.min)) values.latencyMin = latency.min
      if (finite(latency.max)) values.latencyMax = latency.max
      if (finite(latency.avg)) values.latencyAvg = latency.avg
      if (finite(latency.stddev)) values.latencyStdDev = latency.stddev
    }
    return values
  },
  timeMetric: 'latencyAvg',
  runs: 'probe',
  agents: true,
  statusFilters: RUN_STATUSES,
  groupBy: ['runLocation'],
  certificates: false,
  variables: false,
  snippets: false,
} as const satisfies CheckTypeEntry

const TCP = {
  label: 'TCP check',
  route: 'tcp',
  analyticsRoute: 'tcp-checks',
  metrics: [
    { name: 'total', unit: 'milliseconds', label: 'Total time' },
    { name: 'dns', unit: 'milliseconds', label: 'DNS lookup' },
    { name: 'connection', unit: 'milliseconds', label: 'TCP connect' },
    { name: 'data', unit: 'milliseconds', label: 'Data (sending and reading the answer)' },
  ],
  values: ({ responseTime, details }) => {
    const values: Record<string, number> = {}
    if (finite(responseTime)) values.total = responseTime
    const t = (details.timings ?? null) as Record<string, unknown> | null
    if (t) {
      if (finite(t.dns)) values.dns = t.dns
      if (finite(t.connect)) values.connection = t.connect
      if (finite(t.data)) values.data = t.data
    }
    return values
  },
  timeMetric: 'total',
  runs: 'probe',
  agents: true,
  statusFilters: RUN_STATUSES,
  groupBy: ['runLocation'],
  certificates: false,
  variables: false,
  snippets: false,
} as const satisfies CheckTypeEntry

/** A URL check (the reference's URL monitor): a GET measured as an API check's request, with the same metrics. */
const URL = {
  ...API,
  label: 'URL check',
  route: 'url',
  analyticsRoute: 'url-monitors',
  // a plain GET: no {{KEY}}s to resolve, no scripts
  variables: false,
  snippets: false,
} as const satisfies CheckTypeEntry

const HEARTBEAT = {
  label: 'Heartbeat check',
  route: 'heartbeat',
  analyticsRoute: 'heartbeat-checks',
  metrics: [],
  values: () => ({}),
  timeMetric: null,
  runs: 'pings',
  agents: false,
  statusFilters: HEARTBEAT_STATES,
  groupBy: [],
  certificates: false,
  variables: false,
  snippets: false,
} as const satisfies CheckTypeEntry

/** A script check's figures: the run's duration, and for a browser check the first page's web vitals and the run's error counts. */
function scriptValues({ responseTime, details }: ResultFigures, withVitals: boolean): Record<string, number> {
  const values: Record<string, number> = {}
  if (finite(responseTime)) values.responseTime = responseTime
  if (!withVitals) return values
  const vitals = (details.webVitals ?? null) as Record<string, unknown> | null
  if (vitals) for (const name of ['TTFB', 'FCP', 'LCP', 'CLS', 'TBT'] as const) if (finite(vitals[name])) values[name] = vitals[name]
  const errors = (details.errors ?? null) as Record<string, unknown> | null
  if (errors)
    for (const name of ['consoleErrors', 'networkErrors', 'userScriptErrors', 'documentErrors'] as const) if (finite(errors[name])) values[name] = errors[name]
  return values
}

/** A browser check: a Playwright script run in Chromium (src/runner/script), its web vitals and error counts measured (reference: analytics of browser checks). */
const BROWSER = {
  label: 'Browser check',
  route: 'browser',
  analyticsRoute: 'browser-checks',
  metrics: [
    { name: 'responseTime', unit: 'milliseconds', label: 'Run time' },
    { name: 'TTFB', unit: 'milliseconds', label: 'Time to first byte' },
    { name: 'FCP', unit: 'milliseconds', label: 'First contentful paint' },
    { name: 'LCP', unit: 'milliseconds', label: 'Largest contentful paint' },
    { name: 'CLS', unit: 'score', label: 'Cumulative layout shift' },
    { name: 'TBT', unit: 'milliseconds', label: 'Total blocking time' },
    { name: 'consoleErrors', unit: 'count', label: 'Console errors' },
    { name: 'networkErrors', unit: 'count', label: 'Network errors' },
    { name: 'userScriptErrors', unit: 'count', label: 'Script errors' },
    { name: 'documentErrors', unit: 'count', label: 'Document errors' },
  ],
  values: (result) => scriptValues(result, true),
  timeMetric: 'responseTime',
  runs: 'probe',
  agents: true,
  statusFilters: RUN_STATUSES,
  groupBy: ['runLocation', 'pageIndex'],
  certificates: false,
  variables: true,
  snippets: false,
} as const satisfies CheckTypeEntry

/** A multi-step check: a Playwright script of API requests, without a browser; its run time measured. */
const MULTI_STEP = {
  label: 'Multi-step check',
  route: 'multistep',
  analyticsRoute: 'multistep-checks',
  metrics: [{ name: 'responseTime', unit: 'milliseconds', label: 'Run time' }],
  values: (result) => scriptValues(result, false),
  timeMetric: 'responseTime',
  runs: 'probe',
  agents: true,
  statusFilters: RUN_STATUSES,
  groupBy: ['runLocation'],
  certificates: false,
  variables: true,
  snippets: false,
} as const satisfies CheckTypeEntry

/** A Playwright check suite: a whole Playwright project run by the runtime's `playwright test` (src/runner/script/suite.ts); its run time measured (reference: analytics of Playwright checks). */
const PLAYWRIGHT = {
  ...MULTI_STEP,
  label: 'Playwright check',
  route: 'playwright',
  analyticsRoute: 'playwright-checks',
} as const satisfies CheckTypeEntry

/** What the table may hold: an entry for a type of the spec's vocabulary (CHECK_TYPES), which every `checkType` query accepts. */
export type CheckTypeTable = { readonly [K in CheckType]?: CheckTypeEntry }

/** The table: one entry per check type this service serves, in the order lists show them. */
export const CHECK_TYPE_TABLE = { DNS, ICMP, API, TCP, URL, BROWSER, MULTI_STEP, PLAYWRIGHT, HEARTBEAT } satisfies CheckTypeTable

/** A check type this service serves. */
export type ServiceCheckType = keyof typeof CHECK_TYPE_TABLE
/** A check type that runs from locations (through a prober). */
export type RunnableCheckType = { [K in ServiceCheckType]: (typeof CHECK_TYPE_TABLE)[K]['runs'] extends 'probe' ? K : never }[ServiceCheckType]

export const SERVICE_CHECK_TYPES = Object.keys(CHECK_TYPE_TABLE) as ServiceCheckType[]
export const RUNNABLE_CHECK_TYPES = SERVICE_CHECK_TYPES.filter((t): t is RunnableCheckType => CHECK_TYPE_TABLE[t].runs === 'probe')

const RUNNABLE = new Set<string>(RUNNABLE_CHECK_TYPES)
const SERVED = new Set<string>(SERVICE_CHECK_TYPES)

export function isServiceCheckType(type: unknown): type is ServiceCheckType {
  return typeof type === 'string' && SERVED.has(type)
}

/** Whether checks of this type run from locations (the scheduler, agents, sessions, `monitors test`). */
export function isRunnableCheckType(type: unknown): type is RunnableCheckType {
  return typeof type === 'string' && RUNNABLE.has(type)
}

/** The types whose runs the script engine makes (src/runner/script: a sandboxed browser or multi-step script, a Playwright suite). */
export type ScriptCheckType = Extract<ServiceCheckType, 'BROWSER' | 'MULTI_STEP' | 'PLAYWRIGHT'>
export const SCRIPT_CHECK_TYPES: readonly ScriptCheckType[] = ['BROWSER', 'MULTI_STEP', 'PLAYWRIGHT']
const SCRIPT_TYPES = new Set<string>(SCRIPT_CHECK_TYPES)

/** Whether a check of this type is a script (its runs keep artifacts; the runner's script concurrency limits them). */
export function isScriptCheckType(type: unknown): type is ScriptCheckType {
  return typeof type === 'string' && SCRIPT_TYPES.has(type)
}

/** Types as messages list them: `DNS, ICMP and API`. */
export function typesInProse(types: readonly string[]): string {
  return types.length <= 1 ? types.join('') : `${types.slice(0, -1).join(', ')} and ${types[types.length - 1]}`
}

/** The entry of a type, or undefined for a type this service does not serve. */
export function checkTypeEntry(type: string): CheckTypeEntry | undefined {
  return isServiceCheckType(type) ? CHECK_TYPE_TABLE[type] : undefined
}
