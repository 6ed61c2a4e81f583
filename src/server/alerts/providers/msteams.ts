/**
 * A Microsoft Teams channel (`{name, url}`, an incoming webhook or a Workflows "post to a
 * channel when a webhook request is received" URL; its path is its token): a POST of a message
 * with one Adaptive Card, the notification's title and a fact set.
 */
import { msTeamsChannelSchema } from '../../../schema/index.js'
import type { AlertNotificationKind } from '../../store/index.js'
import { eventFacts, type AlertEvent } from '../event.js'
import { postJson, shownUrl } from './http.js'
import { problemsOf, type AlertProvider } from './types.js'

const COLORS: Record<AlertNotificationKind, 'Attention' | 'Warning' | 'Good'> = {
  ALERT_FAILURE: 'Attention',
  REMINDER: 'Attention',
  ALERT_DEGRADED: 'Warning',
  ALERT_RECOVERY: 'Good',
  ALERT_SSL: 'Warning',
  ALERT_SSL_RECOVERY: 'Good',
  ALERT_NO_AGENT: 'Attention',
  ALERT_NO_AGENT_RECOVERY: 'Good',
}

/** The message Teams takes: `{type: "message", attachments: [{contentType: adaptive card, content}]}`. */
export function teamsMessage(event: AlertEvent): Record<string, unknown> {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: event.title, weight: 'Bolder', size: 'Medium', color: COLORS[event.alertType], wrap: true },
            { type: 'FactSet', facts: eventFacts(event).map(([title, value]) => ({ title, value })) },
          ],
        },
      },
    ],
  }
}

export const msTeams: AlertProvider = {
  validate: (config) => problemsOf(msTeamsChannelSchema, config),
  notDeliverable: () => undefined,
  send: (delivery, _attempt, context) => postJson(delivery.channel.url, teamsMessage(delivery.event as unknown as AlertEvent), context),
  describe(config) {
    const url = shownUrl(config.url, false)
    const name = typeof config.name === 'string' ? config.name : null
    return { label: `Microsoft Teams ${JSON.stringify(name ?? '')} (${url})`, shown: { name, url } }
  },
}
