import type { DesiredResource, ResourceKind } from '../resources/types.js'
import type { ApiClient } from '../api/client.js'
import { fetchRemoteState, type RemoteState } from '../api/resources.js'
import { entriesByKind, lockKey, type LockFile } from '../state/lock.js'
import { kindsReferring, REFERENCED_KINDS } from '../resources/registry.js'
import { computePlan, type PlanInput } from './plan.js'
import { selectTargets } from './select.js'
import type { Plan } from './types.js'

export * from './types.js'
export { computePlan, replanChanged, summarize } from './plan.js'
export { renderPlanText, summaryLine } from './render/text.js'
export { normalize } from '../resources/normalize.js'
export { fieldDiffs } from './diff.js'

/** The kinds whose collections a plan must read: those in the code and those in the lock (pending creates too). */
export function kindsToRead(desired: readonly DesiredResource[], lock: LockFile | undefined): ResourceKind[] {
  const kinds = new Set<ResourceKind>()
  for (const resource of desired) kinds.add(resource.kind)
  for (const kind of entriesByKind(lock).keys()) kinds.add(kind)
  for (const intent of Object.values(lock?.pending ?? {})) kinds.add(intent.kind)
  return [...kinds]
}

/** Reads the remote state, then plans. The only part of planning that does I/O. */
export async function planAgainst(options: {
  client: ApiClient
  desired: readonly DesiredResource[]
  lock: LockFile | undefined
  target: Plan['target']
  /** The config's environment (`--env`), recorded in the plan. */
  environment?: string
  codeOptions?: PlanInput['codeOptions']
  codeFiles?: PlanInput['codeFiles']
  adoptExisting?: boolean
  /** `--allow-duplicates`: duplicates of kinds that may exist twice are planned as second copies. */
  allowDuplicates?: boolean
  /** `--target`: the plan limited to these resources and what they depend on (see selectTargets). */
  targets?: readonly string[]
}): Promise<{ plan: Plan; remote: RemoteState }> {
  const kinds = kindsToRead(options.desired, options.lock)
  const remote = await fetchRemoteState(options.client, kinds)
  // A referenced resource (a status page service) leaving the code: whatever still uses it must be known to foresee a 409.
  let users: PlanInput['users']
  const missing = REFERRING_KINDS.filter((kind) => !kinds.includes(kind))
  if (missing.length > 0 && deletesReferenced(options.desired, options.lock)) users = (await fetchRemoteState(options.client, missing)).records
  const input: PlanInput = {
    desired: options.desired,
    lock: options.lock,
    remote,
    target: options.target,
    environment: options.environment,
    codeOptions: options.codeOptions,
    codeFiles: options.codeFiles,
    adoptExisting: options.adoptExisting,
    allowDuplicates: options.allowDuplicates,
    users,
  }
  const plan = computePlan(input)
  return { plan: options.targets && options.targets.length > 0 ? selectTargets(plan, options.targets, input) : plan, remote }
}

/** Whether the lock holds a resource of a kind others refer to (a status page service) that the code no longer has. */
function deletesReferenced(desired: readonly DesiredResource[], lock: LockFile | undefined): boolean {
  const byKind = entriesByKind(lock)
  const held = REFERENCED_KINDS.filter((kind) => (byKind.get(kind)?.length ?? 0) > 0)
  if (held.length === 0) return false
  const inCode = new Set<string>()
  for (const resource of desired) if (held.includes(resource.kind)) inCode.add(lockKey(resource.kind, resource.logicalId))
  return held.some((kind) => byKind.get(kind)!.some((entry) => !inCode.has(lockKey(entry.kind, entry.logicalId))))
}

/** Kinds that can refer to another resource (a status page's cards, a check's triggerIncident). */
const REFERRING_KINDS: ResourceKind[] = [...new Set(REFERENCED_KINDS.flatMap(kindsReferring))]
