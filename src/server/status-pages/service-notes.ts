import { CHECK_TYPE_TABLE } from '../../schema/check-types.js'
import { dependsOnOf, failingDependencies } from '../dependencies.js'
import { eachCheck, type Store } from '../store/index.js'

/*
 * What a status page says about a service beyond its incidents, from its checks (the checks
 * whose triggerIncident names it):
 * - "affected by": a check of the service fails while a check it depends on (dependsOn) fails,
 *   so its alerts (and its incident) are held back. A public page never names a check: it names
 *   the service of the failing dependency when that service is on the same page, and otherwise
 *   says "an upstream dependency".
 * - its response time: the average over the last 24 hours of its checks' time metric (the
 *   analytics rollups' sums), when the page's `showResponseTime` asks for it.
 */

/** The account's checks as a page reads them. */
export interface PageChecks {
  /** each service of the page and its checks (every service is there, maybe with none) */
  byService: Map<string, string[]>
  /** every check naming a service in its triggerIncident, and that service */
  serviceOf: Map<string, string>
  /** the checks of the page's services that depend on others, and those */
  dependsOn: Map<string, string[]>
  /** the type of each check of the page's services */
  typeOf: Map<string, string>
}

/** One read of the account's checks: the page's services' checks, their dependencies and types. */
export async function pageChecks(store: Pick<Store, 'checks'>, account: string, services: Set<string>): Promise<PageChecks> {
  const out: PageChecks = { byService: new Map([...services].map((id) => [id, []])), serviceOf: new Map(), dependsOn: new Map(), typeOf: new Map() }
  if (services.size === 0) return out
  type Body = { id: string; checkType?: string; dependsOn?: unknown; triggerIncident?: { serviceId?: unknown } | null }
  for await (const check of eachCheck<Body>(store.checks, account)) {
    const serviceId = check.triggerIncident?.serviceId
    if (typeof serviceId !== 'string') continue
    out.serviceOf.set(check.id, serviceId)
    const list = out.byService.get(serviceId)
    if (!list) continue
    list.push(check.id)
    if (typeof check.checkType === 'string') out.typeOf.set(check.id, check.checkType)
    const deps = dependsOnOf(check)
    if (deps.length > 0) out.dependsOn.set(check.id, deps)
  }
  return out
}

/** Why a service is affected: the services of the page whose checks it waits on, and whether others (not on the page) too. */
export interface AffectedBy {
  services: string[]
  upstream: boolean
  /** what the failing checks make the service at least: a failure a partial outage, a degraded run degraded */
  state: 'degraded' | 'partial_outage'
}

const troubled = (s: { hasFailures: boolean; hasErrors: boolean; isDegraded: boolean }) => s.hasFailures || s.hasErrors || s.isDegraded

/** The services affected by a failing dependency, and by what (service names only: a public page never names a check). */
export async function affectedServices(
  store: Pick<Store, 'checkStatuses'>,
  account: string,
  checks: PageChecks,
  nameOf: (serviceId: string) => string | undefined,
): Promise<Map<string, AffectedBy>> {
  const out = new Map<string, AffectedBy>()
  if (checks.dependsOn.size === 0) return out
  const statuses = new Map((await store.checkStatuses.list(account)).map((s) => [s.checkId, s]))
  for (const [serviceId, ids] of checks.byService) {
    const names = new Set<string>()
    let upstream = false
    let failing = false
    for (const id of ids) {
      const deps = checks.dependsOn.get(id)
      const status = statuses.get(id)
      if (!deps || !status || !troubled(status)) continue
      const by = await failingDependencies({ dependsOn: deps }, async (d) => statuses.get(d))
      if (by.length > 0 && (status.hasFailures || status.hasErrors)) failing = true
      for (const dep of by) {
        const depService = checks.serviceOf.get(dep.checkId)
        const name = depService !== undefined && depService !== serviceId && checks.byService.has(depService) ? nameOf(depService) : undefined
        if (name === undefined) upstream = true
        else names.add(name)
      }
    }
    if (names.size > 0 || upstream) out.set(serviceId, { services: [...names].sort(), upstream, state: failing ? 'partial_outage' : 'degraded' })
  }
  return out
}

/** "Affected by Database", "Affected by Database and an upstream dependency", "Affected by an upstream dependency". */
export function affectedText(by: AffectedBy): string {
  const parts = [...by.services, ...(by.upstream ? ['an upstream dependency'] : [])]
  const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`
  return `Affected by ${list}`
}

/** A service's response time: the average of its checks' runs over the last 24 hours, in milliseconds (a tenth below 10 ms). */
export interface ResponseTime {
  averageMs: number
  runs: number
  hours: number
}

const HOUR = 3_600_000
export const RESPONSE_TIME_HOURS = 24

/**
 * Each service's average response time over the last 24 hours (this hour and the 23 before):
 * the sum of its checks' time metric (API and multi-step `responseTime`, DNS and TCP `total`,
 * ICMP `latencyAvg`) over the runs measuring it, from the rollups' totals. null without runs;
 * heartbeats measure no time.
 */
export async function responseTimes(
  store: Pick<Store, 'analytics'>,
  account: string,
  checks: PageChecks,
  now: number,
): Promise<Map<string, ResponseTime | null>> {
  const to = Math.floor(now / HOUR) * HOUR + HOUR
  const from = to - RESPONSE_TIME_HOURS * HOUR
  const sums = new Map<string, [n: number, sum: number]>()
  const ids = [...new Set([...checks.byService.values()].flat())]
  await Promise.all(
    ids.map(async (id) => {
      const metric = (CHECK_TYPE_TABLE as Record<string, { timeMetric: string | null }>)[checks.typeOf.get(id) ?? '']?.timeMetric
      if (!metric) return
      let n = 0
      let sum = 0
      for (const row of await store.analytics.rows(account, id, from, to, false)) {
        const totals = row.totals[metric]
        if (totals) [n, sum] = [n + totals[0], sum + totals[1]]
      }
      sums.set(id, [n, sum])
    }),
  )
  const out = new Map<string, ResponseTime | null>()
  for (const [serviceId, list] of checks.byService) {
    let n = 0
    let sum = 0
    for (const id of list) {
      const s = sums.get(id)
      if (s) [n, sum] = [n + s[0], sum + s[1]]
    }
    const mean = sum / n
    // a tenth of a millisecond below 10 ms (a DNS answer on the same network takes less than one), else whole ones
    out.set(serviceId, n === 0 ? null : { averageMs: mean < 10 ? Math.round(mean * 10) / 10 : Math.round(mean), runs: n, hours: RESPONSE_TIME_HOURS })
  }
  return out
}
