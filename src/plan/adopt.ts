import type { DesiredResource } from '../resources/types.js'
import type { RemoteRecord, RemoteState } from '../api/resources.js'
import { remoteIdOf } from '../resources/registry.js'
import { lockKey, type LockEntry, type LockFile } from '../state/lock.js'
import { findCreated, pendingCreate } from '../state/pending.js'

export const ADOPTED_REASON = 'made by an earlier apply whose answer was lost: recorded in the lock, not created again'
export const ORPHAN_REASON = 'made by an earlier apply whose answer was lost, and gone from the code since: deleted'

/**
 * Pending creates in the lock (a POST whose answer never reached the lock: a timeout, a lost
 * connection, a killed apply) whose resource exists remotely: for each desired resource that
 * has no live lock entry, the lock entry it should have. Only records no lock entry manages are
 * candidates, and each is adopted once.
 */
export function adoptPendingCreates(desired: readonly DesiredResource[], lock: LockFile | undefined, remote: RemoteState): Map<string, LockEntry> {
  const adopted = new Map<string, LockEntry>()
  const pending = lock?.pending
  if (!pending || Object.keys(pending).length === 0) return adopted
  const taken = new Set<string>()
  for (const entry of Object.values(lock.resources)) taken.add(lockKey(entry.kind, entry.remoteId))
  for (const resource of desired) {
    const key = lockKey(resource.kind, resource.logicalId)
    const intent = pending[key]
    if (!intent || intent.kind !== resource.kind) continue
    const entry = lock.resources[key]
    if (entry && remote.records[resource.kind][entry.remoteId]) continue
    const records = remote.records[resource.kind] as Record<string, RemoteRecord>
    const takenOfKind = new Set([...taken].filter((k) => k.startsWith(`${resource.kind}:`)).map((k) => k.slice(resource.kind.length + 1)))
    const found = findCreated(intent, records, takenOfKind, (record) => remoteIdOf(resource.kind, record))
    if (!found) continue
    taken.add(lockKey(resource.kind, found.remoteId))
    const adoptedEntry: LockEntry = { kind: resource.kind, logicalId: resource.logicalId, remoteId: found.remoteId, appliedHash: intent.appliedHash }
    if (intent.secretHash) adoptedEntry.secretHash = intent.secretHash
    adopted.set(key, adoptedEntry)
  }
  return adopted
}

/**
 * Pending creates whose construct has left the code since: the resource the lost answer made
 * (when it exists) as the lock entry it would have had, so the plan deletes it instead of
 * leaving it behind unmanaged.
 */
export function orphanedPendingCreates(desiredKeys: ReadonlySet<string>, lock: LockFile | undefined, remote: RemoteState): LockEntry[] {
  const pending = lock?.pending
  if (!pending) return []
  const orphans: LockEntry[] = []
  const taken = new Set(Object.values(lock.resources).map((entry) => lockKey(entry.kind, entry.remoteId)))
  for (const [key, intent] of Object.entries(pending)) {
    if (desiredKeys.has(key) || lock.resources[key] || !remote.records[intent.kind]) continue
    const records = remote.records[intent.kind] as Record<string, RemoteRecord>
    const takenOfKind = new Set([...taken].filter((k) => k.startsWith(`${intent.kind}:`)).map((k) => k.slice(intent.kind.length + 1)))
    const found = findCreated(intent, records, takenOfKind, (record) => remoteIdOf(intent.kind, record))
    if (!found) continue
    taken.add(lockKey(intent.kind, found.remoteId))
    orphans.push({ kind: intent.kind, logicalId: intent.logicalId, remoteId: found.remoteId, appliedHash: intent.appliedHash })
  }
  return orphans
}

export const ADOPTED_EXISTING_REASON =
  "already existed remotely with the same identity, and this project's lock did not record it: recorded in the lock (--adopt-existing), not created again; " +
  'if another project manages it, this takes it over (both projects would then change it)'

/**
 * Creates of resources that already exist remotely, managed by no lock entry, with the same
 * identity (a check's, service's or window's name, a variable's key, a status page's url): most
 * often made by an apply whose lock update was lost (a failed commit-back), but perhaps another
 * project's (the service tells no project's resources from another's). For each such
 * desired resource, the remote record. `taken` holds remote ids already spoken for
 * (`kind:remoteId`, adopted pending creates); each record matches one create at most.
 */
export function findDuplicates(
  desired: readonly DesiredResource[],
  hasLiveEntry: (key: string) => boolean,
  lock: LockFile | undefined,
  remote: RemoteState,
  taken: ReadonlySet<string>,
  keyOf: (resource: DesiredResource) => string = (resource) => lockKey(resource.kind, resource.logicalId),
): Map<string, { remoteId: string; record: RemoteRecord }> {
  const found = new Map<string, { remoteId: string; record: RemoteRecord }>()
  // remote ids spoken for, per kind
  const used = new Map<string, Set<string>>()
  const use = (kind: string, remoteId: string) => {
    let set = used.get(kind)
    if (!set) used.set(kind, (set = new Set()))
    set.add(remoteId)
  }
  // the remote ids spoken for are gathered at the first create that could be a duplicate: a plan
  // of resources that all exist has none
  let gathered = false
  const gather = () => {
    gathered = true
    for (const key of taken) {
      const at = key.indexOf(':')
      use(key.slice(0, at), key.slice(at + 1))
    }
    const entries = lock?.resources ?? {}
    for (const key in entries) if (Object.hasOwn(entries, key)) use(entries[key].kind, entries[key].remoteId)
  }
  const nonEmpty = new Set<string>()
  for (const [kind, records] of Object.entries(remote.records)) {
    for (const _ in records) {
      nonEmpty.add(kind)
      break
    }
  }
  for (const resource of desired) {
    if (!nonEmpty.has(resource.kind)) continue
    const key = keyOf(resource)
    if (hasLiveEntry(key)) continue
    if (!gathered) gather()
    const records = remote.records[resource.kind] as Record<string, RemoteRecord>
    const match = findCreated(pendingCreate(resource.kind, resource.logicalId, resource.payload), records, used.get(resource.kind) ?? new Set(), (record) =>
      remoteIdOf(resource.kind, record),
    )
    if (!match) continue
    use(resource.kind, match.remoteId)
    found.set(key, match)
  }
  return found
}
