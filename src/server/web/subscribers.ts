/**
 * A status page's email subscription, public and without script (see alerts/subscribers.ts):
 *   POST /status/{url}/subscribe          the page's form (email): a confirmation email is queued
 *   GET  /status/{url}/subscribe/confirm  ?token= (the confirmation email's link): subscribed
 *   GET  /status/{url}/unsubscribe        ?token= (every email's link): a one-button form
 *   POST /status/{url}/unsubscribe        ?token= (that form, or a mail client's one-click post): unsubscribed
 * Offered only when the server sends email (an SMTP server is configured). The answer to a
 * subscription is the same whether the address was new, waiting or already subscribed: the form
 * tells nobody who subscribes to what.
 */
import { createHash, randomBytes } from 'node:crypto'
import { isIP } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { confirmationEmail, RESEND_CONFIRMATION_MS } from '../alerts/subscribers.js'
import type { ServerNames } from '../names.js'
import type { Store } from '../store/index.js'
import type { Limiter } from '../rate-limit.js'
import { esc, sendHtml } from './html.js'
import { STATUS_PAGE_CSP } from './status-page.js'

/** The CSP of the pages with a form: the status page's, posting to this server only. */
export const FORM_CSP = STATUS_PAGE_CSP.replace("form-action 'none'", "form-action 'self'")

const emailSchema = z.string().trim().max(254).email()
const tokenSchema = z.string().regex(/^[A-Za-z0-9_-]{20,100}$/)

export interface SubscriptionOptions {
  names: ServerNames
  now: () => number
  /**
   * The sender to wake when an email is queued, and the counts that bound what is sent: the
   * confirmations to one email address (whatever the page or account: one account's pages
   * cannot take turns mailing a victim) and the subscriptions from one client address.
   * Undefined: the server sends no email, and these routes answer 404.
   */
  sending?: { wake(): void; perAddress: Limiter; perClient: Limiter }
}

/** The key of an email address in the count of confirmations: its hash, lower case (the count's table holds no address). */
const addressKey = (email: string) => `subscribe-address:${createHash('sha256').update(email.toLowerCase(), 'utf8').digest('hex')}`

function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title>` +
    `<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#1a1a1a;background:#fff}` +
    `button{font:inherit;padding:.5rem 1rem;border-radius:.375rem;border:1px solid #1a1a1a;background:#1a1a1a;color:#fff;cursor:pointer}` +
    `button:focus-visible,a:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}a{color:#1d4ed8}</style></head>` +
    `<body><main><h1>${esc(title)}</h1>${body}</main></body></html>`
  )
}

/** The origin the request came to, when it is one the emails' links may point at: the server's own names, an address, or the page's custom domain. */
function trustedOrigin(request: FastifyRequest, names: ServerNames, customDomain: string | null | undefined): string | undefined {
  const host = (request.host ?? '').toLowerCase()
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '')
  const ok = isIP(name) !== 0 || names.has(name) || (!!customDomain && customDomain.toLowerCase() === name)
  return ok ? `${request.protocol}://${request.host}` : undefined
}

const web = { config: { web: true } }

/** The status page of a subscription link; without email, no page has subscriptions: every address here is unknown. */
function pageFinder(store: Store, options: SubscriptionOptions) {
  return async (url: string) => (options.sending ? store.statusPages.findPublic({ url }) : undefined)
}

function notFound(reply: FastifyReply) {
  return sendHtml(reply, 404, page('Not found', '<p>No such status page, or this link is no longer valid.</p>'), STATUS_PAGE_CSP)
}

