import type { DesiredResource, ResourceKind } from '../resources/types.js'
import { isOutcomeUnknown, type ApiClient } from '../api/client.js'
import { ConflictError, NotFoundError } from '../api/errors.js'
import { backoffDelay, DEFAULT_BACKOFF, sleep, type BackoffOptions } from '../api/backoff.js'
import { createResource, deleteResource, ENDPOINTS, fetchRemoteState, updateResource, type RemoteRecord } from '../api/resources.js'
import type { Plan, PlanChange } from '../plan/types.js'
import { resolveRefs } from '../resources/refs.js'
import { appliedHash, secretHashOf } from '../resources/hashes.js'
import { dependencyTiers, displayName } from '../resources/registry.js'
import { lockKey, writeLock, type LockEntry, type LockFile } from '../state/lock.js'
import { findCreated, pendingCreate } from '../state/pending.js'

/**
 * Creates and updates run tier by tier (what others reference first); deletes run after all of
 * them, tiers reversed, so nothing is deleted while something still points at it.
 */
export const TIERS: ResourceKind[][] = dependencyTiers()

export type OperationVerb = 'created' | 'updated' | 'replaced' | 'deleted' | 'forgotten' | 'moved'

export interface OperationOutcome {
  change: PlanChange
  ok: boolean
  verb?: OperationVerb
  remoteId?: string
  ms: number
  error?: Error
  /** DELETE answered 404: the resource was already gone. */
  alreadyGone?: boolean
  /** The create's answer was lost; the resource it made was found in the list and recorded. */
  recovered?: boolean
}

export interface ApplyOptions {
  plan: Plan
  /** The desired resources the plan was computed from: the real payloads (with secrets). */
  desired: readonly DesiredResource[]
  client: ApiClient
  /** The lock to update (mutated) and where to write it after every success. */
  lock: LockFile
  lockPath: string
  /** Operations in flight at once. Default 4. */
  concurrency?: number
  onOutcome?: (outcome: OperationOutcome) => void
  /** Aborting stops new operations (Ctrl-C); those in flight finish and are recorded. */
  signal?: AbortSignal
  /**
   * A POST whose outcome is unknown (timeout, lost connection, 5xx) is looked for in the list
   * and, when it made nothing, sent again: at most `retries` more times, with this backoff.
   */
  createRetry?: Partial<BackoffOptions>
}

export interface ApplyResult {
  outcomes: OperationOutcome[]
  failed: OperationOutcome[]
  /** Operations that never started because an earlier one failed or the run was interrupted. */
  notStarted: PlanChange[]
  interrupted: boolean
  /** Creates whose answer was lost and whose resource was found and adopted instead of made twice. */
  recovered: number
}

