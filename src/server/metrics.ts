import { SKIP_REASONS, type SkipCount, type Store } from './store/index.js'
import { dependsOnOf, isFailing } from './dependencies.js'
import { Counter, Gauge, Histogram, SECONDS_BUCKETS, header, runPhases, runStatus, sampleLine, type Labels } from '../runner/metrics.js'

/*
 * What GET /metrics shows (docs/metrics.md). Two sources:
 * - kept in this process since it started (counters and histograms; each server of a shared
 *   database counts its own, as Prometheus expects of every target): HTTP requests by route
 *   pattern and status, the scheduler's planned, skipped and late runs, alert delivery attempts,
 *   store operations' latency, and per check and location the runs it recorded by status and
 *   the phases of the last one;
 * - read from the store at each scrape (gauges, the same on every server): each check's last
 *   status and response time, the outbox's deliveries by status.
 * Per-check series are labelled with the check's id, name and type (and location where the
 * series is per location, `account` for the operator's token): as many series as checks ×
 * locations, whatever the traffic. A check deleted stops being shown at once.
 */

/** Who scrapes: the operator (server-wide metrics and every account's checks) or one account's key. */
export type MetricsScope = { operator: true } | { operator: false; account: string }

const STATUS_VALUE = { passed: 0, degraded: 1, failed: 2 } as const

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

export class ServerMetrics {
  readonly startedAt: number

  /** `now`: the server's clock (the backlog's age is measured on it) */
  constructor(private readonly now: () => number) {
    this.startedAt = now()
  }

  readonly http = new Counter('monitors_http_requests_total', 'HTTP requests answered, by method, route pattern (unmatched: no route) and status code.', [
    'method',
    'route',
    'status',
  ])
  readonly httpSeconds = new Histogram(
    'monitors_http_request_duration_seconds',
    'Time to answer an HTTP request, by method and route pattern.',
    ['method', 'route'],
    SECONDS_BUCKETS,
  )
  readonly planned = new Counter(
    'monitors_scheduler_runs_planned_total',
    "Due runs this server's planner inserted (one per check, location and due time; a due time several servers plan is counted by the one whose insert made it).",
    [],
  )
  readonly skipped = new Counter(
    'monitors_scheduler_runs_skipped_total',
    "Due runs not run, counted once by the server that skipped them, by reason (late: a newer run of the check fell due before it was claimed; missed: no server planned it within the check's grace; maintenance: a maintenance window covered it), check type and location.",
    ['reason', 'check_type', 'location'],
  )
  readonly lag = new Histogram('monitors_scheduler_run_lag_seconds', "Delay from a run's due time to its start on this server's runner.", [], SECONDS_BUCKETS)
  readonly attempts = new Counter(
    'monitors_alert_delivery_attempts_total',
    'Alert delivery attempts made by this server, by channel type and outcome (DELIVERED, RETRY, FAILED, NOT_DELIVERED).',
    ['channel_type', 'outcome'],
  )
  readonly storeSeconds = new Histogram(
    'monitors_store_operation_duration_seconds',
    "Time of the store's operations (a repository method, or a whole transaction), by operation.",
    ['operation'],
    SECONDS_BUCKETS,
  )
  readonly storeErrors = new Counter('monitors_store_errors_total', 'Store operations that failed, by operation.', ['operation'])
  /** keyed by check id; named and scoped at each scrape from the checks as they are then */
  readonly runs = new Counter(
    'monitors_check_runs_total',
    'Final results of the check recorded by this server, by location and status (passed, degraded, failed).',
    ['check_id', 'location', 'status'],
  )
  readonly phases = new Gauge(
    'monitors_check_phase_duration_seconds',
    "Phases of the check's last run recorded by this server, by location (API and URL: dns, tcp, tls, firstByte, download; TCP: dns, connect, data).",
    ['check_id', 'location', 'phase'],
  )

  /** Runs this process skipped (its statement skipped them: each run is counted by one server). */
  countSkipped(skipped: readonly SkipCount[]): void {
    for (const s of skipped) this.skipped.inc({ reason: s.reason, check_type: s.checkType, location: s.location }, s.count)
  }

  /** The series of skipped runs of every check type and location scheduled, at 0 until one is skipped (so that increase() sees the first). */
  knowSkipSeries(pairs: ReadonlyArray<{ checkType: string; location: string }>): void {
    for (const { checkType, location } of pairs) {
      this.locations.add(location)
      for (const reason of SKIP_REASONS) this.skipped.inc({ reason, check_type: checkType, location }, 0)
    }
  }

