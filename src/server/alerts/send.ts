/**
 * One attempt to deliver one alert to one channel: a webhook or Slack request (undici), or an
 * email (nodemailer over SMTP). Answers what happened; the worker decides what follows.
 */
import { request, type Dispatcher } from 'undici'
import { refusalIn } from '../../runner/targets.js'
import type { Transporter } from 'nodemailer'
import type { ClaimedAlertDelivery } from '../store/index.js'
import { emailMessage, slackMessage, SMS_NOT_DELIVERED, type AlertEvent } from './event.js'

export interface SendOutcome {
  /** the channel accepted the alert */
  delivered: boolean
  /** another attempt may succeed (network error, timeout, 408, 429, 5xx, SMTP 4xx) */
  retryable: boolean
  /** HTTP status or SMTP reply code; null when no answer came */
  statusCode: number | null
  error: string | null
  /** ms the receiver asked to wait (Retry-After), when it did */
  retryAfterMs?: number
}

export interface SendContext {
  /** aborted when the attempt times out or the server stops */
  signal: AbortSignal
  timeoutMs: number
  /** undefined: no SMTP server configured */
  mailer?: { transport: Transporter; from: string }
  userAgent: string
  /** connections under the server's private-target policy (default: undici's global one) */
  dispatcher?: Dispatcher
}

/** Why a delivery is not attempted at all (NOT_DELIVERED), or undefined. */
export function notDeliverable(delivery: ClaimedAlertDelivery, context: Pick<SendContext, 'mailer'>): string | undefined {
  if (delivery.channelType === 'EMAIL' && !context.mailer) {
    return 'no SMTP server configured: start the server with --smtp-url (or MONITORING_SMTP_URL) to send email'
  }
  if (delivery.channelType === 'SMS') return SMS_NOT_DELIVERED
  return undefined
}

interface KeyValue { key?: unknown; value?: unknown }

function pairs(list: unknown): Array<[string, string]> {
  if (!Array.isArray(list)) return []
  return (list as KeyValue[])
    .filter((p) => p && typeof p.key === 'string' && p.key !== '')
    .map((p) => [p.key as string, typeof p.value === 'string' ? p.value : String(p.value ?? '')])
}

/** The URL to call, with the channel's query parameters appended; an error text when it is not an http(s) URL. */
export function webhookUrl(channel: Record<string, unknown>): URL | string {
  let url: URL
  try {
    url = new URL(String(channel.url ?? ''))
  } catch {
    return `invalid URL "${String(channel.url ?? '')}"`
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `unsupported URL scheme ${url.protocol} (http or https)`
  for (const [key, value] of pairs(channel.queryParameters)) url.searchParams.append(key, value)
  return url
}

function retryAfter(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (value === undefined) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** Whether an HTTP status is worth another attempt: 408, 429 and 5xx are; other 4xx (and 3xx: redirects are not followed) are not. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500
}

function errorText(error: unknown, context: SendContext): string {
  if (context.signal.aborted) {
    const reason = context.signal.reason as { name?: string } | undefined
    if (reason?.name === 'TimeoutError') return `timed out after ${context.timeoutMs} ms`
    return 'stopped: the server is shutting down'
  }
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } }
  const code = e?.cause?.code ?? e?.code
  const message = e?.cause?.message ?? e?.message ?? String(error)
  return code && !message.includes(code) ? `${code}: ${message}` : message
}

