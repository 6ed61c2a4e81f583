/**
 * A PagerDuty channel (`{serviceKey, account?, serviceName?, url?}`), through the Events API v2:
 * a failure (and each reminder) triggers an alert of severity `critical`, a degraded run one of
 * severity `warning`, a recovery resolves it. The dedup key is the check's, so a check has one
 * open PagerDuty incident at a time and its recovery closes it. PagerDuty answers 202.
 */
import { pagerDutyChannelSchema } from '../../../schema/index.js'
import type { AlertNotificationKind } from '../../store/index.js'
import type { AlertEvent } from '../event.js'
import { postJson, shownUrl } from './http.js'
import { problemsOf, type AlertProvider } from './types.js'

export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue'

const SEVERITY: Record<AlertNotificationKind, 'critical' | 'warning' | null> = {
  ALERT_FAILURE: 'critical',
  REMINDER: 'critical',
  ALERT_DEGRADED: 'warning',
  ALERT_RECOVERY: null,
  ALERT_SSL: 'warning',
  ALERT_SSL_RECOVERY: null,
  ALERT_NO_AGENT: 'critical',
  ALERT_NO_AGENT_RECOVERY: null,
}

/**
 * A check's failures and its certificate are two incidents: a renewed certificate does not
 * resolve a failing check's incident, nor a recovery a certificate's.
 */
const dedupKeyOf = (event: AlertEvent) =>
  event.alertType === 'ALERT_SSL' || event.alertType === 'ALERT_SSL_RECOVERY'
    ? `monitors-check-${event.checkId}-certificate`
    : `monitors-check-${event.checkId}`

/** The Events API v2 body of one notification: `trigger` with a payload, or `resolve`. */
export function pagerDutyEvent(event: AlertEvent, routingKey: string): Record<string, unknown> {
  const dedupKey = dedupKeyOf(event)
  const severity = SEVERITY[event.alertType]
  if (severity === null) return { routing_key: routingKey, event_action: 'resolve', dedup_key: dedupKey }
  const summary = `${event.title}${event.errorMessage ? `: ${event.errorMessage}` : ''}`.slice(0, 1024)
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: dedupKey,
    client: 'monitors',
    payload: {
      summary,
      source: event.runLocation,
      severity,
      timestamp: event.stoppedAt,
      component: event.checkName,
      group: event.checkType ?? 'check',
      class: event.alertType,
      custom_details: {
        checkId: event.checkId,
        checkResultId: event.checkResultId,
        responseTime: event.responseTime,
        statusCode: event.statusCode,
        errorMessage: event.errorMessage,
        sslDaysRemaining: event.sslDaysRemaining,
        tags: event.tags,
        incidentId: event.incidentId,
      },
    },
  }
}

export const pagerDuty: AlertProvider = {
  validate: (config) => problemsOf(pagerDutyChannelSchema, config),
  notDeliverable: () => undefined,
  send: (delivery, _attempt, context) =>
    postJson(
      delivery.channel.url ?? PAGERDUTY_EVENTS_URL,
      pagerDutyEvent(delivery.event as unknown as AlertEvent, String(delivery.channel.serviceKey)),
      context,
    ),
  describe(config) {
    const url = shownUrl(config.url ?? PAGERDUTY_EVENTS_URL, true)
    const serviceName = typeof config.serviceName === 'string' ? config.serviceName : null
    const account = typeof config.account === 'string' ? config.account : null
    return { label: `PagerDuty ${JSON.stringify(serviceName ?? '')} (${url})`, shown: { account, serviceName, url } }
  },
}
