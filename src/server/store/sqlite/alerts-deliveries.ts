import { randomUUID } from 'node:crypto'
import type { Db } from './migrations.js'
import type { AlertDeliveryAttempt, AlertDeliveryRecord, AlertDeliveryStatus, AlertDeliveryStore } from '../index.js'
import {
  attemptOf,
  channelIdOf,
  claimedOf,
  deliveryOf,
  FAILED_DELIVERY_STATUSES,
  notificationOf,
  type AttemptRow,
  type DeliveryRow,
  type NotificationRow,
} from '../alert-delivery-rows.js'
import type { Exec } from './index.js'
import type { Clock } from '../../../runner/clock.js'

/*
 * The outbox of alert deliveries. Rows are written in the transaction that records their
 * notification; a sender claims due PENDING rows with a lease in one UPDATE … RETURNING (two
 * processes never hold the same row), records each attempt, and the row moves on. A sender
 * that died leaves its lease to expire: the row is claimed again. Plain SQL, no JSON functions.
 */

/** The deliveries kept, by account and status (the metrics' outbox). */
function deliveryCounts(db: Db, exec: Exec): AlertDeliveryStore['counts'] {
  const counts = db.prepare(`SELECT account_id AS account, status, count(*) AS count FROM alert_deliveries
    WHERE (@account IS NULL OR account_id = @account) GROUP BY account_id, status ORDER BY account_id, status`)
  return (account) => exec(() => counts.all({ account: account ?? null }) as Array<{ account: string; status: AlertDeliveryStatus; count: number }>)
}

/** GET /v1/alert-notifications: the account's notifications, newest first, filtered (AlertNotificationQuery). */
function notificationList(db: Db, exec: Exec): AlertDeliveryStore['notifications'] {
  // the filters of GET /v1/alert-notifications, each left out when null
  const notificationFilter = `account_id = @account AND (@checkId IS NULL OR check_id = @checkId)
    AND (@from IS NULL OR created_at >= @from) AND (@to IS NULL OR created_at < @to)
    AND (@channel IS NULL OR id IN (SELECT notification_id FROM alert_deliveries WHERE account_id = @account AND alert_channel_id = @channel))
    AND (@failed IS NULL OR @failed = EXISTS (SELECT 1 FROM alert_deliveries d
      WHERE d.notification_id = alert_notifications.id AND d.status IN ${FAILED_DELIVERY_STATUSES}))`
  const notifications = db.prepare(`SELECT id, check_id, kind, check_run_id, created_at FROM alert_notifications
    WHERE ${notificationFilter} ORDER BY seq DESC LIMIT @limit OFFSET @offset`)
  const notificationCount = db.prepare(`SELECT count(*) FROM alert_notifications WHERE ${notificationFilter}`).pluck()

  return (account, query) =>
    exec(() => {
      const params = {
        account,
        checkId: query.checkId ?? null,
        from: query.from ?? null,
        to: query.to ?? null,
        channel: query.alertChannelId ?? null,
        failed: query.hasFailures === undefined ? null : query.hasFailures ? 1 : 0,
      }
      const rows = notifications.all({ ...params, limit: query.limit, offset: query.offset }) as NotificationRow[]
      return {
        items: rows.map(notificationOf),
        total: notificationCount.get(params) as number,
      }
    })
}

export function alertDeliveryRepository(db: Db, exec: Exec, clock: Clock): AlertDeliveryStore {
  return { ...outboxRepository(db, exec, clock), counts: deliveryCounts(db, exec) }
}

function outboxRepository(db: Db, exec: Exec, clock: Clock): Omit<AlertDeliveryStore, 'counts'> {
  return { ...outboxSender(db, exec, clock), ...outboxReads(db, exec), notifications: notificationList(db, exec) }
}

type OutboxReads = Pick<AlertDeliveryStore, 'list' | 'get' | 'ofNotifications' | 'prune'>

