import type { FieldDiff, Plan, PlanChange } from '../types.js'

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
  target: Plan['target']
  hasChanges: boolean
  summary: Plan['summary']
  changes: JsonChange[]
  unmanaged: Plan['unmanaged']
  protected: NonNullable<Plan['protected']>
}

/** Every change but no-ops, with its field diffs (a create's are its fields); secrets stay masked. */
export function planToJson(plan: Plan): JsonPlan {
  const changes = plan.changes.filter((change) => change.action !== 'noop').map(changeToJson)
  return {
    formatVersion: PLAN_FORMAT_VERSION,
    target: plan.target,
    hasChanges: changes.length > 0,
    summary: plan.summary,
    changes,
    unmanaged: plan.unmanaged,
    protected: plan.protected ?? [],
  }
}

export function changeToJson(change: PlanChange): JsonChange {
  const out: JsonChange = {
    kind: change.kind,
    logicalId: change.logicalId,
    action: change.action,
    drift: change.drift ?? false,
    changedOutside: change.changedOutside ?? false,
    changedInCode: change.changedInCode ?? false,
    fieldDiffs:
      change.action === 'create'
        ? Object.entries(change.payload ?? {}).filter(([, v]) => v !== undefined && v !== null).map(([path, value]) => ({ path, new: value }))
        : (change.fieldDiffs ?? []),
  }
  for (const key of ['remoteId', 'movedFrom', 'reason', 'name', 'construct', 'file', 'dependsOn', 'duplicateOf', 'lockOnly'] as const) {
    if (change[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = change[key]
  }
  return out
}
