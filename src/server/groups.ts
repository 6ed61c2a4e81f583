import { applyGroup, type CheckGroup } from '../schema/index.js'
import type { Repositories } from './store/index.js'

/*
 * A check in a group runs with the group's settings applied (applyGroup, src/schema/check-group.ts):
 * when it is planned (locations, activated), when it runs (request defaults, variables, retries)
 * and when its result is recorded (alert settings, channels, muted). The group is read where the
 * check is: a group changed now applies to the next run.
 */

/** The check's group in its account, when it names one that is there. */
export async function groupOf(store: Pick<Repositories, 'checkGroups'>, account: string, check: { groupId?: unknown }): Promise<CheckGroup | undefined> {
  if (typeof check.groupId !== 'number') return undefined
  return (await store.checkGroups.get(account, check.groupId))?.group
}

/** The check with its group's settings applied (the check as it is when it names no group). */
export async function withGroup<T extends Record<string, unknown>>(store: Pick<Repositories, 'checkGroups'>, account: string, check: T): Promise<T> {
  const group = await groupOf(store, account, check)
  return group ? applyGroup(check, group) : check
}

type Variables = Record<string, { value: string; secret: boolean }>

/**
 * The variables an API check's `{{KEY}}`s resolve from: the account's, then the check's own
 * environment variables (its group's merged in by applyGroup), which win.
 */
export function runVariables(account: Variables | undefined, check: { environmentVariables?: unknown }): Variables | undefined {
  const own = Array.isArray(check.environmentVariables) ? (check.environmentVariables as Array<{ key?: unknown; value?: unknown; secret?: unknown }>) : []
  if (own.length === 0) return account
  const out: Variables = { ...(account ?? {}) }
  for (const v of own) if (typeof v.key === 'string' && typeof v.value === 'string') out[v.key] = { value: v.value, secret: v.secret === true }
  return out
}
