import type { DesiredResource, ResourceKind } from './types.js'

/** The placeholder a reference holds until it is resolved: `${kind}:${logicalId}`. */
export const placeholder = (kind: ResourceKind, logicalId: string) => `${kind}:${logicalId}`

/** Looks up the remote id of a resource; undefined when it does not exist yet. */
export type RemoteIdLookup = (kind: ResourceKind, logicalId: string) => string | undefined

/**
 * A copy of the resource's payload with every reference whose target has a remote id replaced
 * by that id (a number where the API wants one: an alert channel's). Unresolved references keep
 * their placeholder; `unresolved` lists them.
 */
export function resolveRefs(resource: DesiredResource, lookup: RemoteIdLookup): { payload: Record<string, unknown>; unresolved: string[] } {
  if (resource.refs.length === 0) return { payload: resource.payload, unresolved: [] }
  const payload = structuredClone(resource.payload)
  const unresolved: string[] = []
  for (const ref of resource.refs) {
    const id = lookup(ref.kind, ref.logicalId)
    if (id === undefined) {
      unresolved.push(placeholder(ref.kind, ref.logicalId))
      continue
    }
    setPath(payload, ref.path, ref.numeric ? Number(id) : id)
  }
  return { payload, unresolved }
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.')
  let node: unknown = target
  for (const part of parts.slice(0, -1)) {
    if (!node || typeof node !== 'object') return
    node = (node as Record<string, unknown>)[part]
  }
  if (node && typeof node === 'object') (node as Record<string, unknown>)[parts[parts.length - 1]] = value
}
