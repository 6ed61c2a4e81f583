import { RESOURCE_KINDS, type DesiredResource, type ResourceKind } from '../project/types.js'
import type { RemoteRecord, RemoteState } from '../api/resources.js'
import { lockKey, type LockEntry, type LockFile } from '../apply/lock.js'
import { normalize, normalizeParsed } from './normalize.js'
import { fieldDiffs } from './diff.js'
import { resolveRefs, placeholder } from './refs.js'
import { desiredHash, maskSecrets } from './hashes.js'
import { secretMatches, SECRET_MASK } from './secrets.js'
import { jsonEqual } from './stable-json.js'
import type { FieldDiff, Plan, PlanChange, PlanSummary } from './types.js'

export interface PlanInput {
  desired: readonly DesiredResource[]
  lock: LockFile | undefined
  remote: RemoteState
  target: Plan['target']
}

const KIND_ORDER = new Map(RESOURCE_KINDS.map((kind, index) => [kind, index]))

export const byKindThenId = (a: { kind: ResourceKind; logicalId: string }, b: { kind: ResourceKind; logicalId: string }) =>
  KIND_ORDER.get(a.kind)! - KIND_ORDER.get(b.kind)! || (a.logicalId < b.logicalId ? -1 : a.logicalId > b.logicalId ? 1 : 0)

/**
 * desired + lock + remote → plan. Pure: no I/O, no clock; the same inputs give the same plan.
 * Creates and updates come in dependency order (kinds in RESOURCE_KINDS order), deletes after
 * them in reverse order.
 */
export function computePlan(input: PlanInput): Plan {
  const { desired, remote } = input
  const lockEntries = input.lock?.resources ?? {}
  const changes: PlanChange[] = []

  // What will be created (not in the lock, or gone remotely): references to it stay unresolved.
  const willCreate = new Set<string>()
  for (const resource of desired) {
    const entry = lockEntries[lockKey(resource.kind, resource.logicalId)]
    if (!entry || !remote.records[resource.kind][entry.remoteId]) willCreate.add(lockKey(resource.kind, resource.logicalId))
  }
  const lookup = (kind: ResourceKind, logicalId: string) => {
    const key = lockKey(kind, logicalId)
    return willCreate.has(key) ? undefined : lockEntries[key]?.remoteId
  }

  const desiredKeys = new Set<string>()
  for (const resource of [...desired].sort(byKindThenId)) {
    const key = lockKey(resource.kind, resource.logicalId)
    desiredKeys.add(key)
    const entry = lockEntries[key]
    const { payload } = resolveRefs(resource, lookup)
    const base: PlanChange = {
      kind: resource.kind,
      logicalId: resource.logicalId,
      action: 'noop',
      name: displayName(resource.kind, resource.payload),
      construct: resource.construct,
      file: resource.file,
    }
    const dependsOn = [...new Set(resource.refs.map((ref) => placeholder(ref.kind, ref.logicalId)))].sort()
    if (dependsOn.length > 0) base.dependsOn = dependsOn

    const record = entry ? remote.records[resource.kind][entry.remoteId] : undefined
    const resolvedSame = payload === resource.payload
    const want = normalizeParsed(resource.kind, payload)
    base.desiredHash = desiredHash(resource.kind, resolvedSame ? want : normalizeParsed(resource.kind, resource.payload))
    if (!entry || !record) {
      const change: PlanChange = { ...base, action: 'create', payload: maskSecrets(resource.kind, payload) }
      if (entry) {
        change.drift = true
        change.reason = `deleted outside monitors (id ${entry.remoteId} no longer exists): it will be created again`
      }
      changes.push(change)
      continue
    }
    changes.push(compareExisting(base, resource.kind, payload, want, record, entry))
  }

  // In the lock, gone from the code: delete, in reverse dependency order.
  const deletes: PlanChange[] = []
  for (const [key, entry] of Object.entries(lockEntries)) {
    if (desiredKeys.has(key)) continue
    const record = remote.records[entry.kind]?.[entry.remoteId]
    const change: PlanChange = {
      kind: entry.kind,
      logicalId: entry.logicalId,
      action: 'delete',
      remoteId: entry.remoteId,
      name: entry.name ?? (record ? displayName(entry.kind, record) : undefined),
    }
    if (!record) {
      change.drift = true
      change.reason = 'already deleted outside monitors: only forgotten from the lock'
    }
    deletes.push(change)
  }
  deletes.sort((a, b) => byKindThenId(b, a))
  changes.push(...deletes)

  return { version: 1, target: { ...input.target }, changes, unmanaged: countUnmanaged(input), summary: summarize(changes) }
}

