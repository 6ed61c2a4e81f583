import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { planAgainst, renderPlanText, hasChanges, type Plan } from '../../plan/index.js'
import { assertUnprotected, driftOnly, selectTargets } from '../../plan/select.js'
import {
  data, engineOptions, err, formatOption, phaseTimer, loadOrReport, openSession, out, setStdoutFormat, useColor, type EngineArgs, type OutputFormat,
} from '../engine.js'

interface PlanArgs extends EngineArgs {
  detailedExitcode?: boolean
  out?: string
  refreshOnly?: boolean
  verbose?: boolean
}

/** The plan in the chosen format: text to `out` (stdout), markdown and JSON to stdout as documents. */
export async function printPlan(plan: Plan, format: OutputFormat | undefined, noChanges?: string, verbose = false): Promise<void> {
  if (format === 'json') {
    const { planToJson } = await import('../../plan/render/json.js')
    data(`${JSON.stringify(planToJson(plan), null, 2)}\n`)
  } else if (format === 'markdown') {
    const { renderPlanMarkdown } = await import('../../plan/render/markdown.js')
    data(renderPlanMarkdown(plan, { verbose }))
  } else {
    out(renderPlanText(plan, { color: useColor(), verbose, ...(noChanges ? { noChanges } : {}) }))
  }
}

/** The lock file's text as it is on disk (for a saved plan's fingerprint); undefined when absent. */
export function readLockText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

/**
 * `monitors plan`: what apply would do. Loads and validates the project (nothing is sent while
 * it has problems), reads the remote state from the list endpoints and prints the plan.
 */
export const planCommand = {
  command: 'plan',
  describe: 'Show what apply would create, update and delete, without changing anything',
  builder: (yargs: Argv) =>
    formatOption(engineOptions(yargs))
      .option('detailed-exitcode', {
        type: 'boolean',
        default: false,
        describe: 'Exit 2 when the plan has changes, 0 when it has none, 1 on errors',
      })
      .option('out', { type: 'string', describe: 'Save the plan to this file; "monitors apply <file>" then runs exactly it, or refuses it as stale' })
      .option('refresh-only', { type: 'boolean', default: false, describe: 'Show only drift: what was changed outside monitors since the last apply' })
      .option('verbose', { type: 'boolean', default: false, describe: 'Show every field of a create, defaults too (the JSON document always has them)' }),
  handler: async (args: ArgumentsCamelCase<PlanArgs>): Promise<number> => {
    setStdoutFormat(args.format)
    const timing = phaseTimer()
    const project = await loadOrReport(args)
    timing('load')
    if (!project) return 1
    const session = await openSession(project, args)
    timing('target')
    try {
      const lockText = args.out ? readLockText(session.open.lockPath) : undefined
      const { plan: full, remote } = await planAgainst({
        client: session.open.client,
        desired: project.resources,
        lock: session.lock,
        target: session.open.target,
      })
      timing('plan')
      let plan = selectTargets(full, args.target ?? [])
      if (args.refreshOnly) plan = driftOnly(plan)
      else assertUnprotected(plan)
      await printPlan(plan, args.format, args.refreshOnly ? 'Nothing was changed outside monitors since the last apply.' : undefined, args.verbose)
      timing('render')
      if (args.out) {
        const { fingerprint, makeSavedPlan, writeSavedPlan } = await import('../../plan/saved.js')
        const prints = fingerprint({ desired: project.resources, lock: session.lock, lockText, remote })
        writeSavedPlan(resolve(args.out), makeSavedPlan(plan, prints))
        err(`Saved the plan to ${args.out}; run it with: monitors apply ${args.out}\n`)
      }
      return args.detailedExitcode && hasChanges(plan) ? 2 : 0
    } finally {
      await session.close()
      timing('close')
    }
  },
} as unknown as CommandModule<object, PlanArgs>
