import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { planAgainst, renderPlanText, hasChanges } from '../../plan/index.js'
import { executePlan } from '../../apply/execute.js'
import {
  applyOptions, confirm, interruptible, err, holdApplyLock, loadOrReport, openSession, out, outcomeLine, reportResult, useColor, workingLock,
  type EngineArgs,
} from '../engine.js'

export interface ApplyArgs extends EngineArgs {
  yes?: boolean
  concurrency?: number
  lockTimeout?: string
}

/**
 * `monitors apply`: plans, shows the plan, asks (or takes --yes), then runs the operations in
 * dependency order, a few at a time, one line each; the lock is rewritten after every success.
 */
export const applyCommand = {
  command: 'apply',
  describe: 'Plan, confirm, then create, update and delete remote resources to match the code',
  builder: (yargs: Argv) => applyOptions(yargs),
  handler: async (args: ArgumentsCamelCase<ApplyArgs>): Promise<number> => {
    const project = await loadOrReport(args)
    if (!project) return 1
    const session = await openSession(project, args)
    try {
      const held = await holdApplyLock(session, 'monitors apply', args.lockTimeout)
      try {
        const { plan } = await planAgainst({ client: session.open.client, desired: project.resources, lock: session.lock, target: session.open.target })
        out(renderPlanText(plan, { color: useColor() }))
        if (!hasChanges(plan)) return 0
        if (!(await confirm('\nDo you want to apply these changes?', args.yes ?? false, 'apply'))) {
          err('Apply cancelled; nothing was changed.\n')
          return 1
        }
        out('\n')
        const interrupt = interruptible()
        const result = await executePlan({
          signal: interrupt.signal,
          plan,
          desired: project.resources,
          client: session.open.client,
          lock: workingLock(session),
          lockPath: session.open.lockPath,
          concurrency: args.concurrency,
          onOutcome: (outcome) => (outcome.ok ? out : err)(outcomeLine(outcome)),
        }).finally(() => interrupt.dispose())
        return reportResult(result, session.open.lockPath, 'Apply')
      } finally {
        held.release()
      }
    } finally {
      await session.close()
    }
  },
} as unknown as CommandModule<object, ApplyArgs>
