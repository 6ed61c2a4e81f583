import { randomUUID } from 'node:crypto'
import type { ClaimedSubscriberEmail, SubscriberEmailKind, SubscriberEmailRecord, SubscriberRecord, SubscriberStore } from '../index.js'
import type { Sql } from './index.js'

interface Row {
  seq: number
  id: string
  account_id: string
  page_id: string
  email: string
  token: string
  base_url: string
  confirmed_at: number | null
  last_sent_at: number
}

const SELECT = `SELECT s.seq, s.id, s.account_id, p.id AS page_id, s.email, s.token, s.base_url, s.confirmed_at, s.last_sent_at
  FROM status_page_subscribers s JOIN status_pages p ON p.seq = s.page_seq`

const record = (row: Row): SubscriberRecord => ({
  id: row.id,
  accountId: row.account_id,
  pageId: row.page_id,
  email: row.email,
  token: row.token,
  baseUrl: row.base_url,
  confirmed: row.confirmed_at !== null,
})

const ENQUEUE = `INSERT INTO status_page_emails (subscriber_seq, kind, subject, body, status, next_attempt_at, created_at)
  SELECT seq, $2, $3, $4, 'PENDING', $5, $5 FROM status_page_subscribers WHERE id = $1`

/** A subscription: a new address gets a confirmation, one waiting gets it again once resendAfterMs has passed. */
function subscribeIn(sql: Sql): SubscriberStore['subscribe'] {
  return (account, pageId, email, fresh, now, resendAfterMs, confirmation) =>
    sql.atomic(async (tx) => {
      const [page] = await tx.rows<{ seq: number }>(`SELECT seq FROM status_pages WHERE id = $1 AND account_id = $2 FOR UPDATE`, [pageId, account])
      if (!page) return undefined
      const find = async () => (await tx.rows<Row>(`${SELECT} WHERE s.page_seq = $1 AND lower(s.email) = lower($2)`, [page.seq, email]))[0]
      let row = await find()
      if (row && row.confirmed_at !== null) return { subscriber: record(row), sent: false }
      if (row && now - Number(row.last_sent_at) < resendAfterMs) return { subscriber: record(row), sent: false }
      if (row) await tx.run(`UPDATE status_page_subscribers SET last_sent_at = $1, base_url = $2 WHERE seq = $3`, [now, fresh.baseUrl, row.seq])
      else {
        await tx.run(
          `INSERT INTO status_page_subscribers (id, account_id, page_seq, email, token, base_url, confirmed_at, last_sent_at, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8)`,
          [randomUUID(), account, page.seq, email, fresh.token, fresh.baseUrl, now, new Date(now).toISOString()],
        )
      }
      row = (await find())!
      const subscriber = record(row)
      const { subject, body } = confirmation(subscriber)
      await tx.run(ENQUEUE, [subscriber.id, 'CONFIRM', subject, body, now])
      return { subscriber, sent: true }
    })
}

export function subscriberRepository(sql: Sql): SubscriberStore {
  return {
    subscribe: subscribeIn(sql),
    confirm: async (pageId, token, now) => {
      const changed = await sql.run(
        `UPDATE status_page_subscribers SET confirmed_at = coalesce(confirmed_at, $3)
        WHERE token = $2 AND page_seq = (SELECT seq FROM status_pages WHERE id = $1)`,
        [pageId, token, now],
      )
      if (changed === 0) return undefined
      const [row] = await sql.rows<Row>(`${SELECT} WHERE p.id = $1 AND s.token = $2`, [pageId, token])
      return row && record(row)
    },
    byToken: async (pageId, token) => {
      const [row] = await sql.rows<Row>(`${SELECT} WHERE p.id = $1 AND s.token = $2`, [pageId, token])
      return row && record(row)
    },
    unsubscribe: (pageId, token) =>
      sql.atomic(async (tx) => {
        const [row] = await tx.rows<Row>(`${SELECT} WHERE p.id = $1 AND s.token = $2`, [pageId, token])
        if (!row) return false
        await tx.run(`DELETE FROM status_page_emails WHERE subscriber_seq = $1`, [row.seq])
        await tx.run(`DELETE FROM status_page_subscribers WHERE seq = $1`, [row.seq])
        return true
      }),
    confirmedOf: async (account, pageIds) => {
      if (pageIds.length === 0) return []
      const rows = await sql.rows<Row>(`${SELECT} WHERE s.account_id = $1 AND s.confirmed_at IS NOT NULL AND p.id = ANY($2::text[]) ORDER BY s.seq`, [
        account,
        pageIds,
      ])
      return rows.map(record)
    },
    enqueue: (emails, now) =>
      sql.atomic(async (tx) => {
        for (const e of emails) await tx.run(ENQUEUE, [e.subscriberId, e.kind, e.subject, e.body, now])
      }),
    claim: async (query) => {
      const rows = await sql.rows<Row & { e_seq: number; kind: SubscriberEmailKind; subject: string; body: string; attempts: number }>(
        `WITH due AS (
           SELECT seq FROM status_page_emails
           WHERE status = 'PENDING' AND next_attempt_at <= $1 AND (lease_expires_at IS NULL OR lease_expires_at <= $1)
           ORDER BY next_attempt_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED),
         leased AS (
           UPDATE status_page_emails e SET lease_owner = $3, lease_expires_at = $4 FROM due WHERE e.seq = due.seq
           RETURNING e.seq, e.subscriber_seq, e.kind, e.subject, e.body, e.attempts)
         SELECT l.seq AS e_seq, l.kind, l.subject, l.body, l.attempts, s.seq, s.id, s.account_id, p.id AS page_id, s.email, s.token, s.base_url, s.confirmed_at, s.last_sent_at
         FROM leased l JOIN status_page_subscribers s ON s.seq = l.subscriber_seq JOIN status_pages p ON p.seq = s.page_seq ORDER BY l.seq`,
        [query.now, query.max, query.owner, query.now + query.leaseMs],
      )
      return rows.map(
        (row): ClaimedSubscriberEmail => ({
          seq: Number(row.e_seq),
          to: row.email,
          kind: row.kind,
          subject: row.subject,
          body: row.body,
          attempts: row.attempts,
          subscriber: record(row),
        }),
      )
    },
    finish: async (owner, seq, next) =>
      (await sql.run(
        `UPDATE status_page_emails SET status = $3, next_attempt_at = $4, error = $5, attempts = attempts + 1,
      lease_owner = NULL, lease_expires_at = NULL WHERE seq = $1 AND lease_owner = $2`,
        [seq, owner, next.status, next.nextAttemptAt, next.error],
      )) > 0,
    release: async (owner, seq) => {
      await sql.run(`UPDATE status_page_emails SET lease_owner = NULL, lease_expires_at = NULL WHERE seq = $1 AND lease_owner = $2`, [seq, owner])
    },
    emailsOf: (account, pageId) =>
      sql.rows<SubscriberEmailRecord>(
        `SELECT s.email AS "to", e.kind, e.subject, e.body, e.status, e.attempts, e.error
      FROM status_page_emails e JOIN status_page_subscribers s ON s.seq = e.subscriber_seq JOIN status_pages p ON p.seq = s.page_seq
      WHERE p.id = $1 AND p.account_id = $2 ORDER BY e.seq`,
        [pageId, account],
      ),
  }
}
