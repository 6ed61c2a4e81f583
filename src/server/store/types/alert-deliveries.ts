/** Alert deliveries. (Re-exported by ../index.ts.) */
import type { AlertChannelKind } from '../../../schema/index.js'
import type { Page } from './paging.js'
import type { AlertNotificationKind, AlertNotificationRecord } from './result-state.js'

// --- alert deliveries: the outbox of notifications to send to a check's alert channels (see ../alerts)

/** The types of channel a delivery goes to: the account-level channel types (an inline channel of a check is one of them). */
export type AlertChannelType = AlertChannelKind
/**
 * PENDING: waiting for its next attempt; DELIVERED: the channel accepted it; FAILED: refused
 * for good or out of attempts; NOT_DELIVERED: never attempted (`reason` says why).
 */
export type AlertDeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED' | 'NOT_DELIVERED'

/** One delivery to write, in the transaction that records its notification. */
export interface NewAlertDelivery {
  notificationId: string
  checkId: string
  alertType: AlertNotificationKind
  channelType: AlertChannelType
  /** the channel as the check had it when the notification was recorded */
  channel: Record<string, unknown>
  /** what is delivered (see ../alerts/event.ts) */
  event: Record<string, unknown>
  /** NOT_DELIVERED: recorded as never to be attempted (with `reason`) */
  status: 'PENDING' | 'NOT_DELIVERED'
  reason: string | null
  /** ms; when the first attempt is due */
  dueAt: number
}

/** One attempt to deliver: what the channel answered, or the error. */
export interface AlertDeliveryAttempt {
  /** 1 for the first */
  attempt: number
  startedAt: string
  durationMs: number
  /** HTTP status, or the SMTP reply code; null when no answer came */
  statusCode: number | null
  error: string | null
  /** DELIVERED, RETRY (another attempt follows) or FAILED (none follows) */
  outcome: 'DELIVERED' | 'RETRY' | 'FAILED'
}

export interface AlertDeliveryRecord {
  id: string
  notificationId: string
  checkId: string
  alertType: AlertNotificationKind
  channelType: AlertChannelType
  channel: Record<string, unknown>
  event: Record<string, unknown>
  status: AlertDeliveryStatus
  reason: string | null
  /** ms; the next attempt of a PENDING delivery, else null */
  nextAttemptAt: number | null
  /** oldest first */
  attempts: AlertDeliveryAttempt[]
  created_at: string
  updated_at: string | null
}

/** A PENDING delivery claimed by one sender until `leaseExpiresAt` (ms). */
export interface ClaimedAlertDelivery {
  id: string
  account: string
  checkId: string
  alertType: AlertNotificationKind
  channelType: AlertChannelType
  channel: Record<string, unknown>
  event: Record<string, unknown>
  /** attempts made before this claim */
  attempts: number
  leaseExpiresAt: number
}

export interface AlertDeliveryQuery {
  checkId?: string
  notificationId?: string
  limit: number
  offset: number
}

/** The notifications GET /v1/alert-notifications lists: every filter given narrows them. */
export interface AlertNotificationQuery {
  /** of one check */
  checkId?: string
  /** recorded at or after this time (ISO date-time) */
  from?: string
  /** recorded before this time (ISO date-time) */
  to?: string
  /** with a delivery to this channel of the account */
  alertChannelId?: number
  /** true: a delivery of it failed (FAILED, or NOT_DELIVERED); false: none did */
  hasFailures?: boolean
  limit: number
  offset: number
}

export interface AlertDeliveryStore {
  /** writes deliveries (call it in the transaction that records their notification) */
  enqueue(account: string, deliveries: NewAlertDelivery[]): Promise<void>
  /** claims due PENDING deliveries atomically: each is held by one owner until its lease ends */
  claim(query: { owner: string; max: number; leaseMs: number; now: number }): Promise<ClaimedAlertDelivery[]>
  /**
   * Records an attempt of a delivery the owner holds and moves it on (PENDING again with the
   * next attempt's time, or finished); the lease ends. False when the claim was lost.
   */
  recordAttempt(owner: string, id: string, attempt: AlertDeliveryAttempt, next: { status: AlertDeliveryStatus; nextAttemptAt: number | null }): Promise<boolean>
  /** finishes a held delivery without an attempt (e.g. NOT_DELIVERED: no SMTP server) */
  finish(owner: string, id: string, status: AlertDeliveryStatus, reason: string): Promise<boolean>
  /** gives a held delivery back unattempted, due at once (the sender is stopping) */
  release(owner: string, id: string): Promise<void>
  /** newest first */
  list(account: string, query: AlertDeliveryQuery): Promise<Page<AlertDeliveryRecord>>
  /**
   * The deliveries kept, by account and status (the metrics' outbox depth and failures); only
   * `account`'s when given
   */
  counts(account?: string): Promise<Array<{ account: string; status: AlertDeliveryStatus; count: number }>>
  get(account: string, id: string): Promise<AlertDeliveryRecord | undefined>
  /** notifications, newest first, filtered (AlertNotificationQuery) */
  notifications(account: string, query: AlertNotificationQuery): Promise<Page<AlertNotificationRecord>>
  /** the deliveries of these notifications, oldest first */
  ofNotifications(account: string, notificationIds: string[]): Promise<AlertDeliveryRecord[]>
  /**
   * deletes finished deliveries (and their attempts) created before `before` (ISO), and the
   * notifications recorded before then that have no delivery left; answers how many deliveries
   */
  prune(before: string): Promise<number>
}

// --- end of alert deliveries ----------------------------------------------------------------------
