/*
 * A check's `dependsOn` (docs/api.md, "dependsOn"): the checks it depends on. While one of them
 * is failing (its newest result failed), the check's own failures are recorded as usual
 * (results, status, error groups) but not alerted: no notification, no incident. The check's
 * status says why (`alertsSuppressedBy`). When the dependency recovers and the check still
 * fails, its next failed run alerts.
 */

export { dependencyCycle as cycleFrom } from '../schema/check.js'

/** A dependency named in an answer: its id and current name. */
export interface DependencyRef {
  checkId: string
  name: string
}

/** The ids a check body's `dependsOn` names (none when it has none). */
export function dependsOnOf(body: unknown): string[] {
  const list = (body as { dependsOn?: unknown } | null | undefined)?.dependsOn
  return Array.isArray(list) ? list.filter((id): id is string => typeof id === 'string') : []
}

/** Whether a status (its newest result) is failing. */
export const isFailing = (status: { hasFailures: boolean; hasErrors: boolean } | undefined): boolean =>
  status !== undefined && (status.hasFailures || status.hasErrors)

/** The dependencies of `body` that are failing now, by their statuses. */
export async function failingDependencies(
  body: unknown,
  statusOf: (checkId: string) => Promise<{ name: string; hasFailures: boolean; hasErrors: boolean } | undefined>,
): Promise<DependencyRef[]> {
  const out: DependencyRef[] = []
  for (const id of dependsOnOf(body)) {
    const status = await statusOf(id)
    if (status && isFailing(status)) out.push({ checkId: id, name: status.name })
  }
  return out
}

/** The text a dashboard or a status shows: `suppressed: depends on "DB", which is failing`. */
export function suppressionText(by: readonly DependencyRef[]): string {
  const names = by.map((d) => JSON.stringify(d.name))
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`
  return `suppressed: depends on ${list}, which ${by.length === 1 ? 'is' : 'are'} failing`
}
