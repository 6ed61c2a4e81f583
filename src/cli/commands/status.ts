import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import pc from 'picocolors'
import type { DesiredResource } from '../../resources/types.js'
import { checkTypeEntry } from '../../schema/check-types.js'
import { lockKey } from '../../state/lock.js'
import { listAllByPage } from '../../api/paging.js'
import { redact } from '../../api/redact.js'
import { NotFoundError } from '../../api/errors.js'
import type { ApiClient } from '../../api/client.js'
import {
  data,
  engineOptions,
  environmentRequest,
  loadOrReport,
  openSession,
  out,
  setStdoutFormat,
  useColor,
  withEnvironment,
  type EngineArgs,
} from '../engine.js'
import { selectChecks } from './test.js'
import { locationLabels } from '../location-names.js'
import { isWindowActive } from '../../server/scheduler/maintenance.js'

interface StatusArgs extends Omit<EngineArgs, 'format'> {
  format?: 'text' | 'json'
  failOnFailing?: boolean
}

/** What the target says of one check of the project. */
export type CheckState = 'passing' | 'degraded' | 'failing' | 'paused' | 'maintenance' | 'never-ran' | 'not-deployed'

/** A maintenance window as GET /v1/maintenance-windows answers it. */
interface RemoteWindow {
  id: string | number
  name: string
  tags: string[]
  startsAt: string
  endsAt: string
  repeatInterval?: number | null
  repeatUnit?: 'DAY' | 'WEEK' | 'MONTH' | null
  repeatEndsAt?: string | null
}

/** The window that keeps a check from running now, and when its current occurrence ends. */
export interface ActiveWindow {
  id: string
  name: string
  /** ISO time the current occurrence ends. */
  until: string
}

/** A check status as GET /v1/check-statuses answers it. */
interface RemoteStatus {
  checkId: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  longestRun: number | null
  shortestRun: number | null
  lastRunLocation: string | null
  lastCheckRunId: string | null
  /** Whole days the newest run's certificate has left (API and URL checks on https); null otherwise. */
  sslDaysRemaining?: number | null
  created_at?: string | null
  updated_at?: string | null
  /**
   * The checks it depends on (dependsOn) that are failing, while it fails or is degraded: its
   * alerts are held back (this server's extension, docs/api.md; absent otherwise).
   */
  alertsSuppressedBy?: Array<{ checkId: string; name: string }>
}

/** A failing check another one depends on, named as the project names it when it is the project's. */
export interface HeldBackBy {
  checkId: string
  name: string
  /** `kind:logicalId` of the project's check, when the dependency is one. */
  resource: string | null
}

/** The certificate alert threshold of a check in code (`alertSettings.sslCertificates`), or null when it has none. */
function sslThreshold(resource: DesiredResource): number | null {
  const setting = (resource.payload.alertSettings as { sslCertificates?: { enabled?: boolean; alertThreshold?: number } } | undefined)?.sslCertificates
  return setting && setting.enabled !== false ? (setting.alertThreshold ?? 30) : null
}

/** `5 days left`, `expired 2 days ago`; with the check's threshold, whether it is within it. */
function certificateText(days: number, threshold: number | null): string {
  const left = days < 0 ? `expired ${-days} ${-days === 1 ? 'day' : 'days'} ago` : `${days} ${days === 1 ? 'day' : 'days'} left`
  if (threshold === null) return `certificate ${left}`
  return `certificate ${left} (${days <= threshold ? 'ALERT: ' : ''}alert at ${threshold} days or fewer)`
}

export interface CheckStatusRow {
  resource: DesiredResource
  checkId: string | null
  state: CheckState
  /** Why a check is not deployed: not in the lock, or gone from the target. */
  reason?: string
  status?: RemoteStatus
  badgeUrl: string | null
  /** The check's public badge (no key), when it has a token on the target (this server's extension: docs/api.md). */
  publicBadgeUrl?: string
  /** A heartbeat check's ping URL, as the target answers it. */
  pingUrl?: string
  /** The last 24 hours from the target's analytics: percent of passing runs and p95 response time (ms); null when there is no data. */
  last24h?: Last24h
  /** State `maintenance`: the active window sharing a tag with the check (on the target). */
  maintenance?: ActiveWindow
  /** Failing or degraded while checks it depends on fail: its alerts are held back by them. */
  heldBackBy?: HeldBackBy[]
}

