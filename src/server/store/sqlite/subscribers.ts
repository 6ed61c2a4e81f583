import { randomUUID } from 'node:crypto'
import type { Db } from './migrations.js'
import type { ClaimedSubscriberEmail, SubscriberEmailKind, SubscriberEmailRecord, SubscriberRecord, SubscriberStore } from '../index.js'
import type { Exec } from './index.js'

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

export const subscriberRecord = (row: Row): SubscriberRecord => ({
  id: row.id,
  accountId: row.account_id,
  pageId: row.page_id,
  email: row.email,
  token: row.token,
  baseUrl: row.base_url,
  confirmed: row.confirmed_at !== null,
})

/** One email of a subscriber, queued. */
const ENQUEUE_ONE = `INSERT INTO status_page_emails (subscriber_seq, kind, subject, body, status, next_attempt_at, created_at)
    SELECT seq, @kind, @subject, @body, 'PENDING', @now, @now FROM status_page_subscribers WHERE id = @subscriber`

/** A subscription: a new address gets a confirmation, one waiting gets it again once resendAfterMs has passed. */
function subscribeIn(db: Db) {
  const pageSeq = db.prepare(`SELECT seq FROM status_pages WHERE id = ? AND account_id = ?`).pluck()
  const byEmail = db.prepare(`${SELECT} WHERE s.page_seq = ? AND lower(s.email) = lower(?)`)
  const insert = db.prepare(`INSERT INTO status_page_subscribers (id, account_id, page_seq, email, token, base_url, confirmed_at, last_sent_at, created_at)
    VALUES (@id, @account, @page, @email, @token, @baseUrl, NULL, @now, @created)`)
  const touch = db.prepare(`UPDATE status_page_subscribers SET last_sent_at = ?, base_url = ? WHERE seq = ?`)
  const enqueueOne = db.prepare(ENQUEUE_ONE)
  return db.transaction(
    (
      account: string,
      pageId: string,
      email: string,
      fresh: { token: string; baseUrl: string },
      now: number,
      resendAfterMs: number,
      confirmation: (subscriber: SubscriberRecord) => { subject: string; body: string },
    ) => {
      const page = pageSeq.get(pageId, account) as number | undefined
      if (page === undefined) return undefined
      let row = byEmail.get(page, email) as Row | undefined
      if (row?.confirmed_at != null) return { subscriber: subscriberRecord(row), sent: false }
      if (row && now - row.last_sent_at < resendAfterMs) return { subscriber: subscriberRecord(row), sent: false }
      if (row) touch.run(now, fresh.baseUrl, row.seq)
      else insert.run({ id: randomUUID(), account, page, email, token: fresh.token, baseUrl: fresh.baseUrl, now, created: new Date(now).toISOString() })
      row = byEmail.get(page, email) as Row
      const subscriber = subscriberRecord(row)
      enqueueOne.run({ subscriber: subscriber.id, kind: 'CONFIRM', ...confirmation(subscriber), now })
      return { subscriber, sent: true }
    },
  )
}

