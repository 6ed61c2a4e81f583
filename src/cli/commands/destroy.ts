import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { planAgainst, hasChanges } from '../../plan/index.js'
import { assertNotBlocked, assertUnprotected } from '../../plan/select.js'
import { lockKey } from '../../state/lock.js'
import { applyOptions, confirm, err, formatOption, setStdoutFormat, withApplySession } from '../engine.js'
import { printPlan, printUnlessRefused } from './plan.js'
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
    return withApplySession(
      args,
      'monitors destroy',
      async (project, session) => {
        // Planning against no desired resources: every lock entry becomes a delete. The code's
        // resource options still hold.
        const codeOptions = new Map(project.resources.map((r) => [lockKey(r.kind, r.logicalId), r.options]))
        const codeFiles = new Map(project.resources.map((r) => [lockKey(r.kind, r.logicalId), r.file]))
        const { plan } = await planAgainst({
          client: session.open.client,
          desired: [],
          lock: session.lock,
          target: session.open.target,
          environment: session.open.environment,
          codeOptions,
          codeFiles,
          targets: args.target,
        })
        const format = args.format === 'json' ? undefined : args.format
        await printUnlessRefused(plan, format, () => {
          assertUnprotected(plan)
          assertNotBlocked(plan)
        })
        await printPlan(plan, format, 'The lock file records nothing to destroy.')
        // with nothing to destroy there is no question, and --format json still gets its document
        if (hasChanges(plan) && !(await confirm('\nDo you really want to delete all of these?', args.yes ?? false, 'destroy'))) {
          err('Destroy cancelled; nothing was deleted.\n')
          return 1
        }
        return runPlan({ session, plan, desired: [], args, what: 'Destroy' })
      },
      {
        warn: false,
        despiteCheckProblems:
          'destroy goes on, by the lock file (it deletes what the lock records; protect and retainOnDelete as the lock recorded them, and as the constructs that load say).',
      },
    )
  },
} as unknown as CommandModule<object, ApplyArgs>
