/**
 * A webhook channel (`{url, name, method, headers, queryParameters}`): an HTTP request with the
 * channel's method to its URL, its query parameters appended, its headers set (they win over
 * ours); methods with a body carry the alert event as JSON (../event.ts), GET and HEAD none.
 */
import { webhookChannelSchema } from '../../../schema/index.js'
import { httpAttempt, httpUrl, pairs, shownUrl } from './http.js'
import { problemsOf, refused, type AlertProvider } from './types.js'

function methodOf(config: Record<string, unknown>): string {
  return typeof config.method === 'string' && config.method ? config.method.toUpperCase() : 'POST'
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
    const body = method === 'GET' || method === 'HEAD' ? undefined : JSON.stringify(delivery.event)
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
