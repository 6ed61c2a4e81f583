import { createInterface } from 'node:readline/promises'
import { join } from 'node:path'
import type { Argv } from 'yargs'
import pc from 'picocolors'
import { loadProject, ProjectError, type LoadedProject } from '../project/index.js'
import { assertLockTarget, emptyLock, readLock, type LockFile } from '../apply/lock.js'
import { acquireApplyLock, parseDuration, type HeldApplyLock } from '../apply/process-lock.js'
import type { OperationOutcome, ApplyResult } from '../apply/execute.js'
import { openTarget, type OpenTarget, type TargetFlags } from './target.js'

/** Flags shared by plan, apply and destroy. */
export interface EngineArgs extends TargetFlags {
  config?: string
  target?: string[]
  format?: OutputFormat
}

export function engineOptions<T>(yargs: Argv<T>) {
  return yargs
    .option('config', { alias: 'c', type: 'string', describe: 'Config file (default: monitoring.config.ts in this or a parent directory)' })
    .option('api-url', { type: 'string', describe: 'Base URL of the Monitoring API (env MONITORING_API_URL); without one, the embedded local server is used' })
    .option('api-key', { type: 'string', describe: 'API key (env MONITORING_API_KEY); never printed' })
    .option('account-id', { type: 'string', describe: 'Account id, sent as x-service-account (env MONITORING_ACCOUNT_ID)' })
    .option('lock', { type: 'string', describe: `Lock file (default: monitoring.lock.json beside the config; .monitors/local.lock.json for the embedded server)` })
    .option('timeout', { type: 'number', default: 30, describe: 'Seconds to wait for each API answer' })
    .option('retries', { type: 'number', default: 4, describe: 'Times a request is sent again after a 5xx, a timeout or a lost connection (backoff with jitter)' })
    .option('insecure-http', { type: 'boolean', default: false, describe: 'Allow a plain http:// API URL to a host other than this machine (the key travels in clear)' })
    .option('target', { type: 'string', array: true, describe: 'Limit to this resource and what it depends on: kind:logicalId (e.g. dns-check:shop-dns or DnsCheck:shop-dns); repeatable' })
}

export type OutputFormat = 'text' | 'markdown' | 'json'

export function formatOption<T>(yargs: Argv<T>) {
  return yargs.option('format', {
    choices: ['text', 'markdown', 'json'] as const,
    default: 'text' as const,
    describe: 'Output: text for a terminal, markdown for a pull-request comment, json for programs (docs/plan-json.md). With markdown or json, stdout carries only that; everything else goes to stderr',
  })
}

export function applyOptions<T>(yargs: Argv<T>) {
  return engineOptions(yargs)
    .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'Apply without asking for confirmation (required without a terminal)' })
    .option('concurrency', { type: 'number', default: 4, describe: 'Operations in flight at once' })
    .option('lock-timeout', { type: 'string', default: '0', describe: 'How long to wait for another apply in this checkout to finish (e.g. 30s, 5m); 0 refuses at once' })
}

let humanToStderr = false
/**
 * With `--format markdown|json`, stdout carries that document alone (`> plan.md` in CI): text
 * for humans then goes to stderr.
 */
export function setStdoutFormat(format: OutputFormat | undefined): void {
  humanToStderr = format !== undefined && format !== 'text'
}
/** Text for humans: stdout, or stderr while stdout carries a document. */
export const out = (text: string) => (humanToStderr ? process.stderr : process.stdout).write(text)
/** The document itself (markdown or JSON): always stdout. */
export const data = (text: string) => process.stdout.write(text)
export const err = (text: string) => process.stderr.write(text)
export const useColor = () => pc.isColorSupported

/** Loads the project; problems print one per line and resolve to undefined (exit 1). */
export async function loadOrReport(args: EngineArgs): Promise<LoadedProject | undefined> {
  try {
    return await loadProject({ config: args.config })
  } catch (error) {
    if (!(error instanceof ProjectError)) throw error
    const lines = error.message.split('\n')
    const count = lines.pop()
    err(`${lines.map((l) => `${pc.red('✖')} ${l}`).join('\n')}\n${pc.red(count ?? '')}\n`)
    return undefined
  }
}

