/**
 * What an alert says, and to whom: the event of one recorded notification (the JSON body a
 * webhook receives, documented in docs/server.md), the deliveries a check's inline
 * `alertChannels` ask for, and the facts the channels read by people show. Pure; each channel
 * type's own message is its provider's (./providers).
 */
import type { AlertChannelRecord, AlertChannelType, AlertNotificationKind, NewAlertDelivery } from '../store/index.js'

/** The webhook payload: one notification of one check, with the run that caused it. */
export interface AlertEvent {
  /** the notification's id: the same for every channel and every retry (use it to drop duplicates) */
  id: string
  alertType: AlertNotificationKind
  /** e.g. "Shop API is failing" */
  title: string
  checkId: string
  checkName: string
  checkType: string | null
  tags: string[]
  /** the FINAL result that caused the notification (GET /v1/check-results/{checkId}/{id}) */
  checkResultId: string
  runLocation: string
  /** ms; null when nothing was measured */
  responseTime: number | null
  /** the response's status code (API checks), else null */
  statusCode: number | null
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  /** the run's first failure, readable; null when it passed */
  errorMessage: string | null
  /** days the TLS certificate has left (https API checks), else null */
  sslDaysRemaining: number | null
  startedAt: string
  stoppedAt: string
  /** when the notification was recorded */
  notifiedAt: string
  /** the incident the check's triggerIncident opened (failure) or resolved (recovery), else null */
  incidentId: string | null
}

const TITLES: Record<AlertNotificationKind, string> = {
  ALERT_FAILURE: 'is failing',
  ALERT_DEGRADED: 'is degraded',
  ALERT_RECOVERY: 'has recovered',
  REMINDER: 'is still failing',
  ALERT_SSL: 'has a certificate about to expire',
  ALERT_SSL_RECOVERY: 'has a renewed certificate',
  ALERT_NO_AGENT: 'has no live agent',
  ALERT_NO_AGENT_RECOVERY: 'has a live agent again',
}

export function alertTitle(kind: AlertNotificationKind, checkName: string): string {
  return `${checkName} ${TITLES[kind]}`
}

type Channels = Partial<Record<'email' | 'webhook' | 'slack' | 'sms', unknown>>

const CHANNEL_TYPES: Array<[keyof Channels, AlertChannelType]> = [
  ['webhook', 'WEBHOOK'],
  ['slack', 'SLACK'],
  ['email', 'EMAIL'],
  ['sms', 'SMS'],
]

/**
 * One delivery per channel of the check's inline `alertChannels` (webhooks, Slack, email, SMS,
 * in that order), each due now: the sender decides, by the channel type's provider
 * (./providers), whether and how it is delivered.
 */
export function deliveriesFor(alertChannels: unknown, event: AlertEvent, now: number): NewAlertDelivery[] {
  if (!alertChannels || typeof alertChannels !== 'object') return []
  const channels = alertChannels as Channels
  const out: NewAlertDelivery[] = []
  for (const [key, channelType] of CHANNEL_TYPES) {
    const list = channels[key]
    if (!Array.isArray(list)) continue
    for (const channel of list) {
      if (!channel || typeof channel !== 'object') continue
      out.push({
        notificationId: event.id,
        checkId: event.checkId,
        alertType: event.alertType,
        channelType,
        channel: channel as Record<string, unknown>,
        event: event as unknown as Record<string, unknown>,
        status: 'PENDING',
        reason: null,
        dueAt: now,
      })
    }
  }
  return out
}

/** The ids of the account-level channels a check subscribes to (activated, each once, in order). */
export function subscribedChannelIds(subscriptions: unknown): number[] {
  if (!Array.isArray(subscriptions)) return []
  const ids = subscriptions
    .filter(
      (s): s is { alertChannelId: number; activated?: boolean } =>
        !!s && typeof s === 'object' && typeof (s as { alertChannelId?: unknown }).alertChannelId === 'number',
    )
    .filter((s) => s.activated !== false)
    .map((s) => s.alertChannelId)
  return [...new Set(ids)]
}

/**
 * Whether a channel's settings ask for this kind of notification (a reminder is a failure; a
 * certificate alert goes to channels with sslExpiry, those whose own threshold it crossed).
 */
function wants(channel: AlertChannelRecord['channel'], kind: AlertNotificationKind): boolean {
  if (kind === 'ALERT_SSL' || kind === 'ALERT_SSL_RECOVERY') return channel.sslExpiry === true
  if (kind === 'ALERT_RECOVERY' || kind === 'ALERT_NO_AGENT_RECOVERY') return channel.sendRecovery
  if (kind === 'ALERT_DEGRADED') return channel.sendDegraded
  return channel.sendFailure
}

/**
 * One delivery per account-level channel the check subscribes to whose settings ask for this
 * kind of notification; the channel delivered to is its configuration as it is now, with its id
 * (`alertChannelId`).
 */
export function subscriptionDeliveries(channels: AlertChannelRecord[], event: AlertEvent, now: number): NewAlertDelivery[] {
  return channels
    .filter((record) => wants(record.channel, event.alertType))
    .map((record) => ({
      notificationId: event.id,
      checkId: event.checkId,
      alertType: event.alertType,
      channelType: record.channel.type,
      channel: { ...record.channel.config, alertChannelId: record.id },
      event: event as unknown as Record<string, unknown>,
      status: 'PENDING',
      reason: null,
      dueAt: now,
    }))
}

/** Lines of facts about the run, for the messages of the channels that are read by people (Slack, email, ...). */
export function eventFacts(event: AlertEvent): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['Check', `${event.checkName} (${event.checkType ?? 'check'} ${event.checkId})`],
    ['Alert', event.alertType],
    ['Location', event.runLocation],
    ['Response time', event.responseTime === null ? 'not measured' : `${Math.round(event.responseTime)} ms`],
  ]
  if (event.statusCode !== null) rows.push(['Status code', String(event.statusCode)])
  if (event.errorMessage) rows.push(['Error', event.errorMessage])
  if (event.sslDaysRemaining !== null) rows.push(['Certificate', `${event.sslDaysRemaining} days left`])
  rows.push(['Run', `${event.startedAt} to ${event.stoppedAt}`], ['Result', event.checkResultId])
  if (event.incidentId) rows.push(['Incident', event.incidentId])
  return rows
}
