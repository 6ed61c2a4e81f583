import type { DesiredResource, ResourceKind } from '../resources/types.js'
import type { ApiClient } from '../api/client.js'
import { fetchRemoteState, type RemoteState } from '../api/resources.js'
import type { LockFile } from '../state/lock.js'
import { kindsReferring, REFERENCED_KINDS } from '../resources/registry.js'
import { computePlan, type PlanInput } from './plan.js'
import type { Plan } from './types.js'

export * from './types.js'
export { computePlan, summarize } from './plan.js'
export { renderPlanText, summaryLine } from './render/text.js'
export { normalize } from '../resources/normalize.js'
export { fieldDiffs } from './diff.js'

/** The kinds whose collections a plan must read: those in the code and those in the lock (pending creates too). */
export function kindsToRead(desired: readonly DesiredResource[], lock: LockFile | undefined): ResourceKind[] {
  const kinds = new Set<ResourceKind>(desired.map((r) => r.kind))
  for (const entry of Object.values(lock?.resources ?? {})) kinds.add(entry.kind)
  for (const intent of Object.values(lock?.pending ?? {})) kinds.add(intent.kind)
  return [...kinds]
}

/** Reads the remote state, then plans. The only part of planning that does I/O. */
export async function planAgainst(options: {
  client: ApiClient
  desired: readonly DesiredResource[]
  lock: LockFile | undefined
  target: Plan['target']
  codeOptions?: PlanInput['codeOptions']
  adoptExisting?: boolean
}): Promise<{ plan: Plan; remote: RemoteState }> {
  const kinds = kindsToRead(options.desired, options.lock)
  const remote = await fetchRemoteState(options.client, kinds)
  // A referenced resource (a status page service) leaving the code: whatever still uses it must be known to foresee a 409.
  let users: PlanInput['users']
  const desiredKeys = new Set(options.desired.map((r) => `${r.kind}:${r.logicalId}`))
  const deletesService = Object.entries(options.lock?.resources ?? {}).some(([key, entry]) => REFERENCED_KINDS.includes(entry.kind) && !desiredKeys.has(key))
  const missing = REFERRING_KINDS.filter((kind) => !kinds.includes(kind))
  if (deletesService && missing.length > 0) users = (await fetchRemoteState(options.client, missing)).records
  const plan = computePlan({
    desired: options.desired, lock: options.lock, remote, target: options.target, codeOptions: options.codeOptions, adoptExisting: options.adoptExisting, users,
  })
  return { plan, remote }
}

/** Kinds that can refer to another resource (a status page's cards, a check's triggerIncident). */
const REFERRING_KINDS: ResourceKind[] = [...new Set(REFERENCED_KINDS.flatMap(kindsReferring))]