export interface Session {
  project: LoadedProject
  open: OpenTarget
  lock: LockFile | undefined
  close(): Promise<void>
}

/** Project loaded, target open, lock read and checked against the target. */
export async function openSession(project: LoadedProject, args: EngineArgs): Promise<Session> {
  const open = await openTarget(project, args, (line) => err(`${pc.dim(line)}\n`))
  try {
    const lock = readLock(open.lockPath)
    assertLockTarget(lock, open.target, open.lockPath)
    return { project, open, lock, close: () => open.close() }
  } catch (error) {
    await open.close()
    throw error
  }
}

/** The lock to update during apply: the one on disk, or a new one for this target. */
export function workingLock(session: Session): LockFile {
  const { target } = session.open
  const lock = session.lock ? structuredClone(session.lock) : emptyLock({ id: target.id, baseUrl: target.baseUrl, ...(target.accountId ? { accountId: target.accountId } : {}) })
  if (!lock.target.accountId && target.accountId) lock.target.accountId = target.accountId
  return lock
}

/** Takes `.monitors/apply.lock` so two applies in one checkout never interleave. */
export async function holdApplyLock(session: Session, command: string, lockTimeout: string | undefined): Promise<HeldApplyLock> {
  const timeoutMs = parseDuration(lockTimeout ?? '0')
  if (timeoutMs === undefined) {
    throw Object.assign(new Error(`--lock-timeout "${lockTimeout}" is not a duration (e.g. 30s, 5m).`), { userError: true })
  }
  const held = await acquireApplyLock(join(session.open.stateDir, 'apply.lock'), { timeoutMs, command })
  try {
    // read again now that no other apply runs: one that held the lock may have changed it
    session.lock = readLock(session.open.lockPath)
    assertLockTarget(session.lock, session.open.target, session.open.lockPath)
  } catch (error) {
    held.release()
    throw error
  }
  return held
}

/**
 * Asks for confirmation on a terminal. Without one (CI, a pipe) and without --yes it refuses:
 * nothing changes without an explicit yes.
 */
/**
 * The frame of every command that changes the lock: load the project (problems reported,
 * exit 1), open the target, hold `.monitors/apply.lock` while `work` runs, then release the
 * lock and close the target whatever happens.
 */
export async function withApplySession(
  args: EngineArgs & { lockTimeout?: string },
  command: string,
  work: (project: LoadedProject, session: Session) => Promise<number>,
): Promise<number> {
  const project = await loadOrReport(args)
  if (!project) return 1
  const session = await openSession(project, args)
  try {
    const held = await holdApplyLock(session, command, args.lockTimeout)
    try {
      return await work(project, session)
    } finally {
      held.release()
    }
  } finally {
    await session.close()
  }
}

