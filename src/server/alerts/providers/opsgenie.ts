/**
 * An Opsgenie channel (`{name, apiKey, region, priority, url?}`), through the Alert API: a
 * failure (and each reminder) or a degraded run creates an alert (`POST /v2/alerts`, alias the
 * check's, so Opsgenie keeps one open alert per check), a recovery closes it
 * (`POST /v2/alerts/{alias}/close?identifierType=alias`). The key goes in `Authorization:
 * GenieKey …`. Opsgenie answers 202.
 */
import { opsgenieChannelSchema } from '../../../schema/index.js'
import type { AlertEvent } from '../event.js'
import { postJson, shownUrl } from './http.js'
import { problemsOf, type AlertProvider } from './types.js'

const BASE: Record<string, string> = { US: 'https://api.opsgenie.com', EU: 'https://api.eu.opsgenie.com' }

function baseOf(config: Record<string, unknown>): string {
  const base = typeof config.url === 'string' ? config.url : (BASE[String(config.region ?? 'US')] ?? BASE.US)
  return base.replace(/\/+$/, '')
}

/** The alias of a check's alert: the same for its failure, its reminders and its recovery. */
const aliasOf = (event: AlertEvent) =>
  // a check's certificate is an alert of its own: a renewal closes it, not the check's failure alert
  event.alertType === 'ALERT_SSL' || event.alertType === 'ALERT_SSL_RECOVERY'
    ? `monitors-check-${event.checkId}-certificate`
    : `monitors-check-${event.checkId}`

/** The request of one notification: its path under the base URL and its body. */
export function opsgenieRequest(event: AlertEvent, priority: string): { path: string; body: Record<string, unknown> } {
  const alias = aliasOf(event)
  if (event.alertType.endsWith('RECOVERY')) {
    return {
      path: `/v2/alerts/${encodeURIComponent(alias)}/close?identifierType=alias`,
      body: { source: 'monitors', note: `${event.title} in ${event.runLocation}` },
    }
  }
  return {
    path: '/v2/alerts',
    body: {
      // Opsgenie keeps 130 characters of a message
      message: event.title.slice(0, 130),
      alias,
      description: [event.errorMessage, `Location: ${event.runLocation}`, `Result: ${event.checkResultId}`].filter(Boolean).join('\n').slice(0, 15000),
      priority,
      source: 'monitors',
      entity: event.checkName,
      tags: event.tags,
      details: {
        alertType: event.alertType,
        checkId: event.checkId,
        checkType: event.checkType ?? '',
        runLocation: event.runLocation,
        responseTime: String(event.responseTime ?? ''),
        statusCode: String(event.statusCode ?? ''),
      },
    },
  }
}

export const opsgenie: AlertProvider = {
  validate: (config) => problemsOf(opsgenieChannelSchema, config),
  notDeliverable: () => undefined,
  send(delivery, _attempt, context) {
    const config = delivery.channel
    const { path, body } = opsgenieRequest(delivery.event as unknown as AlertEvent, String(config.priority ?? 'P3'))
    return postJson(`${baseOf(config)}${path}`, body, context, { authorization: `GenieKey ${String(config.apiKey)}` })
  },
  describe(config) {
    const name = typeof config.name === 'string' ? config.name : null
    const url = shownUrl(baseOf(config), true)
    return { label: `Opsgenie ${JSON.stringify(name ?? '')} (${url})`, shown: { name, region: config.region ?? 'US', priority: config.priority ?? 'P3', url } }
  },
}
