import type { IncidentRecord, Store } from '../store/index.js'

/*
 * The 90-day uptime of a status page's services, from the analytics rollups (the same rows the
 * analytics routes read): a service's checks are the checks whose triggerIncident names it; a
 * day's uptime is the runs of those checks that passed over the runs that passed or failed that
 * UTC day (a heartbeat's RECEIVED and GRACE pass, FAILING fails, LATE and EARLY count in
 * neither, as in `availability`). No rounding up: 99.996 % shows as 99.99 %, never as 100 %.
 */

export const DAY = 86_400_000
export const UPTIME_DAYS = 90

const PASSING = new Set(['success', 'RECEIVED', 'GRACE'])
const FAILING = new Set(['failure', 'FAILING'])

export type DayState = 'operational' | 'degraded' | 'partial_outage' | 'major_outage' | 'no_data'

export interface UptimeDay {
  /** the UTC day, YYYY-MM-DD */
  date: string
  passed: number
  failed: number
  /** passed / (passed + failed) in percent, two decimals cut (not rounded); null without runs */
  uptime: number | null
  state: DayState
  incidents: Array<{ id: string; name: string; severity: string }>
}

export interface ServiceUptime {
  /** over the 90 days, as the days; null when no check of the service ran */
  uptime: number | null
  passed: number
  failed: number
  days: UptimeDay[]
}

/** Percent with two decimals, cut toward zero so that a failure never shows as 100 %. */
export function percent(passed: number, failed: number): number | null {
  const total = passed + failed
  if (total === 0) return null
  return Math.floor((passed * 10_000) / total) / 100
}

const RANK: Record<DayState, number> = { no_data: -1, operational: 0, degraded: 1, partial_outage: 2, major_outage: 3 }

/** A day's state from its uptime: 100 % operational, from 99 % degraded, from 95 % a partial outage, below a major one. */
function stateOfUptime(uptime: number | null): DayState {
  if (uptime === null) return 'no_data'
  if (uptime >= 100) return 'operational'
  if (uptime >= 99) return 'degraded'
  if (uptime >= 95) return 'partial_outage'
  return 'major_outage'
}

/** Passed and failed runs per UTC day (start ms), of one check. */
type DayCounts = Map<number, [passed: number, failed: number]>

/**
 * Days that ended are kept a while per check (their rows rarely change); today's are read on
 * every page view. Keyed by account, check and the first day, so a new day reads afresh.
 */
const KEEP_MS = 5 * 60_000
const MAX_KEPT = 20_000
const kept = new Map<string, { at: number; counts: DayCounts }>()

async function countsOf(store: Store, account: string, checkId: string, from: number, today: number, now: number): Promise<DayCounts> {
  const key = `${account} ${checkId} ${from} ${today}`
  let past = kept.get(key)
  if (!past || now - past.at > KEEP_MS || now < past.at) {
    past = { at: now, counts: count(await store.analytics.rows(account, checkId, from, today, false)) }
    if (kept.size >= MAX_KEPT) kept.clear()
    kept.set(key, past)
  }
  const counts = new Map(past.counts)
  for (const [day, c] of count(await store.analytics.rows(account, checkId, today, today + DAY, false))) counts.set(day, c)
  return counts
}

function count(rows: Array<{ hourStart: number; status: string; runs: number }>): DayCounts {
  const out: DayCounts = new Map()
  for (const row of rows) {
    const day = Math.floor(row.hourStart / DAY) * DAY
    const c = out.get(day) ?? [0, 0]
    if (PASSING.has(row.status)) c[0] += row.runs
    else if (FAILING.has(row.status)) c[1] += row.runs
    out.set(day, c)
  }
  return out
}

/** When an incident began and ended (its RESOLVED update; still open: now). */
function incidentSpan(incident: IncidentRecord, now: number): [number, number] {
  const start = Date.parse(incident.created_at)
  const newest = incident.updates[0]
  const end = newest && newest.update.status === 'RESOLVED' ? Date.parse(newest.created_at) : now
  return [start, Math.max(start, end)]
}

/** The services' bars: `checksOf` maps a service to its checks, `incidents` are the page's. */
export async function uptimeOf(
  store: Store,
  account: string,
  checksOf: Map<string, string[]>,
  incidents: IncidentRecord[],
  severityState: Record<string, DayState>,
  now: number,
): Promise<Map<string, ServiceUptime>> {
  const today = Math.floor(now / DAY) * DAY
  const from = today - (UPTIME_DAYS - 1) * DAY
  const checks = [...new Set([...checksOf.values()].flat())]
  const counts = new Map<string, DayCounts>()
  await Promise.all(checks.map(async (id) => counts.set(id, await countsOf(store, account, id, from, today, now))))
  const spans = incidents.map((i) => ({ incident: i, span: incidentSpan(i, now) }))
  const out = new Map<string, ServiceUptime>()
  for (const [serviceId, ids] of checksOf) {
    const days: UptimeDay[] = []
    let passed = 0
    let failed = 0
    for (let day = from; day <= today; day += DAY) {
      let p = 0
      let f = 0
      for (const id of ids) {
        const c = counts.get(id)?.get(day)
        if (c) [p, f] = [p + c[0], f + c[1]]
      }
      passed += p
      failed += f
      const naming = spans
        .filter(({ incident, span }) => span[0] < day + DAY && span[1] >= day && incident.incident.services.some((s) => s.id === serviceId))
        .map(({ incident }) => incident)
      const uptime = percent(p, f)
      const state = naming.reduce<DayState>((worst, i) => {
        const s = severityState[i.incident.severity] ?? 'degraded'
        return RANK[s] > RANK[worst] ? s : worst
      }, stateOfUptime(uptime))
      days.push({
        date: new Date(day).toISOString().slice(0, 10),
        passed: p,
        failed: f,
        uptime,
        state,
        incidents: naming.map((i) => ({ id: i.id, name: i.incident.name, severity: i.incident.severity })),
      })
    }
    out.set(serviceId, { uptime: percent(passed, failed), passed, failed, days })
  }
  return out
}
