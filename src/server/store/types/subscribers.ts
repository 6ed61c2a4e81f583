/** Status pages' email subscribers and their outbox. (Re-exported by ../index.ts.) */

/** A person subscribed by email to a status page. */
export interface SubscriberRecord {
  id: string
  accountId: string
  pageId: string
  email: string
  /** the capability of their confirm and unsubscribe links */
  token: string
  /** the origin they subscribed at: the links of their emails */
  baseUrl: string
  confirmed: boolean
}

export type SubscriberEmailKind = 'CONFIRM' | 'INCIDENT' | 'MAINTENANCE'

export interface NewSubscriberEmail {
  subscriberId: string
  kind: SubscriberEmailKind
  subject: string
  body: string
}

/** An email of the outbox held by one sender until its lease ends. */
export interface ClaimedSubscriberEmail {
  seq: number
  to: string
  kind: SubscriberEmailKind
  subject: string
  body: string
  /** attempts made before this one */
  attempts: number
  subscriber: SubscriberRecord
}

export interface SubscriberEmailRecord {
  to: string
  kind: SubscriberEmailKind
  subject: string
  body: string
  status: 'PENDING' | 'SENT' | 'FAILED'
  attempts: number
  error: string | null
}

/**
 * Status pages' email subscribers (double opt-in) and the outbox of their emails. Pages are
 * named by id within the account; a subscriber is found by its page and token only.
 */
export interface SubscriberStore {
  /**
   * Subscribes `email` (compared lower case) to the page. A new subscriber, or an unconfirmed
   * one whose last confirmation is older than `resendAfterMs`, gets the confirmation email
   * `confirmation` makes (in the same transaction); a confirmed one gets nothing. Undefined when
   * the page is not the account's.
   */
  subscribe(
    account: string,
    pageId: string,
    email: string,
    fresh: { token: string; baseUrl: string },
    now: number,
    resendAfterMs: number,
    confirmation: (subscriber: SubscriberRecord) => { subject: string; body: string },
  ): Promise<{ subscriber: SubscriberRecord; sent: boolean } | undefined>
  /** Confirms the subscriber of this page and token; undefined when there is none. */
  confirm(pageId: string, token: string, now: number): Promise<SubscriberRecord | undefined>
  byToken(pageId: string, token: string): Promise<SubscriberRecord | undefined>
  /** Removes the subscriber (and its unsent emails); false when there was none. */
  unsubscribe(pageId: string, token: string): Promise<boolean>
  /** The confirmed subscribers of these pages of the account. */
  confirmedOf(account: string, pageIds: string[]): Promise<SubscriberRecord[]>
  enqueue(emails: NewSubscriberEmail[], now: number): Promise<void>
  claim(query: { owner: string; max: number; leaseMs: number; now: number }): Promise<ClaimedSubscriberEmail[]>
  /** Moves a held email on: SENT, FAILED, or PENDING again at `nextAttemptAt`; false when the lease was lost. */
  finish(owner: string, seq: number, next: { status: 'SENT' | 'FAILED' | 'PENDING'; nextAttemptAt: number | null; error: string | null }): Promise<boolean>
  /** Gives a held email back unattempted (the sender is stopping). */
  release(owner: string, seq: number): Promise<void>
  /** The emails of a page's subscribers, oldest first (for the dashboard and tests). */
  emailsOf(account: string, pageId: string): Promise<SubscriberEmailRecord[]>
}
