import type { DesiredResource, ResourceKind, ResourceOptions } from '../resources/types.js'
import { CHECK_KINDS, descriptorOf, displayName, kindsReferring, RESOURCE_KINDS, SET_ARRAYS, UNIQUE_IDENTITY_KINDS } from '../resources/registry.js'

const SET_FIELDS: ReadonlySet<string> = new Set(SET_ARRAYS)

/** Checks that can name a status page service (in their triggerIncident). */
const CHECKS_REFERRING_SERVICES = kindsReferring('status-page-service').filter((kind) => CHECK_KINDS.has(kind))
import type { RemoteRecord, RemoteState } from '../api/resources.js'
import { entriesByKind, lockKey, type LockEntry, type LockFile } from '../state/lock.js'
import { normalize, normalizedEqual, normalizeParsed } from '../resources/normalize.js'
import { fieldDiffs } from './diff.js'
import { resolveRefs, placeholder } from '../resources/refs.js'
import { appliedHash, desiredHash, maskSecrets } from '../resources/hashes.js'
import { secretMatches, SECRET_CHANGED, SECRET_MASK } from '../resources/secrets.js'
import { jsonEqual } from '../resources/stable-json.js'
import { ORPHAN_REASON, adoptPendingCreates, orphanedPendingCreates, ADOPTED_REASON, ADOPTED_EXISTING_REASON, findDuplicates } from './adopt.js'
import { referenceIndex } from './references.js'
import { applyGroup } from '../schema/check-group.js'
import type { BlockedDelete, FieldDiff, Plan, PlanChange, PlanSummary, ProtectedChange, RenameHint } from './types.js'

export interface PlanInput {
  desired: readonly DesiredResource[]
  lock: LockFile | undefined
  remote: RemoteState
  target: Plan['target']
  /** The config's environment (`--env`), recorded in the plan. */
  environment?: string
  /**
   * Resource options from the code for resources that are not desired (destroy plans against no
   * desired resources, but `protect` and `retainOnDelete` in the code still hold), keyed by
   * `kind:logicalId`.
   */
  codeOptions?: ReadonlyMap<string, ResourceOptions>
  /** The files of the resources of the code that are not desired (destroy), keyed as `codeOptions`: a refusal says where they are. */
  codeFiles?: ReadonlyMap<string, string>
  /**
   * A create whose identity (name, key, url) an unmanaged remote resource already has is
   * recorded against that resource and planned as an update (`--adopt-existing`), instead of
   * being marked as a duplicate.
   */
  adoptExisting?: boolean
  /**
   * Creates marked as duplicates of kinds that may exist twice are made as second copies
   * (`--allow-duplicates`): counted as creates, not as refused duplicates.
   */
  allowDuplicates?: boolean
  /**
   * Remote records of kinds the plan does not manage but that may still use what it deletes
   * (status pages and checks using a status page service), read only to foresee a 409.
   */
  users?: Partial<Record<ResourceKind, Record<string, RemoteRecord>>>
}

const KIND_ORDER = new Map(RESOURCE_KINDS.map((kind, index) => [kind, index]))

export const byKindThenId = (a: { kind: ResourceKind; logicalId: string }, b: { kind: ResourceKind; logicalId: string }) =>
  // nearly every pair a plan compares is of one kind: no lookup of the kinds' order for it
  (a.kind === b.kind ? 0 : KIND_ORDER.get(a.kind)! - KIND_ORDER.get(b.kind)!) || (a.logicalId < b.logicalId ? -1 : a.logicalId > b.logicalId ? 1 : 0)

/**
 * desired + lock + remote → plan. Pure: no I/O, no clock; the same inputs give the same plan.
 * Creates and updates come in dependency order (kinds in RESOURCE_KINDS order), deletes after
 * them in reverse order. Named phases, each reading the inputs and what the phases before found:
 * match (desired ↔ lock, renames), adoption of lost creates, duplicates, per-resource diffs,
 * removals, protections, and the assembled plan (blocked deletes, summary).
 */
export function computePlan(input: PlanInput): Plan {
  const matching = matchLock(input.desired, input.lock?.resources ?? {})
  adoptLostCreates(input, matching)
  findDuplicateCreates(input, matching)
  const lookup = referenceLookup(input, matching)
  const changes = sortedByKindThenId(input.desired).map((resource) => planResource(resource, input, matching, lookup))
  const removals = planRemovals(input, matching)
  const protectedChanges = [...protectedReplaces(changes, input, matching), ...protectedRemovals(input, matching)]
  return assemblePlan(input, [...changes, ...removals], protectedChanges)
}

