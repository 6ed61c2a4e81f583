import type { AlertDeliveryAttempt, AlertDeliveryRecord, AlertNotificationRecord, ClaimedAlertDelivery } from './index.js'

/*
 * The rows of the alert delivery tables as both stores read them, and what they become: the
 * SQL differs per store (sqlite/alerts-deliveries.ts, postgres/alerts-deliveries.ts), the
 * records do not.
 */

export interface DeliveryRow {
  seq: number
  id: string
  account_id: string
  check_id: string
  notification_id: string
  alert_type: AlertDeliveryRecord['alertType']
  channel_type: AlertDeliveryRecord['channelType']
  channel: string
  event: string
  status: AlertDeliveryRecord['status']
  reason: string | null
  attempts: number
  next_attempt_at: number | null
  lease_expires_at: number | null
  created_at: string
  updated_at: string | null
}

export interface AttemptRow {
  attempt: number
  started_at: string
  duration_ms: number
  status_code: number | null
  error: string | null
  outcome: AlertDeliveryAttempt['outcome']
}

export interface NotificationRow {
  id: string
  check_id: string
  kind: AlertNotificationRecord['kind']
  check_run_id: string | null
  created_at: string
}

export const attemptOf = (row: AttemptRow): AlertDeliveryAttempt => ({
  attempt: row.attempt,
  startedAt: row.started_at,
  durationMs: row.duration_ms,
  statusCode: row.status_code,
  error: row.error,
  outcome: row.outcome,
})

export const notificationOf = (row: NotificationRow): AlertNotificationRecord => ({
  id: row.id,
  checkId: row.check_id,
  kind: row.kind,
  checkRunId: row.check_run_id,
  created_at: row.created_at,
})

/** A delivery as the API shows it, with its attempts (oldest first). */
export const deliveryOf = (row: DeliveryRow, attempts: AlertDeliveryAttempt[]): AlertDeliveryRecord => ({
  id: row.id,
  notificationId: row.notification_id,
  checkId: row.check_id,
  alertType: row.alert_type,
  channelType: row.channel_type,
  channel: JSON.parse(row.channel) as Record<string, unknown>,
  event: JSON.parse(row.event) as Record<string, unknown>,
  status: row.status,
  reason: row.reason,
  nextAttemptAt: row.status === 'PENDING' ? row.next_attempt_at : null,
  attempts,
  created_at: row.created_at,
  updated_at: row.updated_at,
})

/** Claimed rows as the sender takes them: the longest due first, then in order of writing. */
export const claimedOf = (rows: DeliveryRow[]): ClaimedAlertDelivery[] =>
  rows
    .sort((a, b) => (a.next_attempt_at ?? 0) - (b.next_attempt_at ?? 0) || a.seq - b.seq)
    .map((row) => ({
      id: row.id,
      account: row.account_id,
      checkId: row.check_id,
      alertType: row.alert_type,
      channelType: row.channel_type,
      channel: JSON.parse(row.channel) as Record<string, unknown>,
      event: JSON.parse(row.event) as Record<string, unknown>,
      attempts: row.attempts,
      leaseExpiresAt: row.lease_expires_at as number,
    }))

/** The account's channel a delivery goes to (its `alert_channel_id`): none for a check's inline channel. */
export const channelIdOf = (channel: Record<string, unknown>): number | null =>
  typeof channel.alertChannelId === 'number' && Number.isSafeInteger(channel.alertChannelId) ? channel.alertChannelId : null

/** The statuses of a delivery that failed: a notification has failures when one of its deliveries has one. */
export const FAILED_DELIVERY_STATUSES = "('FAILED', 'NOT_DELIVERED')"
