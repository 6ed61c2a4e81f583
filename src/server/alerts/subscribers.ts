/**
 * Email subscribers of status pages: what they are sent and the sender of the outbox.
 *
 * - Double opt-in: subscribing sends a confirmation email; only its link makes the address a
 *   subscriber. Until then nothing else is sent to it, and a second subscription of the same
 *   address sends another confirmation at most every 10 minutes (so the form cannot be used to
 *   flood a mailbox).
 * - A confirmed subscriber is sent the incidents (opened, and each update) that name a service
 *   of the page, and the maintenance windows created for its services, each with a one-click
 *   unsubscribe link (and the List-Unsubscribe headers of RFC 2369 and RFC 8058).
 * - Emails wait in an outbox in the database (`status_page_emails`) and are sent by a leased
 *   loop (the same RunLoop as alert deliveries), tried up to 5 times with a growing wait; a
 *   permanent refusal (5xx) is final. Without an SMTP server nobody can subscribe.
 */
import { hostname } from 'node:os'
import { randomUUID } from 'node:crypto'
import type { Transporter } from 'nodemailer'
import { RunLoop } from '../../runner/run-loop.js'
import type { Clock } from '../../runner/clock.js'
import type { ClaimedSubscriberEmail, IncidentRecord, MaintenanceWindowRecord, Repositories, Store, SubscriberRecord } from '../store/index.js'

/** What queuing subscribers' emails reads and writes: the store, or a transaction's repositories. */
type Repos = Pick<Repositories, 'statusPages' | 'subscribers' | 'checks'>
import { windowsOfServices } from '../status-pages/state.js'
import { checkSmtpUrl } from './worker.js'

/** Another confirmation email to one address waits this long after the last one. */
export const RESEND_CONFIRMATION_MS = 10 * 60_000

export const confirmLink = (s: SubscriberRecord) => `${s.baseUrl}/subscribe/confirm?token=${encodeURIComponent(s.token)}`
export const unsubscribeLink = (s: SubscriberRecord) => `${s.baseUrl}/unsubscribe?token=${encodeURIComponent(s.token)}`

export function confirmationEmail(pageName: string, subscriber: SubscriberRecord): { subject: string; body: string } {
  return {
    subject: `Confirm your subscription to ${pageName} status`,
    body:
      `Someone (we hope you) asked for email updates from the ${pageName} status page for ${subscriber.email}.\n\n` +
      `Confirm with this link:\n${confirmLink(subscriber)}\n\n` +
      `If it was not you, ignore this email: nothing will be sent to this address.\n`,
  }
}

function footer(subscriber: SubscriberRecord): string {
  return `\n--\nYou get this because you subscribed to this status page.\nUnsubscribe: ${unsubscribeLink(subscriber)}\n`
}

export function incidentEmail(
  pageName: string,
  incident: IncidentRecord,
  subscriber: SubscriberRecord,
  update: { status: string; description: string },
): { subject: string; body: string } {
  const i = incident.incident
  const status = update.status.toLowerCase()
  return {
    subject: `[${pageName}] ${i.name}: ${status}`,
    body: `${i.name} (${String(i.severity).toLowerCase()})\n\nStatus: ${status}\n\n${update.description}\n\nStatus page: ${subscriber.baseUrl}\n${footer(subscriber)}`,
  }
}

export function maintenanceEmail(pageName: string, window: MaintenanceWindowRecord, subscriber: SubscriberRecord): { subject: string; body: string } {
  const w = window.window
  return {
    subject: `[${pageName}] Scheduled maintenance: ${w.name}`,
    body:
      `Maintenance is scheduled: ${w.name}\n\nFrom: ${w.startsAt}\nTo:   ${w.endsAt}\n` +
      `${w.repeatUnit ? `Repeats every ${w.repeatInterval ?? 1} ${String(w.repeatUnit).toLowerCase()}(s)${w.repeatEndsAt ? ` until ${w.repeatEndsAt}` : ''}\n` : ''}` +
      `\nStatus page: ${subscriber.baseUrl}\n${footer(subscriber)}`,
  }
}

/** The account's status pages, with the services their cards show. */
async function pagesOf(store: Repos, account: string): Promise<Array<{ id: string; name: string; services: Set<string> }>> {
  const pages: Array<{ id: string; name: string; services: Set<string> }> = []
  let nextId: string | undefined
  for (;;) {
    const list = await store.statusPages.list(account, { nextId, limit: 100 })
    if (!list) return pages
    for (const record of list.entries) {
      pages.push({ id: record.id, name: record.page.name, services: new Set(record.page.cards.flatMap((c) => c.services.map((s) => s.id))) })
    }
    if (!list.nextId) return pages
    nextId = list.nextId
  }
}

/**
 * Queues an incident update's email to every confirmed subscriber of the pages showing a service
 * the incident names. Called for the updates whose `notifySubscribers` is true (the spec's field;
 * a check's `triggerIncident.notifySubscribers` for the updates its incident gets).
 */
export async function notifyIncident(
  store: Repos,
  account: string,
  incident: IncidentRecord,
  update: { status: string; description: string },
  now: number,
): Promise<number> {
  const named = new Set(incident.incident.services.map((s) => s.id))
  if (named.size === 0) return 0
  const pages = (await pagesOf(store, account)).filter((p) => [...p.services].some((id) => named.has(id)))
  return queue(store, account, pages, 'INCIDENT', (page, s) => incidentEmail(page.name, incident, s, update), now)
}

