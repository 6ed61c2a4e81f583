import type { ResourceKind } from '../resources/types.js'
import type { LockTarget } from '../state/lock.js'

/**
 * `move`: a rename through `aliases`: the lock entry moves to the new logical id, no request is
 * sent (a move with field changes is an `update` with `movedFrom`). `forget`: removed from the
 * code with `retainOnDelete`: dropped from the lock, left running remotely.
 */
export type PlanAction = 'create' | 'update' | 'replace' | 'delete' | 'move' | 'forget' | 'noop'

/** One changed field. `old` / `new` are absent when the field is added / removed. */
export interface FieldDiff {
  /** Readable path: `request.assertions[0].target`, `environmentVariables[API_KEY].value`. */
  path: string
  old?: unknown
  new?: unknown
  /** The values are secret: shown as `(secret)`, never stored in a saved plan. */
  secret?: boolean
  /** A resource option (`protect`, `retainOnDelete`): only the lock records it, nothing is sent. */
  lockOnly?: boolean
  /**
   * A suite's binary file (`encoding: "base64"` on either side) or its `content`: its size in
   * bytes on each side, so that a plan says "binary file changed (N bytes)" rather than print it.
   */
  binary?: { oldBytes?: number; newBytes?: number }
}

export interface PlanChange {
  kind: ResourceKind
  logicalId: string
  action: PlanAction
  /** Remote id from the lock (update, replace, delete, noop). */
  remoteId?: string
  /**
   * The lock knows this resource but the service does not: created again (action create) or,
   * when it is gone from the code too, only forgotten from the lock (action delete).
   */
  drift?: boolean
  /**
   * Changed outside monitors: the code is as last applied (its hash equals the lock's
   * `appliedHash`) but the remote differs. The field diffs read remote value → code value;
   * applying reverts the remote to the code. With `changedInCode` too, both sides changed.
   */
  changedOutside?: boolean
  changedInCode?: boolean
  /** The logical id this resource had in the lock (a rename through `aliases`). */
  movedFrom?: string
  /**
   * Made by an earlier apply whose answer was lost (a pending create in the lock) and found by
   * its identifying fields: recorded instead of created twice (an update, without a request
   * when nothing differs).
   */
  adopted?: boolean
  /**
   * A create of a resource that already exists remotely, unmanaged, with the same identity (a
   * check's or a service's or a window's name, a variable's key, a status page's url): most often
   * made by an apply whose lock update was lost. Apply refuses it unless told to adopt the
   * existing one (`--adopt-existing`) or to create a second one (`--allow-duplicates`: then
   * `copy`, and it counts as a create). Without `copy` it is counted as `duplicate`, not `create`.
   */
  duplicateOf?: { remoteId: string; name?: string; copy?: true }
  /** Only resource options changed (protect, retainOnDelete): the lock records them, no request is sent. */
  lockOnly?: boolean
  /** Why the action was chosen when it is not obvious (replace, drift). */
  reason?: string
  fieldDiffs?: FieldDiff[]
  /** The payload to send (create, update, replace), secret values masked, unresolved refs as placeholders. */
  payload?: Record<string, unknown>
  /** `sha256:` of the desired payload as written in code (placeholders, real secrets): detects stale saved plans. Absent on a no-op. */
  desiredHash?: string
  /** Display name (`name`, or a variable's key). */
  name?: string
  construct?: string
  file?: string
  /** Logical ids (`kind:logicalId`) this resource references, created first. */
  dependsOn?: string[]
  /**
   * A check in a group of the project: the values its group gives it (the check leaves them out,
   * or the group's win), as the service runs it. A display aid; apply sends the check's own.
   */
  fromGroup?: { group: string; name?: string; fields: Record<string, unknown> }
}

export interface PlanSummary {
  create: number
  update: number
  delete: number
  move: number
  forget: number
  noop: number
  drift: number
  /** Creates apply refuses: they exist already, unmanaged (`duplicateOf`); not counted in `create`. */
  duplicate: number
}

/** A delete (or replace) of a resource marked `protect: true`: the plan is refused. */
export interface ProtectedChange {
  kind: ResourceKind
  logicalId: string
  action: PlanAction
  file?: string
  /** The code says `protect: false` but the lock still records `protect: true`: apply first. */
  unrecorded?: boolean
}

/** A delete the service would refuse (409) because a resource that stays still uses it. */
export interface BlockedDelete {
  kind: ResourceKind
  logicalId: string
  remoteId: string
  /** What still uses it: `status page <id> (<url>)`, `dns-check <id> "<name>"`. */
  usedBy: string[]
}

export interface Plan {
  version: 1
  /** The config's environment the plan is for (`--env`); absent without environments. */
  environment?: string
  target: LockTarget & { embedded?: boolean }
  changes: PlanChange[]
  /** Deletes the service would refuse (409): such a plan must not run (see assertNotBlocked). */
  blocked?: BlockedDelete[]
  /** Remote resources the lock does not know, left alone, counted per kind. */
  unmanaged: Record<string, number>
  summary: PlanSummary
  /** Deletes or replaces of protected resources: such a plan must not run (see assertUnprotected). */
  protected?: ProtectedChange[]
  // Display aids for the renderers below: they never change what apply does.
  /** What each referenceable id means, keyed by remote id and by placeholder `kind:logicalId`. */
  references?: Record<string, PlanReference>
  /** The `--target`s this plan was limited to: it is partial. */
  targets?: string[]
  /** Only the drift (`plan --refresh-only`). */
  refreshOnly?: boolean
  /** Deletes and creates that look like a rename without `aliases` (see RenameHint). */
  renames?: RenameHint[]
}

/**
 * A delete and a create of one kind with the same name (display field) in one plan: most likely
 * a rename of the logical id without `aliases`, which would delete the resource (and its
 * history) and make a new one. A display aid: the plan runs as it is.
 */
export interface RenameHint {
  kind: ResourceKind
  /** The logical id deleted (the lock's). */
  from: string
  /** The logical id created (the code's). */
  to: string
  name: string
  /** The file of the created construct. */
  file?: string
}

/** A resource a reference can point at: lets a plan show `status-page-service:payments "Payments API"` instead of an id. */
export interface PlanReference {
  kind: ResourceKind
  /** Absent for a remote resource the lock does not know. */
  logicalId?: string
  name?: string
}

export const hasChanges = (plan: Plan) => plan.changes.some((change) => change.action !== 'noop')