  /** the locations checks are scheduled in (their backlog gauges are shown at 0 when nothing waits) */
  private readonly locations = new Set<string>()

  /** A FINAL result this process recorded. */
  recordResult(checkId: string, result: { runLocation: string; hasFailures: boolean; hasErrors: boolean; isDegraded: boolean; details?: unknown }): void {
    this.runs.inc({ check_id: checkId, location: result.runLocation, status: runStatus(result) })
    const phases = runPhases(result.details)
    if (Object.keys(phases).length === 0) return
    this.phases.forget((l) => l.check_id === checkId && l.location === result.runLocation)
    for (const [phase, ms] of Object.entries(phases)) this.phases.set({ check_id: checkId, location: result.runLocation, phase }, ms / 1000)
  }

  /** Counts an HTTP answer. */
  recordRequest(method: string, route: string, status: number, seconds: number): void {
    const m = METHODS.has(method) ? method : 'OTHER'
    this.http.inc({ method: m, route, status: String(status) })
    this.httpSeconds.observe({ method: m, route }, seconds)
  }

  /** The store, each of its operations timed (a repository's methods, transaction, ping). */
  instrument(store: Store): Store {
    const observe = (operation: string, began: number, failed: boolean) => {
      this.storeSeconds.observe({ operation }, (performance.now() - began) / 1000)
      if (failed) this.storeErrors.inc({ operation })
    }
    const timed =
      <F extends (...args: unknown[]) => unknown>(operation: string, fn: F, self: object) =>
      (...args: unknown[]) => {
        const began = performance.now()
        let answer: unknown
        try {
          answer = fn.apply(self, args)
        } catch (error) {
          observe(operation, began, true)
          throw error
        }
        if (answer instanceof Promise) {
          return answer.then(
            (value) => {
              observe(operation, began, false)
              return value
            },
            (error: unknown) => {
              observe(operation, began, true)
              throw error
            },
          )
        }
        observe(operation, began, false)
        return answer
      }
    const repositories = new Map<string, object>()
    const repository = (name: string, target: object) =>
      new Proxy(target, {
        get: (object, method, receiver) => {
          const value = Reflect.get(object, method, receiver) as unknown
          return typeof value === 'function' && typeof method === 'string'
            ? timed(`${name}.${method}`, value as (...args: unknown[]) => unknown, object)
            : value
        },
      })
    return new Proxy(store, {
      get: (object, property, receiver) => {
        const value = Reflect.get(object, property, receiver) as unknown
        if (typeof property !== 'string' || property === 'close') return value
        if (typeof value === 'function') return timed(property, value as (...args: unknown[]) => unknown, object)
        if (value && typeof value === 'object') {
          let wrapped = repositories.get(property)
          if (!wrapped) repositories.set(property, (wrapped = repository(property, value)))
          return wrapped
        }
        return value
      },
    })
  }

  /** The exposition text of `scope`, read from the store now and from this process's counters. */
  async render(store: Store, scope: MetricsScope): Promise<string> {
    const checks = await visibleChecks(store, scope)
    const checkLabels = (id: string): Labels | undefined => {
      const check = checks.get(id)
      if (!check) return undefined
      return { ...(scope.operator ? { account: check.account } : {}), check_id: id, check_name: check.name, check_type: check.type }
    }
    const perCheck = (labels: Labels): Labels | undefined => {
      const named = checkLabels(labels.check_id)
      if (!named) return undefined
      const { check_id: _id, ...rest } = labels
      return { ...named, ...rest }
    }
    const blocks: string[] = []
    blocks.push(...(await statusBlocks(store, scope, checks, checkLabels)))
    blocks.push(this.runs.render(perCheck), this.phases.render(perCheck))
    blocks.push(await outboxBlock(store, scope))
    blocks.push(...(await privateLocationBlocks(store, scope, this.now())))
    if (scope.operator) {
      blocks.push(
        this.http.render(),
        this.httpSeconds.render(),
        this.planned.render(),
        this.skipped.render(),
        this.lag.render(),
        this.attempts.render(),
        this.storeSeconds.render(),
        this.storeErrors.render(),
        `${header('monitors_process_start_time_seconds', 'gauge', 'When this server process started, seconds since the epoch.')}\n${sampleLine('monitors_process_start_time_seconds', {}, Math.floor(this.startedAt / 1000))}`,
        ...poolBlocks(store),
        ...(await backlogBlocks(store, this.now(), this.locations)),
      )
    }
    return `${blocks.join('\n')}\n`
  }
}