/**
 * The plan computePlan makes of `input`, made from `previous`: the plan of the same lock, remote
 * state and options for desired resources that were the same but for `changed` (the same kinds
 * and logical ids, in the same files or others; other props). Each of `changed` is planned again
 * and every other change is kept: what a change of one resource depends on beyond it (aliases,
 * adoption, duplicates, references, a group's fields, the names the references index shows) is
 * checked to be the same first. Undefined when it cannot be told so: computePlan then makes it.
 * `input.desired` is not read.
 */
export function replanChanged(previous: Plan, changed: readonly DesiredResource[], input: PlanInput): Plan | undefined {
  const lock = input.lock
  if (!lock || (lock.pending && Object.keys(lock.pending).length > 0) || previous.blocked) return undefined
  const kinds = new Set(changed.map((r) => r.kind))
  if (Object.values(previous.references ?? {}).some((ref) => kinds.has(ref.kind))) return undefined
  // where each of `changed` is planned in `previous` (only their logical ids are keyed: a plan of 10,000 changes is read once, not keyed whole)
  const ids = new Set(changed.map((r) => r.logicalId))
  const at = new Map<string, number>()
  for (let i = 0; i < previous.changes.length; i++) {
    const change = previous.changes[i]
    if (change.kind === 'status-page-service' && change.action === 'delete') return undefined
    if (ids.has(change.logicalId) && change.action !== 'delete' && change.action !== 'forget') at.set(lockKey(change.kind, change.logicalId), i)
  }
  const matching = matchLock(changed, lock.resources)
  const changes = [...previous.changes]
  for (const resource of changed) {
    const key = matching.keyOf.get(resource)!
    const i = at.get(key)
    const was = i === undefined ? undefined : changes[i]
    const entry = matching.entryOf.get(key)?.entry
    // a check of its own, recorded and there: no alias, reference or group, nothing of another resource
    if (!was || !CHECK_KINDS.has(resource.kind) || resource.refs.length > 0 || (resource.options.aliases?.length ?? 0) > 0) return undefined
    if (!entry || !input.remote.records[resource.kind][entry.remoteId] || was.adopted || was.movedFrom || was.dependsOn || was.fromGroup) return undefined
    if (was.action !== 'noop' && was.action !== 'update') return undefined
    const change = planResource(resource, input, matching, () => undefined)
    if (change.action !== 'noop' && change.action !== 'update') return undefined
    changes[i!] = change
  }
  const plan: Plan = { ...previous, changes, summary: summarize(changes) }
  return plan
}

/** Which lock entry each desired resource has (keyed `kind:logicalId`), and how it got it. */
interface Matching {
  /** Each desired resource's lock key, made once: a plan of 10,000 resources looks them up in every phase. */
  keyOf: Map<DesiredResource, string>
  desiredKeys: Set<string>
  /** Its own entry, an alias's (`movedFrom`: a rename), a lost create's, or an existing remote's (--adopt-existing). */
  entryOf: Map<string, { entry: LockEntry; movedFrom?: string }>
  /** Lock keys held by a desired resource, its own or through an alias: not removed. */
  claimed: Set<string>
  /** Desired keys recorded against what a create whose answer was lost made. */
  adopted: Map<string, LockEntry>
  /** Desired keys recorded against an unmanaged remote resource of the same identity. */
  adoptedExisting: Set<string>
  /** Creates of what already exists remotely, unmanaged, with the same identity. */
  duplicates: Map<string, { remoteId: string; record: RemoteRecord }>
  /** Creates of kinds whose alike are usual (alert channels) with an unmanaged one alike: created, the other named. */
  alike: Map<string, { remoteId: string; record: RemoteRecord }>
  /** The lock entries no desired resource holds (see removedEntries), found once. */
  removed?: RemovedEntry[]
}

type Lookup = (kind: ResourceKind, logicalId: string) => string | undefined