/** Availability (percent) and p95 response time (ms) of the last 24 hours; null where the target has no data. */
export interface Last24h {
  availability: number | null
  p95: number | null
}

/** The analytics route and p95 metric of a check type (a heartbeat check has no response time), from the table of check types. */
function analyticsOf(checkType: unknown): { path: string; p95?: string } | undefined {
  const entry = checkTypeEntry(String(checkType))
  if (!entry) return undefined
  return { path: entry.analyticsRoute, ...(entry.timeMetric ? { p95: `${entry.timeMetric}_p95` } : {}) }
}

/**
 * The last 24 hours of one check from GET /v1/analytics/<type>/{id} (one request per check:
 * analytics have no list route), or undefined when the target has no analytics for it.
 */
async function last24hOf(client: ApiClient, checkId: string, checkType: unknown): Promise<Last24h | undefined> {
  const route = analyticsOf(checkType)
  if (!route) return undefined
  const metrics = ['availability', ...(route.p95 ? [route.p95] : [])].join(',')
  try {
    const answer = await client.send<{ series?: unknown[] }>({
      method: 'GET',
      path: `/v1/analytics/${route.path}/${encodeURIComponent(checkId)}`,
      query: { quickRange: 'last24Hours', metrics },
    })
    const first = answer.body.series?.[0]
    const entry = (typeof first === 'string' ? JSON.parse(first) : (first ?? {})) as Record<string, unknown>
    const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : null)
    return { availability: number(entry.availability), p95: route.p95 ? number(entry[route.p95]) : null }
  } catch (error) {
    // a target without analytics (or a check gone since it was listed) shows no figures
    if (error instanceof NotFoundError) return undefined
    throw error
  }
}

/**
 * Fills `publicBadgeUrl` of checks and groups from GET /v1/badges/tokens (one request): a target
 * without the route (the hosted service) has no public badges.
 */
async function addPublicBadges(client: ApiClient, rows: CheckStatusRow[], groups: GroupStatusRow[] = []): Promise<void> {
  if (!rows.some((r) => r.state !== 'not-deployed' && r.checkId !== null) && !groups.some((g) => g.groupId !== null)) return
  let tokens: Array<{ checkId?: unknown; groupId?: unknown; path?: unknown }>
  try {
    const answer = await client.send<unknown>({ method: 'GET', path: '/v1/badges/tokens' })
    tokens = Array.isArray(answer.body) ? answer.body : []
  } catch (error) {
    if (error instanceof NotFoundError) return
    throw error
  }
  const base = client.baseUrl.replace(/\/+$/, '')
  const pathOf = new Map(tokens.filter((t) => typeof t.checkId === 'string' && typeof t.path === 'string').map((t) => [t.checkId as string, t.path as string]))
  for (const row of rows) {
    const path = row.state !== 'not-deployed' && row.checkId !== null ? pathOf.get(row.checkId) : undefined
    if (path) row.publicBadgeUrl = `${base}${path}`
  }
  const groupPathOf = new Map(
    tokens.filter((t) => typeof t.groupId === 'number' && typeof t.path === 'string').map((t) => [String(t.groupId), t.path as string]),
  )
  for (const group of groups) {
    const path = group.state !== 'not-deployed' && group.groupId !== null ? groupPathOf.get(group.groupId) : undefined
    if (path) group.publicBadgeUrl = `${base}${path}`
  }
}

/** Fills `last24h` of every deployed check, a few requests at a time. */
async function addLast24h(client: ApiClient, rows: CheckStatusRow[], remoteChecks: ReadonlyMap<string, Record<string, unknown>>): Promise<void> {
  const deployed = rows.filter((r) => r.state !== 'not-deployed' && r.checkId !== null)
  let next = 0
  const worker = async () => {
    while (next < deployed.length) {
      const row = deployed[next++]
      const figures = await last24hOf(client, row.checkId as string, remoteChecks.get(row.checkId as string)?.checkType)
      if (figures) row.last24h = figures
    }
  }
  await Promise.all(Array.from({ length: Math.min(4, deployed.length) }, worker))
}

const STATE_TEXT: Record<CheckState, string> = {
  passing: 'passing',
  degraded: 'degraded',
  failing: 'failing',
  paused: 'paused',
  maintenance: 'maintenance',
  'never-ran': 'never ran',
  'not-deployed': 'not deployed',
}

