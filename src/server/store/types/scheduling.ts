/** Check runs, their results, sessions, agents and the scheduler's reads. (Re-exported by ../index.ts.) */
import type { CheckGroup, MaintenanceWindow } from '../../../schema/index.js'
import type { Page } from './paging.js'

// ---------------------------------------------------------------------------------------
// Check runs, results, sessions and agents (scheduling). A due run is a row that a runner
// (the server's own or an agent) claims with a lease in one statement; its FINAL result and
// the ATTEMPT results before it are recorded when the run is completed.
// ---------------------------------------------------------------------------------------

/** A due run to create; `key` makes planning idempotent across processes (a second insert is ignored). */
export interface PlannedRun {
  key: string
  account: string
  checkId: string
  location: string
  /** ms since the epoch */
  dueAt: number
  sessionId: string | null
  /** a run nobody claimed by then is skipped (ms; null: never skipped) */
  staleAt: number | null
  /**
   * planned as skipped, not to run (counted once, by the process whose insert made the row):
   * `maintenance` (a window covers it), `missed` (found after its check's grace) or `no-agent`
   * (of a private location no agent of which is alive)
   */
  skipReason?: 'maintenance' | 'missed' | 'no-agent'
}

/**
 * Why a due run was not run, counted (monitors_scheduler_runs_skipped_total, GET
 * /v1/scheduler/skipped-runs): `late`, a newer run of its check fell due before it was claimed
 * (the runners were behind: each check keeps its newest due run); `missed`, no server planned it
 * within its check's grace (they were down or stalled); `maintenance`, a maintenance window
 * covered it; `no-agent`, it is of a private location where no agent was alive when it fell due
 * (only agents run those). (A run planned before its check was paused is dropped, not counted:
 * nothing was due.)
 */
export const SKIP_REASONS = ['late', 'missed', 'maintenance', 'no-agent'] as const
export type SkipReason = (typeof SKIP_REASONS)[number]

/** Runs one statement skipped, counted by reason, check type and location. */
export interface SkipCount {
  reason: SkipReason
  checkType: string
  location: string
  count: number
}

/** What a plan wrote: due runs added, and the skipped ones it inserted (counted once, whichever server plans). */
export interface PlanOutcome {
  added: number
  skipped: SkipCount[]
}

/** Skipped runs of a check, location and reason in a window (whole UTC hours of their due times). */
export interface SkippedRunsRow {
  checkId: string
  location: string
  reason: SkipReason
  count: number
  /** the latest due time skipped, ms */
  lastDueAt: number
}

/** Due runs waiting for a claim (never claimed, due now or before), per location. */
export interface BacklogRow {
  location: string
  due: number
  /** ms */
  oldestDueAt: number
}

export interface ClaimQuery {
  owner: string
  /** only runs of this account (an agent); undefined: every account (the server's runner) */
  account?: string
  /** only runs of these locations; undefined: any location */
  locations?: string[]
  /** leave the (account, location) pairs a live agent serves, and every private location (the server's runner: only agents run those) */
  skipAgentLocations?: boolean
  /** leave the runs of checks of these types (the runner's script places are taken) */
  skipCheckTypes?: readonly string[]
  /** only runs of checks of these types */
  onlyCheckTypes?: readonly string[]
  max: number
  leaseMs: number
  now: number
}

/** A claimed run: `runId` names this claim (a later claim of the same run gets another). */
export interface ClaimedRun {
  runId: string
  account: string
  checkId: string
  location: string
  dueAt: number
  leaseExpiresAt: number
  sessionId: string | null
  /** the check as GET /v1/checks/{id} answers it, at claim time */
  checkJson: string
}

/** A result as the runner made it (src/runner RunResult, without `attempts`). */
export type StoredResultInput = Record<string, unknown> & {
  runLocation: string
  resultType: 'FINAL' | 'ATTEMPT'
  status: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  responseTime: number | null
  startedAt: string
  stoppedAt: string
  error: string | null
}

export interface CheckResultRecord {
  id: string
  checkId: string
  sessionId: string | null
  runId: string
  runLocation: string
  resultType: 'FINAL' | 'ATTEMPT'
  status: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  responseTime: number | null
  startedAt: string
  stoppedAt: string
  error: string | null
  /** the runner's whole result (assertions, details, attempt number, …) */
  details: Record<string, unknown>
  created_at: string
}

export type CompleteOutcome =
  | { outcome: 'completed'; run: ClaimedRun; final: CheckResultRecord; attempts: CheckResultRecord[] }
  /** the same claim posted its result again: nothing recorded twice */
  | { outcome: 'duplicate' }
  /** another claim took the run after this lease expired, or completed it */
  | { outcome: 'lost' }
  | { outcome: 'unknown' }

/** The lease of a run held now: who holds it (the claim's owner), until when (ms), and the run's location. */
export interface RunLease {
  owner: string | null
  until: number
  location: string
}