/** Phase 1: each desired resource's lock entry: its own, or else the entry of one of its aliases (a rename). */
function matchLock(desired: readonly DesiredResource[], lockEntries: Record<string, LockEntry>): Matching {
  const keyOf = new Map<DesiredResource, string>()
  const desiredKeys = new Set<string>()
  for (const resource of desired) {
    const key = lockKey(resource.kind, resource.logicalId)
    keyOf.set(resource, key)
    desiredKeys.add(key)
  }
  const entryOf: Matching['entryOf'] = new Map()
  const claimed = new Set<string>()
  for (const resource of desired) {
    const key = keyOf.get(resource)!
    const own = lockEntries[key]
    if (own) {
      entryOf.set(key, { entry: own })
      claimed.add(key)
    }
  }
  for (const resource of desired) {
    if (!resource.options.aliases) continue
    const key = keyOf.get(resource)!
    if (entryOf.has(key)) continue
    for (const alias of resource.options.aliases) {
      const old = lockKey(resource.kind, alias)
      if (!lockEntries[old] || desiredKeys.has(old) || claimed.has(old)) continue
      entryOf.set(key, { entry: lockEntries[old], movedFrom: alias })
      claimed.add(old)
      break
    }
  }
  return { keyOf, desiredKeys, entryOf, claimed, adopted: new Map(), adoptedExisting: new Set(), duplicates: new Map(), alike: new Map() }
}

/** Phase 2: a create whose answer was lost (a timeout, a killed apply): what it made is adopted, not made twice. */
function adoptLostCreates(input: PlanInput, matching: Matching): void {
  matching.adopted = adoptPendingCreates(input.desired, input.lock, input.remote)
  for (const [key, entry] of matching.adopted) matching.entryOf.set(key, { entry })
}

/**
 * Phase 3: a create of what already exists, unmanaged, with the same identity (a lock update
 * that was lost): marked as a duplicate, or with adoptExisting recorded against the remote one.
 */
function findDuplicateCreates(input: PlanInput, matching: Matching): void {
  const { remote } = input
  const liveEntry = (key: string) => {
    const entry = matching.entryOf.get(key)?.entry
    return entry !== undefined && remote.records[entry.kind][entry.remoteId] !== undefined
  }
  const taken = new Set([...matching.adopted.values()].map((e) => lockKey(e.kind, e.remoteId)))
  const found = findDuplicates(input.desired, liveEntry, input.lock, remote, taken, (resource) => matching.keyOf.get(resource)!)
  for (const [key, match] of found) {
    const kind = key.slice(0, key.indexOf(':')) as ResourceKind
    if (descriptorOf(kind).identity.alike) {
      found.delete(key)
      matching.alike.set(key, match)
    }
  }
  matching.duplicates = found
  if (!input.adoptExisting) return
  for (const resource of input.desired) {
    const key = matching.keyOf.get(resource)!
    const found = matching.duplicates.get(key)
    if (!found) continue
    const entry: LockEntry = {
      kind: resource.kind,
      logicalId: resource.logicalId,
      remoteId: found.remoteId,
      appliedHash: appliedHash(resource.kind, found.record),
    }
    matching.entryOf.set(key, { entry })
    matching.adoptedExisting.add(key)
  }
}

/** Phase 4: remote ids for references; what will be created (not in the lock, or gone remotely) stays unresolved. */
function referenceLookup(input: PlanInput, matching: Matching): Lookup {
  // made on the first lookup: most projects hold few references, many none
  let willCreate: Set<string> | undefined
  const creates = () => {
    const out = new Set<string>()
    for (const resource of input.desired) {
      const key = matching.keyOf.get(resource)!
      const entry = matching.entryOf.get(key)?.entry
      if (!entry || !input.remote.records[resource.kind][entry.remoteId]) out.add(key)
    }
    return out
  }
  return (kind, logicalId) => {
    willCreate ??= creates()
    const key = lockKey(kind, logicalId)
    return willCreate.has(key) ? undefined : matching.entryOf.get(key)?.entry.remoteId
  }
}

/** Fields of a check a group may give it, as plans name them. */
const GROUP_GIVEN = [
  'locations',
  'activated',
  'muted',
  'environmentVariables',
  'alertChannelSubscriptions',
  'alertSettings',
  'retryStrategy',
  'runtimeId',
  'request',
] as const

/**
 * What a check's group of the project gives it (applyGroup, as the service runs it): the fields
 * that differ from the check's own, and its frequency when the check's is the group's.
 */
