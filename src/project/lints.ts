import type { Problem } from './errors.js'
import type { DesiredResource } from '../resources/types.js'
import { CHECK_KINDS } from '../resources/registry.js'

/**
 * Lints: a project that validates but probably does not do what was meant. Warnings, never
 * errors: nothing is refused because of them. `file` is the resource's file (project-relative).
 */
export function lintResources(resources: readonly DesiredResource[]): Problem[] {
  const warnings: Problem[] = []
  const checkTags = new Set<string>()
  for (const r of resources) {
    if (!CHECK_KINDS.has(r.kind)) continue
    const p = r.payload
    const where = { file: r.file, construct: r.construct, logicalId: r.logicalId }
    if (Array.isArray(p.tags)) for (const tag of p.tags) checkTags.add(String(tag))
    if (p.alertSettings !== undefined && p.alertSettings !== null && p.useGlobalAlertSettings !== false) {
      warnings.push({
        ...where,
        field: 'alertSettings',
        message: 'has no effect while useGlobalAlertSettings is true (the default): set useGlobalAlertSettings: false to use these settings',
      })
    }
    const degraded = p.degradedResponseTime
    const max = p.maxResponseTime
    if (typeof degraded === 'number' && typeof max === 'number' && degraded > max) {
      warnings.push({
        ...where,
        field: 'degradedResponseTime',
        message: `(${degraded} ms) is above maxResponseTime (${max} ms): the check fails before it can be reported as degraded`,
      })
    }
  }
  for (const r of resources) {
    if (r.kind !== 'maintenance-window' || !Array.isArray(r.payload.tags)) continue
    const unmatched = (r.payload.tags as unknown[]).map(String).filter((tag) => !checkTags.has(tag))
    if (unmatched.length === 0) continue
    warnings.push({
      file: r.file,
      construct: r.construct,
      logicalId: r.logicalId,
      field: 'tags',
      message: `${unmatched.map((t) => JSON.stringify(t)).join(', ')} ${unmatched.length === 1 ? 'matches' : 'match'} no check of this project: the window silences nothing ${unmatched.length === 1 ? 'with that tag' : 'with those tags'}`,
    })
  }
  return warnings
}