/**
 * The first window of `windows` active at `now` that shares a tag with `tags` (the scheduler's
 * rule: such a check is not run), with the end of its current occurrence: the first millisecond
 * at which the window is no longer active, found by halving (an occurrence lasts endsAt − startsAt).
 */
export function activeWindow(tags: readonly string[], windows: readonly RemoteWindow[], now: number): ActiveWindow | undefined {
  for (const window of windows) {
    if (!Array.isArray(window.tags) || !window.tags.some((tag) => tags.includes(tag)) || !isWindowActive(window, now)) continue
    const length = Math.max(1000, Date.parse(window.endsAt) - Date.parse(window.startsAt))
    let active = now
    let inactive = now + length
    // occurrences that overlap (a repeat shorter than the window) chain: step over them, a bounded number of times
    for (let steps = 0; steps < 1000 && isWindowActive(window, inactive); steps++) inactive += length
    while (inactive - active > 1) {
      const middle = active + Math.floor((inactive - active) / 2)
      if (isWindowActive(window, middle)) active = middle
      else inactive = middle
    }
    return { id: String(window.id), name: window.name, until: new Date(inactive).toISOString() }
  }
  return undefined
}

/**
 * The state of each check: not deployed (not in the lock, or gone remotely), paused
 * (`activated: false` on the target), maintenance (a window sharing one of its tags on the
 * target is active: it is not run now, whatever its last run said), never ran (no status), else
 * from the newest run's flags.
 */
export function checkStates(
  checks: readonly DesiredResource[],
  remoteIdOf: (resource: DesiredResource) => string | undefined,
  remoteChecks: ReadonlyMap<string, Record<string, unknown>>,
  statuses: ReadonlyMap<string, RemoteStatus>,
  badgeBase: string | undefined,
  windows: readonly RemoteWindow[] = [],
  now = Date.now(),
): CheckStatusRow[] {
  return checks.map((resource) => {
    const id = remoteIdOf(resource)
    if (id === undefined) return { resource, checkId: null, state: 'not-deployed', reason: 'not in the lock file: run monitors apply', badgeUrl: null }
    const remote = remoteChecks.get(id)
    if (!remote) return { resource, checkId: id, state: 'not-deployed', reason: 'in the lock file but gone from the target: run monitors plan', badgeUrl: null }
    const status = statuses.get(id)
    const badgeUrl = badgeBase ? `${badgeBase}/v1/badges/checks/${encodeURIComponent(id)}` : null
    const maintenance = remote.activated === false ? undefined : activeWindow(Array.isArray(remote.tags) ? (remote.tags as string[]) : [], windows, now)
    const state: CheckState =
      remote.activated === false
        ? 'paused'
        : maintenance
          ? 'maintenance'
          : !status
            ? 'never-ran'
            : status.hasFailures || status.hasErrors
              ? 'failing'
              : status.isDegraded
                ? 'degraded'
                : 'passing'
    const heartbeat = remote.heartbeat as { pingUrl?: unknown } | undefined
    const pingUrl = typeof heartbeat?.pingUrl === 'string' ? heartbeat.pingUrl : undefined
    const heldBackBy = state === 'failing' || state === 'degraded' ? heldBack(status) : []
    return {
      resource,
      checkId: id,
      state,
      ...(status ? { status } : {}),
      badgeUrl,
      ...(pingUrl ? { pingUrl } : {}),
      ...(maintenance ? { maintenance } : {}),
      ...(heldBackBy.length > 0 ? { heldBackBy } : {}),
    }
  })
}

/** The failing dependencies a status names (alertsSuppressedBy); `resource` is filled by nameDependencies. */
function heldBack(status: RemoteStatus | undefined): HeldBackBy[] {
  const by = Array.isArray(status?.alertsSuppressedBy) ? status.alertsSuppressedBy : []
  return by.filter((d) => d && typeof d.checkId === 'string').map((d) => ({ checkId: d.checkId, name: String(d.name ?? ''), resource: null }))
}

