/**
 * A webhook channel (`{url, name, method, headers, queryParameters}`): an HTTP request with the
 * channel's method to its URL, its query parameters appended, its headers set (they win over
 * ours); methods with a body carry the alert event as JSON (../event.ts), or the channel's
 * `template` with the event's variables filled in; GET and HEAD carry none.
 */
import { webhookChannelSchema, type WEBHOOK_TEMPLATE_VARIABLES } from '../../../schema/index.js'
import type { AlertEvent } from '../event.js'
import { httpAttempt, httpUrl, pairs, shownUrl } from './http.js'
import { problemsOf, refused, type AlertProvider } from './types.js'

function methodOf(config: Record<string, unknown>): string {
  return typeof config.method === 'string' && config.method ? config.method.toUpperCase() : 'POST'
}

type Variable = (typeof WEBHOOK_TEMPLATE_VARIABLES)[number]

const VARIABLES: Record<Variable, (e: AlertEvent) => unknown> = {
  EVENT_ID: (e) => e.id,
  ALERT_TYPE: (e) => e.alertType,
  ALERT_TITLE: (e) => e.title,
  CHECK_ID: (e) => e.checkId,
  CHECK_NAME: (e) => e.checkName,
  CHECK_TYPE: (e) => e.checkType,
  TAGS: (e) => (Array.isArray(e.tags) ? e.tags.join(',') : ''),
  CHECK_RESULT_ID: (e) => e.checkResultId,
  RUN_LOCATION: (e) => e.runLocation,
  RESPONSE_TIME: (e) => e.responseTime,
  STATUS_CODE: (e) => e.statusCode,
  ERROR_MESSAGE: (e) => e.errorMessage,
  SSL_DAYS_REMAINING: (e) => e.sslDaysRemaining,
  STARTED_AT: (e) => e.startedAt,
  STOPPED_AT: (e) => e.stoppedAt,
  NOTIFIED_AT: (e) => e.notifiedAt,
  INCIDENT_ID: (e) => e.incidentId,
}

/**
 * A body template with the event's `{{VARIABLE}}`s filled in: a value missing is empty; in a
 * JSON body (`json`) each value is escaped as the inside of a JSON string, so that a quote or a
 * line break in an error message cannot break the document.
 */
export function renderTemplate(template: string, event: AlertEvent, json: boolean): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g, (whole, name: string) => {
    const read = VARIABLES[name as Variable]
    if (!read) return whole
    const value = read(event)
    const text = value === null || value === undefined ? '' : String(value)
    return json ? JSON.stringify(text).slice(1, -1) : text
  })
}

export const webhook: AlertProvider = {
  validate: (config) => problemsOf(webhookChannelSchema, config),
  notDeliverable: () => undefined,
  send(delivery, attempt, context) {
    const config = delivery.channel
    const url = httpUrl(config.url, pairs(config.queryParameters))
    if (typeof url === 'string') return Promise.resolve(refused(url))
    const method = methodOf(config)
    // GET and HEAD carry no body: the receiver gets the query parameters alone
    const template = typeof config.template === 'string' && config.template !== '' ? config.template : undefined
    const ownType = pairs(config.headers).find(([key]) => key.toLowerCase() === 'content-type')?.[1]
    const json = (ownType ?? 'application/json').toLowerCase().includes('json')
    const body =
      method === 'GET' || method === 'HEAD'
        ? undefined
        : template !== undefined
          ? renderTemplate(template, delivery.event as unknown as AlertEvent, json)
          : JSON.stringify(delivery.event)
    const headers: Record<string, string> = {
      'user-agent': context.userAgent,
      'x-monitors-delivery-id': delivery.id,
      'x-monitors-attempt': String(attempt),
      'x-monitors-alert-type': delivery.alertType,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    }
    // the channel's own headers win (a receiver may want another content type, or an auth header)
    for (const [key, value] of pairs(config.headers)) {
      for (const name of Object.keys(headers)) if (name.toLowerCase() === key.toLowerCase()) delete headers[name]
      headers[key] = value
    }
    return httpAttempt(url, method, headers, body, context)
  },
  describe(config) {
    const url = shownUrl(config.url, true)
    const name = typeof config.name === 'string' ? config.name : null
    return { label: `webhook ${JSON.stringify(name ?? '')} (${methodOf(config)} ${url})`, shown: { name, method: config.method ?? 'POST', url } }
  },
}