export function subscriptionRoutes(scope: FastifyInstance, store: Store, options: SubscriptionOptions): void {
  const find = pageFinder(store, options)

  scope.post<{ Params: { url: string } }>('/status/:url/subscribe', web, async (request, reply) => {
    const found = await find(request.params.url)
    if (!found) return notFound(reply)
    const back = `/status/${encodeURIComponent(found.record.page.url)}`
    const email = emailSchema.safeParse((request.body as Record<string, unknown> | undefined)?.email)
    if (!email.success) {
      return sendHtml(
        reply,
        400,
        page('Subscribe', `<p>That is not an email address: give one such as name@example.com.</p><p><a href="${esc(back)}">Back to the status page</a></p>`),
        STATUS_PAGE_CSP,
      )
    }
    const origin = trustedOrigin(request, options.names, found.record.page.customDomain)
    if (!origin) return sendHtml(reply, 400, page('Subscribe', "<p>Subscribe from the status page's own address.</p>"), STATUS_PAGE_CSP)
    const sending = options.sending as NonNullable<SubscriptionOptions['sending']>
    const now = options.now()
    const client = await sending.perClient.consume(`subscribe-client:${request.ip}`, now)
    if (!client.allowed) {
      const minutes = Math.ceil(client.resetSeconds / 60)
      return sendHtml(
        reply,
        429,
        page(
          'Subscribe',
          `<p>Too many subscriptions from your address: try again in ${minutes} minute${minutes === 1 ? '' : 's'}.</p><p><a href="${esc(back)}">Back to the status page</a></p>`,
        ),
        STATUS_PAGE_CSP,
        { 'retry-after': String(client.resetSeconds) },
      )
    }
    // past the address's count nothing is queued, and the answer is the same: it tells nobody who subscribes
    if ((await sending.perAddress.consume(addressKey(email.data), now)).allowed) {
      const token = randomBytes(24).toString('base64url')
      const result = await store.subscribers.subscribe(
        found.account,
        found.record.id,
        email.data,
        { token, baseUrl: `${origin}${back}` },
        now,
        RESEND_CONFIRMATION_MS,
        (subscriber) => confirmationEmail(found.record.page.name, subscriber),
      )
      if (result?.sent) sending.wake()
    }
    return sendHtml(
      reply,
      200,
      page(
        'Check your inbox',
        `<p>If ${esc(email.data)} can be subscribed to ${esc(found.record.page.name)}, an email with a confirmation link is on its way. ` +
          `Nothing else is sent until you follow it.</p><p><a href="${esc(back)}">Back to the status page</a></p>`,
      ),
      STATUS_PAGE_CSP,
    )
  })

  scope.get<{ Params: { url: string }; Querystring: { token?: string } }>('/status/:url/subscribe/confirm', web, async (request, reply) => {
    const found = await find(request.params.url)
    const token = tokenSchema.safeParse(request.query.token)
    if (!found || !token.success) return notFound(reply)
    const subscriber = await store.subscribers.confirm(found.record.id, token.data, options.now())
    if (!subscriber) return notFound(reply)
    const back = `/status/${encodeURIComponent(found.record.page.url)}`
    return sendHtml(
      reply,
      200,
      page(
        'Subscribed',
        `<p>${esc(subscriber.email)} gets an email when an incident or maintenance concerns ${esc(found.record.page.name)}. ` +
          `Every email has a link to unsubscribe.</p><p><a href="${esc(back)}">Back to the status page</a></p>`,
      ),
      STATUS_PAGE_CSP,
    )
  })

  unsubscribeRoutes(scope, store, options)
}

/** Unsubscribing: the link shows a form (mail scanners follow links), its post unsubscribes. */
function unsubscribeRoutes(scope: FastifyInstance, store: Store, options: SubscriptionOptions): void {
  const find = pageFinder(store, options)
  scope.get<{ Params: { url: string }; Querystring: { token?: string } }>('/status/:url/unsubscribe', web, async (request, reply) => {
    const found = await find(request.params.url)
    const token = tokenSchema.safeParse(request.query.token)
    if (!found || !token.success) return notFound(reply)
    const subscriber = await store.subscribers.byToken(found.record.id, token.data)
    if (!subscriber) return sendHtml(reply, 200, page('Unsubscribed', '<p>This address gets no email from this status page.</p>'), STATUS_PAGE_CSP)
    // a form, not a change on GET: mail scanners follow links
    const action = `/status/${encodeURIComponent(found.record.page.url)}/unsubscribe?token=${encodeURIComponent(token.data)}`
    return sendHtml(
      reply,
      200,
      page(
        'Unsubscribe',
        `<form method="post" action="${esc(action)}"><p>Stop the emails of ${esc(found.record.page.name)} to ${esc(subscriber.email)}?</p>` +
          `<button type="submit">Unsubscribe</button></form>`,
      ),
      FORM_CSP,
    )
  })

  scope.post<{ Params: { url: string }; Querystring: { token?: string } }>('/status/:url/unsubscribe', web, async (request, reply) => {
    const found = await find(request.params.url)
    const token = tokenSchema.safeParse(request.query.token)
    if (!found || !token.success) return notFound(reply)
    await store.subscribers.unsubscribe(found.record.id, token.data)
    return sendHtml(reply, 200, page('Unsubscribed', `<p>No more email from ${esc(found.record.page.name)} goes to this address.</p>`), STATUS_PAGE_CSP)
  })
}
