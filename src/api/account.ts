import type { ApiClient, Query } from './client.js'
import { ApiError, NotFoundError } from './errors.js'
import { readSlice, type ListSlice } from './paging.js'

/*
 * The account's routes as the operator's commands read and run them (monitors checks, results,
 * sessions, alerts, incidents, status-pages, env, whoami): one typed function per route, and
 * the readings of answers whose shape differs between the hosted service (the reference) and
 * this project's server. Each reads either shape; nothing here prints.
 */

const at = (...parts: string[]) => parts.map(encodeURIComponent).join('/')

/** Undefined for a 404 (a route the target does not have, a record it does not know); any other error is thrown. */
async function unlessMissing<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read()
  } catch (error) {
    if (error instanceof NotFoundError) return undefined
    throw error
  }
}

// --- who the key is

/** GET /v1/accounts/me: the reference's Account; `key` and `server` are this project's server's (docs/api.md). */
export interface AccountMe {
  id: string
  name?: string
  runtimeId?: string
  key?: { id: string; name: string | null; prefix: string; role: string }
  server?: { name: string; version: string }
}

/** The account and, where the target says it, the key's role; undefined when the target has no such route. */
export function accountMe(client: ApiClient): Promise<AccountMe | undefined> {
  return unlessMissing(async () => (await client.get<AccountMe>('/v1/accounts/me')).body)
}

// --- checks and their statuses

export interface RemoteCheck {
  id: string
  name: string
  checkType: string
  activated?: boolean
  muted?: boolean
  tags?: string[]
  frequency?: number
  locations?: string[]
  groupId?: number | null
  [field: string]: unknown
}

/** A check status (GET /v1/check-statuses). */
export interface CheckStatus {
  checkId: string
  name?: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  longestRun?: number | null
  shortestRun?: number | null
  lastRunLocation?: string | null
  lastCheckRunId?: string | null
  created_at?: string | null
  updated_at?: string | null
}

/** The reference's `status` of a check: its newest run, as GET /v1/checks?status= filters it. */
export type RunState = 'passing' | 'degraded' | 'failing'
export const RUN_STATES: readonly RunState[] = ['passing', 'failing', 'degraded']

/** passing, degraded or failing by the newest run; undefined for a check that never ran. */
export function runState(status: CheckStatus | undefined): RunState | undefined {
  if (!status) return undefined
  return status.hasFailures || status.hasErrors ? 'failing' : status.isDegraded ? 'degraded' : 'passing'
}

export async function getCheck(client: ApiClient, id: string): Promise<RemoteCheck> {
  return (await client.get<RemoteCheck>(`/v1/checks/${at(id)}`)).body
}

/** Every status of the account (GET /v1/check-statuses answers them all at once), by check id. */
export async function checkStatuses(client: ApiClient): Promise<Map<string, CheckStatus>> {
  const body = (await client.get<CheckStatus[]>('/v1/check-statuses')).body
  return new Map((Array.isArray(body) ? body : []).map((s) => [String(s.checkId), s]))
}

/** A check's status; undefined when it never ran (404 `Check status not found`). */
export function checkStatus(client: ApiClient, id: string): Promise<CheckStatus | undefined> {
  return unlessMissing(async () => (await client.get<CheckStatus>(`/v1/check-statuses/${at(id)}`)).body)
}

export function listChecks(client: ApiClient, query: Query, limit: number, keep?: (check: RemoteCheck) => boolean): Promise<ListSlice<RemoteCheck>> {
  return readSlice<RemoteCheck>(client, '/v1/checks', { query, limit, keep })
}

// --- check results

/**
 * A check result: this project's server answers `status`, `error` and the run's details in
 * `result`; the hosted service its type's result object (`apiCheckResult`, `browserCheckResult`,
 * …). The readings below take either.
 */
export interface CheckResult {
  id: string
  checkId: string
  name?: string
  checkSessionId?: string | null
  runLocation?: string
  resultType?: string
  status?: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded?: boolean | null
  responseTime?: number | null
  startedAt?: string | null
  stoppedAt?: string | null
  created_at?: string
  attempts?: number
  error?: string | null
  result?: { details?: Record<string, unknown>; assertions?: Array<{ message?: string; passed?: boolean }>; attempt?: number }
  [field: string]: unknown
}

