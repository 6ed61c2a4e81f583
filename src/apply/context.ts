import type { DesiredResource, ResourceKind } from '../resources/types.js'
import type { ApiClient } from '../api/client.js'
import type { BackoffOptions } from '../api/backoff.js'
import type { PlanChange } from '../plan/types.js'
import { resolveRefs } from '../resources/refs.js'
import { appliedHashOfParsed, secretHashOf } from '../resources/hashes.js'
import { displayName } from '../resources/registry.js'
import { lockKey, writeLock, type LockEntry, type LockFile, type PendingCreate } from '../state/lock.js'
import { JournalWriter, removeJournal, type JournalLine } from '../state/journal.js'

/**
 * What every step of one apply shares: the client, the lock it updates, the project's real
 * payloads, and the remote ids this run made or adopted that are not yet recorded. Steps change
 * the lock only through these methods, each of which resolves once its change is on disk: a line
 * in the journal beside the lock (src/state/journal.ts) while the apply runs, folded into the
 * lock file by `finish`.
 */
export class ApplyContext {
  /** Remote ids made or adopted in this run and not yet in the lock: never adopted twice. */
  readonly claimed = new Set<string>()
  private readonly desired: Map<string, DesiredResource>
  private journal: JournalWriter | undefined
  /** Pending creates written ahead of their step (see `preparePending`) and not yet taken by it. */
  private readonly prepared = new Map<string, PendingCreate>()

  constructor(
    readonly client: ApiClient,
    readonly lock: LockFile,
    private readonly lockPath: string,
    desired: readonly DesiredResource[],
    readonly createBackoff: BackoffOptions,
  ) {
    this.desired = new Map(desired.map((r) => [lockKey(r.kind, r.logicalId), r]))
  }

  /** The lock as the apply starts, written whole; then the journal takes every change. */
  begin(): void {
    writeLock(this.lockPath, this.lock)
    this.journal = new JournalWriter(this.lockPath)
  }

  /** The lock written whole with every change, and the journal removed. */
  async finish(): Promise<void> {
    if (!this.journal) return
    // written ahead for creates that never started (a failure or an interrupt stopped the apply): nothing was sent
    for (const key of this.prepared.keys()) if (this.lock.pending) delete this.lock.pending[key]
    if (this.lock.pending && Object.keys(this.lock.pending).length === 0) delete this.lock.pending
    this.prepared.clear()
    await this.journal.close()
    this.journal = undefined
    writeLock(this.lockPath, this.lock)
    removeJournal(this.lockPath)
  }

  /** Lock file writes of this apply's operations so far (journal flushes; several operations may share one). */
  get flushes(): number {
    return this.journal?.flushes ?? 0
  }

  private log(line: JournalLine): Promise<void> {
    if (!this.journal) return Promise.reject(new Error('the apply changed the lock before begin() or after finish()'))
    return this.journal.append(line)
  }

  /** A create about to be sent: on disk before the POST (see create.ts). */
  addPending(pending: PendingCreate): Promise<void> {
    const key = lockKey(pending.kind, pending.logicalId)
    ;(this.lock.pending ??= {})[key] = pending
    return this.log({ k: key, p: pending })
  }

  /**
   * The pending creates of several creates about to be sent, written in one flush: a create
   * whose pending create is on disk already sends its POST without waiting for the disk. One
   * that is never sent only makes the next plan look for it and find nothing (as for a POST
   * that never arrived); `finish` drops those of creates that never started.
   */
  preparePending(pendings: readonly PendingCreate[]): Promise<void> {
    if (!this.journal) return Promise.reject(new Error('the apply changed the lock before begin() or after finish()'))
    const lines: JournalLine[] = []
    for (const pending of pendings) {
      const key = lockKey(pending.kind, pending.logicalId)
      ;(this.lock.pending ??= {})[key] = pending
      this.prepared.set(key, pending)
      lines.push({ k: key, p: pending })
    }
    return this.journal.append(...lines)
  }

  /** The pending create written ahead for this resource, if any; taken once. */
  takePrepared(kind: ResourceKind, logicalId: string): PendingCreate | undefined {
    const key = lockKey(kind, logicalId)
    const pending = this.prepared.get(key)
    this.prepared.delete(key)
    return pending
  }

  /** A create refused outright: nothing was made, nothing is pending. */
  dropPending(kind: ResourceKind, logicalId: string): Promise<void> {
    const key = lockKey(kind, logicalId)
    if (this.lock.pending) delete this.lock.pending[key]
    return this.log({ k: key, p: null })
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

  /**
   * Records `payload` as applied to `remoteId`; its pending create, if any, is settled. After a
   * create, `appliedHash` is the pending create's (the same payload) and `wait: false` goes on
   * without waiting for the line to reach the disk: should it be lost, the pending create on disk
   * finds the resource again, and any later line (the next tier's pending creates) is written after it.
   */
  record(change: PlanChange, remoteId: string, payload: Record<string, unknown>, options: { appliedHash?: string; wait?: boolean } = {}): Promise<void> {
    const entry: LockEntry = {
      kind: change.kind,
      logicalId: change.logicalId,
      remoteId,
      // payloads here are the desired state's (schema output, references resolved)
      appliedHash: options.appliedHash ?? appliedHashOfParsed(change.kind, payload),
    }
    const name = displayName(change.kind, payload)
    if (name !== undefined) entry.name = name
    const secretHash = secretHashOf(change.kind, payload)
    if (secretHash) entry.secretHash = secretHash
    const key = lockKey(change.kind, change.logicalId)
    this.lock.resources[key] = entry
    if (this.lock.pending) delete this.lock.pending[key]
    this.claimed.delete(remoteId)
    const line: JournalLine = { k: key, r: entry, p: null }
    if (options.wait === false && this.journal) {
      this.journal.appendLater(line)
      return Promise.resolve()
    }
    return this.log(line)
  }

  /** Drops the resource from the lock; a lost create deleted after its construct left the code is settled too. */
  forget(change: PlanChange): Promise<void> {
    const key = lockKey(change.kind, change.logicalId)
    delete this.lock.resources[key]
    if (this.lock.pending) delete this.lock.pending[key]
    return this.log({ k: key, r: null, p: null })
  }

  /** A rename (aliases): the lock entry moves to the new logical id; nothing is sent. */
  move(change: PlanChange, from: string): Promise<void> {
    const fromKey = lockKey(change.kind, from)
    const moved = this.lock.resources[fromKey]
    if (!moved) return Promise.resolve()
    const key = lockKey(change.kind, change.logicalId)
    const entry = { ...moved, logicalId: change.logicalId }
    delete this.lock.resources[fromKey]
    this.lock.resources[key] = entry
    return this.log({ k: key, r: entry, from: fromKey })
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
