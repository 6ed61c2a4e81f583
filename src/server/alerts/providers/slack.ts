/**
 * A Slack channel (`{url}`, an incoming webhook; its path is its token): a POST of a message
 * with the notification's title and one attachment of facts.
 */
import { slackChannelSchema } from '../../../schema/index.js'
import type { AlertNotificationKind } from '../../store/index.js'
import { eventFacts, type AlertEvent } from '../event.js'
import { postJson, shownUrl } from './http.js'
import { problemsOf, type AlertProvider } from './types.js'

const COLORS: Record<AlertNotificationKind, string> = {
  ALERT_FAILURE: '#d62728',
  REMINDER: '#d62728',
  ALERT_DEGRADED: '#ff9f1c',
  ALERT_RECOVERY: '#2ca02c',
  ALERT_SSL: '#ff9f1c',
  ALERT_SSL_RECOVERY: '#2ca02c',
  ALERT_NO_AGENT: '#d62728',
  ALERT_NO_AGENT_RECOVERY: '#2ca02c',
}
const ICONS: Record<AlertNotificationKind, string> = {
  ALERT_FAILURE: ':red_circle:',
  REMINDER: ':red_circle:',
  ALERT_DEGRADED: ':large_orange_circle:',
  ALERT_RECOVERY: ':large_green_circle:',
  ALERT_SSL: ':lock:',
  ALERT_SSL_RECOVERY: ':large_green_circle:',
  ALERT_NO_AGENT: ':red_circle:',
  ALERT_NO_AGENT_RECOVERY: ':large_green_circle:',
}

/** An incoming-webhook message: `text` (shown in notifications) and one attachment with the facts. */
export function slackMessage(event: AlertEvent): Record<string, unknown> {
  const detail = event.alertType.endsWith('RECOVERY') ? '' : event.errorMessage ? `: ${event.errorMessage}` : ''
  return {
    text: `${ICONS[event.alertType]} *${event.title}* in ${event.runLocation}${detail}`,
    attachments: [
      {
        color: COLORS[event.alertType],
        fallback: event.title,
        fields: eventFacts(event).map(([title, value]) => ({ title, value, short: title !== 'Error' && title !== 'Check' })),
        ts: Math.floor(Date.parse(event.stoppedAt) / 1000),
      },
    ],
  }
}

export const slack: AlertProvider = {
  validate: (config) => problemsOf(slackChannelSchema, config),
  notDeliverable: () => undefined,
  send: (delivery, _attempt, context) => postJson(delivery.channel.url, slackMessage(delivery.event as unknown as AlertEvent), context),
  describe(config) {
    const url = shownUrl(config.url, false)
    return { label: `Slack ${url}`, shown: { url } }
  },
}
