import type { DesiredResource, ResourceKind } from '../resources/types.js'
import type { ApiClient } from '../api/client.js'
import { dependencyTiers } from '../resources/registry.js'
import { DEFAULT_BACKOFF, type BackoffOptions } from '../api/backoff.js'
import type { Plan, PlanChange } from '../plan/types.js'
import type { LockFile } from '../state/lock.js'
import { ApplyContext } from './context.js'
import { runSteps } from './executor.js'
import { stepFor, type OperationOutcome, type Step } from './steps.js'

export type { OperationOutcome, OperationVerb } from './steps.js'

/**
 * Creates and updates run tier by tier (what others reference first); deletes run after all of
 * them, tiers reversed, so nothing is deleted while something still points at it.
 */
export const TIERS: ResourceKind[][] = dependencyTiers()

export interface ApplyOptions {
  plan: Plan
  /** The desired resources the plan was computed from: the real payloads (with secrets). */
  desired: readonly DesiredResource[]
  client: ApiClient
  /** The lock to update (mutated) and where it is written: whole at the start and the end, each change in between as a journal line. */
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

/**
 * The steps of one tier in batches, each step after the steps of the tier it references (a
 * check after the checks of its dependsOn); a tier whose steps reference none of each other is
 * one batch. A cycle (refused when the project is loaded) would leave its steps in the last batch.
 */
function layered(steps: Step[]): Step[][] {
  const keyOf = (s: Step) => `${s.change.kind}:${s.change.logicalId}`
  const inBatch = new Set(steps.map(keyOf))
  if (!steps.some((s) => s.change.dependsOn?.some((d) => inBatch.has(d)))) return [steps]
  const out: Step[][] = []
  const done = new Set<string>()
  let left = steps
  while (left.length > 0) {
    const ready = left.filter((s) => !(s.change.dependsOn ?? []).some((d) => inBatch.has(d) && !done.has(d)))
    const batch = ready.length > 0 ? ready : left
    out.push(batch)
    for (const s of batch) done.add(keyOf(s))
    left = left.filter((s) => !batch.includes(s))
  }
  return out
}

/** The plan's steps in dependency order: creates and updates tier by tier, then removals with the tiers reversed. */
export function orderSteps(changes: readonly PlanChange[]): Step[][] {
  const steps = changes.map(stepFor).filter((s): s is Step => s !== undefined)
  const tierOf = (kind: ResourceKind) => TIERS.findIndex((tier) => tier.includes(kind))
  const removing = (s: Step) => s.change.action === 'delete' || s.change.action === 'forget'
  const batches: Step[][] = []
  for (let t = 0; t < TIERS.length; t++) batches.push(...layered(steps.filter((s) => !removing(s) && tierOf(s.change.kind) === t)))
  for (let t = TIERS.length - 1; t >= 0; t--) batches.push(steps.filter((s) => removing(s) && tierOf(s.change.kind) === t))
  return batches
}

/** Runs a plan's operations. On the first failure no new operation starts; those in flight finish. */
export async function executePlan(options: ApplyOptions): Promise<ApplyResult> {
  const ctx = new ApplyContext(options.client, options.lock, options.lockPath, options.desired, { ...DEFAULT_BACKOFF, ...options.createRetry })
  ctx.settlePending(options.plan.changes.filter((c) => c.action !== 'noop'))
  ctx.begin()
  let ran: Awaited<ReturnType<typeof runSteps>>
  try {
    ran = await runSteps(ctx, orderSteps(options.plan.changes), {
      concurrency: Math.max(1, Math.floor(options.concurrency ?? 4)),
      onOutcome: options.onOutcome,
      signal: options.signal,
    })
  } finally {
    await ctx.finish()
  }
  const { outcomes, notStarted } = ran
  return {
    outcomes,
    failed: outcomes.filter((o) => !o.ok),
    notStarted: notStarted.map((s) => s.change),
    interrupted: options.signal?.aborted ?? false,
    recovered: outcomes.filter((o) => o.recovered).length,
  }
}
