/** What results update: check statuses, error groups, alert state. (Re-exported by ../index.ts.) */
import type { Page } from './paging.js'

// --- results of check runs: statuses, error groups, alert state (see ../results) -----------

/** What one FINAL result changes in its check's status (flags from the newest run win). */
export interface StatusUpdate {
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  /** ms; null when nothing was measured */
  responseTime: number | null
  runLocation: string
  checkRunId: string
  sslDaysRemaining: number | null
  /** when the run started: a result older than the status's newest run changes only longest/shortest */
  startedAt: string
  /** a failure with an error: its group, kept as the check's newest error unless a newer one is */
  error?: LastError
}

/** A check's newest failure with an error, kept in its status. */
export interface LastError {
  errorHash: string
  rawErrorMessage: string
  /** when it stopped (ISO) */
  seenAt: string
}

export interface CheckStatusRecord {
  /** the check's current name */
  name: string
  checkId: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  longestRun: number | null
  shortestRun: number | null
  lastRunLocation: string | null
  lastCheckRunId: string | null
  sslDaysRemaining: number | null
  /** response time of the newest run (for badges); not part of the answer */
  lastResponseTime: number | null
  created_at: string
  updated_at: string | null
}

export interface CheckStatusStore {
  /** account of a check, by its id alone (results carry no account); undefined when it is gone */
  accountOf(checkId: string): Promise<string | undefined>
  /**
   * Claims a result id for recording: true the first time, false when some process recorded
   * it already (recording is idempotent per result id).
   */
  claimResult(resultId: string, checkId: string): Promise<boolean>
  /** forgets result ids claimed before `time` (ISO), with the results' retention; answers how many */
  forgetResultsBefore(time: string): Promise<number>
  /**
   * One upsert: longest/shortest by MAX/MIN in the database, flags only from a newer run. With
   * `error`, answers the check's newest error before this one (undefined: none), its status
   * locked until the transaction ends, for errorGroups.record.
   */
  record(account: string, checkId: string, update: StatusUpdate): Promise<LastError | undefined>
  /** every status of the account, in the order of its checks */
  list(account: string): Promise<CheckStatusRecord[]>
  /** a page of them (GET /v1/check-statuses?limit=&page=), with how many there are */
  page(account: string, paging: { limit: number; offset: number }): Promise<Page<CheckStatusRecord>>
  get(account: string, checkId: string): Promise<CheckStatusRecord | undefined>
}

export interface ErrorGroupRecord {
  id: string
  checkId: string
  errorHash: string
  rawErrorMessage: string | null
  cleanedErrorMessage: string
  firstSeen: string
  lastSeen: string
  archivedUntilNextEvent: boolean
  archiveForEver: boolean
}

export interface ErrorEvent {
  errorHash: string
  rawErrorMessage: string
  cleanedErrorMessage: string
  seenAt: string
}

export interface ErrorGroupStore {
  /**
   * A known hash moves lastSeen and clears archivedUntilNextEvent. `previous`: the check's newest
   * error before this event (checkStatuses.record's answer, in the same transaction). A failure
   * newer than it with its hash writes nothing here (the status, which holds it now, answers its
   * group's lastSeen and message) unless the group is archived until the next event; one with
   * another hash writes the previous group's lastSeen and message as the status held them.
   * Without `previous` (not known), one upsert.
   */
  record(account: string, checkId: string, event: ErrorEvent, previous?: LastError | null): Promise<void>
  /** oldest first, one page; `checkId`: the groups of that check only */
  list(account: string, query: { checkId?: string; limit: number; offset: number }): Promise<Page<ErrorGroupRecord>>
  get(account: string, id: string): Promise<ErrorGroupRecord | undefined>
  /** sets the flags given; undefined when the group is not the account's */
  update(account: string, id: string, flags: { archiveForEver?: boolean; archivedUntilNextEvent?: boolean }): Promise<ErrorGroupRecord | undefined>
}

export type AlertLevel = 'NONE' | 'DEGRADED' | 'FAILURE'
export type AlertNotificationKind =
  | 'ALERT_FAILURE'
  | 'ALERT_DEGRADED'
  | 'ALERT_RECOVERY'
  | 'REMINDER'
  | 'ALERT_SSL'
  | 'ALERT_SSL_RECOVERY'
  // a private location without a live agent, and its recovery (../alerts/private-locations.ts): never a check's
  | 'ALERT_NO_AGENT'
  | 'ALERT_NO_AGENT_RECOVERY'

/** A check's alerting state, kept between results. */
export interface AlertState {
  consecutiveFailures: number
  consecutiveDegraded: number
  failingSince: string | null
  degradedSince: string | null
  level: AlertLevel
  alertedAt: string | null
  remindersSent: number
  /** the incident opened by triggerIncident, until it is resolved */
  incidentId: string | null
  /** location -> whether its newest run failed (for parallelRunFailureThreshold) */
  locations: Record<string, boolean>
  /** the certificate is within the check's sslCertificates threshold and ALERT_SSL was given (absent: no) */
  sslAlerted?: boolean
  /** the subscribed channels (sslExpiry) whose sslExpiryThreshold the certificate is within, ALERT_SSL given (absent: none) */
  sslAlertedChannels?: number[]
}

export interface AlertNotificationRecord {
  id: string
  checkId: string
  kind: AlertNotificationKind
  checkRunId: string | null
  created_at: string
}

export interface AlertStore {
  /** read inside a transaction, so that the state cannot change before `save` */
  state(checkId: string): Promise<AlertState | undefined>
  save(account: string, checkId: string, state: AlertState): Promise<void>
  notify(account: string, checkId: string, kind: AlertNotificationKind, checkRunId: string | null): Promise<AlertNotificationRecord>
  /** oldest first */
  notifications(account: string, checkId?: string): Promise<AlertNotificationRecord[]>
}

// --- end of results of check runs ---------------------------------------------------------------
