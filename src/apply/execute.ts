import type { DesiredResource, ResourceKind } from '../project/types.js'
import type { ApiClient } from '../api/client.js'
import { NotFoundError } from '../api/errors.js'
import { createResource, deleteResource, updateResource } from '../api/resources.js'
import type { Plan, PlanChange } from '../plan/types.js'
import { resolveRefs } from '../plan/refs.js'
import { appliedHash, secretHashOf } from '../plan/hashes.js'
import { displayName } from '../plan/plan.js'
import { lockKey, writeLock, type LockEntry, type LockFile } from './lock.js'

/**
 * Creates and updates run tier by tier (what others reference first); deletes run after all of
 * them, tiers reversed, so nothing is deleted while something still points at it.
 */
export const TIERS: ResourceKind[][] = [
  ['variable', 'status-page-service', 'maintenance-window'],
  ['dns-check', 'icmp-check'],
  ['status-page'],
]

export type OperationVerb = 'created' | 'updated' | 'replaced' | 'deleted' | 'forgotten'

export interface OperationOutcome {
  change: PlanChange
  ok: boolean
  verb?: OperationVerb
  remoteId?: string
  ms: number
  error?: Error
  /** DELETE answered 404: the resource was already gone. */
  alreadyGone?: boolean
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
}

export interface ApplyResult {
  outcomes: OperationOutcome[]
  failed: OperationOutcome[]
  /** Operations that never started because an earlier one failed or the run was interrupted. */
  notStarted: PlanChange[]
  interrupted: boolean
}

/** Runs a plan's operations. On the first failure no new operation starts; those in flight finish. */
export async function executePlan(options: ApplyOptions): Promise<ApplyResult> {
  const { plan, client, lock, lockPath } = options
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 4))
  const desired = new Map(options.desired.map((r) => [lockKey(r.kind, r.logicalId), r]))
  const tierOf = (kind: ResourceKind) => TIERS.findIndex((tier) => tier.includes(kind))

  const work = plan.changes.filter((c) => c.action !== 'noop')
  const phases: PlanChange[][] = []
  for (let t = 0; t < TIERS.length; t++) phases.push(work.filter((c) => c.action !== 'delete' && tierOf(c.kind) === t))
  for (let t = TIERS.length - 1; t >= 0; t--) phases.push(work.filter((c) => c.action === 'delete' && tierOf(c.kind) === t))

  const outcomes: OperationOutcome[] = []
  const notStarted: PlanChange[] = []
  let stopped = options.signal?.aborted ?? false
  const onAbort = () => {
    stopped = true
  }
  options.signal?.addEventListener('abort', onAbort)

  const lookup = (kind: ResourceKind, logicalId: string) => lock.resources[lockKey(kind, logicalId)]?.remoteId
  const save = () => writeLock(lockPath, lock)

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
    save()
  }
  const forget = (change: PlanChange) => {
    delete lock.resources[lockKey(change.kind, change.logicalId)]
    save()
  }

  async function run(change: PlanChange): Promise<OperationOutcome> {
    const started = performance.now()
    const outcome: OperationOutcome = { change, ok: false, ms: 0 }
    try {
      if (change.action === 'delete') {
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
          const result = await createResource(client, change.kind, payload)
          record(change, result.remoteId, payload)
          outcome.verb = 'created'
          outcome.remoteId = result.remoteId
        } else if (change.action === 'update') {
          await updateResource(client, change.kind, change.remoteId!, payload)
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
          const result = await createResource(client, change.kind, payload)
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
  return { outcomes, failed: outcomes.filter((o) => !o.ok), notStarted, interrupted: options.signal?.aborted ?? false }
}
