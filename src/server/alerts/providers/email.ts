/**
 * An email channel (`{address}`): a plain-text email through the server's SMTP server
 * (`--smtp-url`, nodemailer, loaded by the worker at the first email). Without an SMTP server
 * a delivery is never attempted.
 */
import { emailChannelSchema } from '../../../schema/index.js'
import { eventFacts, type AlertEvent } from '../event.js'
import { errorText } from './http.js'
import { problemsOf, refused, type AlertProvider } from './types.js'

export function emailMessage(event: AlertEvent): { subject: string; text: string } {
  const facts = eventFacts(event)
  const width = Math.max(...facts.map(([title]) => title.length))
  return {
    subject: `[monitors] ${event.title}`,
    text: `${event.title}.\n\n${facts.map(([title, value]) => `${`${title}:`.padEnd(width + 2)}${value}`).join('\n')}\n`,
  }
}

export const email: AlertProvider = {
  validate: (config) => problemsOf(emailChannelSchema, config),
  notDeliverable: ({ mailer }) => (mailer ? undefined : 'no SMTP server configured: start the server with --smtp-url (or MONITORING_SMTP_URL) to send email'),
  async send(delivery, _attempt, context) {
    const mailer = context.mailer
    if (!mailer) return refused('no SMTP server configured')
    const to = String(delivery.channel.address ?? '')
    const { subject, text } = emailMessage(delivery.event as unknown as AlertEvent)
    const aborted = new Promise<never>((_resolve, reject) => {
      if (context.signal.aborted) reject(context.signal.reason)
      context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true })
    })
    // settled after the race when the attempt is abandoned later: nobody waits for it then
    aborted.catch(() => undefined)
    try {
      const info = (await Promise.race([
        mailer.transport.sendMail({
          from: mailer.from,
          to,
          subject,
          text,
          headers: { 'x-monitors-delivery-id': delivery.id, 'x-monitors-alert-type': delivery.alertType },
        }),
        aborted,
      ])) as { response?: string; rejected?: unknown[] }
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
  },
  describe(config) {
    const address = typeof config.address === 'string' ? config.address : null
    return { label: `email to ${address ?? '(no address)'}`, shown: { address } }
  },
}
