import type { FastifyInstance } from 'fastify'
import { CHECK_TYPE_TABLE, isRunnableCheckType, SERVICE_CHECK_TYPES } from '../../schema/check-types.js'
import { applyGroup } from '../../schema/check-group.js'
import { asDashboard } from '../auth.js'
import { groupBadgeState, renderBadge } from '../results/badge.js'
import { suppressionText, type DependencyRef } from '../dependencies.js'
import type { CheckStatusRecord } from '../store/index.js'
import { esc, formatTime, jsonInHtml } from './html.js'
import { agoElement, refreshBar, refreshHead, refreshSeconds } from './refresh.js'
import type { WebSession } from './sessions.js'
import { locationLabels, plainLabels, type LocationLabel } from './location-names.js'

/*
 * The dashboard's pages. Every figure comes from the server's own API routes, called on behalf
 * of the logged-in key (app.inject, see auth.ts `asDashboard`: the key's role applies, its
 * rate limit is not spent), so what the dashboard shows is what the API answers; where a route
 * answers nothing (404, no data), the page shows –. The list of checks costs a bounded number
 * of calls: its pages of 100, the statuses, and the 24-hour figures of every check at once
 * (`ListFigures`, the analytics routes' own computation over one read); badges are drawn in
 * the page from the statuses, as the badge route draws them.
 */

export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

export interface ApiAnswer {
  /** the answer's `Link` header (a list's next page, by keyset) */
  link?: string
  status: number
  // biome-ignore lint/suspicious/noExplicitAny: an answer of the API, read field by field by each page
  json: any
  text: string
}

export type Api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => Promise<ApiAnswer>

/** The 24-hour figures of checks, by id (see web/index.ts: computed at once, kept a minute). */
export type ListFigures = (checks: CheckJson[]) => Promise<Map<string, Figures>>

/** Values kept a while per key (an account's figures: they cover 24 hours, a minute old is fine). */
export class AnalyticsCache<T = Figures> {
  private readonly answers = new Map<string, { answer: T; until: number }>()
  constructor(private readonly ttlMs = 60_000) {}
  get(key: string, now: number): T | undefined {
    const hit = this.answers.get(key)
    if (hit && hit.until > now) return hit.answer
    this.answers.delete(key)
    return undefined
  }
  set(key: string, answer: T, now: number): void {
    if (this.answers.size > 50_000) this.answers.clear()
    this.answers.set(key, { answer, until: now + this.ttlMs })
  }
}

/** The API routes, called on behalf of the session's key. */
export function apiFor(app: FastifyInstance, session: WebSession): Api {
  const caller = { accountId: session.accountId, keyId: session.keyId, role: session.role }
  return async (method, url, body) => {
    const answer = await asDashboard(caller, () =>
      app.inject({
        method,
        url,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      }),
    )
    let json: unknown
    try {
      json = JSON.parse(answer.body)
    } catch {
      json = undefined
    }
    const link = answer.headers.link
    return { status: answer.statusCode, json, text: answer.body, ...(typeof link === 'string' ? { link } : {}) }
  }
}

/** Whether the session's key may change things (Run now, Archive): write and admin keys. */
export const canWrite = (session: WebSession): boolean => session.role === 'write' || session.role === 'admin'

/** The type filter's options, in the table's order (src/schema/check-types.ts). */
export const CHECK_TYPES = SERVICE_CHECK_TYPES
const ANALYTICS_PATH: Record<string, string> = Object.fromEntries(SERVICE_CHECK_TYPES.map((t) => [t, CHECK_TYPE_TABLE[t].analyticsRoute]))
/**
 * The response-time metric of each type, as the analytics routes name it (a DNS check measures
 * its query time, an ICMP check its latency; a heartbeat check has none); `responseTime` is
 * asked when a route refuses the type's own name.
 */
export const TIME_METRIC: Record<string, string | null> = Object.fromEntries(SERVICE_CHECK_TYPES.map((t) => [t, CHECK_TYPE_TABLE[t].timeMetric]))
export const METRICS = ['availability', 'p50', 'p95'] as const
type Metric = (typeof METRICS)[number]
export type Figures = Record<Metric, string>
const UNITS: Record<string, string> = { percentage: '%', milliseconds: 'ms' }
export const NO_FIGURES: Figures = { availability: '–', p50: '–', p95: '–' }

export interface CheckJson {
  id: string
  name: string
  checkType: string
  activated?: boolean
  locations?: string[] | null
  /** slugs of the account's private locations it runs in (shown by their names) */
  privateLocations?: string[] | null
  tags?: string[]
  /** the check group it is in, whose settings apply when it runs */
  groupId?: number | null
}

