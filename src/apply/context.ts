import type { DesiredResource, ResourceKind } from '../resources/types.js'
import type { ApiClient } from '../api/client.js'
import type { BackoffOptions } from '../api/backoff.js'
import type { PlanChange } from '../plan/types.js'
import { resolveRefs } from '../resources/refs.js'
import { appliedHash, secretHashOf } from '../resources/hashes.js'
import { displayName } from '../resources/registry.js'
import { lockKey, writeLock, type LockEntry, type LockFile } from '../state/lock.js'

/**
 * What every step of one apply shares: the client, the lock it updates (written after every
 * change of it), the project's real payloads, and the remote ids this run made or adopted that
 * are not yet recorded. Steps change the lock only through these methods.
 */
export class ApplyContext {
  /** Remote ids made or adopted in this run and not yet in the lock: never adopted twice. */
  readonly claimed = new Set<string>()
  private readonly desired: Map<string, DesiredResource>

  constructor(
    readonly client: ApiClient,
    readonly lock: LockFile,
    private readonly lockPath: string,
    desired: readonly DesiredResource[],
    readonly createBackoff: BackoffOptions,
  ) {
    this.desired = new Map(desired.map((r) => [lockKey(r.kind, r.logicalId), r]))
  }

  save(): void {
    writeLock(this.lockPath, this.lock)
  }

  remoteIdOf(kind: ResourceKind, logicalId: string): string | undefined {
    return this.lock.resources[lockKey(kind, logicalId)]?.remoteId
  }

  /** The payload to send for a create or update: references resolved to the remote ids the lock knows now. */
  payloadFor(change: PlanChange): Record<string, unknown> {
    const resource = this.desired.get(lockKey(change.kind, change.logicalId))
    if (!resource) throw new Error(`${change.kind} ${change.logicalId} is in the plan but not in the project`)
    const { payload, unresolved } = resolveRefs(resource, (kind, logicalId) => this.remoteIdOf(kind, logicalId))
    if (unresolved.length > 0) throw new Error(`${change.kind} ${change.logicalId} references ${unresolved.join(', ')}, which has no remote id`)
    return payload
  }

  /** Records `payload` as applied to `remoteId`; its pending create, if any, is settled. */
  record(change: PlanChange, remoteId: string, payload: Record<string, unknown>): void {
    const entry: LockEntry = {
      kind: change.kind,
      logicalId: change.logicalId,
      remoteId,
      appliedHash: appliedHash(change.kind, payload),
    }
    const name = displayName(change.kind, payload)
    if (name !== undefined) entry.name = name
    const secretHash = secretHashOf(change.kind, payload)
    if (secretHash) entry.secretHash = secretHash
    this.lock.resources[lockKey(change.kind, change.logicalId)] = entry
    if (this.lock.pending) delete this.lock.pending[lockKey(change.kind, change.logicalId)]
    this.claimed.delete(remoteId)
    this.save()
  }

  /** Drops the resource from the lock; a lost create deleted after its construct left the code is settled too. */
  forget(change: PlanChange): void {
    delete this.lock.resources[lockKey(change.kind, change.logicalId)]
    if (this.lock.pending) delete this.lock.pending[lockKey(change.kind, change.logicalId)]
    this.save()
  }

  /** A rename (aliases): the lock entry moves to the new logical id; nothing is sent. */
  move(change: PlanChange, from: string): void {
    const fromKey = lockKey(change.kind, from)
    const moved = this.lock.resources[fromKey]
    if (!moved) return
    delete this.lock.resources[fromKey]
    this.lock.resources[lockKey(change.kind, change.logicalId)] = { ...moved, logicalId: change.logicalId }
    this.save()
  }

  /**
   * Pending creates this plan does not act on are settled: the plan found nothing to adopt for
   * them, or their resource left the code. Those it creates again are re-recorded before sending.
   */
  settlePending(work: readonly PlanChange[]): void {
    if (!this.lock.pending) return
    const acting = new Set(work.filter((c) => c.action === 'create' || c.action === 'replace' || c.adopted).map((c) => lockKey(c.kind, c.logicalId)))
    for (const key of Object.keys(this.lock.pending)) if (!acting.has(key)) delete this.lock.pending[key]
  }
}
