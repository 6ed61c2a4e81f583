/**
 * What one account (or one client) may make the server hold or send, whatever its keys' rate
 * limit allows: on a server several accounts share, each is bounded so that none can fill the
 * server's disk, its database or somebody's mailbox (docs/server.md).
 */
export interface ServerLimits {
  /** status pages per account; a create past it is a 409 */
  statusPagesPerAccount: number
  /** subscription confirmations sent to one email address, whatever the page or account, per window */
  confirmationsPerAddress: { max: number; timeWindowMs: number }
  /** subscriptions posted from one client address (any page), per window; past it a 429 */
  subscriptionsPerClient: { max: number; timeWindowMs: number }
  /** bytes of artifacts an account's agents may have uploaded for runs not finished yet; past it a 413 */
  stagedArtifactBytesPerAccount: number
}

const HOUR = 3_600_000

export const DEFAULT_LIMITS: ServerLimits = {
  statusPagesPerAccount: 100,
  confirmationsPerAddress: { max: 5, timeWindowMs: HOUR },
  subscriptionsPerClient: { max: 20, timeWindowMs: HOUR },
  stagedArtifactBytesPerAccount: 1000 * 1000 * 1000,
}

/** The limits with the defaults filled in. */
export function serverLimits(given: Partial<ServerLimits> = {}): ServerLimits {
  return { ...DEFAULT_LIMITS, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) }
}
