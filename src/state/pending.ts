import type { RemoteRecord, ResourceKind } from '../resources/types.js'
import { descriptorOf, identityValue, remoteIdOf, RESOURCE_KINDS } from '../resources/registry.js'
import { appliedHash, secretHashOf } from '../resources/hashes.js'
import type { PendingCreate } from './lock.js'

/**
 * The fields that find a resource again in its list when the answer to its POST was lost
 * (the descriptor's identity fields). Checks are listed per kind already (so the check type is
 * implied); a variable's key and a status page's url are unique on the service, the others are
 * names; an alert channel's are its type and, where a read shows it, its address (email) or name.
 */
export const IDENTITY_FIELDS: Record<ResourceKind, readonly string[]> = Object.fromEntries(
  RESOURCE_KINDS.map((kind) => [kind, descriptorOf(kind).identity.fields]),
) as Record<ResourceKind, readonly string[]>

/** The pending-create record written before a POST of `payload`; `hash`: its `appliedHash` when known already. */
export function pendingCreate(kind: ResourceKind, logicalId: string, payload: Record<string, unknown>, hash?: string): PendingCreate {
  const match: Record<string, string> = {}
  for (const field of IDENTITY_FIELDS[kind]) {
    const value = identityValue(payload, field)
    if (value !== undefined) match[field] = value
  }
  const pending: PendingCreate = { kind, logicalId, appliedHash: hash ?? appliedHash(kind, payload), match }
  const secretHash = secretHashOf(kind, payload)
  if (secretHash) pending.secretHash = secretHash
  return pending
}

/**
 * The remote record a lost create made: one not `taken` (managed or claimed already) whose
 * identifying fields match. Of several, the one whose normalized content is what was sent, else
 * the newest. Undefined when there is none (the create never happened).
 */
export function findCreated(
  pending: PendingCreate,
  records: Record<string, RemoteRecord>,
  taken: ReadonlySet<string>,
  idOf: (record: RemoteRecord) => string = (record) => remoteIdOf(pending.kind, record),
): { remoteId: string; record: RemoteRecord } | undefined {
  const fields = Object.entries(pending.match)
  if (fields.length === 0) return undefined
  const candidates: Array<{ remoteId: string; record: RemoteRecord }> = []
  for (const record of Object.values(records)) {
    const remoteId = idOf(record)
    if (taken.has(remoteId)) continue
    if (fields.every(([field, value]) => identityValue(record, field) === value)) candidates.push({ remoteId, record })
  }
  if (candidates.length <= 1) return candidates[0]
  const same = candidates.find((c) => appliedHash(pending.kind, c.record) === pending.appliedHash)
  if (same) return same
  return candidates.sort((a, b) => String(b.record.created_at ?? '').localeCompare(String(a.record.created_at ?? '')))[0]
}