export async function confirm(question: string, yes: boolean, what: string): Promise<boolean> {
  if (yes) return true
  if (!process.stdin.isTTY) {
    throw Object.assign(
      new Error(`${what} needs confirmation, but there is no terminal to ask on. Review the plan above and run again with --yes.`),
      { userError: true },
    )
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  try {
    const answer = await rl.question(`${question} Only 'yes' will be accepted: `)
    return answer.trim() === 'yes'
  } finally {
    rl.close()
  }
}

const SIGNS: Record<string, string> = { created: '+', updated: '~', replaced: '±', deleted: '-', forgotten: '-', moved: '→' }
const VERB_OF_ACTION: Record<string, string> = { create: 'create', update: 'update', replace: 'replace', delete: 'delete', move: 'move', forget: 'forget' }

/** One line per operation: `+ dns-check shop-dns created (id 6f1c2a3b…) 123ms`. */
export function outcomeLine(outcome: OperationOutcome): string {
  const c = pc.createColors(useColor())
  const { change } = outcome
  const who = `${change.kind} ${change.logicalId}`
  if (!outcome.ok) {
    return `${c.red('✗')} ${who} ${VERB_OF_ACTION[change.action]} failed: ${outcome.error?.message ?? 'unknown error'}\n`
  }
  const sign = SIGNS[outcome.verb!] ?? '•'
  const colour = outcome.verb === 'created' ? c.green : outcome.verb === 'updated' || outcome.verb === 'replaced' ? c.yellow : c.red
  const id = outcome.remoteId ? ` (id ${shortId(outcome.remoteId)})` : ''
  const note = outcome.alreadyGone
    ? c.dim(' (was already gone)')
    : outcome.verb === 'forgotten'
      ? c.dim(change.action === 'forget' ? ' (retainOnDelete: removed from the lock, still running)' : ' (already gone; removed from the lock)')
      : outcome.verb === 'moved' ? c.dim(` (from ${change.movedFrom}; lock only)`) : ''
  return `${colour(sign)} ${who} ${outcome.verb}${id}${note} ${c.dim(`${outcome.ms}ms`)}\n`
}

function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id
}

/** Totals after an apply or destroy, and on failure what failed and what is left. */
export function reportResult(result: ApplyResult, lockPath: string, what: 'Apply' | 'Destroy'): number {
  const c = pc.createColors(useColor())
  const count = (verb: string) => result.outcomes.filter((o) => o.ok && o.verb === verb).length
  const done = result.outcomes.filter((o) => o.ok).length
  if (result.failed.length === 0 && !result.interrupted) {
    // forgotten (retainOnDelete) resources still run remotely: never counted as deleted
    const optional = (verb: string) => (count(verb) ? [`${count(verb)} ${verb}`] : [])
    const parts = what === 'Destroy'
      ? [`${count('deleted')} deleted`, ...optional('forgotten')]
      : [`${count('created')} created`, `${count('updated')} updated`, ...optional('replaced'), `${count('deleted')} deleted`, ...optional('moved'), ...optional('forgotten')]
    out(`\n${c.green(`${what} complete:`)} ${parts.join(', ')}.\n`)
    return 0
  }
  const lines = [
    `\n${c.red(`${what} ${result.interrupted ? 'interrupted' : 'failed'}:`)} ${result.failed.length} operation${result.failed.length === 1 ? '' : 's'} failed, ${done} succeeded, ${result.notStarted.length} not started.`,
  ]
  for (const failure of result.failed) lines.push(`  failed:      ${failure.change.action} ${failure.change.kind} ${failure.change.logicalId}: ${failure.error?.message}`)
  const shown = result.notStarted.slice(0, 20)
  for (const change of shown) lines.push(`  not started: ${change.action} ${change.kind} ${change.logicalId}`)
  if (result.notStarted.length > shown.length) lines.push(`  … and ${result.notStarted.length - shown.length} more not started`)
  lines.push(`The lock file (${lockPath}) keeps every success; fix the problem and run ${what === 'Apply' ? 'apply' : 'destroy'} again to continue.`)
  err(`${lines.join('\n')}\n`)
  return 1
}

/** With MONITORS_TIMING=1, prints how long each phase took (stderr). */
export function phaseTimer(): (phase: string) => void {
  if (!process.env.MONITORS_TIMING) return () => {}
  let last = performance.now()
  err(`timing: start ${Math.round(last)}ms after process start\n`)
  return (phase) => {
    const now = performance.now()
    err(`timing: ${phase} ${Math.round(now - last)}ms\n`)
    last = now
  }
}

/**
 * Ctrl-C during an apply: the first stops new operations and lets those in flight finish (the
 * lock records them); a second one exits at once.
 */
export function interruptible(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController()
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(130)
    err('\nInterrupted: no new operations start; waiting for those in flight (Ctrl-C again to quit now).\n')
    controller.abort()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return {
    signal: controller.signal,
    dispose: () => {
      process.removeListener('SIGINT', onSignal)
      process.removeListener('SIGTERM', onSignal)
    },
  }
}
