/** Private locations. (Re-exported by ../index.ts.) */
import type { Timestamps } from './paging.js'

/** What a private location is (reference: privateLocationCreate); its slug never changes. */
export interface PrivateLocationData {
  name: string
  slugName: string
  icon: string
  proxyUrl: string | null
}

export interface PrivateLocationRecord extends Timestamps {
  id: string
  location: PrivateLocationData
  /** ms: an agent of the location last claimed; null: never */
  lastSeenAt: number | null
  /** ms: no agent alive there since then, as the health sweep last saw it; null: one is alive */
  noAgentSince: number | null
  /** ms: the alert that no agent is alive was sent then; null when not (or it recovered) */
  alertedAt: number | null
}

/** What a location's agents are doing now (private-locations/health.ts). */
export interface PrivateLocationLoad {
  account: string
  slugName: string
  /** agents whose last claim named the location and whose heartbeat has not run out */
  agents: number
  /** due runs of the location no runner holds */
  waiting: number
  /** ms: the due time of the oldest of them; null when none waits */
  oldestDueAt: number | null
}

/**
 * Private locations of an account (/v1/private-locations). Runs of their slugs are claimed by
 * agents only (the server's runner leaves them); checks and groups name them by slug.
 */
export interface PrivateLocationStore {
  /** the account's locations, oldest first */
  list(account: string): Promise<PrivateLocationRecord[]>
  /** every account's locations (the health sweep, the metrics) */
  all(): Promise<Array<PrivateLocationRecord & { account: string }>>
  get(account: string, id: string): Promise<PrivateLocationRecord | undefined>
  bySlug(account: string, slugName: string): Promise<PrivateLocationRecord | undefined>
  /** 'exists' when the account has a location of that slug */
  create(account: string, data: PrivateLocationData): Promise<PrivateLocationRecord | 'exists'>
  update(account: string, id: string, data: Omit<PrivateLocationData, 'slugName'>): Promise<PrivateLocationRecord | undefined>
  /** deletes the location and its keys; false when the account has none of that id */
  delete(account: string, id: string): Promise<boolean>
  /** the checks (ids) and groups (ids) of the account whose privateLocations name the slug */
  usedBy(account: string, slugName: string): Promise<{ checks: string[]; groups: number[] }>
  /** an agent of these slugs of the account claimed at `now` */
  seen(account: string, slugNames: string[], now: number): Promise<void>
  /** agents alive and runs waiting at `now`, per location (of the account, when given) */
  load(now: number, account?: string): Promise<PrivateLocationLoad[]>
  /** records since when no agent is alive (kept while it stays so); null: one is alive again */
  setNoAgentSince(account: string, id: string, since: number | null): Promise<void>
  /**
   * Marks the no-agent alert sent (`at`) or recovered (null), only if it was not already: true
   * for the one caller that changed it (that server sends the alert), false for the others.
   */
  markAlerted(account: string, id: string, at: number | null): Promise<boolean>
}
