import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { planAgainst, renderPlanText, hasChanges } from '../../plan/index.js'
import { executePlan } from '../../apply/execute.js'
import {
  applyOptions, confirm, interruptible, err, holdApplyLock, loadOrReport, openSession, out, outcomeLine, reportResult, useColor, workingLock,
} from '../engine.js'
import type { ApplyArgs } from './apply.js'

/**
 * `monitors destroy`: deletes every resource the lock file records (reverse dependency order),
 * after confirmation as for apply. Remote resources the lock does not know are left alone.
 */
export const destroyCommand = {
  command: 'destroy',
  describe: 'Delete every resource recorded in the lock file',
  builder: (yargs: Argv) => applyOptions(yargs),
  handler: async (args: ArgumentsCamelCase<ApplyArgs>): Promise<number> => {
    const project = await loadOrReport(args)
    if (!project) return 1
    const session = await openSession(project, args)
    try {
      const held = await holdApplyLock(session, 'monitors destroy', args.lockTimeout)
      try {
        // Planning against no desired resources: every lock entry becomes a delete.
        const { plan } = await planAgainst({ client: session.open.client, desired: [], lock: session.lock, target: session.open.target })
        out(renderPlanText(plan, { color: useColor(), noChanges: 'The lock file records nothing to destroy.' }))
        if (!hasChanges(plan)) return 0
        if (!(await confirm('\nDo you really want to delete all of these?', args.yes ?? false, 'destroy'))) {
          err('Destroy cancelled; nothing was deleted.\n')
          return 1
        }
        out('\n')
        const interrupt = interruptible()
        const result = await executePlan({
          signal: interrupt.signal,
          plan,
          desired: [],
          client: session.open.client,
          lock: workingLock(session),
          lockPath: session.open.lockPath,
          concurrency: args.concurrency,
          onOutcome: (outcome) => (outcome.ok ? out : err)(outcomeLine(outcome)),
        }).finally(() => interrupt.dispose())
        return reportResult(result, session.open.lockPath, 'Destroy')
      } finally {
        held.release()
      }
    } finally {
      await session.close()
    }
  },
} as unknown as CommandModule<object, ApplyArgs>