function groupValues(resource: DesiredResource, desired: readonly DesiredResource[]): PlanChange['fromGroup'] {
  const ref = resource.refs.find((r) => r.kind === 'check-group')
  if (!ref) return undefined
  const group = desired.find((r) => r.kind === 'check-group' && r.logicalId === ref.logicalId)
  if (!group) return undefined
  const own = resource.payload
  const applied = applyGroup(own, group.payload)
  const fields: Record<string, unknown> = {}
  for (const field of GROUP_GIVEN) {
    if (jsonEqual(applied[field] ?? null, own[field] ?? null)) continue
    // never a value that may be secret: variables by key, the request by the parts the group gives
    if (field === 'environmentVariables') fields[field] = (applied[field] as Array<{ key: string }>).map((v) => v.key)
    else if (field === 'request') {
      const mine = (own.request ?? {}) as Record<string, unknown>
      const theirs = applied.request as Record<string, unknown>
      fields['request (API-check defaults)'] = Object.keys(theirs).filter((k) => !jsonEqual(theirs[k] ?? null, mine[k] ?? null))
    } else fields[field] = applied[field]
  }
  if (group.payload.frequency !== undefined && group.payload.frequency !== null && group.payload.frequency === own.frequency) fields.frequency = own.frequency
  if (Object.keys(fields).length === 0) return undefined
  const name = displayName('check-group', group.payload)
  return { group: placeholder('check-group', ref.logicalId), ...(name !== undefined ? { name } : {}), fields }
}

/** Phase 5: one desired resource's change: a create, or the difference from its remote record. */
function planResource(resource: DesiredResource, input: PlanInput, matching: Matching, lookup: Lookup): PlanChange {
  const key = matching.keyOf.get(resource)!
  const found = matching.entryOf.get(key)
  const entry = found?.entry
  // most resources hold no reference: their payload as it is, without resolveRefs' answer object
  const payload = resource.refs.length === 0 ? resource.payload : resolveRefs(resource, lookup).payload
  const base: PlanChange = {
    kind: resource.kind,
    logicalId: resource.logicalId,
    action: 'noop',
    name: displayName(resource.kind, resource.payload),
    construct: resource.construct,
    file: resource.file,
  }
  if (found?.movedFrom) base.movedFrom = found.movedFrom
  if (resource.refs.length > 0) base.dependsOn = [...new Set(resource.refs.map((ref) => placeholder(ref.kind, ref.logicalId)))].sort()
  const fromGroup = groupValues(resource, input.desired)
  if (fromGroup) base.fromGroup = fromGroup
  const record = entry ? input.remote.records[resource.kind][entry.remoteId] : undefined
  if (!entry || !record)
    return hashed(resource, createChange(base, payload, entry, matching.duplicates.get(key), matching.alike.get(key), input.allowDuplicates))
  const change = compareExisting(base, resource.kind, payload, record, entry)
  addOptionChanges(change, resource.options, entry)
  if (change.action === 'noop' && change.movedFrom) change.action = 'move'
  if (matching.adopted.has(key) || matching.adoptedExisting.has(key)) {
    change.adopted = true
    change.reason = matching.adopted.has(key) ? ADOPTED_REASON : ADOPTED_EXISTING_REASON
    delete change.lockOnly
    if (change.action === 'noop') change.action = 'update'
  }
  return hashed(resource, change)
}

/** A change to run carries the hash a saved plan is checked with; a no-op (most of a plan) does not need one. */
function hashed(resource: DesiredResource, change: PlanChange): PlanChange {
  if (change.action !== 'noop') change.desiredHash = desiredHash(resource.kind, normalizeParsed(resource.kind, resource.payload))
  return change
}

/** The resources in kind-then-id order; the loader already gives them so, which is checked in one pass before copying to sort. */
function sortedByKindThenId(desired: readonly DesiredResource[]): DesiredResource[] {
  for (let i = 1; i < desired.length; i++) if (byKindThenId(desired[i - 1], desired[i]) > 0) return [...desired].sort(byKindThenId)
  return desired as DesiredResource[]
}

