/**
 * Alerts of private locations without a live agent: a location none of whose agents claimed
 * within their heartbeat (2 × their lease) for `noAgentMs` is alerted to the account's alert
 * channels (those with sendFailure), once per outage; when an agent claims again, the recovery
 * goes to those with sendRecovery, once. The scheduler's tick sweeps, on its clock. Any number
 * of processes may sweep one database: the store's row is the compare-and-set (`noAgentSince`
 * set when still empty, `markAlerted` taken by one process only), so one alert and one recovery
 * are sent whoever sweeps.
 */
import { randomUUID } from 'node:crypto'
import type { AlertChannelRecord, AlertNotificationKind, PrivateLocationRecord, Store } from '../store/index.js'
import type { AlertEvent } from './event.js'

/** One notification of a location, to one account channel each: sent by the alert sender (AlertDeliveryWorker.sendNow). */
export interface LocationAlert {
  account: string
  alertType: AlertNotificationKind
  channels: AlertChannelRecord[]
  event: AlertEvent & { privateLocationId: string; privateLocationSlugName: string }
}

/** Minutes without a live agent before a location's alert, unless the server is told otherwise. */
export const DEFAULT_NO_AGENT_ALERT_MINUTES = 5

export interface PrivateLocationSweep {
  /** ms without a live agent before the alert */
  noAgentMs: number
  send: (alert: LocationAlert) => void
}

async function accountChannels(store: Store, account: string): Promise<AlertChannelRecord[]> {
  const out: AlertChannelRecord[] = []
  for (let offset = 0; ; offset += 100) {
    const page = await store.alertChannels.list(account, { limit: 100, offset })
    out.push(...page.items)
    if (page.items.length < 100 || out.length >= page.total) return out
  }
}

function locationEvent(location: PrivateLocationRecord, kind: AlertNotificationKind, since: number, now: number): LocationAlert['event'] {
  const { name, slugName } = location.location
  const down = kind === 'ALERT_NO_AGENT'
  const minutes = Math.round((now - since) / 60_000)
  return {
    id: randomUUID(),
    alertType: kind,
    title: down ? `Private location ${name} has no live agent` : `Private location ${name} has a live agent again`,
    checkId: location.id,
    checkName: name,
    checkType: 'PRIVATE_LOCATION',
    tags: [],
    checkResultId: '',
    runLocation: slugName,
    responseTime: null,
    statusCode: null,
    hasFailures: down,
    hasErrors: false,
    isDegraded: false,
    errorMessage: down ? `No agent of ${slugName} has claimed for ${minutes} minute${minutes === 1 ? '' : 's'}` : null,
    sslDaysRemaining: null,
    startedAt: new Date(since).toISOString(),
    stoppedAt: new Date(now).toISOString(),
    notifiedAt: new Date(now).toISOString(),
    incidentId: null,
    privateLocationId: location.id,
    privateLocationSlugName: slugName,
  }
}

async function notify(
  store: Store,
  sweep: PrivateLocationSweep,
  account: string,
  location: PrivateLocationRecord,
  kind: AlertNotificationKind,
  since: number,
  now: number,
): Promise<void> {
  const wanted = (c: AlertChannelRecord) => (kind === 'ALERT_NO_AGENT' ? c.channel.sendFailure : c.channel.sendRecovery)
  const channels = (await accountChannels(store, account)).filter(wanted)
  if (channels.length > 0) sweep.send({ account, alertType: kind, channels, event: locationEvent(location, kind, since, now) })
}

/** One sweep at `now` of every private location: their outages begun, alerted and ended. Returns the notifications sent. */
export async function sweepPrivateLocations(store: Store, now: number, sweep: PrivateLocationSweep): Promise<number> {
  const locations = await store.privateLocations.all()
  if (locations.length === 0) return 0
  const live = new Map((await store.privateLocations.load(now)).map((l) => [`${l.account}\u0000${l.slugName}`, l.agents]))
  let sent = 0
  for (const location of locations) {
    const { account, id } = location
    const agents = live.get(`${account}\u0000${location.location.slugName}`) ?? 0
    if (agents > 0) {
      if (location.noAgentSince !== null) await store.privateLocations.setNoAgentSince(account, id, null)
      // the recovery of an alerted outage: sent by the process that clears the mark
      if (location.alertedAt !== null && (await store.privateLocations.markAlerted(account, id, null))) {
        await notify(store, sweep, account, location, 'ALERT_NO_AGENT_RECOVERY', location.noAgentSince ?? location.alertedAt, now)
        sent++
      }
      continue
    }
    // the outage starts when a sweep first sees it (kept when another process saw it first)
    if (location.noAgentSince === null) {
      await store.privateLocations.setNoAgentSince(account, id, now)
      continue
    }
    if (location.alertedAt === null && now - location.noAgentSince >= sweep.noAgentMs && (await store.privateLocations.markAlerted(account, id, now))) {
      await notify(store, sweep, account, location, 'ALERT_NO_AGENT', location.noAgentSince, now)
      sent++
    }
  }
  return sent
}
