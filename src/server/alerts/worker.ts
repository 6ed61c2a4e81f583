/**
 * The sender of alert deliveries, in the background of a server process. Recording a result
 * only writes deliveries into the outbox (in its transaction); this worker claims the due ones
 * with a lease, sends them (at most `concurrency` at a time), and records every attempt. A
 * failed attempt that may succeed later is retried with exponential backoff (1 s, 2 s, 4 s, …)
 * up to `maxAttempts`; a receiver's Retry-After is honoured up to a minute. Runs never wait for
 * it. Any number of server processes may run one on the same database: a delivery is held by one
 * claim at a time, and one whose sender died is claimed again when its lease ends. While the
 * database is away it goes on looking (said once in the log) and resumes by itself; an attempt
 * made meanwhile waits to be recorded, so that it is not sent twice.
 * The claiming, the slots and the stop are the leased work loop's (src/runner/run-loop.ts), with
 * the outbox as its source of work; this file holds what is the sender's own: one attempt.
 */
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { Transporter } from 'nodemailer'
import type { AlertDeliveryStatus, ClaimedAlertDelivery, Store } from '../store/index.js'
import { UserError } from '../../errors.js'
import { notDeliverable, send, type SendContext, type SendOutcome } from './providers/index.js'
import { OutageLog, untilAvailable } from '../outage.js'
import { Agent, type Dispatcher } from 'undici'
import { guardedConnector, type PrivateTargets } from '../../runner/targets.js'
import { RunLoop, type WorkSource } from '../../runner/run-loop.js'
import type { LocationAlert } from './private-locations.js'
import type { Clock } from '../../runner/clock.js'

export interface AlertDeliveryOptions {
  /** smtp:// or smtps:// URL (user and password in it when the server needs them); no email without it */
  smtpUrl?: string
  /** From address of alert emails (default monitors@<host name>) */
  smtpFrom?: string
  /** ms between looks at the outbox (default 1000); a result recorded by this process wakes the worker at once */
  pollMs?: number
  /** deliveries in flight at most (default 8) */
  concurrency?: number
  /** attempts per delivery at most (default 5) */
  maxAttempts?: number
  /** wait after the first failed attempt, doubled after each next one (default 1000 ms) */
  backoffMs?: number
  /** one attempt at most (default 10000 ms) */
  timeoutMs?: number
  /** on stop, how long attempts in flight may finish before they are abandoned (default 2000 ms) */
  shutdownGraceMs?: number
  /** finished deliveries older than this are pruned (default 30 days) */
  retentionMs?: number
  /** internal errors (default stderr) */
  log?: (line: string) => void
  /** the private-target policy of webhook and Slack deliveries (default allow; the server decides it at start) */
  privateTargets?: PrivateTargets
  /** exceptions to `deny`: addresses, CIDR ranges or address:port */
  allowedTargets?: readonly string[]
  /** told of every attempt recorded (DELIVERED, RETRY, FAILED) and every delivery finished unattempted (NOT_DELIVERED): the metrics */
  onAttempt?: (channelType: string, outcome: 'DELIVERED' | 'RETRY' | 'FAILED' | 'NOT_DELIVERED') => void
}

const MAX_RETRY_AFTER_MS = 60_000
const PRUNE_EVERY_MS = 3_600_000

/** Checks an SMTP URL given on start; the message never shows its password. */
export function checkSmtpUrl(value: string): URL {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new UserError('The SMTP URL must look like smtp://user:password@host:587 or smtps://host:465, got a text that is not a URL')
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new UserError(`The SMTP URL must start with smtp:// or smtps://, got ${url.protocol}//${url.host}`)
  }
  if (!url.hostname) throw new UserError('The SMTP URL names no host (smtp://host:port)')
  return url
}