/** The sender's side: enqueue in the recording's transaction, claim with a lease, record attempts, finish. */
function outboxSender(db: Db, exec: Exec, clock: Clock): Omit<AlertDeliveryStore, 'counts' | 'notifications' | keyof OutboxReads> {
  const isoNow = () => new Date(clock.now()).toISOString()
  const insert = db.prepare(`INSERT INTO alert_deliveries
    (id, account_id, check_id, notification_id, alert_type, channel_type, channel, event, status, reason, next_attempt_at, created_at, alert_channel_id)
    VALUES (@id, @account, @checkId, @notificationId, @alertType, @channelType, @channel, @event, @status, @reason, @nextAttemptAt, @createdAt, @alertChannelId)`)
  const claim = db.prepare(`UPDATE alert_deliveries SET lease_owner = @owner, lease_expires_at = @until
    WHERE seq IN (
      SELECT seq FROM alert_deliveries
      WHERE status = 'PENDING' AND next_attempt_at <= @now AND (lease_expires_at IS NULL OR lease_expires_at <= @now)
      ORDER BY next_attempt_at, seq
      LIMIT @max)
    RETURNING seq, id, account_id, check_id, alert_type, channel_type, channel, event, attempts, next_attempt_at, lease_expires_at`)
  const move = db.prepare(`UPDATE alert_deliveries
    SET status = @status, attempts = attempts + 1, next_attempt_at = @nextAttemptAt, lease_owner = NULL, lease_expires_at = NULL, updated_at = @time
    WHERE id = @id AND lease_owner = @owner
    RETURNING seq`)
  const insertAttempt = db.prepare(`INSERT INTO alert_delivery_attempts (delivery_seq, attempt, started_at, duration_ms, status_code, error, outcome)
    VALUES (@seq, @attempt, @startedAt, @durationMs, @statusCode, @error, @outcome)`)
  const finish = db.prepare(`UPDATE alert_deliveries
    SET status = @status, reason = @reason, next_attempt_at = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = @time
    WHERE id = @id AND lease_owner = @owner`)
  const release = db.prepare(`UPDATE alert_deliveries SET lease_owner = NULL, lease_expires_at = NULL WHERE id = ? AND lease_owner = ?`)
  const enqueue = db.transaction((account: string, deliveries: Parameters<AlertDeliveryStore['enqueue']>[1]) => {
    const createdAt = isoNow()
    for (const d of deliveries) {
      insert.run({
        id: randomUUID(),
        account,
        checkId: d.checkId,
        notificationId: d.notificationId,
        alertType: d.alertType,
        channelType: d.channelType,
        channel: JSON.stringify(d.channel),
        event: JSON.stringify(d.event),
        status: d.status,
        reason: d.reason,
        nextAttemptAt: d.status === 'PENDING' ? d.dueAt : null,
        createdAt,
        alertChannelId: channelIdOf(d.channel),
      })
    }
  })

  const recordAttempt = db.transaction((owner: string, id: string, tried: AlertDeliveryAttempt, next: { status: string; nextAttemptAt: number | null }) => {
    const moved = move.get({ status: next.status, nextAttemptAt: next.status === 'PENDING' ? next.nextAttemptAt : null, time: isoNow(), id, owner }) as
      | { seq: number }
      | undefined
    if (!moved) return false
    insertAttempt.run({
      seq: moved.seq,
      attempt: tried.attempt,
      startedAt: tried.startedAt,
      durationMs: tried.durationMs,
      statusCode: tried.statusCode,
      error: tried.error,
      outcome: tried.outcome,
    })
    return true
  })

  return {
    enqueue: (account, deliveries) =>
      exec(() => {
        if (deliveries.length > 0) enqueue(account, deliveries)
      }),
    claim: (q) =>
      exec(() => {
        const rows = claim.all({ owner: q.owner, until: q.now + q.leaseMs, now: q.now, max: q.max }) as DeliveryRow[]
        return claimedOf(rows)
      }),
    recordAttempt: (owner, id, tried, next) => exec(() => recordAttempt(owner, id, tried, next)),
    finish: (owner, id, status, reason) => exec(() => finish.run({ status, reason, time: isoNow(), id, owner }).changes > 0),
    release: (owner, id) => exec(() => void release.run(id, owner)),
  }
}

/** The reading side: the delivery log of GET /v1/alert-deliveries, and pruning. */
function outboxReads(db: Db, exec: Exec): OutboxReads {
  const columns = `seq, id, account_id, check_id, notification_id, alert_type, channel_type, channel, event, status, reason, attempts,
    next_attempt_at, lease_expires_at, created_at, updated_at`
  const page = db.prepare(`SELECT ${columns} FROM alert_deliveries
    WHERE account_id = @account AND (@checkId IS NULL OR check_id = @checkId) AND (@notificationId IS NULL OR notification_id = @notificationId)
    ORDER BY seq DESC LIMIT @limit OFFSET @offset`)
  const count = db
    .prepare(`SELECT count(*) FROM alert_deliveries
    WHERE account_id = @account AND (@checkId IS NULL OR check_id = @checkId) AND (@notificationId IS NULL OR notification_id = @notificationId)`)
    .pluck()
  const byId = db.prepare(`SELECT ${columns} FROM alert_deliveries WHERE account_id = ? AND id = ?`)
  const ofNotification = db.prepare(`SELECT ${columns} FROM alert_deliveries WHERE account_id = ? AND notification_id = ? ORDER BY seq`)
  const attemptsOf = db.prepare(`SELECT attempt, started_at, duration_ms, status_code, error, outcome FROM alert_delivery_attempts
    WHERE delivery_seq = ? ORDER BY seq`)
  const prune = db.prepare(`DELETE FROM alert_deliveries WHERE created_at < ? AND status <> 'PENDING'`)
  const pruneNotifications = db.prepare(`DELETE FROM alert_notifications WHERE created_at < @before
    AND NOT EXISTS (SELECT 1 FROM alert_deliveries d WHERE d.notification_id = alert_notifications.id)`)

  const record = (row: DeliveryRow): AlertDeliveryRecord => deliveryOf(row, (attemptsOf.all(row.seq) as AttemptRow[]).map(attemptOf))

  return {
    list: (account, query) =>
      exec(() => {
        const params = { account, checkId: query.checkId ?? null, notificationId: query.notificationId ?? null }
        const rows = page.all({ ...params, limit: query.limit, offset: query.offset }) as DeliveryRow[]
        return { items: rows.map(record), total: count.get(params) as number }
      }),
    get: (account, id) =>
      exec(() => {
        const row = byId.get(account, id) as DeliveryRow | undefined
        return row && record(row)
      }),
    ofNotifications: (account, ids) => exec(() => ids.flatMap((id) => (ofNotification.all(account, id) as DeliveryRow[]).map(record))),
    prune: (before) =>
      exec(() =>
        db.transaction(() => {
          const deliveries = prune.run(before).changes
          pruneNotifications.run({ before })
          return deliveries
        })(),
      ),
  }
}
