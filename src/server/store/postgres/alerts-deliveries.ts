import { randomUUID } from 'node:crypto'
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
import type { Sql } from './index.js'
import type { Clock } from '../../../runner/clock.js'

/*
 * The outbox of alert deliveries, shared by every server on the database. Rows are written in
 * the transaction that records their notification. A claim is one statement: due PENDING rows
 * are picked with FOR UPDATE SKIP LOCKED (a row another server is claiming is passed over,
 * never waited for or taken twice; a row it has just leased is seen leased) and leased in the
 * same UPDATE. Attempts, finishing and releasing act only while the owner still holds the
 * lease row (lease_owner); a sender that died leaves its lease to expire and the row is
 * claimed again.
 */

const COLUMNS = `seq, id, account_id, check_id, notification_id, alert_type, channel_type, channel, event, status, reason, attempts,
  next_attempt_at, lease_expires_at, created_at, updated_at`

const CLAIM = `
  WITH picked AS (
    SELECT seq FROM alert_deliveries
    WHERE status = 'PENDING' AND next_attempt_at <= $1 AND (lease_expires_at IS NULL OR lease_expires_at <= $1)
    ORDER BY next_attempt_at, seq
    LIMIT $2
    FOR UPDATE SKIP LOCKED)
  UPDATE alert_deliveries d SET lease_owner = $3, lease_expires_at = $4
  FROM picked
  WHERE d.seq = picked.seq
  RETURNING d.seq, d.id, d.account_id, d.check_id, d.alert_type, d.channel_type, d.channel, d.event, d.attempts, d.next_attempt_at, d.lease_expires_at`

const FILTER = `account_id = $1 AND ($2::text IS NULL OR check_id = $2) AND ($3::text IS NULL OR notification_id = $3)`

/** The filters of GET /v1/alert-notifications ($1 the account, $2 to $6 each filter, null when not asked). */
const NOTIFICATION_FILTER = `account_id = $1 AND ($2::text IS NULL OR check_id = $2)
  AND ($3::text IS NULL OR created_at >= $3) AND ($4::text IS NULL OR created_at < $4)
  AND ($5::bigint IS NULL OR id IN (SELECT notification_id FROM alert_deliveries WHERE account_id = $1 AND alert_channel_id = $5))
  AND ($6::boolean IS NULL OR $6 = EXISTS (SELECT 1 FROM alert_deliveries d
    WHERE d.notification_id = alert_notifications.id AND d.status IN ${FAILED_DELIVERY_STATUSES}))`

/** The deliveries kept, by account and status (the metrics' outbox). */
async function deliveryCounts(sql: Sql, account: string | undefined): Promise<Array<{ account: string; status: AlertDeliveryStatus; count: number }>> {
  const rows = await sql.rows<{ account: string; status: AlertDeliveryStatus; count: string | number }>(
    `SELECT account_id AS account, status, count(*) AS count
    FROM alert_deliveries WHERE ($1::text IS NULL OR account_id = $1) GROUP BY account_id, status ORDER BY account_id, status`,
    [account ?? null],
  )
  return rows.map((row) => ({ account: row.account, status: row.status, count: Number(row.count) }))
}

export function alertDeliveryRepository(sql: Sql, clock: Clock): AlertDeliveryStore {
  return { ...outboxRepository(sql, clock), counts: (account) => deliveryCounts(sql, account) }
}

/** the records of rows, with their attempts (read in one statement) */
async function records(sql: Sql, rows: DeliveryRow[]): Promise<AlertDeliveryRecord[]> {
  const attempts = new Map<number, AlertDeliveryAttempt[]>()
  if (rows.length > 0) {
    const found = await sql.rows<AttemptRow & { delivery_seq: number }>(
      `SELECT delivery_seq, attempt, started_at, duration_ms, status_code, error, outcome
      FROM alert_delivery_attempts WHERE delivery_seq = ANY($1::bigint[]) ORDER BY seq`,
      [rows.map((r) => r.seq)],
    )
    for (const row of found) {
      const list = attempts.get(row.delivery_seq)
      if (list) list.push(attemptOf(row))
      else attempts.set(row.delivery_seq, [attemptOf(row)])
    }
  }
  return rows.map((row) => deliveryOf(row, attempts.get(row.seq) ?? []))
}

function outboxRepository(sql: Sql, clock: Clock): Omit<AlertDeliveryStore, 'counts'> {
  return { ...outboxSender(sql, clock), ...outboxReads(sql) }
}

type OutboxReads = Pick<AlertDeliveryStore, 'list' | 'get' | 'notifications' | 'ofNotifications' | 'prune'>

