import type { FieldDiff, Plan, PlanChange, PlanReference, RenameHint } from '../types.js'
import { maskLocked, renameHintText } from './view.js'

/** Version of the JSON documents `--format json` writes (docs/plan-json.md). */
export const PLAN_FORMAT_VERSION = 1

export interface JsonChange {
  kind: PlanChange['kind']
  logicalId: string
  remoteId?: string
  action: PlanChange['action']
  movedFrom?: string
  drift: boolean
  changedOutside: boolean
  changedInCode: boolean
  reason?: string
  name?: string
  construct?: string
  file?: string
  dependsOn?: string[]
  duplicateOf?: PlanChange['duplicateOf']
  lockOnly?: boolean
  fieldDiffs: FieldDiff[]
}

export interface JsonPlan {
  formatVersion: number
  /** The config's environment the plan is for (`--env`); absent when the config declares none. */
  environment?: string
  target: Plan['target']
  hasChanges: boolean
  summary: Plan['summary']
  changes: JsonChange[]
  unmanaged: Plan['unmanaged']
  protected: NonNullable<Plan['protected']>
  /** Present when `--target` limited the plan: the targets (`kind:logicalId`); their dependencies are included. */
  targets?: string[]
  /** Present (true) for `plan --refresh-only`: only the drift. */
  refreshOnly?: true
  /** What each referenced id in `changes` stands for (ids and `kind:logicalId` placeholders). */
  references?: Record<string, PlanReference>
  /** Deletes and creates of one kind with the same name: renames without `aliases`? Always present. */
  renames: Array<RenameHint & { hint: string }>
}

/**
 * Every change but no-ops, with its field diffs (a create's are all its fields, defaults too);
 * secret and locked values stay masked.
 */
export function planToJson(plan: Plan): JsonPlan {
  const changes = plan.changes.filter((change) => change.action !== 'noop').map(changeToJson)
  const out: JsonPlan = {
    formatVersion: PLAN_FORMAT_VERSION,
    ...(plan.environment !== undefined ? { environment: plan.environment } : {}),
    target: plan.target,
    hasChanges: changes.length > 0,
    summary: plan.summary,
    changes,
    unmanaged: plan.unmanaged,
    protected: plan.protected ?? [],
    renames: (plan.renames ?? []).map((r) => ({ ...r, hint: renameHintText(r) })),
  }
  if (plan.targets && plan.targets.length > 0) out.targets = [...plan.targets]
  if (plan.refreshOnly) out.refreshOnly = true
  const references = usedReferences(plan.references, changes)
  if (references) out.references = references
  return out
}

/** The references whose id appears as a value (or a path's key) in the changes. */
function usedReferences(all: Plan['references'], changes: JsonChange[]): Record<string, PlanReference> | undefined {
  if (!all) return undefined
  const used = new Set<string>()
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      if (Object.hasOwn(all, value)) used.add(value)
    } else if (Array.isArray(value)) value.forEach(visit)
    else if (value && typeof value === 'object') Object.values(value).forEach(visit)
  }
  for (const change of changes) {
    for (const d of change.fieldDiffs) {
      visit(d.old)
      visit(d.new)
      for (const m of d.path.matchAll(/\[([^\]]+)\]/g)) if (Object.hasOwn(all, m[1])) used.add(m[1])
    }
  }
  if (used.size === 0) return undefined
  return Object.fromEntries([...used].sort().map((id) => [id, all[id]]))
}

export function changeToJson(unmasked: PlanChange): JsonChange {
  const change = maskLocked(unmasked)
  const out: JsonChange = {
    kind: change.kind,
    logicalId: change.logicalId,
    action: change.action,
    drift: change.drift ?? false,
    changedOutside: change.changedOutside ?? false,
    changedInCode: change.changedInCode ?? false,
    fieldDiffs:
      change.action === 'create'
        ? Object.entries(change.payload ?? {})
            .filter(([, v]) => v !== undefined && v !== null)
            .map(([path, value]) => ({ path, new: value }))
        : (change.fieldDiffs ?? []),
  }
  for (const key of ['remoteId', 'movedFrom', 'reason', 'name', 'construct', 'file', 'dependsOn', 'duplicateOf', 'lockOnly'] as const) {
    if (change[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = change[key]
  }
  return out
}