export interface RunStore {
  /** inserts the runs not planned yet (by key); answers how many due runs were new, and the skipped ones it inserted */
  plan(runs: PlannedRun[]): Promise<PlanOutcome>
  /**
   * Skips the scheduled runs never claimed that a newer due run of their check supersedes
   * (reason `late`), counting them per check and hour in the same statement; answers what it
   * skipped. Each check keeps its newest due run, so a runner that fell behind runs every
   * check's latest run instead of dropping whatever is older than a period.
   */
  skipLate(now: number): Promise<SkipCount[]>
  /** Due runs never claimed, due at or before `now`, per location (of one account, or every one's) */
  backlog(now: number, account?: string): Promise<BacklogRow[]>
  /** The account's skipped runs due in [fromHour, toHour) (whole UTC hours, ms), per check, location and reason */
  skipped(account: string, fromHour: number, toHour: number, checkId?: string): Promise<SkippedRunsRow[]>
  /** Forgets the counts of skipped runs due before `before` (ms): the results' retention */
  pruneSkipped(before: number): Promise<number>
  /** claims due runs atomically: a run is held by one claim until its lease expires */
  claim(query: ClaimQuery): Promise<ClaimedRun[]>
  /**
   * new lease end (ms); 'completed' when this claim's result is recorded already (an extension
   * that crossed the result), 'lost' when another claim has the run, 'unknown'. PostgreSQL
   * never waits on a lock for it: a run being recorded keeps the lease it has.
   */
  extend(account: string | undefined, runId: string, leaseMs: number, now: number): Promise<number | 'lost' | 'unknown' | 'completed'>
  /**
   * Locks the rows of these runs for the caller's transaction, in the order of their row ids
   * (PostgreSQL; SQLite's write lock holds every row already): the first lock a group commit takes.
   */
  lock(runIds: readonly string[]): Promise<void>
  /**
   * The lease `runId` names, when it is held at `now`; 'done' when the run is complete (by this
   * claim or another); 'lost' when that claim is not the run's current one, the run was skipped
   * or the lease ran out; 'unknown' when the account has no such run (or no longer: done runs are pruned)
   */
  lease(account: string, runId: string, now: number): Promise<RunLease | 'lost' | 'done' | 'unknown'>
  /** records the final result and its attempts (oldest first) and marks the run done */
  complete(account: string | undefined, runId: string, final: StoredResultInput, attempts: StoredResultInput[], now: number): Promise<CompleteOutcome>
  /** deletes runs done or skipped before `before` (ms); answers how many */
  prune(before: number, now: number): Promise<number>
}

export interface ResultQuery {
  checkId: string
  resultType?: 'FINAL' | 'ATTEMPT'
  /** true: the results with failures; false: those without */
  hasFailures?: boolean
  /** run in this location */
  location?: string
  /** started at or after this time (ms) */
  from?: number
  /** started before this time (ms) */
  to?: number
  limit: number
  offset: number
}

export interface ResultStore {
  /** newest first */
  list(account: string, query: ResultQuery): Promise<Page<CheckResultRecord>>
  /** `checkId`, when the caller knows it, only narrows the search (a result of another check is answered still) */
  get(account: string, id: string, checkId?: string): Promise<CheckResultRecord | undefined>
  /** results of a session, oldest first */
  ofSession(account: string, sessionId: string): Promise<CheckResultRecord[]>
  /**
   * Stores a FINAL result that no run made (a heartbeat check's ping or missed period) under
   * the id it was recorded with (its run id is the same); false when that id is stored already.
   */
  add(account: string, checkId: string, id: string, result: StoredResultInput): Promise<boolean>
  /** deletes results that stopped before `before` (ISO date-time), `now` the clock's time (ms); answers how many */
  prune(before: string, now?: number): Promise<number>
}

export interface SessionRecord {
  id: string
  checkId: string
  checkType: string
  name: string
  runLocations: string[]
  startedAt: string
}

export interface SessionStore {
  /** creates the session and one due run per location, due now */
  create(account: string, check: { id: string; checkType: string; name: string }, locations: string[], now: number): Promise<SessionRecord>
  get(account: string, id: string): Promise<SessionRecord | undefined>
}

export interface AgentStore {
  /** the agent serves these locations of the account until `until` (ms) */
  heartbeat(account: string, agentId: string, locations: string[], until: number): Promise<void>
}

/** Every check of every account, for the scheduler (JSON as GET answers it). */
export interface SchedulableCheck {
  account: string
  id: string
  json: string
}

export interface ScheduleStore {
  /** every check of every account (the planner filters) */
  allChecks(): Promise<SchedulableCheck[]>
  /** every maintenance window of every account */
  allMaintenanceWindows(): Promise<Array<{ account: string; window: MaintenanceWindow }>>
  /** every check group of every account */
  allCheckGroups(): Promise<Array<{ account: string; id: number; group: CheckGroup }>>
  /**
   * A token that moves whenever a check or a maintenance window is created, changed or deleted
   * (by any process on the database): the planner re-reads both only when it moved. A store
   * without one answers a new token each time.
   */
  scheduleVersion(): Promise<string>
}

export interface RunRepositories {
  runs: RunStore
  results: ResultStore
  sessions: SessionStore
  agents: AgentStore
  schedule: ScheduleStore
}
// ---------------------------------------------------------------------------------------