/** A create: the lock knows no live resource for it. `entry`: it was deleted outside monitors; `duplicate`: it exists unmanaged. */
function createChange(
  base: PlanChange,
  payload: Record<string, unknown>,
  entry: LockEntry | undefined,
  duplicate: { remoteId: string; record: RemoteRecord } | undefined,
  alike: { remoteId: string; record: RemoteRecord } | undefined,
  allowDuplicates = false,
): PlanChange {
  const change: PlanChange = { ...base, action: 'create', payload: maskSecrets(base.kind, payload) }
  if (entry) {
    change.drift = true
    change.reason = `deleted outside monitors (id ${entry.remoteId} no longer exists): it will be created again`
  }
  if (duplicate) {
    change.duplicateOf = { remoteId: duplicate.remoteId }
    if (allowDuplicates && !UNIQUE_IDENTITY_KINDS.has(base.kind)) change.duplicateOf.copy = true
    const name = displayName(base.kind, duplicate.record)
    if (name !== undefined) change.duplicateOf.name = name
    const what =
      `already exists remotely as id ${duplicate.remoteId}${name !== undefined ? ` "${name}"` : ''}, which this project's lock does not record (duplicate): ` +
      `${OWNER_UNKNOWN}; ` +
      (UNIQUE_IDENTITY_KINDS.has(base.kind)
        ? `apply refuses this create; --adopt-existing records the existing one, taking it over (a ${descriptorOf(base.kind).identity.fields.join(' and ')} cannot exist twice)`
        : allowDuplicates
          ? '--allow-duplicates: a second one is created'
          : 'apply refuses this create; --adopt-existing records the existing one, taking it over, --allow-duplicates creates another')
    change.reason = change.reason ? `${change.reason}; ${what}` : what
  }
  if (alike) {
    const name = displayName(base.kind, alike.record)
    const what =
      `an unmanaged one alike exists as id ${alike.remoteId}${name !== undefined ? ` "${name}"` : ''} (another project's, or made by an apply of this project whose lock update was lost): ` +
      "this creates one of this project's own, and the other is left alone (monitors import --adopt records it instead, if it is this project's)"
    change.reason = change.reason ? `${change.reason}; ${what}` : what
  }
  return change
}

/** Who made an unmanaged resource with a create's identity: the plan cannot tell. */
export const OWNER_UNKNOWN = 'an earlier apply of this project whose lock update was lost made it, or it belongs to another project'

/** protect / retainOnDelete: only the lock records them, but a change of them is a change. */
function addOptionChanges(change: PlanChange, options: ResourceOptions, entry: LockEntry): void {
  const optionDiffs = optionChanges(options, entry)
  if (optionDiffs.length === 0) return
  change.fieldDiffs = [...(change.fieldDiffs ?? []), ...optionDiffs]
  if (change.action === 'noop') {
    change.action = 'update'
    change.lockOnly = true
    change.changedInCode = true
    change.reason = 'only resource options changed: the lock records them, no request is sent'
  }
}

interface RemovedEntry {
  entry: LockEntry
  record: RemoteRecord | undefined
  options: ResourceOptions | undefined
}

/** The lock entries no desired resource holds, with the code's options for them and their remote record. */
function removedEntries(input: PlanInput, matching: Matching): RemovedEntry[] {
  if (matching.removed) return matching.removed
  const removed: RemovedEntry[] = []
  const entries = input.lock?.resources ?? {}
  for (const key in entries) {
    if (!Object.hasOwn(entries, key) || matching.desiredKeys.has(key) || matching.claimed.has(key)) continue
    const entry = entries[key]
    removed.push({ entry, record: input.remote.records[entry.kind]?.[entry.remoteId], options: input.codeOptions?.get(key) })
  }
  return (matching.removed = removed)
}

/**
 * Phase 6: in the lock, gone from the code: delete (or forget), and what a lost create made
 * whose construct has left the code since; in reverse dependency order.
 */
function planRemovals(input: PlanInput, matching: Matching): PlanChange[] {
  const removals: PlanChange[] = []
  for (const { entry, record, options } of removedEntries(input, matching)) {
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
    } else if (options?.retainOnDelete ?? entry.retainOnDelete) {
      change.action = 'forget'
      change.reason = 'retainOnDelete: forgotten from the lock, left running remotely'
    }
    removals.push(change)
  }
  for (const orphan of orphanedPendingCreates(matching.desiredKeys, input.lock, input.remote)) {
    const record = input.remote.records[orphan.kind][orphan.remoteId]
    removals.push({
      kind: orphan.kind,
      logicalId: orphan.logicalId,
      action: 'delete',
      remoteId: orphan.remoteId,
      name: record ? displayName(orphan.kind, record) : undefined,
      adopted: true,
      reason: ORPHAN_REASON,
    })
  }
  return removals.sort((a, b) => byKindThenId(b, a))
}