/** Names each dependency holding alerts back as the project does (`kind:logicalId`), when it is one of the project's checks. */
export function nameDependencies(
  rows: readonly CheckStatusRow[],
  resources: readonly DesiredResource[],
  remoteIdOf: (resource: DesiredResource) => string | undefined,
): void {
  const resourceOf = new Map<string, DesiredResource>()
  for (const resource of resources) {
    const id = remoteIdOf(resource)
    if (id !== undefined) resourceOf.set(id, resource)
  }
  for (const row of rows) {
    for (const by of row.heldBackBy ?? []) {
      const resource = resourceOf.get(by.checkId)
      if (resource) by.resource = `${resource.kind}:${resource.logicalId}`
    }
  }
}

function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return ''
  return `${ms < 10 ? Math.round(ms * 10) / 10 : Math.round(ms)}`
}

/** Shortest and longest response time ever recorded: `8.1–12 ms`, or `-` when none is known. */
function runTimes(status: RemoteStatus | undefined): string {
  if (!status || (status.shortestRun === null && status.longestRun === null)) return '-'
  const low = formatMs(status.shortestRun)
  const high = formatMs(status.longestRun)
  return low === high || !low || !high ? `${low || high} ms` : `${low}–${high} ms`
}

/** `99.5%`, or `-` without data. */
function availabilityText(row: CheckStatusRow): string {
  const value = row.last24h?.availability
  return value === null || value === undefined ? '-' : `${Math.round(value * 100) / 100}%`
}

function p95Text(row: CheckStatusRow): string {
  const value = row.last24h?.p95
  return value === null || value === undefined ? '-' : `${formatMs(value)} ms`
}

const label = (r: DesiredResource) => `${r.kind}:${r.logicalId} "${String(r.payload.name ?? '')}"`