async function http(url: URL, method: string, headers: Record<string, string>, body: string | undefined, context: SendContext): Promise<SendOutcome> {
  try {
    const response = await request(url, {
      method: method as 'POST',
      headers,
      body,
      signal: context.signal,
      headersTimeout: context.timeoutMs,
      bodyTimeout: context.timeoutMs,
      ...(context.dispatcher ? { dispatcher: context.dispatcher } : {}),
    })
    const text = (await response.body.text()).slice(0, 300)
    const status = response.statusCode
    if (status >= 200 && status < 300) return { delivered: true, retryable: false, statusCode: status, error: null }
    const error = `HTTP ${status}${text.trim() ? `: ${text.trim().replace(/\s+/g, ' ').slice(0, 200)}` : ''}`
    return { delivered: false, retryable: retryableStatus(status), statusCode: status, error, retryAfterMs: retryAfter(response.headers['retry-after']) }
  } catch (error) {
    // refused by the private-target policy: not sent, and it will not be later either
    const refused = refusalIn(error)
    if (refused) return { delivered: false, retryable: false, statusCode: null, error: refused.message }
    // a request that cannot be made (a header name or value HTTP does not allow) will not work later either
    const invalid = (error as { code?: string }).code === 'UND_ERR_INVALID_ARG'
    return { delivered: false, retryable: !invalid, statusCode: null, error: invalid ? `the request cannot be sent: ${(error as Error).message}` : errorText(error, context) }
  }
}

function webhook(delivery: ClaimedAlertDelivery, attempt: number, context: SendContext): Promise<SendOutcome> {
  const url = webhookUrl(delivery.channel)
  if (typeof url === 'string') return Promise.resolve({ delivered: false, retryable: false, statusCode: null, error: url })
  const method = typeof delivery.channel.method === 'string' && delivery.channel.method ? delivery.channel.method.toUpperCase() : 'POST'
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
  for (const [key, value] of pairs(delivery.channel.headers)) {
    for (const name of Object.keys(headers)) if (name.toLowerCase() === key.toLowerCase()) delete headers[name]
    headers[key] = value
  }
  return http(url, method, headers, body, context)
}

function slack(delivery: ClaimedAlertDelivery, context: SendContext): Promise<SendOutcome> {
  const url = webhookUrl({ url: delivery.channel.url })
  if (typeof url === 'string') return Promise.resolve({ delivered: false, retryable: false, statusCode: null, error: url })
  const body = JSON.stringify(slackMessage(delivery.event as unknown as AlertEvent))
  return http(url, 'POST', { 'content-type': 'application/json', 'user-agent': context.userAgent }, body, context)
}

async function email(delivery: ClaimedAlertDelivery, context: SendContext): Promise<SendOutcome> {
  const mailer = context.mailer
  if (!mailer) return { delivered: false, retryable: false, statusCode: null, error: 'no SMTP server configured' }
  const to = String(delivery.channel.address ?? '')
  const { subject, text } = emailMessage(delivery.event as unknown as AlertEvent)
  const aborted = new Promise<never>((_resolve, reject) => {
    if (context.signal.aborted) reject(context.signal.reason)
    context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true })
  })
  // settled after the race when the attempt is abandoned later: nobody waits for it then
  aborted.catch(() => undefined)
  try {
    const info = await Promise.race([
      mailer.transport.sendMail({
        from: mailer.from,
        to,
        subject,
        text,
        headers: { 'x-monitors-delivery-id': delivery.id, 'x-monitors-alert-type': delivery.alertType },
      }),
      aborted,
    ]) as { response?: string; rejected?: unknown[] }
    const code = Number(/^(\d{3})/.exec(info.response ?? '')?.[1] ?? 250)
    return { delivered: true, retryable: false, statusCode: code, error: null }
  } catch (error) {
    const e = error as { responseCode?: number; code?: string; response?: string }
    const code = typeof e?.responseCode === 'number' ? e.responseCode : null
    const message = code !== null && e.response ? e.response : errorText(error, context)
    // a permanent SMTP refusal (5xx: unknown mailbox, bad address) is not retried; 4xx and network errors are
    const retryable = code === null ? e?.code !== 'EENVELOPE' : code < 500
    return { delivered: false, retryable, statusCode: code, error: message }
  }
}

/** One attempt (1 for the first). */
export function send(delivery: ClaimedAlertDelivery, attempt: number, context: SendContext): Promise<SendOutcome> {
  switch (delivery.channelType) {
    case 'WEBHOOK':
      return webhook(delivery, attempt, context)
    case 'SLACK':
      return slack(delivery, context)
    case 'EMAIL':
      return email(delivery, context)
    default:
      return Promise.resolve({ delivered: false, retryable: false, statusCode: null, error: `${delivery.channelType} channels are not delivered` })
  }
}
