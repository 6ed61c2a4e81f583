/**
 * What an alert says, and to whom: the event of one recorded notification (the JSON body a
 * webhook receives, documented in the README), the deliveries a check's inline `alertChannels`
 * ask for, and the text of each channel (Slack message, email). Pure.
 */
import type { AlertChannelType, AlertNotificationKind, NewAlertDelivery } from '../store/index.js'

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
}

export function alertTitle(kind: AlertNotificationKind, checkName: string): string {
  return `${checkName} ${TITLES[kind]}`
}

/** SMS needs a provider the local server does not have: such deliveries are recorded, never attempted. */
export const SMS_NOT_DELIVERED = 'SMS is not delivered by the local server: it has no SMS provider'

type Channels = Partial<Record<'email' | 'webhook' | 'slack' | 'sms', unknown>>

const CHANNEL_TYPES: Array<[keyof Channels, AlertChannelType]> = [['webhook', 'WEBHOOK'], ['slack', 'SLACK'], ['email', 'EMAIL'], ['sms', 'SMS']]

/**
 * One delivery per channel of the check's inline `alertChannels` (webhooks, Slack, email, SMS,
 * in that order). `alertChannelSubscriptions` name account-level channels of the hosted
 * service, which the local server does not have: they deliver nothing.
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
      const sms = channelType === 'SMS'
      out.push({
        notificationId: event.id,
        checkId: event.checkId,
        alertType: event.alertType,
        channelType,
        channel: channel as Record<string, unknown>,
        event: event as unknown as Record<string, unknown>,
        status: sms ? 'NOT_DELIVERED' : 'PENDING',
        reason: sms ? SMS_NOT_DELIVERED : null,
        dueAt: now,
      })
    }
  }
  return out
}

/** Lines of facts about the run, for Slack and email. */
function facts(event: AlertEvent): Array<[string, string]> {
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

const SLACK_COLORS: Record<AlertNotificationKind, string> = {
  ALERT_FAILURE: '#d62728',
  REMINDER: '#d62728',
  ALERT_DEGRADED: '#ff9f1c',
  ALERT_RECOVERY: '#2ca02c',
  ALERT_SSL: '#ff9f1c',
  ALERT_SSL_RECOVERY: '#2ca02c',
}
const SLACK_ICONS: Record<AlertNotificationKind, string> = {
  ALERT_FAILURE: ':red_circle:',
  REMINDER: ':red_circle:',
  ALERT_DEGRADED: ':large_orange_circle:',
  ALERT_RECOVERY: ':large_green_circle:',
  ALERT_SSL: ':lock:',
  ALERT_SSL_RECOVERY: ':large_green_circle:',
}

/** An incoming-webhook message: `text` (shown in notifications) and one attachment with the facts. */
export function slackMessage(event: AlertEvent): Record<string, unknown> {
  const detail = event.alertType === 'ALERT_RECOVERY' ? '' : event.errorMessage ? `: ${event.errorMessage}` : ''
  return {
    text: `${SLACK_ICONS[event.alertType]} *${event.title}* in ${event.runLocation}${detail}`,
    attachments: [{
      color: SLACK_COLORS[event.alertType],
      fallback: event.title,
      fields: facts(event).map(([title, value]) => ({ title, value, short: title !== 'Error' && title !== 'Check' })),
      ts: Math.floor(Date.parse(event.stoppedAt) / 1000),
    }],
  }
}

export function emailMessage(event: AlertEvent): { subject: string; text: string } {
  const width = Math.max(...facts(event).map(([title]) => title.length))
  return {
    subject: `[monitors] ${event.title}`,
    text: `${event.title}.\n\n${facts(event).map(([title, value]) => `${`${title}:`.padEnd(width + 2)}${value}`).join('\n')}\n`,
  }
}