interface VisibleCheck {
  account: string
  name: string
  type: string
  activated: boolean
  dependsOn: string[]
}

async function visibleChecks(store: Store, scope: MetricsScope): Promise<Map<string, VisibleCheck>> {
  const out = new Map<string, VisibleCheck>()
  for (const row of await store.schedule.allChecks()) {
    if (!scope.operator && row.account !== scope.account) continue
    const body = JSON.parse(row.json) as { name?: unknown; checkType?: unknown; activated?: unknown }
    out.set(row.id, {
      account: row.account,
      name: String(body.name ?? ''),
      type: String(body.checkType ?? ''),
      activated: body.activated !== false,
      dependsOn: dependsOnOf(body),
    })
  }
  return out
}

/** The gauges of each check's status, read from the store. */
async function statusBlocks(
  store: Store,
  scope: MetricsScope,
  checks: Map<string, VisibleCheck>,
  labelsOf: (id: string) => Labels | undefined,
): Promise<string[]> {
  const accounts = scope.operator ? [...new Set([...checks.values()].map((c) => c.account))].sort() : [scope.account]
  const status: string[] = [
    header('monitors_check_status', 'gauge', "The check's last result: 0 passing, 1 degraded, 2 failing (no series before its first result)."),
  ]
  const up: string[] = [header('monitors_check_up', 'gauge', "Whether the check's last result passed or was degraded (1) or failed (0).")]
  const response: string[] = [header('monitors_check_response_time_seconds', 'gauge', "Response time of the check's last run.")]
  const last: string[] = [
    header('monitors_check_last_result_timestamp_seconds', 'gauge', "When the check's status last changed with a result, seconds since the epoch."),
  ]
  const activated: string[] = [header('monitors_check_activated', 'gauge', 'Whether the check is activated (1) or paused (0).')]
  const suppressed: string[] = [
    header(
      'monitors_check_alerts_suppressed',
      'gauge',
      'Whether the check fails (or is degraded) while a check it depends on (dependsOn) fails: its alerts are held back (1), or not (0).',
    ),
  ]
  const records = []
  for (const id of checks.keys()) {
    const labels = labelsOf(id)
    if (labels) activated.push(sampleLine('monitors_check_activated', labels, checks.get(id)?.activated ? 1 : 0))
  }
  for (const account of accounts) records.push(...(await store.checkStatuses.list(account)))
  const failing = new Set(records.filter(isFailing).map((r) => r.checkId))
  for (const record of records) {
    const labels = labelsOf(record.checkId)
    if (!labels) continue
    const state = runStatus(record)
    status.push(sampleLine('monitors_check_status', labels, STATUS_VALUE[state]))
    up.push(sampleLine('monitors_check_up', labels, state === 'failed' ? 0 : 1))
    if (record.lastResponseTime !== null) response.push(sampleLine('monitors_check_response_time_seconds', labels, record.lastResponseTime / 1000))
    const at = Date.parse(record.updated_at ?? record.created_at)
    if (Number.isFinite(at)) last.push(sampleLine('monitors_check_last_result_timestamp_seconds', labels, at / 1000))
    const held = state !== 'passed' && (checks.get(record.checkId)?.dependsOn ?? []).some((id) => failing.has(id))
    suppressed.push(sampleLine('monitors_check_alerts_suppressed', labels, held ? 1 : 0))
  }
  return [activated, status, up, response, last, suppressed].map((lines) => lines.join('\n'))
}

/** The outbox's deliveries by status, read from the store (PENDING: its depth; FAILED: given up). */
async function outboxBlock(store: Store, scope: MetricsScope): Promise<string> {
  const rows = await store.alertDeliveries.counts(scope.operator ? undefined : scope.account)
  const totals = new Map<string, number>()
  for (const status of ['PENDING', 'DELIVERED', 'FAILED', 'NOT_DELIVERED']) totals.set(status, 0)
  const lines = [
    header('monitors_alert_deliveries', 'gauge', "Alert deliveries kept (30 days), by status: PENDING is the outbox's depth, FAILED the deliveries given up."),
  ]
  if (scope.operator) {
    for (const row of rows) lines.push(sampleLine('monitors_alert_deliveries', { account: row.account, status: row.status }, row.count))
  } else {
    for (const row of rows) totals.set(row.status, (totals.get(row.status) ?? 0) + row.count)
    for (const [status, count] of totals) lines.push(sampleLine('monitors_alert_deliveries', { status }, count))
  }
  return lines.join('\n')
}