export function subscriberRepository(db: Db, exec: Exec): SubscriberStore {
  const byToken = db.prepare(`${SELECT} WHERE p.id = ? AND s.token = ?`)
  const enqueueOne = db.prepare(ENQUEUE_ONE)
  const subscribe = subscribeIn(db)
  const confirm = db.prepare(`UPDATE status_page_subscribers SET confirmed_at = coalesce(confirmed_at, @now)
    WHERE token = @token AND page_seq = (SELECT seq FROM status_pages WHERE id = @page)`)
  const removeEmails = db.prepare(`DELETE FROM status_page_emails WHERE subscriber_seq = ?`)
  const remove = db.prepare(`DELETE FROM status_page_subscribers WHERE seq = ?`)
  const unsubscribe = db.transaction((pageId: string, token: string) => {
    const row = byToken.get(pageId, token) as Row | undefined
    if (!row) return false
    removeEmails.run(row.seq)
    remove.run(row.seq)
    return true
  })
  const enqueue = db.transaction((emails: Array<{ subscriberId: string; kind: SubscriberEmailKind; subject: string; body: string }>, now: number) => {
    for (const e of emails) enqueueOne.run({ subscriber: e.subscriberId, kind: e.kind, subject: e.subject, body: e.body, now })
  })
  const due = db
    .prepare(`SELECT e.seq FROM status_page_emails e
    WHERE e.status = 'PENDING' AND e.next_attempt_at <= @now AND (e.lease_expires_at IS NULL OR e.lease_expires_at <= @now)
    ORDER BY e.next_attempt_at, e.seq LIMIT @max`)
    .pluck()
  const lease = db.prepare(`UPDATE status_page_emails SET lease_owner = @owner, lease_expires_at = @until WHERE seq = @seq`)
  const held =
    db.prepare(`SELECT e.seq, e.kind, e.subject, e.body, e.attempts, s.seq AS s_seq, s.id, s.account_id, p.id AS page_id, s.email, s.token, s.base_url, s.confirmed_at, s.last_sent_at
    FROM status_page_emails e JOIN status_page_subscribers s ON s.seq = e.subscriber_seq JOIN status_pages p ON p.seq = s.page_seq WHERE e.seq = ?`)
  const claim = db.transaction((query: { owner: string; max: number; leaseMs: number; now: number }): ClaimedSubscriberEmail[] => {
    const seqs = due.all({ now: query.now, max: query.max }) as number[]
    return seqs.map((seq) => {
      lease.run({ owner: query.owner, until: query.now + query.leaseMs, seq })
      const row = held.get(seq) as Row & { kind: SubscriberEmailKind; subject: string; body: string; attempts: number; s_seq: number }
      return {
        seq,
        to: row.email,
        kind: row.kind,
        subject: row.subject,
        body: row.body,
        attempts: row.attempts,
        subscriber: subscriberRecord({ ...row, seq: row.s_seq }),
      }
    })
  })
  const finish = db.prepare(`UPDATE status_page_emails SET status = @status, next_attempt_at = @next, error = @error, attempts = attempts + 1,
    lease_owner = NULL, lease_expires_at = NULL WHERE seq = @seq AND lease_owner = @owner`)
  const release = db.prepare(`UPDATE status_page_emails SET lease_owner = NULL, lease_expires_at = NULL WHERE seq = ? AND lease_owner = ?`)
  const emailsOf = db.prepare(`SELECT s.email AS "to", e.kind, e.subject, e.body, e.status, e.attempts, e.error
    FROM status_page_emails e JOIN status_page_subscribers s ON s.seq = e.subscriber_seq JOIN status_pages p ON p.seq = s.page_seq
    WHERE p.id = ? AND p.account_id = ? ORDER BY e.seq`)
  return {
    subscribe: (account, pageId, email, fresh, now, resendAfterMs, confirmation) =>
      exec(() => subscribe.immediate(account, pageId, email, fresh, now, resendAfterMs, confirmation)),
    confirm: (pageId, token, now) =>
      exec(() => {
        if (confirm.run({ page: pageId, token, now }).changes === 0) return undefined
        return subscriberRecord(byToken.get(pageId, token) as Row)
      }),
    byToken: (pageId, token) =>
      exec(() => {
        const row = byToken.get(pageId, token) as Row | undefined
        return row && subscriberRecord(row)
      }),
    unsubscribe: (pageId, token) => exec(() => unsubscribe.immediate(pageId, token)),
    confirmedOf: (account, pageIds) =>
      exec(() => {
        if (pageIds.length === 0) return []
        const rows = db
          .prepare(`${SELECT} WHERE s.account_id = ? AND s.confirmed_at IS NOT NULL AND p.id IN (SELECT value FROM json_each(?)) ORDER BY s.seq`)
          .all(account, JSON.stringify(pageIds)) as Row[]
        return rows.map(subscriberRecord)
      }),
    enqueue: (emails, now) => exec(() => enqueue.immediate(emails, now)),
    claim: (query) => exec(() => claim.immediate(query)),
    finish: (owner, seq, next) => exec(() => finish.run({ owner, seq, status: next.status, next: next.nextAttemptAt, error: next.error }).changes > 0),
    release: (owner, seq) =>
      exec(() => {
        release.run(seq, owner)
      }),
    emailsOf: (account, pageId) => exec(() => emailsOf.all(pageId, account) as SubscriberEmailRecord[]),
  }
}