/** The hosted service's per-type result objects, in the order a result may carry them. */
const TYPE_RESULTS = [
  'apiCheckResult',
  'browserCheckResult',
  'multiStepCheckResult',
  'playwrightCheckResult',
  'sslCheckResult',
  'tracerouteCheckResult',
  'grpcCheckResult',
  'agenticCheckResult',
] as const

function typeResult(result: CheckResult): Record<string, unknown> | undefined {
  for (const field of TYPE_RESULTS) {
    const value = result[field]
    if (value && typeof value === 'object') return value as Record<string, unknown>
  }
  return undefined
}

/** PASSED, DEGRADED or FAILED (TIMED_OUT where the server says so). */
export function resultStatus(result: CheckResult): string {
  if (typeof result.status === 'string') return result.status
  return result.hasFailures || result.hasErrors ? 'FAILED' : result.isDegraded ? 'DEGRADED' : 'PASSED'
}

const messageOf = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value
  if (value && typeof value === 'object') {
    const { message, error } = value as { message?: unknown; error?: unknown }
    if (typeof message === 'string') return message
    if (typeof error === 'string') return error
  }
  return undefined
}

/** The run's error, whole: the server's `error`, else the type result's request error or first error. */
export function resultError(result: CheckResult): string | null {
  if (typeof result.error === 'string' && result.error !== '') return result.error
  const typed = typeResult(result)
  if (!typed) return null
  if (typeof typed.requestError === 'string' && typed.requestError !== '') return typed.requestError
  const errors = Array.isArray(typed.errors) ? typed.errors.map(messageOf).filter((m): m is string => !!m) : []
  return errors.length > 0 ? errors.join('\n') : null
}

/** The details of the run as this project's server keeps them (`result.details`); undefined on the hosted service. */
export function resultDetails(result: CheckResult): Record<string, unknown> | undefined {
  const details = result.result?.details
  return details && typeof details === 'object' ? details : undefined
}

