import { resolve } from 'node:path'
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { computePlan, planAgainst, hasChanges, summarize, kindsToRead, type Plan } from '../../plan/index.js'
import { assertNoDuplicates, assertNotBlocked, assertUnprotected } from '../../plan/select.js'
import { executePlan, type ApplyResult } from '../../apply/execute.js'
import { syncLockOptions, writeLock } from '../../state/lock.js'
import type { DesiredResource } from '../../resources/types.js'
import {
  applyOptions,
  confirm,
  data,
  interruptible,
  err,
  formatOption,
  out,
  outcomeLine,
  reportResult,
  setStdoutFormat,
  workingLock,
  type EngineArgs,
  type OutputFormat,
  type Session,
  withApplySession,
} from '../engine.js'
import { printPlan, printUnlessRefused, printWarnings, readLockText } from './plan.js'
import { UserError } from '../../errors.js'
import { io } from '../io.js'
import { Progress, progressMode } from '../progress.js'

export interface ApplyArgs extends EngineArgs {
  yes?: boolean
  concurrency?: number
  lockTimeout?: string
  plan?: string
  adoptExisting?: boolean
  allowDuplicates?: boolean
}

class StalePlanError extends UserError {}

/**
 * Runs a plan's operations against the session's target and reports them; then records the
 * code's resource options in the lock. Shared by apply and destroy.
 */
export async function runPlan(options: {
  session: Session
  plan: Plan
  desired: readonly DesiredResource[]
  args: ApplyArgs
  what: 'Apply' | 'Destroy'
}): Promise<number> {
  const { session, plan, args, what } = options
  const lock = workingLock(session)
  let result: ApplyResult | undefined
  if (hasChanges(plan)) {
    out('\n')
    const interrupt = interruptible()
    const progress = startProgress(plan, what === 'Apply' ? 'Applying' : 'Destroying', args.format, session)
    const lines = batched((flush) => progress.around(flush))
    result = await executePlan({
      signal: interrupt.signal,
      plan,
      desired: options.desired,
      client: session.open.client,
      lock,
      lockPath: session.open.lockPath,
      concurrency: args.concurrency,
      onOutcome: (outcome) => {
        progress.finished(outcome.change.kind, outcome.ok)
        lines.write(outcome.ok ? out : err, outcomeLine(outcome))
      },
    }).finally(() => {
      lines.flush()
      progress.stop()
      interrupt.dispose()
    })
  }
  // protect / retainOnDelete hold once the construct leaves the code: the lock keeps them.
  const synced = syncLockOptions(lock, options.desired)
  if (synced && (session.lock || result?.outcomes.some((o) => o.ok))) writeLock(session.open.lockPath, lock)
  const code = result ? reportResult(result, session.open.lockPath, what) : 0
  if (args.format === 'json') {
    const { planToJson, changeToJson, PLAN_FORMAT_VERSION } = await import('../../plan/render/json.js')
    data(
      `${JSON.stringify(
        {
          formatVersion: PLAN_FORMAT_VERSION,
          ...environmentField(session),
          ok: code === 0,
          plan: planToJson(plan),
          operations: (result?.outcomes ?? []).map((o) => ({
            ...changeToJson(o.change),
            ok: o.ok,
            ...(o.verb ? { result: o.verb } : {}),
            ...(o.remoteId ? { remoteId: o.remoteId } : {}),
            ms: o.ms,
            ...(o.error ? { error: o.error.message } : {}),
          })),
          notStarted: (result?.notStarted ?? []).map((c) => ({ kind: c.kind, logicalId: c.logicalId, action: c.action })),
          interrupted: result?.interrupted ?? false,
        },
        null,
        2,
      )}\n`,
    )
  }
  return code
}

/** `environment` of a document, when the run is for one (`--env`). */
export const environmentField = (session: Session) => (session.open.environment !== undefined ? { environment: session.open.environment } : {})

/**
 * The progress of the operations (src/cli/progress.ts) on stderr: a line rewritten in place on
 * a terminal, a plain line every few seconds without one, none with --format json.
 */
function startProgress(plan: Plan, verb: string, format: OutputFormat | undefined, session: Session): Progress {
  const totals = new Map<string, number>()
  for (const change of plan.changes) if (change.action !== 'noop') totals.set(change.kind, (totals.get(change.kind) ?? 0) + 1)
  const { stderr, env } = io()
  const { mode, intervalMs } = progressMode({ stream: stderr, format, env })
  const progress = new Progress({ verb, totals: [...totals], stream: stderr, mode, intervalMs, waitMs: () => session.open.client.rateLimitWaitMs() })
  // a terminal shows the line at once; a plain line first comes after the interval
  if (mode === 'tty') progress.tick()
  return progress
}

/**
 * Outcome lines of operations finishing together, written together: one write per turn of the
 * event loop instead of one per operation (10,000 creates print 10,000 lines). `around` wraps
 * each write (the progress line steps aside for it).
 */
function batched(around: (write: () => void) => void = (write) => write()) {
  let pending: Array<[(text: string) => unknown, string]> = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const lines = pending
    pending = []
    around(() => {
      for (let i = 0; i < lines.length; ) {
        const to = lines[i][0]
        let text = ''
        for (; i < lines.length && lines[i][0] === to; i++) text += lines[i][1]
        to(text)
      }
    })
  }
  return {
    write(to: (text: string) => unknown, text: string) {
      pending.push([to, text])
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    },
    flush,
  }
}