/** Phase 7a: replaces of resources the code or the lock protects. */
function protectedReplaces(changes: readonly PlanChange[], input: PlanInput, matching: Matching): ProtectedChange[] {
  if (!changes.some((change) => change.action === 'replace')) return []
  const options = new Map(input.desired.map((r) => [matching.keyOf.get(r)!, r.options]))
  const out: ProtectedChange[] = []
  for (const change of changes) {
    if (change.action !== 'replace') continue
    const key = lockKey(change.kind, change.logicalId)
    const entry = matching.entryOf.get(key)!.entry
    const protect = options.get(key)?.protect
    if (protect || entry.protect) out.push({ ...protectedOf(change), ...(entry.protect && !protect ? { unrecorded: true } : {}) })
  }
  return out
}

/** Phase 7b: deletes of resources the code or the lock protects, in lock order; a `protect: false` no apply has recorded yet is `unrecorded`. */
function protectedRemovals(input: PlanInput, matching: Matching): ProtectedChange[] {
  const out: ProtectedChange[] = []
  for (const { entry, record, options } of removedEntries(input, matching)) {
    if (!record || (options?.retainOnDelete ?? entry.retainOnDelete)) continue
    const change: ProtectedChange = { kind: entry.kind, logicalId: entry.logicalId, action: 'delete' }
    const file = input.codeFiles?.get(lockKey(entry.kind, entry.logicalId))
    if (file) change.file = file
    if (entry.protect && options && options.protect !== true) out.push({ ...change, unrecorded: true })
    else if (options?.protect ?? entry.protect) out.push(change)
  }
  return out
}

/** Phase 8: the plan: changes, protections, deletes the service would refuse, references, unmanaged counts, summary. */
function assemblePlan(input: PlanInput, changes: PlanChange[], protectedChanges: ProtectedChange[]): Plan {
  const plan: Plan = { version: 1, target: { ...input.target }, changes, unmanaged: countUnmanaged(input), summary: summarize(changes) }
  if (input.environment !== undefined) plan.environment = input.environment
  if (protectedChanges.length > 0) plan.protected = protectedChanges
  const blocked = blockedDeletes(changes, input)
  if (blocked.length > 0) plan.blocked = blocked
  const references = referenceIndex(input)
  if (references) plan.references = references
  const renames = renameHints(changes)
  if (renames.length > 0) plan.renames = renames
  return plan
}

/**
 * Deletes and creates of one kind with the same name: a logical id renamed without `aliases`
 * (Pulumi's word), which deletes the resource and makes a new one. Each delete pairs with one
 * create at most, in the plan's order. Only real deletes: one already gone (drift) or left
 * running (forget) loses nothing.
 */
export function renameHints(changes: readonly PlanChange[]): RenameHint[] {
  const deleted = new Map<string, PlanChange[]>()
  for (const change of changes) {
    if (change.action !== 'delete' || change.drift || change.adopted || change.name === undefined) continue
    const key = `${change.kind}\0${change.name}`
    const list = deleted.get(key)
    if (list) list.push(change)
    else deleted.set(key, [change])
  }
  if (deleted.size === 0) return []
  const hints: RenameHint[] = []
  for (const change of changes) {
    if (change.action !== 'create' || change.name === undefined || change.duplicateOf) continue
    const old = deleted.get(`${change.kind}\0${change.name}`)?.shift()
    if (!old) continue
    const hint: RenameHint = { kind: change.kind, from: old.logicalId, to: change.logicalId, name: change.name }
    if (change.file) hint.file = change.file
    hints.push(hint)
  }
  return hints
}

const OPTIONS = ['protect', 'retainOnDelete'] as const
const NO_DIFFS: readonly FieldDiff[] = Object.freeze([]) as readonly FieldDiff[]

/** Resource options whose value in the code differs from what the lock recorded. */
function optionChanges(options: ResourceOptions, entry: LockEntry): FieldDiff[] {
  // the usual resource: no option in the code nor in the lock, nothing to compare or allocate
  if (options.protect !== true && options.retainOnDelete !== true && entry.protect !== true && entry.retainOnDelete !== true) return NO_DIFFS as FieldDiff[]
  const out: FieldDiff[] = []
  for (const option of OPTIONS) {
    const was = entry[option] === true
    const now = options[option] === true
    if (was !== now) out.push({ path: option, old: was, new: now, lockOnly: true })
  }
  return out
}

/**
 * Deletes of status page services that a resource staying after the apply still uses (a card
 * of a status page, a check's triggerIncident): the service answers 409 to them.
 */
