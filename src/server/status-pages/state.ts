import { eachCheck, type IncidentRecord, type MaintenanceWindowRecord, type ServiceRecord, type StatusPageRecord, type Store } from '../store/index.js'
import { uptimeOf, type ServiceUptime } from './uptime.js'
import { windowTimes } from './windows.js'
import { affectedServices, affectedText, pageChecks, responseTimes, type AffectedBy, type ResponseTime } from './service-notes.js'

/*
 * A status page's state: each service's state from the account's open incidents (those the API
 * created and those triggerIncident opened and resolved) and its checks' failing dependencies,
 * its uptime, the maintenance windows of its services' checks, the incident history. Computed
 * from the store; src/server/web shows it as HTML, as JSON and as a feed, and the subscribers'
 * emails (src/server/alerts/subscribers.ts) go to the pages a window concerns.
 */

export type ServiceState = 'operational' | 'degraded' | 'partial_outage' | 'major_outage'

const STATE_LABEL: Record<ServiceState, string> = {
  operational: 'Operational',
  degraded: 'Degraded performance',
  partial_outage: 'Partial outage',
  major_outage: 'Major outage',
}
const OVERALL_LABEL: Record<ServiceState, string> = {
  operational: 'All systems operational',
  degraded: 'Some systems degraded',
  partial_outage: 'Partial outage',
  major_outage: 'Major outage',
}
const RANK: Record<ServiceState, number> = { operational: 0, degraded: 1, partial_outage: 2, major_outage: 3 }

/** What an open incident of a severity does to the services it names. */
export const SEVERITY_STATE: Record<string, ServiceState> = {
  MINOR: 'degraded',
  MEDIUM: 'partial_outage',
  MAJOR: 'major_outage',
  CRITICAL: 'major_outage',
}

/** An incident is open until its newest update says RESOLVED (updates are newest first). */
export function isOpen(incident: IncidentRecord): boolean {
  return incident.updates[0]?.update.status !== 'RESOLVED'
}

function worst(states: ServiceState[]): ServiceState {
  return states.reduce<ServiceState>((a, b) => (RANK[b] > RANK[a] ? b : a), 'operational')
}

/** Most incidents and upcoming windows a page lists. */
const HISTORY_LIMIT = 50
const UPCOMING_LIMIT = 10

export interface ServiceModel {
  id: string
  name: string
  state: ServiceState
  stateLabel: string
  openIncidents: string[]
  uptime: ServiceUptime
  /** a check of the service fails while one it depends on fails (its alerts are held back): by what, named publicly; null otherwise */
  affectedBy: (AffectedBy & { text: string }) | null
  /** only when the page shows response times: the last 24 hours' average; null without runs */
  responseTime?: ResponseTime | null
}

/** What a page's readers learn of its services, maintenance and incidents (its HTML, JSON and feed add how it looks). */
export interface StatusPageState {
  status: ServiceState
  statusLabel: string
  cards: Array<{ id: string; name: string; services: ServiceModel[] }>
  /** the page's showResponseTime: each service carries its responseTime */
  showResponseTime: boolean
  maintenance: {
    /** changedAt: when the window was created or last changed */
    active: Array<{ id: number; name: string; startsAt: string; endsAt: string; changedAt: string }>
    upcoming: Array<{ id: number; name: string; startsAt: string; endsAt: string; changedAt: string }>
  }
  incidents: Array<{
    id: string
    name: string
    severity: string
    open: boolean
    services: string[]
    created_at: string
    updates: Array<{ id: string; status: string; description: string; created_at: string }>
  }>
  /** when the page and its incidents last changed (the feed's updated) */
  changedAt: string
}