interface StatusJson {
  checkId: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  lastRunLocation: string | null
  sslDaysRemaining?: number | null
  created_at: string
  updated_at: string | null
  /** the failing checks it depends on, while they hold its alerts back */
  alertsSuppressedBy?: DependencyRef[]
}

/**
 * The certificate line of a check's page (API and URL checks on https): the days its newest run
 * found left, and its alert threshold (`alertSettings.sslCertificates`) when it has one.
 */
function certificateLine(c: CheckJson, status: StatusJson | undefined): string {
  const days = status?.sslDaysRemaining
  if (typeof days !== 'number') return ''
  const setting = (c as CheckJson & { alertSettings?: { sslCertificates?: { enabled?: boolean; alertThreshold?: number } } }).alertSettings?.sslCertificates
  const threshold = setting && setting.enabled !== false ? (setting.alertThreshold ?? 30) : null
  const within = threshold !== null && days <= threshold
  const left = days < 0 ? `expired ${-days} ${-days === 1 ? 'day' : 'days'} ago` : `${days} ${days === 1 ? 'day' : 'days'} left`
  const alert = threshold === null ? '' : ` · alert at ${threshold} days or fewer${within ? ': <strong>within it</strong>' : ''}`
  return `\n<p data-certificate="${within ? 'expiring' : 'ok'}">Certificate: ${esc(left)}${alert}</p>`
}

/** The newest run's state, as the check status route answers it (unknown: never ran). */
function stateOf(status: StatusJson | undefined): 'passing' | 'degraded' | 'failing' | 'unknown' {
  if (!status) return 'unknown'
  if (status.hasFailures || status.hasErrors) return 'failing'
  if (status.isDegraded) return 'degraded'
  return 'passing'
}

/** The metric names the figures of a type ask for, with `base` as the time metric. */
export function figureNames(base: string | null): Record<Metric, string | null> {
  return { availability: 'availability', p50: base && `${base}_p50`, p95: base && `${base}_p95` }
}

/** One analytics entry (the whole window) shown with its units; – where it has no value. */
export function formatFigures(
  entry: Record<string, unknown> | undefined,
  names: Record<Metric, string | null>,
  metadata: Record<string, { unit?: string } | undefined> | undefined,
): Figures {
  const out: Figures = { ...NO_FIGURES }
  for (const metric of METRICS) {
    const name = names[metric]
    const value = name ? entry?.[name] : undefined
    if (typeof value !== 'number' || !Number.isFinite(value)) continue
    const unit = metadata?.[name as string]?.unit
    const shown = typeof unit === 'string' ? (UNITS[unit] ?? unit) : ''
    out[metric] = `${Math.round(value * 100) / 100}${shown === '%' ? '' : ' '}${shown}`.trim()
  }
  return out
}

/** The 24-hour figures as the analytics route answers them (one entry for the whole window): its values with their units; – where it answers nothing. */
async function figures(api: Api, check: CheckJson): Promise<Figures> {
  const path = ANALYTICS_PATH[check.checkType]
  if (!path) return { ...NO_FIGURES }
  const time = TIME_METRIC[check.checkType]
  for (const base of [...new Set(time ? [time, 'responseTime'] : [null])]) {
    const names = figureNames(base)
    const asked = METRICS.map((m) => names[m]).filter((n): n is string => n !== null)
    const answer = await api('GET', `/v1/analytics/${path}/${encodeURIComponent(check.id)}?quickRange=last24Hours&metrics=${asked.join(',')}`)
    if (answer.status === 400) continue
    if (answer.status !== 200 || !Array.isArray(answer.json?.series) || answer.json.series.length !== 1) return { ...NO_FIGURES }
    try {
      const raw = answer.json.series[0]
      return formatFigures(typeof raw === 'string' ? JSON.parse(raw) : raw, names, answer.json.metadata)
    } catch {
      return { ...NO_FIGURES }
    }
  }
  return { ...NO_FIGURES }
}

