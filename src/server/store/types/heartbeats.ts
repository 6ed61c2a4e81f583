/** Heartbeat checks. (Re-exported by ../index.ts.) */

// --- heartbeat checks: ping tokens, periods and events (see ../heartbeats) ---------------------

/** The ping state of one heartbeat check. Times in ms. */
export interface HeartbeatRecord {
  checkId: string
  account: string
  token: string
  periodMs: number
  graceMs: number
  /** start of the current period: the last ping, or when the check was created */
  since: number
  /**
   * the start of the last period recorded as FAILING (`since + k × periodMs`, k from 0: every
   * period that passes without a ping is one), if any; null or before `since` when none of the
   * current silence was recorded. The next period to record starts at `since` then, else at
   * `failedSince + periodMs`.
   */
  failedSince: number | null
}

export interface HeartbeatEventRecord {
  id: string
  checkId: string
  state: string
  /** ms */
  at: number
  source: string | null
  userAgent: string | null
}

export interface HeartbeatStore {
  /** Creates the record of a new heartbeat check (period starting at `now`), or updates period and grace of an existing one. */
  save(account: string, checkId: string, token: string, periodMs: number, graceMs: number, now: number): Promise<void>
  byToken(token: string): Promise<HeartbeatRecord | undefined>
  get(account: string, checkId: string): Promise<HeartbeatRecord | undefined>
  /** A ping at `at`: the next period starts there. */
  ping(checkId: string, at: number): Promise<void>
  /** Activated or not, every heartbeat whose next period to record (see failedSince) ended, grace included, before `now` without a ping. */
  overdue(now: number): Promise<HeartbeatRecord[]>
  /**
   * Marks the period starting at `start` as failed when it is the next one to record (see
   * failedSince); false when it is not: marked before (by any process), or a ping came since.
   */
  markFailing(checkId: string, start: number): Promise<boolean>
  addEvent(account: string, event: Omit<HeartbeatEventRecord, 'id'>): Promise<HeartbeatEventRecord>
  /** Events of a check with from <= at < to, oldest first (the newest `limit` when given). */
  events(account: string, checkId: string, from: number, to: number, limit?: number): Promise<HeartbeatEventRecord[]>
  event(account: string, checkId: string, id: string): Promise<HeartbeatEventRecord | undefined>
  /** Deletes events older than `before` (ms), as results are pruned; returns how many. */
  pruneEvents(before: number): Promise<number>
}

// --- end of heartbeat checks ----------------------------------------------------------------------
