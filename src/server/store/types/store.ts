/** The Store: every repository, and the transaction that gives them all. (Re-exported by ../index.ts.) */
import type { AlertDeliveryStore } from './alert-deliveries.js'
import type { AnalyticsStore } from './analytics.js'
import type { CheckGroupStore, CheckStore } from './checks.js'
import type { PoolStats } from './errors.js'
import type { HeartbeatStore } from './heartbeats.js'
import type { BadgeTokenStore, KeyStore, WebSessionStore } from './keys.js'
import type { PrivateLocationStore } from './private-locations.js'
import type { AlertChannelStore, IncidentStore, MaintenanceWindowStore, SnippetStore, VariableStore } from './resources.js'
import type { AlertStore, CheckStatusStore, ErrorGroupStore } from './result-state.js'
import type { RunRepositories } from './scheduling.js'
import type { ServiceStore, StatusPageStore } from './status-pages.js'
import type { SubscriberStore } from './subscribers.js'

export interface Repositories extends RunRepositories {
  checks: CheckStore
  variables: VariableStore
  services: ServiceStore
  statusPages: StatusPageStore
  maintenanceWindows: MaintenanceWindowStore
  snippets: SnippetStore
  alertChannels: AlertChannelStore
  checkGroups: CheckGroupStore
  incidents: IncidentStore
  keys: KeyStore
  webSessions: WebSessionStore
  subscribers: SubscriberStore
  badgeTokens: BadgeTokenStore
  privateLocations: PrivateLocationStore
  // --- results of check runs: statuses, error groups, alert state (see ../results)
  checkStatuses: CheckStatusStore
  errorGroups: ErrorGroupStore
  alerts: AlertStore
  // --- end of results of check runs
  // --- heartbeat checks (see ../heartbeats)
  heartbeats: HeartbeatStore
  // --- end of heartbeat checks
  // --- alert deliveries (see ../alerts)
  alertDeliveries: AlertDeliveryStore
  // --- end of alert deliveries
  // --- analytics rollups (see ../results/analytics.ts)
  analytics: AnalyticsStore
  // --- end of analytics rollups
}

export interface Store extends Repositories {
  /**
   * Runs fn with repositories that see and write one transaction: all of it commits, or
   * nothing when fn throws (the error is thrown on). Writers of other transactions and other
   * processes wait or retry as the database requires. Inside fn, use only tx: the store's
   * own repositories wait for the transaction to end.
   */
  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T>
  /**
   * Resolves when the database takes work now (PostgreSQL: a statement answers; SQLite: its write
   * lock can be taken), throws StoreUnavailable when it cannot (the server's readiness), and
   * StorePoolSaturated when the database is up but no connection was free for the ping.
   */
  ping(): Promise<void>
  /**
   * Runs the scheduler records in one transaction at most (default 256): PostgreSQL keeps its
   * groups small, so the rows of a group's first checks are not held while the last ones are written.
   */
  readonly maxGroupCommit?: number
  /**
   * Group commits the scheduler runs at once (default 1): PostgreSQL takes several, since every
   * group locks its rows in one order; SQLite has one writer.
   */
  readonly commitConcurrency?: number
  /** The connection pools' state (PostgreSQL); absent for a store without a pool (SQLite). */
  poolStats?(): PoolStats[]
  close(): Promise<void>
  /**
   * The rate limit's windows kept in the database, for a limit per key across every server on
   * it (PostgreSQL); absent, each server counts its own requests (SQLite).
   */
  rateWindows?: RateWindowStore
}

export interface RateWindowStore {
  /** counts one request of the key when `spend`, and answers its window (count and end, ms) as it now stands */
  hit(keyHash: string, max: number, windowMs: number, now: number, spend: boolean): Promise<{ count: number; resetAt: number }>
}