export function layout(title: string, body: string, session: WebSession | undefined, extraHead = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · monitors</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
${extraHead}
</head>
<body>
<header><div class="wrap">
<a class="brand" href="/">monitors dashboard</a>
${
  session
    ? `<nav aria-label="Main"><ul><li><a href="/">Checks</a></li><li><a href="/dashboard/private-locations">Private locations</a></li></ul></nav>
${canWrite(session) ? '' : '<span class="muted" data-role="read">read-only key</span>'}
<form class="inline" method="post" action="/dashboard/logout"><input type="hidden" name="csrf" value="${esc(session.csrf)}"><button class="secondary" type="submit">Log out</button></form>`
    : ''
}
</div></header>
<main><div class="wrap">
${body}
</div></main>
</body>
</html>
`
}

export function loginPage(error?: string): string {
  return layout(
    'Log in',
    `<div class="login">
<h1>Log in</h1>
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post" action="/dashboard/login">
<label for="apiKey">API key</label>
<input id="apiKey" name="apiKey" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button>
</form>
<p class="muted">The key stays on the server; your browser keeps only a session cookie.</p>
</div>`,
    undefined,
  )
}

export function messagePage(session: WebSession | undefined, title: string, message: string): string {
  return layout(title, `<h1>${esc(title)}</h1><p>${esc(message)}</p><p><a href="/">Back to the checks</a></p>`, session)
}

/** The checks of the list (at most 5,000), page after page by keyset: the next page's link of each answer. */
async function allChecks(api: Api, filter: { checkType?: string; tag?: string } = {}): Promise<CheckJson[] | undefined> {
  const checks: CheckJson[] = []
  const query = new URLSearchParams({ limit: '100' })
  if (filter.checkType) query.set('checkType', filter.checkType)
  if (filter.tag) query.set('tag', filter.tag)
  let url: string | undefined = `/v1/checks?${query}`
  for (let page = 1; page <= 50 && url; page++) {
    const answer: ApiAnswer = await api('GET', url)
    if (answer.status !== 200 || !Array.isArray(answer.json)) return undefined
    checks.push(...answer.json)
    url = /<(\/v1\/checks\?[^>]*)>;\s*rel="next"/.exec(answer.link ?? '')?.[1]
  }
  return checks
}

/** A deactivated check runs only when asked (Run now); its badge says paused. */
function paused(check: CheckJson): string {
  return check.activated === false ? '<span class="muted"> · paused</span>' : ''
}

/** Why a failing check alerts no one: the failing checks it depends on (dependsOn). */
function suppressed(status: StatusJson | undefined): string {
  const by = status?.alertsSuppressedBy
  return by && by.length > 0 ? `<span class="muted" data-alerts-suppressed> · alerts ${esc(suppressionText(by))}</span>` : ''
}

function badgeImg(check: CheckJson): string {
  return `<img src="/dashboard/badges/${encodeURIComponent(check.id)}" alt="badge of ${esc(check.name)}" height="20">`
}

/** Badges drawn, by name and state: drawing one takes about a millisecond, and they rarely change. */
const drawnBadges = new Map<string, string>()

/** The badge the badge route answers (its defaults), drawn in the page from the status already read: no request per check. */
function inlineBadge(check: CheckJson, status: StatusJson | undefined): string {
  const activated = check.activated !== false
  const key = `${activated ? stateOf(status) : 'paused'}\u0000${check.name}`
  let data = drawnBadges.get(key)
  if (data === undefined) {
    const svg = renderBadge({
      name: check.name,
      activated,
      status: status as unknown as CheckStatusRecord | undefined,
      style: 'flat',
      theme: 'default',
      responseTime: false,
    })
    data = Buffer.from(svg).toString('base64')
    if (drawnBadges.size >= 20_000) drawnBadges.clear()
    drawnBadges.set(key, data)
  }
  return `<img src="data:image/svg+xml;base64,${data}" alt="badge of ${esc(check.name)}" height="20">`
}

/** The list's columns (also the labels of a row's cells when the table is stacked on a narrow screen: assets.ts). */
export const CHECK_COLUMNS = ['Name', 'Type', 'Status', 'Badge', 'Last run', 'Locations', 'Availability (24 h)', 'p50 (24 h)', 'p95 (24 h)', 'Tags']
export const GROUP_COLUMNS = ['Group', 'Status', 'Checks', 'Locations']
export const MEMBER_COLUMNS = ['Name', 'Type', 'Status', 'Last run', 'Locations']

/** A table head from its columns. */
export const headOf = (columns: string[]): string => `<thead><tr>${columns.map((c) => `<th scope="col">${esc(c)}</th>`).join('')}</tr></thead>`

export interface GroupJson {
  id: number
  name: string
  activated?: boolean
  muted?: boolean
  checks?: string[]
  locations?: string[]
  privateLocations?: string[]
}

/**
 * Where a check runs, as its group's settings apply (applyGroup, as the scheduler plans it): its
 * own locations, else its group's (said so), a private location by its name (`labelOf`).
 * `applied`: the check as its group's route answers it.
 */
export function locationsCell(check: CheckJson, group: GroupJson | undefined, applied?: CheckJson, labelOf: LocationLabel = plainLabels): string {
  const where = applied ?? (group ? applyGroup({ ...check }, { ...group }) : check)
  const runs = [...(where.locations ?? []), ...(where.privateLocations ?? [])]
  if (runs.length === 0) return '–'
  const fromGroup = group !== undefined && (check.locations ?? []).length === 0 && (check.privateLocations ?? []).length === 0
  return `${runs.map(labelOf).join(', ')}${fromGroup ? `<span class="muted" title="the locations of check group ${esc(group.name)}"> (group)</span>` : ''}`
}

function checkRow(check: CheckJson, status: StatusJson | undefined, f: Figures, group: GroupJson | undefined, now: number, labelOf: LocationLabel): string {
  const state = stateOf(status)
  return `<tr data-check-id="${esc(check.id)}">
<td><a href="/dashboard/checks/${encodeURIComponent(check.id)}">${esc(check.name)}</a></td>
<td>${esc(check.checkType)}</td>
<td class="state-${state}">${state}${paused(check)}${suppressed(status)}</td>
<td>${inlineBadge(check, status)}</td>
<td data-last-run>${status ? agoElement(status.updated_at ?? status.created_at, now) : '–'}</td>
<td data-locations>${locationsCell(check, group, undefined, labelOf)}</td>
<td data-metric="availability">${esc(f.availability)}</td>
<td data-metric="p50">${esc(f.p50)}</td>
<td data-metric="p95">${esc(f.p95)}</td>
<td>${esc((check.tags ?? []).join(', '))}</td>
</tr>`
}

/** Each check group with its checks' worst state (paused when the group is deactivated). */
function groupTable(session: WebSession, groups: GroupJson[], byId: Map<string, StatusJson>, labelOf: LocationLabel): string {
  const rows = groups.map((g) => {
    const members = Array.isArray(g.checks) ? g.checks : []
    const state = groupBadgeState(
      g.activated !== false,
      members.map((id) => ({ status: byId.get(id) as unknown as CheckStatusRecord | undefined })),
    )
    return `<tr data-group-id="${esc(String(g.id))}"><td><a href="/dashboard/groups/${encodeURIComponent(String(g.id))}">${esc(g.name)}</a></td><td class="state-${state}">${state}</td><td>${members.length}</td><td>${[...(g.locations ?? []), ...(g.privateLocations ?? [])].map(labelOf).join(', ') || '–'}</td></tr>`
  })
  return rows.length === 0
    ? ''
    : `<h2>Check groups</h2>
<div class="scroll"><table class="groups stack">
<caption class="muted">Check groups of account ${esc(session.accountId)}: each with its checks' worst state</caption>
${headOf(GROUP_COLUMNS)}
<tbody>${rows.join('')}</tbody>
</table></div>`
}

export async function checkListPage(
  api: Api,
  session: WebSession,
  query: { type?: string; tag?: string; refresh?: string },
  listFigures: ListFigures,
  now: number,
): Promise<string> {
  const type = CHECK_TYPES.includes(query.type as (typeof CHECK_TYPES)[number]) ? query.type : undefined
  const tag = query.tag ? query.tag.slice(0, 200) : undefined
  const refresh = refreshSeconds(query.refresh)
  const [every, statuses, groups] = await Promise.all([allChecks(api), api('GET', '/v1/check-statuses'), api('GET', '/v1/check-groups')])
  // the names are asked for only when a check or a group runs in a private location: a view costs the same calls however many checks
  const named = (list: unknown) =>
    Array.isArray(list) && list.some((x: { privateLocations?: unknown }) => Array.isArray(x?.privateLocations) && x.privateLocations.length > 0)
  const labelOf = named(every) || named(groups.json) ? await locationLabels(api) : plainLabels
  const shown = type || tag ? await allChecks(api, { checkType: type, tag }) : every
  if (!every || !shown) return layout('Checks', '<h1>Checks</h1><p class="error" role="alert">The API did not answer the list of checks.</p>', session)
  const byId = new Map<string, StatusJson>((Array.isArray(statuses.json) ? statuses.json : []).filter(Boolean).map((s: StatusJson) => [s.checkId, s]))
  const groupList: GroupJson[] = Array.isArray(groups.json) ? groups.json : []
  const groupById = new Map(groupList.map((g) => [g.id, g]))
  const tags = [...new Set(every.flatMap((c) => c.tags ?? []))].sort()
  const allFigures = await listFigures(shown)
  const rows = shown.map((check) =>
    checkRow(
      check,
      byId.get(check.id),
      allFigures.get(check.id) ?? NO_FIGURES,
      typeof check.groupId === 'number' ? groupById.get(check.groupId) : undefined,
      now,
      labelOf,
    ),
  )
  const option = (value: string, label: string, selected: boolean) => `<option value="${esc(value)}"${selected ? ' selected' : ''}>${esc(label)}</option>`
  return layout(
    'Checks',
    `<h1>Checks</h1>
${refreshBar(refresh, now, '/', query)}
<form class="filters" method="get" action="/" role="search" aria-label="Filter checks">
<label for="filter-type">Type<select id="filter-type" name="type">${option('', 'All types', !type)}${CHECK_TYPES.map((t) => option(t, t, t === type)).join('')}</select></label>
<label for="filter-tag">Tag<select id="filter-tag" name="tag">${option('', 'All tags', !tag)}${tags.map((t) => option(t, t, t === tag)).join('')}</select></label>
${query.refresh === undefined ? '' : `<input type="hidden" name="refresh" value="${esc(refresh === null ? 'off' : String(refresh))}">`}<button type="submit">Filter</button>
</form>
<p class="muted">${shown.length} of ${every.length} checks. Availability and response times over the last 24 hours, as the analytics routes answer them.</p>
<div class="scroll"><table class="checks stack">
<caption class="muted">Checks of account ${esc(session.accountId)}</caption>
${headOf(CHECK_COLUMNS)}
<tbody>${rows.join('') || `<tr><td colspan="${CHECK_COLUMNS.length}">No checks.</td></tr>`}</tbody>
</table></div>${groupTable(session, groupList, byId, labelOf)}`,
    session,
    refreshHead(refresh),
  )
}

interface ResultJson {
  id: string
  checkSessionId: string | null
  runLocation: string
  resultType: string
  status: string
  responseTime: number | null
  startedAt: string
  error: string | null
  /** the stored result; a heartbeat check's says which event made it (`details.state`) */
  result?: { details?: { state?: unknown } }
}

/** A heartbeat check's body as GET answers it. */
interface HeartbeatJson {
  heartbeat?: { period?: number; periodUnit?: string; grace?: number; graceUnit?: string; pingUrl?: string }
}

/** `1 hours` → `1 hour`. */
const amount = (n: unknown, unit: unknown) => `${String(n)} ${typeof unit === 'string' && n === 1 ? unit.replace(/s$/, '') : String(unit)}`

interface ErrorGroupJson {
  id: string
  cleanedErrorMessage: string
  rawErrorMessage: string | null
  firstSeen: string
  lastSeen: string
  archivedUntilNextEvent: boolean
  archiveForEver?: boolean
}

/** A run the chart marks as failed. */
const FAILED_STATUSES = new Set(['FAILED', 'TIMED_OUT'])

export interface ChartData {
  /** run starts, seconds since the epoch */
  x: number[]
  series: Array<{ label: string; values: Array<number | null> }>
  /** the failed runs (FAILED, TIMED_OUT), oldest first: the chart marks each at its x (its time when it has one) */
  failed: Array<{ x: number; location: string; status: string; responseTime: number | null }>
}

/** The chart's data, reshaped from the results the API answered: one x per run start, one series per location, the failed runs apart. */
export function chartData(results: ResultJson[]): ChartData {
  const dated = results.filter((r) => !Number.isNaN(Date.parse(r.startedAt)))
  const xOf = (r: ResultJson) => Date.parse(r.startedAt) / 1000
  const timed = dated.filter((r) => typeof r.responseTime === 'number')
  const failedRuns = dated.filter((r) => FAILED_STATUSES.has(r.status))
  const xs = [...new Set([...timed, ...failedRuns].map(xOf))].sort((a, b) => a - b)
  const index = new Map(xs.map((x, i) => [x, i]))
  const locations = [...new Set(timed.map((r) => r.runLocation))].sort()
  const series = locations.map((label) => {
    const values: Array<number | null> = xs.map(() => null)
    for (const r of timed) if (r.runLocation === label) values[index.get(xOf(r)) as number] = r.responseTime
    return { label, values }
  })
  const failed = failedRuns
    .map((r) => ({ x: xOf(r), location: r.runLocation, status: r.status, responseTime: typeof r.responseTime === 'number' ? r.responseTime : null }))
    .sort((a, b) => a.x - b.x)
  return { x: xs, series, failed }
}

/**
 * A check's or a group's public badge (GET /badges/{token}.svg, no key): its address and the
 * Markdown for a README, Rotate and Revoke; or Create when it has none. `origin` is the
 * dashboard's own; the forms post to /dashboard/{checks|groups}/{id}/badge-token.
 */
export function publicBadgeSection(
  session: WebSession,
  subject: { kind: 'checks' | 'groups'; id: string; name: string },
  token: { path?: string } | undefined,
  origin: string,
  csrf: string,
): string {
  const form = (action: string, label: string) =>
    `<form class="inline" method="post" action="/dashboard/${subject.kind}/${encodeURIComponent(subject.id)}/badge-token">${csrf}<input type="hidden" name="action" value="${action}"><button type="submit">${label}</button></form>`
  const url = token?.path ? `${origin}${token.path}` : undefined
  return `<h2 id="public-badge">Public badge</h2>
${
  url
    ? `<p><img src="${esc(token!.path)}" alt="public badge of ${esc(subject.name)}" height="20"> <code data-public-badge>${esc(url)}</code></p>
<p class="muted">Anyone with this address sees the badge, no key needed: for a README, <code data-markdown>![${esc(subject.name)}](${esc(url)})</code>. Rotate gives a new address and ends this one; Revoke ends it.</p>`
    : '<p class="muted">No public badge: the badge above needs a key. A public badge has an address of its own, for a README.</p>'
}
${!canWrite(session) ? '' : url ? `${form('rotate', 'Rotate')} ${form('revoke', 'Revoke')}` : form('create', 'Create public badge')}`
}

/** A time of a run, to the second. */
const runTime = (iso: string) => `<time datetime="${esc(iso)}">${esc(formatTime(iso, { seconds: true }))}</time>`

/** A heartbeat check is not run: it waits for pings, so its page says where to send them and what came. */
function heartbeatBody(c: CheckJson, finals: ResultJson[], f: Figures, head: string, publicBadge: string, errorGroups: string): string {
  const hb = (c as CheckJson & HeartbeatJson).heartbeat ?? {}
  const eventOf = (r: ResultJson) => (typeof r.result?.details?.state === 'string' ? r.result.details.state : r.status)
  const pingRow = (r: ResultJson) =>
    `<tr><td>${runTime(r.startedAt)}</td><td>${esc(eventOf(r))}</td><td>${esc(r.status)}</td><td>${esc(r.error ?? '')}</td></tr>`
  return `${head}
<h2>Ping URL</h2>
${
  hb.pingUrl
    ? `<p><code data-ping-url>${esc(hb.pingUrl)}</code></p>
<p class="muted">Send a GET or POST there (no API key) at least every ${esc(amount(hb.period, hb.periodUnit))}; a ping up to ${esc(amount(hb.grace, hb.graceUnit))} later still counts. In a job: <code>curl -fsS -m 10 --retry 3 ${esc(hb.pingUrl)}</code></p>`
    : '<p class="muted">The API answered no ping URL for this check.</p>'
}
<h2>Last 24 hours</h2>
<ul class="figures">
<li>Availability<strong data-metric="availability">${esc(f.availability)}</strong></li>
</ul>
${publicBadge}
<h2 id="recent-pings-title">Recent pings and missed periods</h2>
<div class="scroll"><table><caption class="muted">Newest first: a ping is RECEIVED, GRACE or LATE, a period that passed without one FAILING</caption><thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Error</th></tr></thead><tbody>${finals.slice(0, 20).map(pingRow).join('') || `<tr><td colspan="4">No ping yet${c.activated === false ? ' (a paused check records none)' : ''}.</td></tr>`}</tbody></table></div>
${errorGroups}`
}

function errorGroupsSection(session: WebSession, checkId: string, errorGroups: ErrorGroupJson[], csrf: string): string {
  const groupRow = (g: ErrorGroupJson) => {
    const archived = g.archiveForEver === true || g.archivedUntilNextEvent
    return `<tr data-error-group-id="${esc(g.id)}" data-archived="${archived}"><td>${esc(g.cleanedErrorMessage)}</td><td>${runTime(g.firstSeen)}</td><td>${runTime(g.lastSeen)}</td><td>${
      archived
        ? 'Archived'
        : !canWrite(session)
          ? 'Not archived'
          : `<form class="inline" method="post" action="/dashboard/error-groups/${encodeURIComponent(g.id)}/archive">${csrf}<input type="hidden" name="checkId" value="${esc(checkId)}"><button type="submit" aria-label="Archive error: ${esc(g.cleanedErrorMessage)}">Archive</button></form>`
    }</td></tr>`
  }
  return `<h2>Error groups</h2>
${errorGroups.length === 0 ? '<p class="muted">No errors recorded.</p>' : `<div class="scroll"><table><thead><tr><th scope="col">Error</th><th scope="col">First seen</th><th scope="col">Last seen</th><th scope="col">Archive</th></tr></thead><tbody>${errorGroups.map(groupRow).join('')}</tbody></table></div>`}`
}

/** What a page that refreshes itself is given: the clock and its address's query (`refresh`). */
export interface PageContext {
  now: number
  query: Record<string, unknown>
  origin?: string
}

export async function checkPage(api: Api, session: WebSession, id: string, page: PageContext): Promise<{ status: number; html: string }> {
  const check = await api('GET', `/v1/checks/${encodeURIComponent(id)}`)
  if (check.status !== 200) return { status: 404, html: messagePage(session, 'Check not found', `The API has no check ${id}.`) }
  const c = check.json as CheckJson
  const refresh = refreshSeconds(page.query.refresh)
  const [status, results, groups, f, token, group, labelOf] = await Promise.all([
    api('GET', `/v1/check-statuses/${encodeURIComponent(id)}`),
    api('GET', `/v1/check-results/${encodeURIComponent(id)}?limit=100&resultType=FINAL`),
    api('GET', `/v1/error-groups/checks/${encodeURIComponent(id)}?limit=100`),
    figures(api, c),
    api('GET', `/v1/badges/checks/${encodeURIComponent(id)}/token`),
    typeof c.groupId === 'number' ? api('GET', `/v1/check-groups/${c.groupId}`) : undefined,
    locationLabels(api),
  ])
  const statusJson: StatusJson | undefined = status.status === 200 ? status.json : undefined
  const state = stateOf(statusJson)
  const finals: ResultJson[] = Array.isArray(results.json) ? results.json : []
  const sessions = [...new Set(finals.map((r) => r.checkSessionId).filter((s): s is string => !!s))].slice(0, 10)
  const csrf = `<input type="hidden" name="csrf" value="${esc(session.csrf)}">`
  const resultRow = (r: ResultJson) =>
    `<tr${FAILED_STATUSES.has(r.status) ? ' class="failed-run"' : ''}><td>${runTime(r.startedAt)}</td><td data-run-location>${labelOf(r.runLocation)}</td><td><a href="/dashboard/results/${encodeURIComponent(id)}/${encodeURIComponent(r.id)}">${esc(r.status)}</a></td><td>${r.responseTime === null ? '–' : `${Math.round(r.responseTime)} ms`}</td><td>${esc(r.error ?? '')}</td></tr>`
  const resultTable = (rows: ResultJson[], caption: string) =>
    `<div class="scroll"><table><caption class="muted">${caption}</caption><thead><tr><th scope="col">Started</th><th scope="col">Location</th><th scope="col">Status</th><th scope="col">Response time</th><th scope="col">Error</th></tr></thead><tbody>${rows.map(resultRow).join('') || '<tr><td colspan="5">No results yet.</td></tr>'}</tbody></table></div>`
  const groupJson: GroupJson | undefined = group?.status === 200 ? group.json : undefined
  const head = `<h1>${esc(c.name)}</h1>
${refreshBar(refresh, page.now, `/dashboard/checks/${encodeURIComponent(id)}`, page.query)}
<p><span class="state-${state}">${state}</span>${paused(c)}${suppressed(statusJson)} · ${esc(c.checkType)} · ${badgeImg(c)}</p>
<p class="muted" data-locations>Locations: ${locationsCell(c, groupJson, undefined, labelOf)}${groupJson ? ` · in check group <a href="/dashboard/groups/${encodeURIComponent(String(groupJson.id))}">${esc(groupJson.name)}</a>` : ''}${statusJson ? ` · last run ${agoElement(statusJson.updated_at ?? statusJson.created_at, page.now)}` : ''}</p>${certificateLine(c, statusJson)}`
  const publicBadge = publicBadgeSection(
    session,
    { kind: 'checks', id: c.id, name: c.name },
    token.status === 200 ? token.json : undefined,
    page.origin ?? '',
    csrf,
  )
  const errorGroups = errorGroupsSection(session, id, Array.isArray(groups.json) ? groups.json : [], csrf)
  if (!isRunnableCheckType(c.checkType))
    return { status: 200, html: layout(c.name, heartbeatBody(c, finals, f, head, publicBadge, errorGroups), session, refreshHead(refresh)) }
  const chart = chartData(finals)
  const body = `${head}
${
  !canWrite(session)
    ? '<p class="muted">This key is read-only: Run now and Archive need a write or admin key.</p>'
    : `<form method="post" action="/dashboard/checks/${encodeURIComponent(id)}/run">${csrf}<button type="submit">Run now</button></form>`
}
<h2>Last 24 hours</h2>
<ul class="figures">
<li>Availability<strong data-metric="availability">${esc(f.availability)}</strong></li>
<li>p50 response time<strong data-metric="p50">${esc(f.p50)}</strong></li>
<li>p95 response time<strong data-metric="p95">${esc(f.p95)}</strong></li>
</ul>
<h2 id="chart-title">Response time per location</h2>
<div id="chart" role="img" aria-labelledby="chart-title" aria-describedby="chart-failed recent-runs-title"></div>
<p class="muted" id="chart-failed" data-failed-runs="${chart.failed.length}">${chart.failed.length === 0 ? 'No failed run among the last 100.' : `<span class="failed-key" aria-hidden="true"></span> Red marks: ${chart.failed.length} failed ${chart.failed.length === 1 ? 'run' : 'runs'} among the last 100.`}</p>
<script type="application/json" id="chart-data">${jsonInHtml(chart)}</script>
<h2 id="recent-sessions-title">Recent sessions</h2>
${
  sessions.length === 0
    ? '<p class="muted">No session has run this check yet: use Run now.</p>'
    : sessions
        .map((s) =>
          resultTable(
            finals.filter((r) => r.checkSessionId === s),
            `<a href="/dashboard/sessions/${encodeURIComponent(s)}">Session ${esc(s)}</a>`,
          ),
        )
        .join('')
}
<h2 id="recent-runs-title">Recent runs</h2>
${resultTable(finals.slice(0, 20), 'Newest first, final results')}
${publicBadge}
${errorGroups}`
  return {
    status: 200,
    html: layout(
      c.name,
      body,
      session,
      `<link rel="stylesheet" href="/dashboard/assets/uplot.css"><script src="/dashboard/assets/uplot.js" defer></script>${refreshHead(refresh)}`,
    ),
  }
}

export async function sessionPage(api: Api, session: WebSession, id: string): Promise<{ status: number; html: string }> {
  const answer = await api('GET', `/v1/check-sessions/${encodeURIComponent(id)}`)
  if (answer.status !== 200) return { status: 404, html: messagePage(session, 'Session not found', `The API has no check session ${id}.`) }
  const s = answer.json as {
    checkId: string
    name: string
    status: string
    startedAt: string
    stoppedAt: string | null
    timeElapsed: number
    runLocations: string[]
    results: Array<ResultJson & { resultType: string }>
  }
  const labelOf = await locationLabels(api)
  const running = s.status === 'RUNNING'
  const rows = s.results
    .map(
      (r) =>
        `<tr><td data-run-location>${labelOf(r.runLocation)}</td><td>${esc(r.resultType)}</td><td><a href="/dashboard/results/${encodeURIComponent(s.checkId)}/${encodeURIComponent(r.id)}">${esc(r.status)}</a></td><td>${r.responseTime === null ? '–' : `${Math.round(r.responseTime)} ms`}</td><td>${esc(r.error ?? '')}</td></tr>`,
    )
    .join('')
  const body = `<h1>Session of <a href="/dashboard/checks/${encodeURIComponent(s.checkId)}">${esc(s.name)}</a></h1>
<p role="status" data-session-status="${esc(s.status)}"${running ? '' : ' data-session-done="true"'}>${running ? `Running in ${s.runLocations.map(labelOf).join(', ')}… (this page reloads until it completes)` : `Completed: <strong>${esc(s.status)}</strong> in ${Math.round(s.timeElapsed)} ms`}</p>
<p class="muted">Started ${runTime(s.startedAt)}${s.stoppedAt ? `, stopped ${runTime(s.stoppedAt)}` : ''}</p>
<div class="scroll"><table><thead><tr><th scope="col">Location</th><th scope="col">Result</th><th scope="col">Status</th><th scope="col">Response time</th><th scope="col">Error</th></tr></thead><tbody>${rows || '<tr><td colspan="5">No results yet.</td></tr>'}</tbody></table></div>`
  return { status: 200, html: layout(`Session ${s.name}`, body, session, running ? '<meta http-equiv="refresh" content="1">' : '') }
}
