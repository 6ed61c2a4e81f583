import type { DesiredResource, ResourceKind } from '../project/types.js'
import type { ApiClient } from '../api/client.js'
import { fetchRemoteState, type RemoteState } from '../api/resources.js'
import type { LockFile } from '../apply/lock.js'
import { computePlan, type PlanInput } from './plan.js'
import type { Plan } from './types.js'

export * from './types.js'
export { computePlan, summarize, displayName } from './plan.js'
export { renderPlanText, summaryLine } from './render/text.js'
export { normalize } from './normalize.js'
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
}): Promise<{ plan: Plan; remote: RemoteState }> {
  const remote = await fetchRemoteState(options.client, kindsToRead(options.desired, options.lock))
  return { plan: computePlan({ desired: options.desired, lock: options.lock, remote, target: options.target, codeOptions: options.codeOptions }), remote }
}
