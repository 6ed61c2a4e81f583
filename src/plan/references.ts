import { entriesByKind, lockKey } from '../state/lock.js'
import type { ResourceKind } from '../resources/types.js'
// kinds other resources refer to by id (a check's `triggerIncident.serviceId`, a card's services)
import { NUMERIC_ID_KINDS, REFERENCED_KINDS } from '../resources/registry.js'
import type { PlanInput } from './plan.js'
import type { PlanReference } from './types.js'

/**
 * Where an id is in the index: the id itself, or `#<id>` for a kind the service numbers (alert
 * channels), whose ids cannot be told apart from any other number of a plan's text: those are
 * named only as the key of a keyed array (`alertChannelSubscriptions[#2]` read as `[2]`).
 */
const indexKey = (kind: ResourceKind, id: string) => (NUMERIC_ID_KINDS.has(kind) ? `#${id}` : id)

const nameOf = (payload: Record<string, unknown> | undefined) => (typeof payload?.name === 'string' ? payload.name : undefined)

/**
 * What every id a reference can hold stands for, so that a plan names the construct instead of
 * printing an id: placeholders of resources not created yet, remote ids the lock knows (by
 * logical id, with the code's name), and remote resources the lock does not know (by their
 * remote name). Undefined when there is nothing to name.
 */
export function referenceIndex(input: PlanInput): Record<string, PlanReference> | undefined {
  const out: Record<string, PlanReference> = {}
  const kinds = new Set<ResourceKind>(REFERENCED_KINDS)
  for (const resource of input.desired) for (const ref of resource.refs) kinds.add(ref.kind)
  const desiredNames = new Map<string, string | undefined>()
  for (const resource of input.desired) {
    if (!kinds.has(resource.kind)) continue
    desiredNames.set(lockKey(resource.kind, resource.logicalId), nameOf(resource.payload))
  }
  for (const kind of kinds) {
    for (const [id, record] of Object.entries(input.remote.records[kind] ?? {})) {
      const name = nameOf(record as Record<string, unknown>)
      out[indexKey(kind, id)] = { kind, ...(name !== undefined ? { name } : {}) }
    }
  }
  // the lock's entries in its own order, read only when it holds some of these kinds
  const byKind = entriesByKind(input.lock)
  const holds = [...kinds].some((kind) => (byKind.get(kind)?.length ?? 0) > 0)
  for (const entry of holds ? Object.values(input.lock?.resources ?? {}) : []) {
    if (!kinds.has(entry.kind)) continue
    const key = lockKey(entry.kind, entry.logicalId)
    const at = indexKey(entry.kind, entry.remoteId)
    const name = desiredNames.get(key) ?? entry.name ?? out[at]?.name
    out[at] = { kind: entry.kind, logicalId: entry.logicalId, ...(name !== undefined ? { name } : {}) }
  }
  for (const [key, name] of desiredNames) {
    const [kind, ...rest] = key.split(':')
    out[key] = { kind: kind as ResourceKind, logicalId: rest.join(':'), ...(name !== undefined ? { name } : {}) }
  }
  return Object.keys(out).length > 0 ? out : undefined
}