/** Queues an email to every confirmed subscriber of the pages whose services the window concerns (see windowsOfServices). */
export async function notifyMaintenance(store: Repos, account: string, window: MaintenanceWindowRecord, now: number): Promise<number> {
  const pages: Array<{ id: string; name: string; services: Set<string> }> = []
  for (const page of await pagesOf(store, account)) {
    if ((await windowsOfServices(store, account, page.services, [window])).length > 0) pages.push(page)
  }
  return queue(store, account, pages, 'MAINTENANCE', (page, s) => maintenanceEmail(page.name, window, s), now)
}

async function queue(
  store: Repos,
  account: string,
  pages: Array<{ id: string; name: string }>,
  kind: 'INCIDENT' | 'MAINTENANCE',
  make: (page: { id: string; name: string }, s: SubscriberRecord) => { subject: string; body: string },
  now: number,
): Promise<number> {
  if (pages.length === 0) return 0
  const byId = new Map(pages.map((p) => [p.id, p]))
  const subscribers = await store.subscribers.confirmedOf(
    account,
    pages.map((p) => p.id),
  )
  if (subscribers.length === 0) return 0
  await store.subscribers.enqueue(
    subscribers.map((s) => ({ subscriberId: s.id, kind, ...make(byId.get(s.pageId)!, s) })),
    now,
  )
  return subscribers.length
}

export interface SubscriberMailOptions {
  smtpUrl: string
  smtpFrom?: string
  /** ms between looks at the outbox; default 1000 */
  pollMs?: number
  /** attempts of one email; default 5 */
  maxAttempts?: number
  /** first wait before another attempt, doubled each time; default 5000 ms */
  backoffMs?: number
  timeoutMs?: number
  log?: (line: string) => void
  /** the server's clock */
  clock: Clock
}

/** Sends the outbox of subscriber emails through the server's SMTP server. */
export class SubscriberMailer {
  readonly owner = `subscribers:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  private readonly loop: RunLoop<ClaimedSubscriberEmail>
  private readonly smtp: { url: URL; from: string }
  private transport?: Promise<Transporter>
  private readonly options: Required<Omit<SubscriberMailOptions, 'smtpFrom' | 'log'>> & SubscriberMailOptions

  constructor(
    private readonly store: Store,
    options: SubscriberMailOptions,
  ) {
    this.options = { pollMs: 1000, maxAttempts: 5, backoffMs: 5000, timeoutMs: 10_000, ...options }
    this.smtp = { url: checkSmtpUrl(options.smtpUrl), from: options.smtpFrom ?? `monitors@${hostname() || 'localhost'}` }
    const emails = store.subscribers
    this.loop = new RunLoop<ClaimedSubscriberEmail>({
      source: {
        claim: (max) => emails.claim({ owner: this.owner, max, leaseMs: this.options.timeoutMs + 30_000, now: this.options.clock.now() }),
        release: (email) => emails.release(this.owner, email.seq),
      },
      key: (email) => String(email.seq),
      concurrency: 4,
      pollMs: this.options.pollMs,
      backoffMs: () => this.options.pollMs,
      graceMs: 2000,
      work: (email) => this.send(email),
      onClaimError: (error) => {
        this.log(`subscriber emails: ${error instanceof Error ? error.message : String(error)}`)
        return 'retry'
      },
    })
  }

  start(): void {
    this.loop.start()
  }

  /** Look at the outbox now (an email was just queued). */
  wake(): void {
    this.loop.wake()
  }

  async stop(): Promise<void> {
    await this.loop.stop()
    if (this.transport) (await this.transport).close()
  }

  private log(line: string): void {
    ;(this.options.log ?? ((l: string) => process.stderr.write(`${l}\n`)))(line)
  }

  private async send(email: ClaimedSubscriberEmail): Promise<void> {
    this.transport ??= import('nodemailer').then(({ createTransport }) =>
      createTransport({
        url: this.smtp.url.href,
        connectionTimeout: this.options.timeoutMs,
        greetingTimeout: this.options.timeoutMs,
        socketTimeout: this.options.timeoutMs,
      }),
    )
    const transport = await this.transport
    const unsubscribe = unsubscribeLink(email.subscriber)
    try {
      await transport.sendMail({
        from: this.smtp.from,
        to: email.to,
        subject: email.subject,
        text: email.body,
        headers: email.kind === 'CONFIRM' ? {} : { 'List-Unsubscribe': `<${unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      })
      await this.store.subscribers.finish(this.owner, email.seq, { status: 'SENT', nextAttemptAt: null, error: null })
    } catch (error) {
      const e = error as { responseCode?: number; response?: string; message?: string }
      const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500
      const attempt = email.attempts + 1
      const last = permanent || attempt >= this.options.maxAttempts
      const message = e.response ?? e.message ?? String(error)
      await this.store.subscribers.finish(this.owner, email.seq, {
        status: last ? 'FAILED' : 'PENDING',
        nextAttemptAt: last ? null : this.options.clock.now() + this.options.backoffMs * 2 ** (attempt - 1),
        error: message,
      })
    }
  }
}