/** The run's log lines: a script's output, an API check's script logs, the hosted service's jobLog. */
export function resultLogs(result: CheckResult): string[] {
  const details = resultDetails(result)
  const lines: string[] = []
  if (typeof details?.logs === 'string') lines.push(...details.logs.split('\n'))
  for (const script of Array.isArray(details?.scripts) ? (details.scripts as Array<{ script?: string; logs?: string }>) : []) {
    if (script.logs) lines.push(...script.logs.split('\n').map((l) => `[${script.script ?? 'script'}] ${l}`))
  }
  const jobLog = typeResult(result)?.jobLog
  if (Array.isArray(jobLog)) lines.push(...jobLog.map((entry) => (typeof entry === 'string' ? entry : (messageOf(entry) ?? JSON.stringify(entry)))))
  else if (jobLog && typeof jobLog === 'object')
    for (const [name, value] of Object.entries(jobLog)) lines.push(`${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
  return lines.filter((l) => l.trim() !== '')
}

/** The phases of the run in ms (API, URL and TCP checks), with the whole `total`; undefined when the result has none. */
export function resultTimings(result: CheckResult): Record<string, number> | undefined {
  const details = resultDetails(result)
  const response = (typeResult(result)?.response ?? undefined) as { timingPhases?: unknown; timings?: unknown } | undefined
  const source = details?.timings ?? response?.timingPhases ?? response?.timings
  if (!source || typeof source !== 'object') return undefined
  const timings = Object.fromEntries(Object.entries(source).filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1])))
  return Object.keys(timings).length > 0 ? timings : undefined
}

/** The assertions that ran (API, DNS, ICMP, TCP, URL checks on this project's server), as lines. */
export function resultAssertions(result: CheckResult): Array<{ passed: boolean; message: string }> {
  const list: unknown = result.result?.assertions ?? typeResult(result)?.assertions
  return (Array.isArray(list) ? (list as Array<{ passed?: boolean; message?: string }>) : []).map((a) => ({
    passed: a.passed !== false,
    message: String(a.message ?? JSON.stringify(a)),
  }))
}

export function listResults(
  client: ApiClient,
  checkId: string,
  query: Query,
  limit: number,
  keep?: (result: CheckResult) => boolean,
): Promise<ListSlice<CheckResult>> {
  return readSlice<CheckResult>(client, `/v1/check-results/${at(checkId)}`, { query, limit, keep })
}

export async function getResult(client: ApiClient, checkId: string, resultId: string): Promise<CheckResult> {
  return (await client.get<CheckResult>(`/v1/check-results/${at(checkId, resultId)}`)).body
}

/** One file of a result (the reference's AssetManifestEntry). */
export interface Asset {
  type: string
  name: string
  url: string
  contentType?: string
  bytes?: number
}

/** The result's asset manifest (GET …/assets); none when the target has no manifest for it. */
export async function resultAssets(client: ApiClient, checkId: string, resultId: string): Promise<Asset[]> {
  const body = await unlessMissing(async () => (await client.get<{ assets?: Asset[] }>(`/v1/check-results/${at(checkId, resultId)}/assets`)).body)
  return Array.isArray(body?.assets) ? body.assets.filter((a) => typeof a?.url === 'string' && typeof a?.name === 'string') : []
}

/**
 * One asset's bytes from its URL: the target's own (sent with the key), and a redirect it
 * answers followed without the key (a signed URL elsewhere). A URL on another origin is refused:
 * the key never leaves the target.
 */
export async function downloadAsset(client: ApiClient, asset: Asset): Promise<Buffer> {
  const base = new URL(client.baseUrl)
  const url = new URL(asset.url, `${base.origin}/`)
  if (url.origin !== base.origin)
    throw new ApiError(`The asset ${asset.name} is served from ${url.origin}, not the target (${base.origin}): not downloaded with the key.`, 0, {
      method: 'GET',
      path: url.pathname,
    })
  const basePath = base.pathname.replace(/\/+$/, '')
  const path = url.pathname.startsWith(`${basePath}/`) ? url.pathname.slice(basePath.length) : url.pathname
  const query = Object.fromEntries(url.searchParams)
  const answer = await client.send<Buffer>({ method: 'GET', path, query, binary: true, anyStatus: true })
  if (answer.status < 300) return answer.body
  const location = answer.headers.location
  if (answer.status >= 300 && answer.status < 400 && typeof location === 'string') {
    const elsewhere = await fetch(new URL(location, url), { redirect: 'follow' })
    if (elsewhere.ok) return Buffer.from(await elsewhere.arrayBuffer())
    throw new ApiError(`GET ${asset.name} (redirected) failed (${elsewhere.status})`, elsewhere.status, { method: 'GET', path })
  }
  const message = (answer.body as unknown as { message?: string } | undefined)?.message
  throw new ApiError(`GET ${path} failed (${answer.status}${message ? ` ${message}` : ''})`, answer.status, { method: 'GET', path })
}

// --- error groups

export interface ErrorGroup {
  id: string
  checkId: string
  cleanedErrorMessage?: string
  rawErrorMessage?: string
  firstSeen?: string
  lastSeen?: string
  archivedUntilNextEvent?: boolean
  archiveForEver?: boolean
}

export function checkErrorGroups(client: ApiClient, checkId: string, limit: number): Promise<ListSlice<ErrorGroup>> {
  return readSlice<ErrorGroup>(client, `/v1/error-groups/checks/${at(checkId)}`, { limit })
}

// --- analytics

/** The analytics' quick ranges (the reference's `quickRange`). */
export const QUICK_RANGES = ['last24Hours', 'last7Days', 'last30Days', 'thisWeek', 'thisMonth', 'lastWeek', 'lastMonth'] as const
export type QuickRange = (typeof QUICK_RANGES)[number]

/** A check's figures over a range: the first (ungrouped) entry of its series, by metric; undefined when the target has none. */
export async function checkAnalytics(
  client: ApiClient,
  route: string,
  checkId: string,
  range: QuickRange,
  metrics: readonly string[],
): Promise<Record<string, number | null> | undefined> {
  const answer = await unlessMissing(
    async () => (await client.get<{ series?: unknown[] }>(`/v1/analytics/${route}/${at(checkId)}`, { quickRange: range, metrics: metrics.join(',') })).body,
  )
  if (!answer) return undefined
  const first = answer.series?.[0]
  const entry = (typeof first === 'string' ? JSON.parse(first) : (first ?? {})) as Record<string, unknown>
  return Object.fromEntries(metrics.map((m) => [m, typeof entry[m] === 'number' && Number.isFinite(entry[m]) ? (entry[m] as number) : null]))
}

// --- check sessions

export interface SessionResult {
  checkResultId: string
  checkId: string
  runLocation: string
  resultType: string
  status?: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded?: boolean
  responseTime?: number | null
  error?: string | null
  attempt?: number | null
}

export interface CheckSession {
  checkSessionId: string
  checkId: string
  checkType?: string
  name: string
  status: string
  startedAt?: string
  stoppedAt?: string | null
  timeElapsed?: number
  runLocations: string[]
  results: SessionResult[]
}

export async function getSession(client: ApiClient, id: string): Promise<CheckSession> {
  return (await client.get<CheckSession>(`/v1/check-sessions/${at(id)}`)).body
}

/** The longest the server holds a completion request open (maxWaitSeconds: at most 30, as the spec bounds it). */
export const HOLD_SECONDS = 30

/**
 * The session once finished, or undefined when `deadline` passes first: GET …/completion is
 * held open by the server until the session finishes or `hold` seconds pass (then a 408: ask
 * again). Such a request waits the hold and then the client's timeout for its answer. `waiting`
 * is told after each 408 (a command shows how far the session is).
 */
export async function waitForSession<T = CheckSession>(
  client: ApiClient,
  id: string,
  deadline: number,
  options: { hold?: number; waiting?: () => Promise<void> } = {},
): Promise<T | undefined> {
  for (;;) {
    const left = Math.floor((deadline - Date.now()) / 1000)
    if (left < 1) return undefined
    const hold = Math.min(options.hold ?? HOLD_SECONDS, left)
    try {
      return (
        await client.send<T>({
          method: 'GET',
          path: `/v1/check-sessions/${at(id)}/completion`,
          query: { maxWaitSeconds: hold },
          timeoutMs: hold * 1000 + client.requestTimeoutMs,
        })
      ).body
    } catch (error) {
      // not finished yet: ask again
      if (!(error instanceof ApiError) || error.status !== 408) throw error
      await options.waiting?.()
    }
  }
}

// --- alert notifications, one line per delivery

/** A delivery's outcome, in both services' words: the server's DELIVERED, FAILED, PENDING, NOT_DELIVERED; the reference's SUCCESS, FAILURE, IN_PROGRESS, RATE_LIMITED. */
export type DeliveryState = 'delivered' | 'failed' | 'pending' | 'not-delivered'
export const DELIVERY_STATES: readonly DeliveryState[] = ['delivered', 'failed', 'pending', 'not-delivered']
const STATE_OF: Record<string, DeliveryState> = {
  DELIVERED: 'delivered',
  SUCCESS: 'delivered',
  FAILED: 'failed',
  FAILURE: 'failed',
  RATE_LIMITED: 'failed',
  PENDING: 'pending',
  IN_PROGRESS: 'pending',
  NOT_DELIVERED: 'not-delivered',
}

export interface Delivery {
  id: string
  notificationId: string
  /** when it was recorded (ISO) */
  at: string | null
  checkId: string | null
  checkResultId: string | null
  alertType: string | null
  /** EMAIL, WEBHOOK, SLACK, … */
  channelType: string
  /** the account's alert channel it went to; null for a check's own channel */
  alertChannelId: number | null
  /** the check's name, where the notification says it */
  checkName: string | null
  /** where it went, as the server shows it (never a secret) */
  destination: string | null
  state: DeliveryState
  attempts: number
  /** the last error or answer: why it failed, what the channel said */
  detail: string | null
}

type LocalDelivery = {
  id: string
  channelType: string
  channel?: Record<string, unknown>
  status: string
  reason?: string | null
  created_at?: string
  attempts?: Array<{ error?: string | null; statusCode?: number | null }>
  event?: { checkName?: unknown }
}
type Notification = {
  id: string
  checkId?: string
  alertType?: string
  checkResultId?: string
  created_at?: string
  deliveries?: LocalDelivery[]
  // the reference's AlertNotification: one per channel sent to
  type?: string
  status?: string
  alertChannelId?: number
  notificationResult?: string | null
  timestamp?: string | null
  checkAlertId?: string
}

function destinationOf(channel: Record<string, unknown> | undefined): string | null {
  if (!channel) return null
  for (const field of ['url', 'address', 'name', 'number', 'serviceKey']) if (typeof channel[field] === 'string') return channel[field] as string
  return null
}

/**
 * The deliveries of one notification: this project's server lists them in it (none: the check
 * has no channel, a line that says so); the hosted service's notification is one.
 */
export function deliveriesOf(n: Notification): Delivery[] {
  const base = {
    notificationId: String(n.id),
    checkId: n.checkId ?? null,
    checkResultId: n.checkResultId ?? null,
    alertType: n.alertType ?? null,
    checkName: null,
    destination: null,
  }
  if (!Array.isArray(n.deliveries)) {
    return [
      {
        ...base,
        id: String(n.id),
        at: n.timestamp ?? n.created_at ?? null,
        channelType: String(n.type ?? 'UNKNOWN'),
        alertChannelId: typeof n.alertChannelId === 'number' ? n.alertChannelId : null,
        state: STATE_OF[String(n.status)] ?? 'pending',
        attempts: n.status === 'IN_PROGRESS' ? 0 : 1,
        detail: n.notificationResult ?? null,
      },
    ]
  }
  if (n.deliveries.length === 0) {
    return [
      {
        ...base,
        id: String(n.id),
        at: n.created_at ?? null,
        channelType: 'NONE',
        alertChannelId: null,
        state: 'not-delivered',
        attempts: 0,
        detail: 'the check has no alert channel',
      },
    ]
  }
  return n.deliveries.map((d) => {
    const last = d.attempts?.at(-1)
    const detail = d.reason ?? last?.error ?? (last?.statusCode ? `answered ${last.statusCode}` : null)
    const id = d.channel?.alertChannelId
    return {
      ...base,
      id: String(d.id),
      at: d.created_at ?? n.created_at ?? null,
      channelType: d.channelType,
      alertChannelId: typeof id === 'number' ? id : null,
      checkName: typeof d.event?.checkName === 'string' ? d.event.checkName : null,
      destination: destinationOf(d.channel),
      state: STATE_OF[d.status] ?? 'pending',
      attempts: d.attempts?.length ?? 0,
      detail,
    }
  })
}

/** The newest alert notifications (GET /v1/alert-notifications) of which `keep` holds for a delivery, and those deliveries. */
export async function listDeliveries(client: ApiClient, query: Query, limit: number, keep: (d: Delivery) => boolean): Promise<ListSlice<Delivery>> {
  const slice = await readSlice<Notification>(client, '/v1/alert-notifications', { query, limit, keep: (n) => deliveriesOf(n).some(keep) })
  return { ...slice, items: slice.items.flatMap(deliveriesOf).filter(keep) }
}

// --- incidents

export interface IncidentUpdate {
  id: string
  status: string
  description?: string
  notifySubscribers?: boolean
  created_at?: string
}

export interface Incident {
  id: string
  name: string
  severity: string
  services: Array<{ id: string; name?: string }>
  /** newest first */
  incidentUpdates: IncidentUpdate[]
  created_at?: string
  updated_at?: string | null
}

/** The status of the newest update (RESOLVED once resolved); undefined before the first one. */
export function incidentStatus(incident: Incident): string | undefined {
  const updates = Array.isArray(incident.incidentUpdates) ? [...incident.incidentUpdates] : []
  updates.sort((a, b) => Date.parse(b.created_at ?? '') - Date.parse(a.created_at ?? ''))
  return updates[0]?.status
}

export async function getIncident(client: ApiClient, id: string): Promise<Incident> {
  return (await client.get<Incident>(`/v1/incidents/${at(id)}`)).body
}

// --- status pages and variables

export interface StatusPage {
  id: string
  name: string
  url: string
  customDomain?: string | null
  cards?: Array<{ id?: string; name: string; services: Array<{ id: string; name?: string }> }>
  [field: string]: unknown
}

export interface Variable {
  key: string
  value: string
  secret?: boolean
  locked?: boolean
}