/** `depends on dns-check:db "Database", which is failing`; a dependency outside the project by its name and id. */
function dependencyText(by: readonly HeldBackBy[]): string {
  const names = by.map((d) => (d.resource ? `${d.resource} ${JSON.stringify(d.name)}` : `${JSON.stringify(d.name)} (id ${d.checkId})`))
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`
  return `depends on ${list}, which ${by.length === 1 ? 'is' : 'are'} failing`
}

/** `labelOf` shows a location as people know it (a private location by its name, src/cli/location-names.ts). */
export function renderStatusTable(rows: readonly CheckStatusRow[], color: boolean, labelOf: (location: string) => string = (l) => l): string {
  const c = pc.createColors(color)
  const paintOf: Record<CheckState, (s: string) => string> = {
    passing: c.green,
    degraded: c.yellow,
    failing: c.red,
    paused: c.dim,
    maintenance: c.cyan,
    'never-ran': c.dim,
    'not-deployed': c.dim,
  }
  const cells = rows.map((row) => [
    label(row.resource),
    STATE_TEXT[row.state],
    row.status?.lastRunLocation ? labelOf(row.status.lastRunLocation) : '-',
    runTimes(row.status),
    availabilityText(row),
    p95Text(row),
    row.badgeUrl ?? (row.reason ? `- (${row.reason})` : '-'),
  ])
  const head = ['CHECK', 'STATE', 'LAST LOCATION', 'RUN TIMES', 'AVAILABILITY 24H', 'P95 24H', 'BADGE']
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)))
  const line = (r: string[], paint: (s: string) => string = (s) => s) =>
    r
      .map((cell, i) => {
        const padded = i >= 3 && i <= 5 ? cell.padStart(widths[i]) : i === r.length - 1 ? cell : cell.padEnd(widths[i])
        return i === 1 ? paint(padded) : padded
      })
      .join('  ')
      .trimEnd()
  const pings = rows.filter((r) => r.pingUrl).map((r) => `  ${label(r.resource)}  ${r.pingUrl}`)
  const pingText = pings.length > 0 ? `\nPing URLs (GET or POST, no key):\n${pings.join('\n')}\n` : ''
  const publicBadges = rows.filter((r) => r.publicBadgeUrl).map((r) => `  ${label(r.resource)}  ${r.publicBadgeUrl}`)
  const publicText = publicBadges.length > 0 ? `\nPublic badges (no key, for a README):\n${publicBadges.join('\n')}\n` : ''
  const held = rows
    .filter((r) => r.maintenance)
    .map((r) => `  ${label(r.resource)}  window "${r.maintenance!.name}" (id ${r.maintenance!.id}) until ${r.maintenance!.until}`)
  const heldText = held.length > 0 ? `\nIn a maintenance window now (not run until it ends; the last run is as shown):\n${held.join('\n')}\n` : ''
  const suppressed = rows.filter((r) => r.heldBackBy).map((r) => `  ${label(r.resource)}  ${dependencyText(r.heldBackBy!)}`)
  const suppressedText =
    suppressed.length > 0
      ? `\nAlerts held back (dependsOn: a check it depends on is failing; its runs are recorded, not alerted):\n${suppressed.map((l) => c.yellow(l)).join('\n')}\n`
      : ''
  const certificates = rows
    .filter((r) => typeof r.status?.sslDaysRemaining === 'number')
    .map((r) => {
      const text = `  ${label(r.resource)}  ${certificateText(r.status!.sslDaysRemaining as number, sslThreshold(r.resource))}`
      const threshold = sslThreshold(r.resource)
      return threshold !== null && (r.status!.sslDaysRemaining as number) <= threshold ? c.yellow(text) : text
    })
  const certificateBlock = certificates.length > 0 ? `\nCertificates (newest run):\n${certificates.join('\n')}\n` : ''
  return `${[c.bold(line(head)), ...cells.map((r, i) => line(r, paintOf[rows[i].state]))].join('\n')}\n${heldText}${suppressedText}${certificateBlock}${pingText}${publicText}`
}

function summaryOf(rows: readonly CheckStatusRow[]) {
  const count = (state: CheckState) => rows.filter((r) => r.state === state).length
  return {
    total: rows.length,
    passing: count('passing'),
    degraded: count('degraded'),
    failing: count('failing'),
    paused: count('paused'),
    maintenance: count('maintenance'),
    neverRan: count('never-ran'),
    notDeployed: count('not-deployed'),
    alertsHeldBack: rows.filter((r) => r.heldBackBy).length,
  }
}

export function statusToJson(rows: readonly CheckStatusRow[], target: { id: string; baseUrl: string; embedded: boolean }) {
  return {
    formatVersion: 1,
    ok: true,
    target,
    summary: summaryOf(rows),
    checks: rows.map((row) => ({
      kind: row.resource.kind,
      logicalId: row.resource.logicalId,
      construct: row.resource.construct,
      file: row.resource.file,
      name: row.resource.payload.name ?? null,
      checkId: row.checkId,
      state: row.state,
      ...(row.reason ? { reason: row.reason } : {}),
      hasFailures: row.status?.hasFailures ?? null,
      hasErrors: row.status?.hasErrors ?? null,
      isDegraded: row.status?.isDegraded ?? null,
      lastRunLocation: row.status?.lastRunLocation ?? null,
      lastCheckRunId: row.status?.lastCheckRunId ?? null,
      shortestRun: row.status?.shortestRun ?? null,
      longestRun: row.status?.longestRun ?? null,
      updatedAt: row.status?.updated_at ?? null,
      availability24h: row.last24h?.availability ?? null,
      p95ResponseTime24h: row.last24h?.p95 ?? null,
      sslDaysRemaining: row.status?.sslDaysRemaining ?? null,
      sslAlertThreshold: sslThreshold(row.resource),
      badgeUrl: row.badgeUrl,
      publicBadgeUrl: row.publicBadgeUrl ?? null,
      ...(row.pingUrl ? { pingUrl: row.pingUrl } : {}),
      maintenanceWindow: row.maintenance ?? null,
      alertsSuppressedBy: row.heldBackBy ?? [],
    })),
  }
}

/** A check group of the project as `monitors status` shows it: its checks' worst state (paused when the group is deactivated). */
export interface GroupStatusRow {
  logicalId: string
  name: string
  groupId: string | null
  state: 'passing' | 'degraded' | 'failing' | 'paused' | 'never-ran' | 'not-deployed'
  checks: number
  badgeUrl: string | null
  /** the group's public badge (no key), when it has a token on the target (this server's extension: docs/api.md) */
  publicBadgeUrl?: string
}

/** The project's groups: each from its remote record (activated, its checks' ids) and its checks' statuses. */
export function groupStates(
  groups: readonly DesiredResource[],
  remoteIdOf: (resource: DesiredResource) => string | undefined,
  remoteGroups: ReadonlyMap<string, { activated?: boolean; checks?: unknown }>,
  statuses: ReadonlyMap<string, RemoteStatus>,
  badgeBase: string | undefined,
): GroupStatusRow[] {
  return groups.map((resource) => {
    const id = remoteIdOf(resource)
    const remote = id === undefined ? undefined : remoteGroups.get(id)
    const base = { logicalId: resource.logicalId, name: String(resource.payload.name) }
    if (id === undefined || !remote) return { ...base, groupId: id ?? null, state: 'not-deployed', checks: 0, badgeUrl: null }
    const members = Array.isArray(remote.checks) ? remote.checks.map(String) : []
    const ran = members.map((m) => statuses.get(m)).filter((st): st is RemoteStatus => st !== undefined)
    const state: GroupStatusRow['state'] =
      remote.activated === false
        ? 'paused'
        : ran.some((st) => st.hasFailures || st.hasErrors)
          ? 'failing'
          : ran.some((st) => st.isDegraded)
            ? 'degraded'
            : ran.length > 0
              ? 'passing'
              : 'never-ran'
    return { ...base, groupId: id, state, checks: members.length, badgeUrl: badgeBase ? `${badgeBase}/v1/badges/groups/${encodeURIComponent(id)}` : null }
  })
}

/** `Group smoke "Smoke": failing (3 checks)`, one line a group. */
export function renderGroupLines(rows: readonly GroupStatusRow[], color: boolean): string {
  const c = pc.createColors(color)
  const paint = { passing: c.green, degraded: c.yellow, failing: c.red, paused: c.dim, 'never-ran': c.dim, 'not-deployed': c.dim } as const
  return rows
    .map(
      (g) =>
        `Group ${g.logicalId} "${g.name}": ${paint[g.state](g.state)} (${g.checks} ${g.checks === 1 ? 'check' : 'checks'})${g.badgeUrl ? c.dim(` ${g.badgeUrl}`) : ''}\n${
          g.publicBadgeUrl ? `  public badge (no key, for a README): ${g.publicBadgeUrl}\n` : ''
        }`,
    )
    .join('')
}

type StatusProject = NonNullable<Awaited<ReturnType<typeof loadOrReport>>>

/** The rows of the checks and groups with their remote state, last 24 hours and badges. */
async function statusRows(
  project: StatusProject,
  session: Awaited<ReturnType<typeof openSession>>,
  checks: DesiredResource[],
  targetsNamed: readonly string[],
) {
  const { client, target } = session.open
  const remoteIdOf = (r: DesiredResource) => session.lock?.resources[lockKey(r.kind, r.logicalId)]?.remoteId
  const deployed = checks.some((r) => remoteIdOf(r) !== undefined)
  const groups = targetsNamed.length === 0 ? project.resources.filter((r) => r.kind === 'check-group') : []
  const [remoteChecks, statuses, windows, remoteGroups] = deployed
    ? await Promise.all([
        listAllByPage<Record<string, unknown>>(client, '/v1/checks', { idOf: (r) => String(r.id) }),
        listAllByPage<RemoteStatus>(client, '/v1/check-statuses', { idOf: (s) => String(s.checkId) }),
        listAllByPage<RemoteWindow>(client, '/v1/maintenance-windows', { idOf: (w) => String(w.id) }),
        groups.some((g) => remoteIdOf(g) !== undefined)
          ? listAllByPage<{ id: number; activated?: boolean; checks?: unknown }>(client, '/v1/check-groups', { idOf: (g) => String(g.id) })
          : Promise.resolve([]),
      ])
    : [[], [], [], []]
  // the embedded server lives only while this command runs: its badge URLs would answer nothing
  const badgeBase = target.embedded ? undefined : client.baseUrl
  const remoteById = new Map(remoteChecks.map((r) => [String(r.id), r]))
  const rows = checkStates(checks, remoteIdOf, remoteById, new Map(statuses.map((s) => [String(s.checkId), s])), badgeBase, windows)
  nameDependencies(rows, project.resources, remoteIdOf)
  await addLast24h(client, rows, remoteById)
  const groupRows = groupStates(
    groups,
    remoteIdOf,
    new Map(remoteGroups.map((g) => [String(g.id), g])),
    new Map(statuses.map((st) => [String(st.checkId), st])),
    badgeBase,
  )
  if (badgeBase) await addPublicBadges(client, rows, groupRows)
  return { rows, groupRows, badgeBase }
}

/**
 * `monitors status`: the target's check statuses for the project's checks (a heartbeat check's ping URL too), read
 * from the list endpoints (checks and check statuses), with each check's badge URL and its last
 * 24 hours from the analytics routes (one request per deployed check, four at a time). Exit 0 whatever the states, 1 on errors; with --fail-on-failing, also 1
 * when a check is failing.
 */
export const statusCommand = {
  command: 'status',
  describe: "Show the target's check statuses for the project's checks, with badge URLs",
  builder: (yargs: Argv) =>
    engineOptions(yargs)
      .option('format', {
        choices: ['text', 'json'] as const,
        default: 'text' as const,
        describe: 'Output: a table for a terminal, or json (one document) on stdout with the table on stderr',
      })
      .option('fail-on-failing', {
        type: 'boolean',
        default: false,
        describe: 'Exit 1 when a check is failing (degraded, paused, never ran and not deployed do not count)',
      }),
  handler: async (args: ArgumentsCamelCase<StatusArgs>): Promise<number> => {
    setStdoutFormat(args.format)
    const project = await loadOrReport({ config: args.config, env: args.env }, { warn: false })
    if (!project) {
      if (args.format === 'json')
        data(
          `${JSON.stringify(withEnvironment({ formatVersion: 1, ok: false, error: 'The project has problems (see stderr).' }, environmentRequest(args)?.name || undefined), null, 2)}\n`,
        )
      return 1
    }
    const environment = project.config.environment?.name
    try {
      const checks = selectChecks(project.resources, args.target ?? [])
      const session = await openSession(project, args as EngineArgs)
      try {
        const { client, target } = session.open
        const { rows, groupRows, badgeBase } = await statusRows(project, session, checks, args.target ?? [])
        const c = pc.createColors(useColor())
        if (environment !== undefined) out(`Environment: ${c.bold(environment)}\n`)
        if (rows.length === 0) out('No checks: the project has no check (DnsCheck, IcmpCheck, HeartbeatCheck, ...).\n')
        else
          out(
            renderStatusTable(
              rows,
              useColor(),
              await locationLabels(
                client,
                rows.map((r) => r.status?.lastRunLocation),
              ),
            ),
          )
        if (groupRows.length > 0) out(`\n${renderGroupLines(groupRows, useColor())}`)
        const s = summaryOf(rows)
        const parts = [
          `${s.passing} passing`,
          `${s.degraded} degraded`,
          `${s.failing} failing`,
          ...(s.alertsHeldBack > 0 ? [`${s.alertsHeldBack} with alerts held back (dependsOn)`] : []),
          `${s.paused} paused`,
          ...(s.maintenance > 0 ? [`${s.maintenance} in maintenance`] : []),
          `${s.neverRan} never ran`,
          `${s.notDeployed} not deployed`,
        ]
        if (rows.length > 0) out(`\n${s.failing > 0 ? c.red('Status:') : c.green('Status:')} ${parts.join(', ')}.\n`)
        if (target.embedded && rows.length > 0) {
          out(
            c.dim(
              'The embedded server never runs checks, so its checks never ran: runs happen on a "monitors server" or a hosted service (set MONITORING_API_URL).\n',
            ),
          )
        } else if (badgeBase && rows.some((r) => r.badgeUrl)) {
          out(
            c.dim(
              `Badges are served with authentication: send the API key (Authorization: Bearer) to fetch one${rows.some((r) => r.publicBadgeUrl) ? '; a public badge needs none' : '; a public badge (POST /v1/badges/checks/{id}/token, or the dashboard) needs none'}.\n`,
            ),
          )
        }
        if (args.format === 'json') {
          const doc = statusToJson(rows, { id: target.id, baseUrl: target.baseUrl, embedded: target.embedded })
          data(
            `${JSON.stringify(withEnvironment(groupRows.length > 0 ? { ...doc, groups: groupRows.map((g) => ({ ...g, publicBadgeUrl: g.publicBadgeUrl ?? null })) } : doc, environment), null, 2)}\n`,
          )
        }
        return args.failOnFailing && s.failing > 0 ? 1 : 0
      } finally {
        await session.close()
      }
    } catch (error) {
      if (args.format === 'json') {
        data(
          `${JSON.stringify(withEnvironment({ formatVersion: 1, ok: false, error: redact(error instanceof Error ? error.message : String(error)) }, environment), null, 2)}\n`,
        )
      }
      throw error
    }
  },
} as unknown as CommandModule<object, StatusArgs>