/** Runs a plan's operations. On the first failure no new operation starts; those in flight finish. */
export async function executePlan(options: ApplyOptions): Promise<ApplyResult> {
  const { plan, client, lock, lockPath } = options
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 4))
  const desired = new Map(options.desired.map((r) => [lockKey(r.kind, r.logicalId), r]))
  const tierOf = (kind: ResourceKind) => TIERS.findIndex((tier) => tier.includes(kind))

  const work = plan.changes.filter((c) => c.action !== 'noop')
  const phases: PlanChange[][] = []
  const removing = (c: PlanChange) => c.action === 'delete' || c.action === 'forget'
  for (let t = 0; t < TIERS.length; t++) phases.push(work.filter((c) => !removing(c) && tierOf(c.kind) === t))
  for (let t = TIERS.length - 1; t >= 0; t--) phases.push(work.filter((c) => removing(c) && tierOf(c.kind) === t))

  const outcomes: OperationOutcome[] = []
  const notStarted: PlanChange[] = []
  let stopped = options.signal?.aborted ?? false
  const onAbort = () => {
    stopped = true
  }
  options.signal?.addEventListener('abort', onAbort)

  const lookup = (kind: ResourceKind, logicalId: string) => lock.resources[lockKey(kind, logicalId)]?.remoteId
  const save = () => writeLock(lockPath, lock)
  const createBackoff: BackoffOptions = { ...DEFAULT_BACKOFF, ...options.createRetry }
  let recovered = 0
  /** Remote ids made or adopted in this run and not yet in the lock: never adopted twice. */
  const claimed = new Set<string>()

  // Pending creates this plan does not act on are settled: the plan found nothing to adopt for
  // them, or their resource left the code. Those it creates again are re-recorded before sending.
  if (lock.pending) {
    const acting = new Set(work.filter((c) => c.action === 'create' || c.action === 'replace' || c.adopted).map((c) => lockKey(c.kind, c.logicalId)))
    for (const key of Object.keys(lock.pending)) if (!acting.has(key)) delete lock.pending[key]
  }

  const record = (change: PlanChange, remoteId: string, payload: Record<string, unknown>) => {
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
    lock.resources[lockKey(change.kind, change.logicalId)] = entry
    if (lock.pending) delete lock.pending[lockKey(change.kind, change.logicalId)]
    claimed.delete(remoteId)
    save()
  }

  /**
   * POST without ever making a duplicate. The intent is written to the lock first (a pending
   * create), so a run killed before the answer is recorded is recovered by the next plan. When
   * the answer is lost, the list is read again: the resource the POST made is adopted (and
   * brought to the desired state should it differ), or, when there is none, the POST is sent
   * again, a bounded number of times.
   */
  async function createSafely(change: PlanChange, payload: Record<string, unknown>): Promise<{ remoteId: string; recovered: boolean }> {
    const key = lockKey(change.kind, change.logicalId)
    const pending = pendingCreate(change.kind, change.logicalId, payload)
    ;(lock.pending ??= {})[key] = pending
    save()
    let uncertain = false
    for (let attempt = 0; ; attempt++) {
      let failure: unknown
      try {
        const result = await createResource(client, change.kind, payload)
        claimed.add(result.remoteId)
        return { remoteId: result.remoteId, recovered: false }
      } catch (error) {
        failure = error
      }
      if (uncertain && failure instanceof ConflictError && change.kind === 'variable' && typeof payload.key === 'string') {
        // an earlier attempt did create it: make sure it holds what was sent
        await updateResource(client, change.kind, payload.key, payload)
        claimed.add(payload.key)
        return { remoteId: payload.key, recovered: true }
      }
      if (!isOutcomeUnknown(failure)) {
        if (!uncertain) {
          // refused outright: nothing was made, nothing is pending
          delete lock.pending?.[key]
          save()
        }
        throw failure
      }
      uncertain = true
      const found = await findAfterLostAnswer(change.kind, pending)
      if (found) {
        claimed.add(found.remoteId)
        if (appliedHash(change.kind, found.record) !== pending.appliedHash || pending.secretHash) {
          await updateResource(client, change.kind, found.remoteId, payload)
        }
        return { remoteId: found.remoteId, recovered: true }
      }
      if (attempt >= createBackoff.retries) {
        const error = failure as Error
        error.message += ` (the create was tried ${attempt + 1} times and made nothing; the next apply checks again before creating)`
        throw error
      }
      await sleep(backoffDelay(attempt, createBackoff))
    }
  }

  async function findAfterLostAnswer(kind: ResourceKind, pending: ReturnType<typeof pendingCreate>) {
    const remote = await fetchRemoteState(client, [kind])
    const taken = new Set(claimed)
    for (const entry of Object.values(lock.resources)) if (entry.kind === kind) taken.add(entry.remoteId)
    return findCreated(pending, remote.records[kind] as Record<string, RemoteRecord>, taken, ENDPOINTS[kind].idOf)
  }
  const forget = (change: PlanChange) => {
    delete lock.resources[lockKey(change.kind, change.logicalId)]
    // a lost create deleted after its construct left the code: settled too
    if (lock.pending) delete lock.pending[lockKey(change.kind, change.logicalId)]
    save()
  }

  async function run(change: PlanChange): Promise<OperationOutcome> {
    const started = performance.now()
    const outcome: OperationOutcome = { change, ok: false, ms: 0 }
    try {
      if (change.movedFrom) {
        // A rename (aliases): the lock entry moves to the new logical id; nothing is sent.
        const from = lockKey(change.kind, change.movedFrom)
        const moved = lock.resources[from]
        if (moved) {
          delete lock.resources[from]
          lock.resources[lockKey(change.kind, change.logicalId)] = { ...moved, logicalId: change.logicalId }
          save()
        }
      }
      if (change.action === 'move') {
        outcome.verb = 'moved'
        outcome.remoteId = change.remoteId
      } else if (change.action === 'forget') {
        // retainOnDelete: left running remotely, only dropped from the lock
        outcome.verb = 'forgotten'
        outcome.remoteId = change.remoteId
        forget(change)
      } else if (change.action === 'delete') {
        if (change.drift) {
          outcome.verb = 'forgotten'
        } else {
          try {
            await deleteResource(client, change.kind, change.remoteId!)
          } catch (error) {
            if (!(error instanceof NotFoundError)) throw error
            outcome.alreadyGone = true
          }
          outcome.verb = 'deleted'
        }
        outcome.remoteId = change.remoteId
        forget(change)
      } else {
        const resource = desired.get(lockKey(change.kind, change.logicalId))
        if (!resource) throw new Error(`${change.kind} ${change.logicalId} is in the plan but not in the project`)
        const { payload, unresolved } = resolveRefs(resource, lookup)
        if (unresolved.length > 0) throw new Error(`${change.kind} ${change.logicalId} references ${unresolved.join(', ')}, which has no remote id`)
        if (change.action === 'create') {
          const result = await createSafely(change, payload)
          record(change, result.remoteId, payload)
          outcome.verb = 'created'
          outcome.remoteId = result.remoteId
          if (result.recovered) {
            outcome.recovered = true
            recovered++
          }
        } else if (change.action === 'update') {
          // adopted with nothing to change, or only resource options changed: only recorded
          const remoteDiffs = (change.fieldDiffs ?? []).filter((d) => !d.lockOnly).length
          if (!change.lockOnly && (!change.adopted || remoteDiffs > 0)) await updateResource(client, change.kind, change.remoteId!, payload)
          record(change, change.remoteId!, payload)
          outcome.verb = 'updated'
          outcome.remoteId = change.remoteId
        } else if (change.action === 'replace') {
          try {
            await deleteResource(client, change.kind, change.remoteId!)
          } catch (error) {
            if (!(error instanceof NotFoundError)) throw error
          }
          forget(change)
          const result = await createSafely(change, payload)
          record(change, result.remoteId, payload)
          outcome.verb = 'replaced'
          outcome.remoteId = result.remoteId
        }
      }
      outcome.ok = true
    } catch (error) {
      outcome.error = error instanceof Error ? error : new Error(String(error))
    }
    outcome.ms = Math.round(performance.now() - started)
    return outcome
  }

  for (const phase of phases) {
    if (stopped) {
      notStarted.push(...phase)
      continue
    }
    let next = 0
    const worker = async () => {
      while (next < phase.length) {
        if (stopped) return
        const change = phase[next++]
        const outcome = await run(change)
        outcomes.push(outcome)
        if (!outcome.ok) stopped = true
        options.onOutcome?.(outcome)
      }
    }
    await Promise.all(Array.from({ length: Math.min(concurrency, phase.length) }, worker))
    if (stopped) notStarted.push(...phase.slice(next))
  }

  options.signal?.removeEventListener('abort', onAbort)
  return { outcomes, failed: outcomes.filter((o) => !o.ok), notStarted, interrupted: options.signal?.aborted ?? false, recovered }
}