/** The sender's side: enqueue in the recording's transaction, claim with a lease, record attempts, finish. */
function outboxSender(sql: Sql, clock: Clock): Omit<AlertDeliveryStore, 'counts' | keyof OutboxReads> {
  const isoNow = () => new Date(clock.now()).toISOString()
  return {
    enqueue: async (account, deliveries) => {
      if (deliveries.length === 0) return
      const createdAt = isoNow()
      await sql.run(
        `
        INSERT INTO alert_deliveries
          (id, account_id, check_id, notification_id, alert_type, channel_type, channel, event, status, reason, next_attempt_at, created_at, alert_channel_id)
        SELECT u.id, $1, u.check_id, u.notification_id, u.alert_type, u.channel_type, u.channel, u.event, u.status, u.reason, u.next_attempt_at, $2,
          u.alert_channel_id
        FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[], $13::bigint[])
          WITH ORDINALITY AS u(id, check_id, notification_id, alert_type, channel_type, channel, event, status, reason, next_attempt_at, alert_channel_id, n)
        ORDER BY u.n`,
        [
          account,
          createdAt,
          deliveries.map(() => randomUUID()),
          deliveries.map((d) => d.checkId),
          deliveries.map((d) => d.notificationId),
          deliveries.map((d) => d.alertType),
          deliveries.map((d) => d.channelType),
          deliveries.map((d) => JSON.stringify(d.channel)),
          deliveries.map((d) => JSON.stringify(d.event)),
          deliveries.map((d) => d.status),
          deliveries.map((d) => d.reason),
          deliveries.map((d) => (d.status === 'PENDING' ? d.dueAt : null)),
          deliveries.map((d) => channelIdOf(d.channel)),
        ],
      )
    },
    claim: async (q) => {
      const rows = await sql.rows<DeliveryRow>(CLAIM, [q.now, q.max, q.owner, q.now + q.leaseMs])
      return claimedOf(rows)
    },
    recordAttempt: (owner, id, tried, next) =>
      sql.atomic(async (tx) => {
        const [moved] = await tx.rows<{ seq: number }>(
          `UPDATE alert_deliveries
        SET status = $1, attempts = attempts + 1, next_attempt_at = $2, lease_owner = NULL, lease_expires_at = NULL, updated_at = $3
        WHERE id = $4 AND lease_owner = $5
        RETURNING seq`,
          [next.status, next.status === 'PENDING' ? next.nextAttemptAt : null, isoNow(), id, owner],
        )
        if (!moved) return false
        await tx.run(
          `INSERT INTO alert_delivery_attempts (delivery_seq, attempt, started_at, duration_ms, status_code, error, outcome)
        VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [moved.seq, tried.attempt, tried.startedAt, tried.durationMs, tried.statusCode, tried.error, tried.outcome],
        )
        return true
      }),
    finish: async (owner, id, status, reason) =>
      (await sql.run(
        `UPDATE alert_deliveries
      SET status = $1, reason = $2, next_attempt_at = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = $3
      WHERE id = $4 AND lease_owner = $5`,
        [status, reason, isoNow(), id, owner],
      )) > 0,
    release: async (owner, id) => {
      await sql.run(`UPDATE alert_deliveries SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_owner = $2`, [id, owner])
    },
  }
}

/** The reading side: the delivery log, the notifications list, and pruning. */
function outboxReads(sql: Sql): OutboxReads {
  return {
    list: async (account, query) => {
      const params = [account, query.checkId ?? null, query.notificationId ?? null]
      const rows = await sql.rows<DeliveryRow>(`SELECT ${COLUMNS} FROM alert_deliveries WHERE ${FILTER} ORDER BY seq DESC LIMIT $4 OFFSET $5`, [
        ...params,
        query.limit,
        query.offset,
      ])
      const [{ count }] = await sql.rows<{ count: number }>(`SELECT count(*) AS count FROM alert_deliveries WHERE ${FILTER}`, params)
      return { items: await records(sql, rows), total: count }
    },
    get: async (account, id) => {
      const rows = await sql.rows<DeliveryRow>(`SELECT ${COLUMNS} FROM alert_deliveries WHERE account_id = $1 AND id = $2`, [account, id])
      const [record] = await records(sql, rows)
      return record
    },
    notifications: async (account, query) => {
      const params = [account, query.checkId ?? null, query.from ?? null, query.to ?? null, query.alertChannelId ?? null, query.hasFailures ?? null]
      const rows = await sql.rows<NotificationRow>(
        `SELECT id, check_id, kind, check_run_id, created_at FROM alert_notifications
        WHERE ${NOTIFICATION_FILTER} ORDER BY seq DESC LIMIT $7 OFFSET $8`,
        [...params, query.limit, query.offset],
      )
      const [{ count }] = await sql.rows<{ count: number }>(`SELECT count(*) AS count FROM alert_notifications WHERE ${NOTIFICATION_FILTER}`, params)
      return {
        items: rows.map(notificationOf),
        total: count,
      }
    },
    ofNotifications: async (account, ids) => {
      if (ids.length === 0) return []
      const rows = await sql.rows<DeliveryRow>(
        `SELECT ${COLUMNS} FROM alert_deliveries WHERE account_id = $1 AND notification_id = ANY($2::text[]) ORDER BY seq`,
        [account, ids],
      )
      // in the order of the ids asked for, each notification's oldest first (as one read per id would answer)
      const byNotification = new Map<string, AlertDeliveryRecord[]>()
      for (const record of await records(sql, rows)) {
        const list = byNotification.get(record.notificationId)
        if (list) list.push(record)
        else byNotification.set(record.notificationId, [record])
      }
      return ids.flatMap((id) => byNotification.get(id) ?? [])
    },
    prune: (before) =>
      sql.atomic(async (tx) => {
        const deliveries = await tx.run(`DELETE FROM alert_deliveries WHERE created_at < $1 AND status <> 'PENDING'`, [before])
        await tx.run(
          `DELETE FROM alert_notifications n WHERE n.created_at < $1
        AND NOT EXISTS (SELECT 1 FROM alert_deliveries d WHERE d.notification_id = n.id)`,
          [before],
        )
        return deliveries
      }),
  }
}
