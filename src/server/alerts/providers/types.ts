/**
 * The interface every alert channel type implements (one file per type in this folder, listed in
 * `index.ts`): what a channel's configuration must be, one attempt to deliver one notification,
 * and how the channel is shown. The worker (../worker.ts) decides what follows an attempt.
 */
import type { Dispatcher } from 'undici'
import type { Transporter } from 'nodemailer'
import type { z } from 'zod'
import { validate, type FieldIssue } from '../../../schema/index.js'
import type { AlertChannelType, ClaimedAlertDelivery } from '../../store/index.js'

/** The types of alert channel a delivery can go to: one provider each. */
export type ChannelType = AlertChannelType

/** What one attempt came to. */
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

/** What an attempt is made with. */
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

/** A channel as messages and answers show it: never what may be secret. */
export interface ChannelDescription {
  /** one line for messages, e.g. `webhook "ops" (POST http://hooks.example/alerts)` */
  label: string
  /** the channel's configuration without its secrets (header and query values, tokens, credentials in URLs) */
  shown: Record<string, unknown>
}

export interface AlertProvider {
  /**
   * Problems of a channel's configuration (each naming the field and what is allowed); empty
   * when a delivery can be attempted with it.
   */
  validate(config: Record<string, unknown>): FieldIssue[]
  /**
   * Why a delivery to such a channel is never attempted by this server (recorded NOT_DELIVERED
   * with that reason), or undefined. `mailer` is undefined when no SMTP server is configured.
   */
  notDeliverable(context: Pick<SendContext, 'mailer'>): string | undefined
  /** One attempt (`attempt` is 1 for the first) of a delivery whose configuration validates. */
  send(delivery: ClaimedAlertDelivery, attempt: number, context: SendContext): Promise<SendOutcome>
  describe(config: Record<string, unknown>): ChannelDescription
}

/** The outcome of an attempt that is not made: refused for good. */
export const refused = (error: string): SendOutcome => ({ delivered: false, retryable: false, statusCode: null, error })

/** The problems of a configuration under a schema of src/schema (none when it parses). */
export function problemsOf(schema: z.ZodType, config: Record<string, unknown>): FieldIssue[] {
  const result = validate(schema, config)
  return result.ok ? [] : result.issues
}