export class AlertDeliveryWorker {
  readonly owner = `alerts:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  private readonly options: Required<Omit<AlertDeliveryOptions, 'smtpUrl' | 'smtpFrom' | 'log' | 'privateTargets' | 'allowedTargets' | 'onAttempt'>> &
    AlertDeliveryOptions
  /** connections of webhook and Slack deliveries, under the private-target policy (made at the first, closed on stop) */
  private dispatcher: Dispatcher | undefined
  private readonly smtp?: { url: URL; from: string }
  /** loaded at the first email: nodemailer costs a server that sends none its load time */
  private mailer?: Promise<{ transport: Transporter; from: string }>
  /** the sender: due deliveries claimed from the outbox with a lease */
  private readonly loop: RunLoop<ClaimedAlertDelivery>
  private stopped = true
  private lastPrune = -Infinity
  /** attempts recorded by this worker; for figures */
  attempted = 0
  private readonly outage: OutageLog

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    options: AlertDeliveryOptions = {},
  ) {
    this.options = {
      pollMs: 1000,
      concurrency: 8,
      maxAttempts: 5,
      backoffMs: 1000,
      timeoutMs: 10_000,
      shutdownGraceMs: 2000,
      retentionMs: 30 * 86_400_000,
      ...options,
    }
    if (options.smtpUrl) {
      this.smtp = { url: checkSmtpUrl(options.smtpUrl), from: options.smtpFrom ?? `monitors@${hostname() || 'localhost'}` }
    }
    this.outage = new OutageLog('alert deliveries', (line) => this.log(line))
    const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))
    this.loop = new RunLoop<ClaimedAlertDelivery>({
      source: this.outbox(),
      key: (delivery) => delivery.id,
      concurrency: this.options.concurrency,
      pollMs: this.options.pollMs,
      // the database away: looked at again every pollMs, said once
      backoffMs: () => this.options.pollMs,
      graceMs: this.options.shutdownGraceMs,
      beforeClaim: () => this.prune(),
      work: (delivery, stopping) => this.deliver(delivery, stopping),
      onClaimError: (error) => {
        if (!this.outage.failed(error)) this.log(`alert deliveries: ${describe(error)}`)
        return 'retry'
      },
      onWorkError: (delivery, error) => {
        if (!this.outage.failed(error)) this.log(`alert delivery ${delivery.id}: ${describe(error)}`)
      },
    })
  }

  /** The outbox's due deliveries as the loop's source of work (the lease outlasts an attempt: no extension). */
  private outbox(): WorkSource<ClaimedAlertDelivery> {
    const deliveries = this.store.alertDeliveries
    return {
      claim: async (max) => {
        const claimed = await deliveries.claim({ owner: this.owner, max, leaseMs: this.leaseMs, now: this.clock.now() })
        this.outage.ok()
        return claimed
      },
      // claimed while stopping: back to the outbox unattempted, for the next start
      release: (delivery) => deliveries.release(this.owner, delivery.id),
    }
  }

  private async prune(): Promise<void> {
    const now = this.clock.now()
    if (now - this.lastPrune < PRUNE_EVERY_MS) return
    this.lastPrune = now
    await this.store.alertDeliveries.prune(new Date(now - this.options.retentionMs).toISOString())
  }

  private loadMailer(): Promise<{ transport: Transporter; from: string }> | undefined {
    const smtp = this.smtp
    if (!smtp) return undefined
    this.mailer ??= import('nodemailer').then(({ createTransport }) => {
      const timeout = this.options.timeoutMs
      const transport = createTransport({ url: smtp.url.href, connectionTimeout: timeout, greetingTimeout: timeout, socketTimeout: timeout })
      return { transport, from: smtp.from }
    })
    return this.mailer
  }

  private get leaseMs(): number {
    return this.options.timeoutMs + 30_000
  }

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.loop.start()
  }

  /** Look at the outbox now (a notification was just recorded). */
  wake(): void {
    if (this.stopped) return
    this.loop.wake()
  }

  /**
   * Stops looking at the outbox; attempts in flight get `shutdownGraceMs` to finish, then are
   * abandoned: their deliveries go back to the outbox unattempted, for the next start.
   */
  async stop(): Promise<void> {
    this.stopped = true
    await this.loop.stop()
    if (this.mailer) (await this.mailer).transport.close()
    const dispatcher = this.dispatcher
    this.dispatcher = undefined
    await dispatcher?.close().catch(() => undefined)
  }

  private log(line: string): void {
    ;(this.options.log ?? ((l: string) => process.stderr.write(`${l}\n`)))(line)
  }

  /**
   * Sends a private location's notification (./private-locations.ts) to each of its channels now,
   * with the outbox's retries (backoff, Retry-After, `maxAttempts`) but kept in this process: the
   * outbox's deliveries belong to a check. A failure that is final is logged.
   */
  sendNow(alert: LocationAlert): void {
    if (this.stopped) return
    for (const record of alert.channels) {
      const delivery: ClaimedAlertDelivery = {
        id: `${alert.event.id}-${record.id}`,
        account: alert.account,
        checkId: alert.event.checkId,
        alertType: alert.alertType,
        channelType: record.channel.type,
        channel: { ...record.channel.config, alertChannelId: record.id },
        event: alert.event as unknown as Record<string, unknown>,
        attempts: 0,
        leaseExpiresAt: 0,
      }
      void this.attemptNow(delivery).catch((error: unknown) =>
        this.log(`alert delivery ${delivery.id}: ${error instanceof Error ? error.message : String(error)}`),
      )
    }
  }

  private async attemptNow(delivery: ClaimedAlertDelivery): Promise<void> {
    const mailer = delivery.channelType === 'EMAIL' ? await this.loadMailer() : undefined
    const reason = notDeliverable(delivery, { mailer })
    if (reason) return this.log(`alert delivery ${delivery.id}: not delivered: ${reason}`)
    for (let attempt = 1; !this.stopped; attempt++) {
      this.dispatcher ??= new Agent({ connect: guardedConnector(this.options) })
      const signal = AbortSignal.timeout(this.options.timeoutMs)
      const outcome = await send(delivery, attempt, {
        signal,
        timeoutMs: this.options.timeoutMs,
        mailer,
        userAgent: 'monitors-alerts/1',
        dispatcher: this.dispatcher,
      })
      const retry = !outcome.delivered && outcome.retryable && attempt < this.options.maxAttempts
      this.options.onAttempt?.(delivery.channelType, outcome.delivered ? 'DELIVERED' : retry ? 'RETRY' : 'FAILED')
      if (outcome.delivered) return
      if (!retry) return this.log(`alert delivery ${delivery.id} (${delivery.alertType}) failed: ${outcome.error ?? outcome.statusCode}`)
      const backoff = this.options.backoffMs * 2 ** (attempt - 1)
      await new Promise((resolve) => setTimeout(resolve, Math.max(backoff, Math.min(outcome.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS))).unref())
    }
  }

  private async deliver(delivery: ClaimedAlertDelivery, stopping: AbortSignal): Promise<void> {
    const deliveries = this.store.alertDeliveries
    const mailer = delivery.channelType === 'EMAIL' ? await this.loadMailer() : undefined
    const reason = notDeliverable(delivery, { mailer })
    if (reason) {
      await deliveries.finish(this.owner, delivery.id, 'NOT_DELIVERED', reason)
      this.options.onAttempt?.(delivery.channelType, 'NOT_DELIVERED')
      return
    }
    const attempt = delivery.attempts + 1
    const signal = AbortSignal.any([stopping, AbortSignal.timeout(this.options.timeoutMs)])
    this.dispatcher ??= new Agent({ connect: guardedConnector(this.options) })
    const context: SendContext = { signal, timeoutMs: this.options.timeoutMs, mailer, userAgent: 'monitors-alerts/1', dispatcher: this.dispatcher }
    const startedAt = new Date(this.clock.now())
    const began = performance.now()
    const outcome: SendOutcome = await send(delivery, attempt, context)
    const durationMs = Math.round((performance.now() - began) * 10) / 10
    if (stopping.aborted) {
      // abandoned on shutdown: not an attempt; the next start sends it
      await deliveries.release(this.owner, delivery.id)
      return
    }
    let status: AlertDeliveryStatus
    let nextAttemptAt: number | null = null
    if (outcome.delivered) status = 'DELIVERED'
    else if (outcome.retryable && attempt < this.options.maxAttempts) {
      status = 'PENDING'
      const backoff = this.options.backoffMs * 2 ** (attempt - 1)
      nextAttemptAt = this.clock.now() + Math.max(backoff, Math.min(outcome.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS))
    } else status = 'FAILED'
    this.attempted++
    this.options.onAttempt?.(delivery.channelType, status === 'PENDING' ? 'RETRY' : status === 'DELIVERED' ? 'DELIVERED' : 'FAILED')
    // sent: recorded once the database takes it, however long it is away (else it would be sent again)
    await untilAvailable(
      () =>
        deliveries.recordAttempt(
          this.owner,
          delivery.id,
          {
            attempt,
            startedAt: startedAt.toISOString(),
            durationMs,
            statusCode: outcome.statusCode,
            error: outcome.error,
            outcome: status === 'PENDING' ? 'RETRY' : status === 'DELIVERED' ? 'DELIVERED' : 'FAILED',
          },
          { status, nextAttemptAt },
        ),
      () => this.stopped,
      { outage: this.outage },
    )
    // the retry is due later: look again then, rather than at the next poll
    if (nextAttemptAt !== null && !this.stopped) {
      const wait = nextAttemptAt - this.clock.now()
      if (wait < this.options.pollMs) setTimeout(() => this.wake(), Math.max(0, wait) + 5).unref()
    }
  }
}