function compareExisting(
  base: PlanChange,
  kind: ResourceKind,
  payload: Record<string, unknown>,
  want: Record<string, unknown>,
  record: RemoteRecord,
  entry: LockEntry,
): PlanChange {
  // Cheap first: most records equal the desired payload once read-only fields are dropped.
  let have = normalizeParsed(kind, record)
  const secret = kind === 'variable' && (want.secret === true || have.secret === true)
  if (!secret && jsonEqual(want, have)) return { ...base, remoteId: entry.remoteId }
  have = normalize(kind, record)
  let secretPaths: Set<string> | undefined
  if (secret) {
    secretPaths = new Set(['value'])
    // The service reads secrets back as "": compare the lock's fingerprint instead.
    if (have.secret === true && typeof want.value === 'string') {
      have.value = secretMatches(want.value, entry.secretHash) ? want.value : '\u0000changed'
    }
  }
  const change: PlanChange = { ...base, remoteId: entry.remoteId }
  if (jsonEqual(want, have)) return change

  const diffs = fieldDiffs(have, want).map((d) => maskDiff(d, secretPaths, want, have))
  change.fieldDiffs = diffs
  change.payload = maskSecrets(kind, payload)
  if (kind === 'variable' && typeof want.key === 'string' && want.key !== entry.remoteId) {
    change.action = 'replace'
    change.reason = `the key of a variable cannot change (${entry.remoteId} → ${want.key})`
  } else if (kind === 'variable' && have.secret === true && want.secret !== true) {
    change.action = 'replace'
    change.reason = 'a secret variable cannot be made non-secret'
  } else {
    change.action = 'update'
  }
  return change
}

function maskDiff(d: FieldDiff, secretPaths: Set<string> | undefined, want: Record<string, unknown>, have: Record<string, unknown>): FieldDiff {
  let secret = secretPaths?.has(d.path) ?? false
  const env = /^environmentVariables\[([^\]]+)\](\.value)?$/.exec(d.path)
  if (env) {
    const isSecret = (list: unknown) =>
      Array.isArray(list) && list.some((v: Record<string, unknown>) => v?.key === env[1] && v?.secret === true)
    if (isSecret(want.environmentVariables) || isSecret(have.environmentVariables)) {
      if (env[2]) secret = true
      else {
        // A whole item added or removed: mask its value only.
        const masked = { ...d }
        for (const side of ['old', 'new'] as const) {
          const v = d[side] as Record<string, unknown> | undefined
          if (v && typeof v === 'object' && v.secret) masked[side] = { ...v, value: SECRET_MASK }
        }
        return masked
      }
    }
  }
  if (!secret) return d
  const masked: FieldDiff = { path: d.path, secret: true }
  if ('old' in d) masked.old = SECRET_MASK
  if ('new' in d) masked.new = SECRET_MASK
  return masked
}

export function displayName(kind: ResourceKind, payload: Record<string, unknown>): string | undefined {
  const name = kind === 'variable' ? payload.key : payload.name
  return typeof name === 'string' ? name : undefined
}

function countUnmanaged(input: PlanInput): Record<string, number> {
  const known = new Set(Object.values(input.lock?.resources ?? {}).map((entry) => lockKey(entry.kind, entry.remoteId)))
  const counts: Record<string, number> = {}
  for (const kind of RESOURCE_KINDS) {
    let n = 0
    for (const id of Object.keys(input.remote.records[kind])) if (!known.has(lockKey(kind, id))) n++
    if (n > 0) counts[kind] = n
  }
  for (const [label, n] of Object.entries(input.remote.foreign)) counts[label] = (counts[label] ?? 0) + n
  return counts
}

export function summarize(changes: readonly PlanChange[]): PlanSummary {
  const summary: PlanSummary = { create: 0, update: 0, delete: 0, noop: 0, drift: 0 }
  for (const change of changes) {
    if (change.drift) summary.drift++
    if (change.action === 'replace') {
      summary.create++
      summary.delete++
    } else summary[change.action]++
  }
  return summary
}
