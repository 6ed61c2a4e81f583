import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { planAgainst, renderPlanText, hasChanges } from '../../plan/index.js'
import { engineOptions, phaseTimer, loadOrReport, openSession, out, useColor, type EngineArgs } from '../engine.js'

interface PlanArgs extends EngineArgs {
  detailedExitcode?: boolean
}

/**
 * `monitors plan`: what apply would do. Loads and validates the project (nothing is sent while
 * it has problems), reads the remote state from the list endpoints and prints the plan.
 */
export const planCommand = {
  command: 'plan',
  describe: 'Show what apply would create, update and delete, without changing anything',
  builder: (yargs: Argv) =>
    engineOptions(yargs).option('detailed-exitcode', {
      type: 'boolean',
      default: false,
      describe: 'Exit 2 when the plan has changes, 0 when it has none, 1 on errors',
    }),
  handler: async (args: ArgumentsCamelCase<PlanArgs>): Promise<number> => {
    const timing = phaseTimer()
    const project = await loadOrReport(args)
    timing('load')
    if (!project) return 1
    const session = await openSession(project, args)
    timing('target')
    try {
      const { plan } = await planAgainst({
        client: session.open.client,
        desired: project.resources,
        lock: session.lock,
        target: session.open.target,
      })
      timing('plan')
      out(renderPlanText(plan, { color: useColor() }))
      timing('render')
      return args.detailedExitcode && hasChanges(plan) ? 2 : 0
    } finally {
      await session.close()
      timing('close')
    }
  },
} as unknown as CommandModule<object, PlanArgs>
