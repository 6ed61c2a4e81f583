import type { DesiredResource } from '../project/types.js'
import type { RemoteRecord, RemoteState } from '../api/resources.js'
import { ENDPOINTS } from '../api/resources.js'
import { lockKey, type LockEntry, type LockFile } from '../apply/lock.js'
import { findCreated } from '../apply/pending.js'

export const ADOPTED_REASON = 'made by an earlier apply whose answer was lost: recorded in the lock, not created again'

/**
 * Pending creates in the lock (a POST whose answer never reached the lock: a timeout, a lost
 * connection, a killed apply) whose resource exists remotely: for each desired resource that
 * has no live lock entry, the lock entry it should have. Only records no lock entry manages are
 * candidates, and each is adopted once.
 */
export function adoptPendingCreates(
  desired: readonly DesiredResource[],
  lock: LockFile | undefined,
  remote: RemoteState,
): Map<string, LockEntry> {
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
    const found = findCreated(intent, records, takenOfKind, ENDPOINTS[resource.kind].idOf)
    if (!found) continue
    taken.add(lockKey(resource.kind, found.remoteId))
    const adoptedEntry: LockEntry = { kind: resource.kind, logicalId: resource.logicalId, remoteId: found.remoteId, appliedHash: intent.appliedHash }
    if (intent.secretHash) adoptedEntry.secretHash = intent.secretHash
    adopted.set(key, adoptedEntry)
  }
  return adopted
}