/** The database pools' connections (PostgreSQL), and the waits for one that ran out. */
function poolBlocks(store: Store): string[] {
  const stats = store.poolStats?.() ?? []
  if (stats.length === 0) return []
  const size = [
    header(
      'monitors_store_pool_size',
      'gauge',
      'Connections a database pool may hold (main: --db-pool-size; auth: key look-ups and the rate limit; lease: lease extensions and readiness).',
    ),
  ]
  const connections = [
    header(
      'monitors_store_pool_connections',
      'gauge',
      "A database pool's connections now: busy (in a statement or a transaction), idle, and waiting (statements waiting for one).",
    ),
  ]
  const saturated = [
    header(
      'monitors_store_pool_saturated_total',
      'counter',
      'Statements that waited for a connection of a pool longer than its wait and were refused (503 with Retry-After): the pool saturated, the database up.',
    ),
  ]
  for (const p of stats) {
    size.push(sampleLine('monitors_store_pool_size', { pool: p.pool }, p.size))
    connections.push(sampleLine('monitors_store_pool_connections', { pool: p.pool, state: 'busy' }, p.total - p.idle))
    connections.push(sampleLine('monitors_store_pool_connections', { pool: p.pool, state: 'idle' }, p.idle))
    connections.push(sampleLine('monitors_store_pool_connections', { pool: p.pool, state: 'waiting' }, p.waiting))
    saturated.push(sampleLine('monitors_store_pool_saturated_total', { pool: p.pool }, p.saturated))
  }
  return [size.join('\n'), connections.join('\n'), saturated.join('\n')]
}

/** The due runs no runner claimed yet, per location, and the age of the oldest (read from the store: the same on every server). */
/** What the agents of each private location do now (GET /v1/private-locations/{id} answers the same). */
async function privateLocationBlocks(store: Store, scope: MetricsScope, now: number): Promise<string[]> {
  const loads = await store.privateLocations.load(now, scope.operator ? undefined : scope.account)
  const seen = new Map((await store.privateLocations.all()).map((l) => [`${l.account}\u0000${l.location.slugName}`, l.lastSeenAt]))
  const agents = [header('monitors_private_location_agents', 'gauge', 'Agents of each private location alive now (claimed within their heartbeat).')]
  const waiting = [header('monitors_private_location_waiting_runs', 'gauge', 'Due runs of each private location no agent holds now.')]
  const last = [
    header('monitors_private_location_last_seen_seconds', 'gauge', 'When an agent of each private location last claimed, seconds since the epoch (0: never).'),
  ]
  for (const load of loads) {
    const labels = { ...(scope.operator ? { account: load.account } : {}), location: load.slugName }
    agents.push(sampleLine('monitors_private_location_agents', labels, load.agents))
    waiting.push(sampleLine('monitors_private_location_waiting_runs', labels, load.waiting))
    last.push(sampleLine('monitors_private_location_last_seen_seconds', labels, Math.floor((seen.get(`${load.account}\u0000${load.slugName}`) ?? 0) / 1000)))
  }
  return [agents.join('\n'), waiting.join('\n'), last.join('\n')]
}

async function backlogBlocks(store: Store, now: number, known: ReadonlySet<string>): Promise<string[]> {
  const found = await store.runs.backlog(now)
  const shown = new Set(found.map((r) => r.location))
  const rows = [...found, ...[...known].filter((l) => !shown.has(l)).map((location) => ({ location, due: 0, oldestDueAt: now }))].sort((a, b) =>
    a.location < b.location ? -1 : a.location > b.location ? 1 : 0,
  )
  const runs = [
    header('monitors_scheduler_backlog_runs', 'gauge', 'Due runs no runner (nor agent) has claimed yet, by location: the runners are behind when it stays up.'),
  ]
  const oldest = [header('monitors_scheduler_backlog_oldest_seconds', 'gauge', 'Age of the oldest due run not claimed yet, by location (0: none waiting).')]
  for (const row of rows) {
    runs.push(sampleLine('monitors_scheduler_backlog_runs', { location: row.location }, row.due))
    oldest.push(sampleLine('monitors_scheduler_backlog_oldest_seconds', { location: row.location }, Math.max(0, now - row.oldestDueAt) / 1000))
  }
  return [runs.join('\n'), oldest.join('\n')]
}
