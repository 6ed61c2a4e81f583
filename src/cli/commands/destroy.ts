import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { planAgainst, hasChanges } from '../../plan/index.js'
import { assertNotBlocked, assertUnprotected, selectTargets } from '../../plan/select.js'
import { lockKey } from '../../state/lock.js'
import { applyOptions, confirm, err, formatOption, setStdoutFormat, withApplySession } from '../engine.js'
import { printPlan, } from './plan.js'
import { runPlan, type ApplyArgs } from './apply.js'

/**
 * `monitors destroy`: deletes every resource the lock file records (reverse dependency order),
 * after confirmation as for apply. Remote resources the lock does not know are left alone.
 * `protect: true` refuses; `retainOnDelete: true` only forgets.
 */
export const destroyCommand = {
  command: 'destroy',
  describe: 'Delete every resource recorded in the lock file',
  builder: (yargs: Argv) => formatOption(applyOptions(yargs)),
  handler: async (args: ArgumentsCamelCase<ApplyArgs>): Promise<number> => {
    setStdoutFormat(args.format)
    return withApplySession(args, 'monitors destroy', async (project, session) => {
      // Planning against no desired resources: every lock entry becomes a delete. The code's
      // resource options still hold.
      const codeOptions = new Map(project.resources.map((r) => [lockKey(r.kind, r.logicalId), r.options]))
      const { plan: full } = await planAgainst({ client: session.open.client, desired: [], lock: session.lock, target: session.open.target, codeOptions })
      const plan = selectTargets(full, args.target ?? [])
      assertUnprotected(plan)
      assertNotBlocked(plan)
      await printPlan(plan, args.format === 'json' ? undefined : args.format, 'The lock file records nothing to destroy.')
      // with nothing to destroy there is no question, and --format json still gets its document
      if (hasChanges(plan) && !(await confirm('\nDo you really want to delete all of these?', args.yes ?? false, 'destroy'))) {
        err('Destroy cancelled; nothing was deleted.\n')
        return 1
      }
      return runPlan({ session, plan, desired: [], args, what: 'Destroy' })
    }, { warn: false })
  },
} as unknown as CommandModule<object, ApplyArgs>