export function blockedDeletes(changes: readonly PlanChange[], input: PlanInput): BlockedDelete[] {
  const deleting = changes.filter((c) => c.kind === 'status-page-service' && c.action === 'delete' && !c.drift && c.remoteId)
  if (deleting.length === 0) return []
  // records that change or go away in this plan no longer hold their current references
  const changing = new Set(
    changes
      .filter((c) => c.remoteId && ((c.action === 'update' && !c.lockOnly) || c.action === 'replace' || (c.action === 'delete' && !c.drift)))
      .map((c) => lockKey(c.kind, c.remoteId!)),
  )
  const records = (kind: ResourceKind): Array<[string, RemoteRecord]> =>
    Object.entries({ ...(input.users?.[kind] ?? {}), ...input.remote.records[kind] }).filter(([id]) => !changing.has(lockKey(kind, id)))
  const logicalOf = new Map(changes.filter((c) => c.remoteId).map((c) => [lockKey(c.kind, c.remoteId!), c]))
  // a resource of the lock the changes leave out: a plan limited by --target leaves it as it is
  let lockedOf: Map<string, LockEntry> | undefined
  const inLock = (kind: ResourceKind, id: string) => {
    lockedOf ??= new Map(Object.values(input.lock?.resources ?? {}).map((e) => [lockKey(e.kind, e.remoteId), e]))
    return lockedOf.get(lockKey(kind, id))
  }
  const who = (kind: ResourceKind, id: string, name: unknown, detail = '') => {
    const managed = logicalOf.get(lockKey(kind, id))
    const locked = managed ? undefined : inLock(kind, id)
    const label = `${kind} ${managed ? managed.logicalId : locked ? locked.logicalId : id}${typeof name === 'string' ? ` "${name}"` : ''}${detail}`
    const note = managed
      ? managed.action === 'forget'
        ? ' (retainOnDelete: it stays)'
        : ''
      : locked
        ? ' (not in the --target selection: it stays)'
        : ' (not managed by this project)'
    return `${label}${note}`
  }
  const blocked: BlockedDelete[] = []
  for (const change of deleting) {
    const id = change.remoteId!
    const usedBy: string[] = []
    for (const [pageId, page] of records('status-page')) {
      const cards = Array.isArray(page.cards) ? (page.cards as Array<Record<string, unknown>>) : []
      if (cards.some((card) => Array.isArray(card.services) && (card.services as Array<Record<string, unknown>>).some((s) => s?.id === id))) {
        usedBy.push(who('status-page', pageId, page.name, typeof page.url === 'string' ? ` (url ${page.url})` : ''))
      }
    }
    for (const kind of CHECKS_REFERRING_SERVICES) {
      for (const [checkId, check] of records(kind)) {
        const ti = check.triggerIncident as Record<string, unknown> | undefined
        if (ti && ti.serviceId === id) usedBy.push(who(kind, checkId, check.name, ' in its triggerIncident'))
      }
    }
    if (usedBy.length > 0) blocked.push({ kind: change.kind, logicalId: change.logicalId, remoteId: id, usedBy })
  }
  return blocked
}

function protectedOf(change: PlanChange): ProtectedChange {
  const out: ProtectedChange = { kind: change.kind, logicalId: change.logicalId, action: change.action }
  if (change.file) out.file = change.file
  return out
}

function compareExisting(base: PlanChange, kind: ResourceKind, payload: Record<string, unknown>, record: RemoteRecord, entry: LockEntry): PlanChange {
  // Cheap first: most records equal the desired payload once read-only fields are dropped.
  const secret = kind === 'variable' && (payload.secret === true || record.secret === true)
  // Secrets the service reads back as "" compare equal; the lock's fingerprint tells a change.
  const blanked = descriptorOf(kind).blankedSecrets?.(payload)
  const blankedChanged = blanked !== undefined && !secretMatches(blanked.text, entry.secretHash)
  if (!secret && !blankedChanged && normalizedEqual(kind, payload, record)) {
    // most of a plan: the change made for this resource is completed, not copied
    base.remoteId = entry.remoteId
    return base
  }
  const want = normalizeParsed(kind, payload)
  const have = normalize(kind, record)
  let secretPaths: Set<string> | undefined
  let secretChanged = false
  if (secret) {
    secretPaths = new Set(['value'])
    // The service reads secrets back as "": compare the lock's fingerprint instead.
    if (have.secret === true && typeof want.value === 'string') {
      secretChanged = !secretMatches(want.value, entry.secretHash)
      have.value = secretChanged ? '\u0000changed' : want.value
    }
  }
  const change: PlanChange = { ...base, remoteId: entry.remoteId }
  if (!blankedChanged && jsonEqual(want, have)) return change

  const diffs = fieldDiffs(have, want).map((d) => maskDiff(asSent(d, payload, record), secretPaths, want, have, secretChanged))
  if (blankedChanged && blanked) {
    // One fingerprint covers them all: a single secret is named, several are named together.
    diffs.push(
      blanked.paths.length === 1
        ? { path: blanked.paths[0], secret: true, new: SECRET_CHANGED }
        : { path: commonPath(blanked.paths), secret: true, new: `${SECRET_CHANGED}: one of ${blanked.paths.join(', ')}` },
    )
  }
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
  // Who changed it: the code since the last apply, someone outside monitors, or both.
  const inCode = appliedHash(kind, payload) !== entry.appliedHash || secretChanged || blankedChanged
  const outside = appliedHash(kind, record) !== entry.appliedHash
  if (outside) {
    change.changedOutside = true
    change.drift = true
    change.reason ??= inCode
      ? "changed in code and outside monitors: applying sets the code's values"
      : 'changed outside monitors (the code is as last applied): applying reverts it to the code'
  }
  if (inCode || !outside) change.changedInCode = true
  return change
}