/** The state of a page now. */
export async function statusPageState(store: Store, account: string, record: StatusPageRecord, now: number): Promise<StatusPageState> {
  const page = record.page
  const [services, incidents, windows] = await Promise.all([
    store.services.byId(account),
    store.incidents.list(account, { offset: 0 }),
    store.maintenanceWindows.list(account, { offset: 0 }),
  ])
  const onPage = new Set(page.cards.flatMap((c) => c.services.map((s) => s.id)))
  const relevant = incidents.items.filter((i) => i.incident.services.some((s) => onPage.has(s.id))).sort((a, b) => b.created_at.localeCompare(a.created_at))
  const open = relevant.filter(isOpen)
  const checks = await pageChecks(store, account, onPage)
  const showResponseTime = (page as { showResponseTime?: boolean }).showResponseTime === true
  const [uptime, affected, times] = await Promise.all([
    uptimeOf(store, account, checks.byService, relevant, SEVERITY_STATE, now),
    affectedServices(store, account, checks, (id) => services.get(id)?.name),
    showResponseTime ? responseTimes(store, account, checks, now) : undefined,
  ])
  const stateOf = (serviceId: string) => {
    const naming = open.filter((i) => i.incident.services.some((s) => s.id === serviceId))
    return { state: worst(naming.map((i) => SEVERITY_STATE[i.incident.severity] ?? 'degraded')), openIncidents: naming.map((i) => i.id) }
  }
  const serviceModel = (s: ServiceRecord): ServiceModel => {
    const by = affected.get(s.id)
    const { state: fromIncidents, openIncidents } = stateOf(s.id)
    // its own alerts (and incident) are held back while a dependency fails: its checks still say how it is
    const state = worst([fromIncidents, by?.state ?? 'operational'])
    return {
      id: s.id,
      name: s.name,
      state,
      stateLabel: STATE_LABEL[state],
      openIncidents,
      uptime: uptime.get(s.id) as ServiceUptime,
      affectedBy: by ? { ...by, text: affectedText(by) } : null,
      ...(times ? { responseTime: times.get(s.id) ?? null } : {}),
    }
  }
  const cards = page.cards.map((card) => ({
    id: card.id,
    name: card.name,
    services: card.services
      .map((s) => services.get(s.id))
      .filter((s): s is ServiceRecord => s !== undefined)
      .map(serviceModel),
  }))
  const status = worst(cards.flatMap((c) => c.services.map((s) => s.state)))
  return {
    status,
    statusLabel: OVERALL_LABEL[status],
    cards,
    showResponseTime,
    maintenance: maintenanceOf(await windowsOfServices(store, account, onPage, windows.items), now),
    incidents: relevant.slice(0, HISTORY_LIMIT).map((i) => ({
      id: i.id,
      name: i.incident.name,
      severity: i.incident.severity,
      open: isOpen(i),
      services: i.incident.services.map((s) => services.get(s.id)?.name).filter((n): n is string => n !== undefined),
      created_at: i.created_at,
      updates: i.updates.map((u) => ({ id: u.id, status: String(u.update.status), description: String(u.update.description ?? ''), created_at: u.created_at })),
    })),
    changedAt: [
      record.updated_at ?? record.created_at,
      ...relevant.flatMap((i) => [i.updated_at ?? i.created_at, ...i.updates.map((u) => u.created_at)]),
    ].reduce((a, b) => (b > a ? b : a)),
  }
}

export async function windowsOfServices(
  store: Pick<Store, 'checks'>,
  account: string,
  services: Set<string>,
  windows: MaintenanceWindowRecord[],
): Promise<MaintenanceWindowRecord[]> {
  const windowTags = [...new Set(windows.flatMap((w) => w.window.tags ?? []))]
  if (windowTags.length === 0 || services.size === 0) return []
  const tagsOfPage = new Set<string>()
  for await (const check of eachCheck<{ tags?: string[]; triggerIncident?: { serviceId?: unknown } | null }>(store.checks, account, { tags: windowTags })) {
    const serviceId = check.triggerIncident?.serviceId
    if (typeof serviceId === 'string' && services.has(serviceId)) for (const tag of check.tags ?? []) tagsOfPage.add(tag)
  }
  return windows.filter((w) => (w.window.tags ?? []).some((tag) => tagsOfPage.has(tag)))
}

function maintenanceOf(windows: MaintenanceWindowRecord[], now: number): StatusPageState['maintenance'] {
  const active: StatusPageState['maintenance']['active'] = []
  const upcoming: StatusPageState['maintenance']['upcoming'] = []
  const iso = (ms: number) => new Date(ms).toISOString()
  for (const { id, window, created_at, updated_at } of windows) {
    const { current, next } = windowTimes(window, now)
    const changedAt = updated_at ?? created_at
    if (current) active.push({ id, name: window.name, startsAt: iso(current.start), endsAt: iso(current.end), changedAt })
    if (next) upcoming.push({ id, name: window.name, startsAt: iso(next.start), endsAt: iso(next.end), changedAt })
  }
  upcoming.sort((a, b) => a.startsAt.localeCompare(b.startsAt))
  return { active, upcoming: upcoming.slice(0, UPCOMING_LIMIT) }
}