/** `apply plan.json`: runs exactly the saved plan, or refuses it as stale naming what changed. */
async function applySaved(args: ArgumentsCamelCase<ApplyArgs>, session: Session, desired: readonly DesiredResource[]): Promise<number> {
  const { readSavedPlan, fingerprint, staleReasons, savedEnvironmentMismatch, savedTargetMismatch, appliedAlready, codeUnchanged } = await import(
    '../../plan/saved.js'
  )
  const { fetchRemoteState } = await import('../../api/resources.js')
  const file = args.plan!
  const saved = readSavedPlan(resolve(file))
  // before anything is read or sent: a plan of one environment never runs against another's lock and target
  const mismatch = savedEnvironmentMismatch(saved, session.open.environment, file) ?? savedTargetMismatch(saved, session.open.target)
  if (mismatch) throw new StalePlanError(`The saved plan ${file} cannot be applied: ${mismatch}.`)
  const remote = await fetchRemoteState(session.open.client, kindsToRead(desired, session.lock))
  const now = fingerprint({ desired, lock: session.lock, lockText: readLockText(session.open.lockPath), remote, salt: saved.fingerprints.secrets?.salt })
  const reasons = staleReasons(saved, now, desired, { lock: session.lock, remote })
  if (reasons.length > 0) {
    // run again after it succeeded (a retried pipeline job): its changes are all there already
    const fresh = computePlan({ desired, lock: session.lock, remote, target: session.open.target, environment: session.open.environment })
    if (appliedAlready(saved, fresh, codeUnchanged(saved, now, desired))) {
      out(`The saved plan ${file} has already been applied: the lock and the target are as it leaves them. Nothing to do.\n`)
      if (args.format === 'json') {
        const { PLAN_FORMAT_VERSION } = await import('../../plan/render/json.js')
        data(
          `${JSON.stringify({ formatVersion: PLAN_FORMAT_VERSION, ...environmentField(session), ok: true, alreadyApplied: true, operations: [], notStarted: [], interrupted: false }, null, 2)}\n`,
        )
      }
      return 0
    }
    throw new StalePlanError(
      `The saved plan ${file} is stale; nothing was changed. Since it was made:\n${reasons.map((r) => `  - ${r}`).join('\n')}\n` +
        `Make a new one with: monitors plan --out ${file}`,
    )
  }
  const plan: Plan = {
    version: 1,
    ...(saved.plan.environment !== undefined ? { environment: saved.plan.environment } : {}),
    target: saved.plan.target,
    changes: saved.operations,
    unmanaged: saved.plan.unmanaged,
    summary: summarize(saved.operations),
  }
  const format = args.format === 'markdown' ? 'markdown' : args.format === 'json' ? undefined : 'text'
  await printUnlessRefused(plan, format, () => {
    assertUnprotected(plan)
    assertNotBlocked(plan)
    assertNoDuplicates(plan, { allowDuplicates: args.allowDuplicates })
  })
  await printPlan(plan, format)
  return runPlan({ session, plan, desired, args, what: 'Apply' })
}

/**
 * `monitors apply [plan.json]`: plans, shows the plan, asks (or takes --yes), then runs the
 * operations in dependency order, a few at a time, one line each; the lock is rewritten after
 * every success. With a saved plan, runs exactly that plan (no question: it was reviewed) or
 * refuses it as stale.
 */
export const applyCommand = {
  command: 'apply [plan]',
  describe: 'Plan, confirm, then create, update and delete remote resources to match the code (or run a saved plan)',
  builder: (yargs: Argv) =>
    formatOption(applyOptions(yargs))
      .positional('plan', { type: 'string', describe: 'A plan saved by "monitors plan --out <file>": run exactly it, or refuse it as stale' })
      .option('adopt-existing', {
        type: 'boolean',
        default: false,
        describe:
          'A create of what already exists remotely, unmanaged, with the same name (key, url): record the existing resource in the lock and update it to the code',
      })
      .option('allow-duplicates', {
        type: 'boolean',
        default: false,
        describe: 'Create such resources anyway, as second copies (never possible for a variable key or a status page url)',
      }),
  handler: async (args: ArgumentsCamelCase<ApplyArgs>): Promise<number> => {
    setStdoutFormat(args.format)
    return withApplySession(args, 'monitors apply', async (project, session) => {
      printWarnings(project.warnings)
      if (args.plan) return applySaved(args, session, project.resources)
      const { plan } = await planAgainst({
        client: session.open.client,
        desired: project.resources,
        lock: session.lock,
        target: session.open.target,
        environment: session.open.environment,
        adoptExisting: args.adoptExisting,
        allowDuplicates: args.allowDuplicates,
        targets: args.target,
      })
      const format = args.format === 'json' ? undefined : (args.format as OutputFormat)
      await printUnlessRefused(plan, format, () => {
        assertUnprotected(plan)
        assertNotBlocked(plan)
        assertNoDuplicates(plan, { allowDuplicates: args.allowDuplicates })
      })
      await printPlan(plan, format)
      if (hasChanges(plan) && !(await confirm('\nDo you want to apply these changes?', args.yes ?? false, 'apply'))) {
        err('Apply cancelled; nothing was changed.\n')
        return 1
      }
      return runPlan({ session, plan, desired: project.resources, args, what: 'Apply' })
    })
  },
} as unknown as CommandModule<object, ApplyArgs>