/**
 * A set-like field (tags, locations) is compared sorted, but shown as it is: the new value in
 * the order apply sends it, the old one in the order the service holds it.
 */
function asSent(d: FieldDiff, payload: Record<string, unknown>, record: RemoteRecord): FieldDiff {
  if (!SET_FIELDS.has(d.path)) return d
  const out: FieldDiff = { ...d }
  if ('new' in d && Array.isArray(payload[d.path])) out.new = payload[d.path]
  if ('old' in d && Array.isArray(record[d.path])) out.old = record[d.path]
  return out
}

/** The field several secret paths share (`request` for an API check's request secrets), else `(secrets)`. */
function commonPath(paths: readonly string[]): string {
  const split = paths.map((p) => p.split('.'))
  const common: string[] = []
  for (let i = 0; split.every((parts) => i < parts.length - 1 && parts[i] === split[0][i]); i++) common.push(split[0][i])
  return common.length > 0 ? common.join('.') : '(secrets)'
}

function maskDiff(
  d: FieldDiff,
  secretPaths: Set<string> | undefined,
  want: Record<string, unknown>,
  have: Record<string, unknown>,
  secretChanged = false,
): FieldDiff {
  let secret = secretPaths?.has(d.path) ?? false
  const env = /^environmentVariables\[([^\]]+)\](\.value)?$/.exec(d.path)
  if (env) {
    const isSecret = (list: unknown) => Array.isArray(list) && list.some((v: Record<string, unknown>) => v?.key === env[1] && v?.secret === true)
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
  if (secretChanged && d.path === 'value') {
    masked.new = SECRET_CHANGED
    return masked
  }
  if ('old' in d) masked.old = SECRET_MASK
  if ('new' in d) masked.new = SECRET_MASK
  return masked
}

function countUnmanaged(input: PlanInput): Record<string, number> {
  const byKind = entriesByKind(input.lock)
  const counts: Record<string, number> = {}
  for (const kind of RESOURCE_KINDS) {
    const records = input.remote.records[kind]
    const entries = byKind.get(kind) ?? []
    // every record the lock knows of is one of its entries: count only when some may not be
    let total = 0
    for (const _ in records) total++
    if (total === 0) continue
    let known = 0
    const seen = new Set<string>()
    for (const entry of entries)
      if (Object.hasOwn(records, entry.remoteId) && !seen.has(entry.remoteId)) {
        seen.add(entry.remoteId)
        known++
      }
    if (total - known > 0) counts[kind] = total - known
  }
  for (const [label, n] of Object.entries(input.remote.foreign)) counts[label] = (counts[label] ?? 0) + n
  return counts
}

export function summarize(changes: readonly PlanChange[]): PlanSummary {
  const summary: PlanSummary = { create: 0, update: 0, delete: 0, move: 0, forget: 0, noop: 0, drift: 0, duplicate: 0 }
  for (const change of changes) {
    if (change.drift) summary.drift++
    // a create apply refuses (it exists already, unmanaged) is no create
    if (change.action === 'create' && change.duplicateOf && !change.duplicateOf.copy) summary.duplicate++
    else if (change.action === 'replace') {
      summary.create++
      summary.delete++
    } else summary[change.action]++
    if (change.movedFrom && change.action !== 'move') summary.move++
  }
  return summary
}
