import { createInterface } from 'node:readline/promises'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Argv } from 'yargs'
import { paint } from './color.js'
import { formatProblem, loadProject, ProjectError, type EnvironmentRequest, type LoadedProject } from '../project/index.js'
import type { DesiredResource } from '../resources/types.js'
import { assertLockEnvironment, assertLockTarget, emptyLock, foldJournal, hasJournal, readLock, type LockFile } from '../state/lock.js'
import { acquireApplyLock, ApplyLockError, parseDuration, type HeldApplyLock } from '../state/process-lock.js'
import type { OperationOutcome, ApplyResult } from '../apply/execute.js'
import { openTarget, type OpenTarget, type TargetFlags } from './target.js'
import { io } from './io.js'
import { UserError } from '../errors.js'

/** Flags shared by plan, apply and destroy. */
export interface EngineArgs extends TargetFlags {
  config?: string
  /** The environment of the config (`--env`); else MONITORS_ENV, else the config's defaultEnvironment. */
  env?: string
  target?: string[]
  format?: OutputFormat
}

/** `--env NAME`: every command that loads a project takes it. */
export function envOption<T>(yargs: Argv<T>) {
  return yargs.option('env', {
    type: 'string',
    requiresArg: true,
    describe:
      "The config's environment to use (env MONITORS_ENV; config defaultEnvironment): its target, its lock file (monitoring.<name>.lock.json) and its defaults",
  })
}

/**
 * The environment asked for: `--env`, else MONITORS_ENV (set, even empty: an empty one is
 * refused by the loader rather than taken as none), else none (the config's defaultEnvironment).
 */
export function environmentRequest(args: { env?: string }): EnvironmentRequest | undefined {
  if (args.env !== undefined) return { name: String(args.env), from: '--env' }
  const variable = io().env.MONITORS_ENV
  return variable !== undefined ? { name: variable, from: 'MONITORS_ENV' } : undefined
}

/** A JSON document with `environment` (when there is one) right after its `formatVersion`. */
export function withEnvironment<T extends { formatVersion: number }>(doc: T, environment: string | undefined): T & { environment?: string } {
  if (environment === undefined) return doc
  const { formatVersion, ...rest } = doc
  return { formatVersion, environment, ...rest } as T & { environment?: string }
}

/** The target's flags (and the config and environment that may name it): every command that talks to one takes them. */
export function targetOptions<T>(yargs: Argv<T>) {
  return envOption(yargs)
    .option('config', { alias: 'c', type: 'string', describe: 'Config file (default: monitoring.config.ts in this or a parent directory)' })
    .option('api-url', {
      type: 'string',
      describe: 'Base URL of the Monitoring API (env MONITORING_API_URL); without one, the embedded local server is used (in CI only with --local)',
    })
    .option('local', {
      type: 'boolean',
      describe: "Use the embedded local server on purpose (.monitors/local.db); required in CI, where a missing URL is refused (config: api.baseUrl: 'local')",
    })
    .option('api-key', { type: 'string', describe: 'API key (env MONITORING_API_KEY); never printed' })
    .option('account-id', { type: 'string', describe: 'Account id, sent as x-service-account (env MONITORING_ACCOUNT_ID)' })
    .option('target-id', {
      type: 'string',
      describe:
        "The target's identity in the lock file (env MONITORING_TARGET_ID, config api.targetId; default: the base URL): one name for the servers of one service",
    })
    .option('lock', {
      type: 'string',
      describe: `Lock file (default: monitoring.lock.json beside the config, monitoring.<env>.lock.json with --env; .monitors/local.lock.json for the embedded server)`,
    })
    .option('timeout', {
      type: 'number',
      default: 30,
      requiresArg: true,
      coerce: checkNumber('--timeout', 'a number of seconds above 0 and at most 3600, e.g. 30', (n) => n > 0 && n <= 3600),
      describe: 'Seconds to wait for each API answer',
    })
    .option('retries', {
      type: 'number',
      default: 4,
      requiresArg: true,
      coerce: checkNumber('--retries', 'a whole number from 0 to 20', (n) => Number.isInteger(n) && n >= 0 && n <= 20),
      describe: 'Times a request is sent again after a 5xx, a timeout or a lost connection (backoff with jitter)',
    })
    .option('insecure-http', {
      type: 'boolean',
      default: false,
      describe: 'Allow a plain http:// API URL to a host other than this machine (the key travels in clear)',
    })
    .option('cache', {
      type: 'boolean',
      default: true,
      describe: 'Keep validated constructs and list pages between commands (--no-cache: neither read nor write them; env MONITORS_CACHE=0)',
    })
}

export function engineOptions<T>(yargs: Argv<T>) {
  return targetOptions(yargs).option('target', {
    type: 'string',
    array: true,
    coerce: checkTargets,
    describe: 'Limit to this resource and what it depends on: kind:logicalId (e.g. dns-check:shop-dns or DnsCheck:shop-dns); repeatable',
  })
}

export type OutputFormat = 'text' | 'markdown' | 'json'

function usageError(message: string): Error {
  return new UserError(message)
}

/** The arguments of this run, as given: a refused number flag names the text it was given. */
let rawArgv: readonly string[] = []
export function rememberArgv(argv: readonly string[]): void {
  rawArgv = argv
}

/** Whether `text` is one of this run's arguments as given (yargs reads a lone `-` as an empty string). */
export function givenArgument(text: string): boolean {
  const end = rawArgv.indexOf('--')
  return (end === -1 ? rawArgv : rawArgv.slice(0, end)).includes(text)
}

/** The text given to `flag` (`--port abc` or `--port=abc`, the last one), undefined when none. */
function givenText(flag: string): string | undefined {
  let found: string | undefined
  for (let i = 0; i < rawArgv.length; i++) {
    const arg = rawArgv[i]
    if (arg === '--') break
    if (arg === flag) found = rawArgv[i + 1]
    else if (arg.startsWith(`${flag}=`)) found = arg.slice(flag.length + 1)
  }
  return found
}

/**
 * A yargs coerce that refuses a number flag outside `allowed`, naming what was given: yargs
 * turns `--port abc` into NaN, which a user never typed.
 */
export function checkNumber(flag: string, allowed: string, ok: (n: number) => boolean) {
  return (value: unknown): number => {
    const values = Array.isArray(value) ? value : [value]
    if (values.length !== 1) throw usageError(`${flag} is given ${values.length} times: pass it once, as ${allowed}.`)
    const n = values[0] as number
    if (typeof n !== 'number' || !Number.isFinite(n) || !ok(n)) {
      const text = givenText(flag)
      const got = typeof n === 'number' && Number.isFinite(n) ? String(n) : text !== undefined ? JSON.stringify(text) : 'something that is not a number'
      throw usageError(`${flag} must be ${allowed} (got ${got}).`)
    }
    return n
  }
}

const EMPTY_TARGET = '--target needs a resource: kind:logicalId, e.g. dns-check:shop-dns (an empty --target would select everything, so it is refused).'

/**
 * The same check on the raw arguments: yargs drops an empty value repeated after a real one
 * (`--target a --target=`), so the parsed list cannot tell. Undefined when every --target has a value.
 */
export function emptyTargetProblem(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--') break
    if (arg === '--target') {
      const next = argv[i + 1]
      if (next === undefined || next.trim() === '' || next.startsWith('-')) return EMPTY_TARGET
    } else if (arg.startsWith('--target=') && arg.slice('--target='.length).trim() === '') return EMPTY_TARGET
  }
  return undefined
}

/**
 * `--target` with no value, or an empty one (`--target $RES` with RES unset), must not mean
 * "everything": that would apply the whole plan when a pipeline meant one resource.
 */
function checkTargets(value: unknown): string[] {
  const values = (Array.isArray(value) ? value : [value]).map((v) => (v === undefined || v === null ? '' : String(v)))
  if (values.length === 0 || values.some((v) => v.trim() === '')) {
    throw usageError(EMPTY_TARGET)
  }
  return values
}

export function formatOption<T>(yargs: Argv<T>) {
  return yargs.option('format', {
    choices: ['text', 'markdown', 'json'] as const,
    default: 'text' as const,
    describe:
      'Output: text for a terminal, markdown for a pull-request comment, json for programs (docs/plan-json.md). With markdown or json, stdout carries only that; everything else goes to stderr',
  })
}

export function applyOptions<T>(yargs: Argv<T>) {
  return engineOptions(yargs)
    .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'Apply without asking for confirmation (required without a terminal)' })
    .option('concurrency', {
      type: 'number',
      default: 4,
      requiresArg: true,
      coerce: checkNumber('--concurrency', 'a whole number from 1 to 64', (n) => Number.isInteger(n) && n >= 1 && n <= 64),
      describe: 'Operations in flight at once (1-64)',
    })
    .option('lock-timeout', {
      type: 'string',
      default: '0',
      describe: 'How long to wait for another apply in this checkout to finish (e.g. 30s, 5m); 0 refuses at once',
    })
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
export const out = (text: string) => (humanToStderr ? io().stderr : io().stdout).write(text)
/** The document itself (markdown or JSON): always stdout. */
export const data = (text: string) => io().stdout.write(text)
export const err = (text: string) => io().stderr.write(text)
export { useColor } from './color.js'

/**
 * An EnvVar whose secret value is empty: `new EnvVar('X', { value: process.env.X ?? '', secret: true })`
 * with X unset in the pipeline. The API accepts it, so the variable would be emptied silently.
 * One warning per variable, on stderr; not an error (an empty value can be meant).
 */
export function emptySecretWarnings(resources: readonly DesiredResource[]): string[] {
  return resources
    .filter((r) => r.kind === 'variable' && r.payload.secret === true && r.payload.value === '')
    .map(
      (r) =>
        `Warning: ${r.file} › ${r.construct} ${r.logicalId}: the secret value is empty (is the environment variable that should fill it set in this shell or pipeline?); it will be sent as "".`,
    )
}

export function warnEmptySecrets(resources: readonly DesiredResource[]): void {
  printSecretWarnings(emptySecretWarnings(resources))
}

/** The lines of emptySecretWarnings, in yellow on stderr. */
export function printSecretWarnings(lines: readonly string[]): void {
  if (lines.length > 0) err(`${lines.map((l) => paint().yellow(l)).join('\n')}\n`)
}

export interface LoadOptions {
  /** Warn of empty secret values (not for destroy, which sends none). */
  warn?: boolean
  /**
   * What the problems of the check files do not stop (destroy: it needs the config, the target
   * and the lock, not the check files): they are printed as warnings, followed by this line.
   */
  despiteCheckProblems?: string
  /** How the project is loaded (default: loadProject with the arguments' config, environment and cache). */
  load?: () => Promise<LoadedProject>
  /** A project with a config and no check file yet is loaded, with no resources (import writes the first one). */
  allowNoCheckFiles?: boolean
}

/** Loads the project; problems print one per line and resolve to undefined (exit 1). */
export async function loadOrReport(args: { config?: string; env?: string; cache?: boolean }, options: LoadOptions = {}): Promise<LoadedProject | undefined> {
  try {
    const project = options.load
      ? await options.load()
      : await loadProject({
          config: args.config,
          environment: environmentRequest(args),
          tolerateCheckProblems: options.despiteCheckProblems !== undefined,
          allowNoCheckFiles: options.allowNoCheckFiles,
          cache: args.cache,
        })
    if (project.problems.length > 0) {
      const pc = paint()
      const count = `${project.problems.length} problem${project.problems.length === 1 ? '' : 's'} in the check files`
      err(`${project.problems.map((p) => `${pc.yellow('⚠')} ${formatProblem(p)}`).join('\n')}\n${pc.yellow(`${count}: ${options.despiteCheckProblems}`)}\n`)
    }
    if (options.warn !== false) warnEmptySecrets(project.resources)
    return project
  } catch (error) {
    if (!(error instanceof ProjectError)) throw error
    const lines = error.message.split('\n')
    const count = lines.pop()
    const pc = paint()
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
  return checkedSession(project, await openTarget(project, args, (line) => err(`${paint().dim(line)}\n`), io().env))
}

/** The session of an open target, its lock read and checked (the target closed when that fails). */
async function checkedSession(project: LoadedProject, open: OpenTarget): Promise<Session> {
  try {
    const lock = await readLockFolding(open)
    assertLockEnvironment(lock, open.environment, open.lockPath, open.lockNamedByEnvironment)
    assertLockTarget(lock, open.target, open.lockPath)
    return { project, open, lock, close: () => open.close() }
  } catch (error) {
    await open.close()
    throw error
  }
}

/**
 * openSession with the lock file's bytes read at once and parsed and checked when the lock is
 * first asked for (`session.lock`): a plan shown from its memo (plan-memo.ts) never needs it,
 * since the memo's key holds those bytes, the target and the environment of a plan that read and
 * checked them. A lock with a journal beside it, or that cannot be read, is read as openSession
 * reads it. `lockBytes`: undefined when there is no lock file.
 */
export async function openSessionLazily(project: LoadedProject, args: EngineArgs): Promise<{ session: Session; lockBytes: Buffer | undefined }> {
  const open = await openTarget(project, args, (line) => err(`${paint().dim(line)}\n`), io().env)
  let lockBytes: Buffer | undefined
  try {
    if (!hasJournal(open.lockPath)) lockBytes = readFileSync(open.lockPath)
  } catch (error) {
    // no lock file yet: no lock; any other error is openSession's to report
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return { session: { project, open, lock: undefined, close: () => open.close() }, lockBytes: undefined }
  }
  if (lockBytes === undefined) return { session: await checkedSession(project, open), lockBytes: undefined }
  let lock: LockFile | undefined
  let read = false
  const session: Session = {
    project,
    open,
    get lock() {
      if (!read) {
        const found = readLock(open.lockPath, lockBytes)
        assertLockEnvironment(found, open.environment, open.lockPath, open.lockNamedByEnvironment)
        assertLockTarget(found, open.target, open.lockPath)
        lock = found
        read = true
      }
      return lock
    },
    set lock(value) {
      lock = value
      read = true
    },
    close: () => open.close(),
  }
  return { session, lockBytes }
}

/**
 * The lock with the journal of an apply that was killed folded into the file (src/state/journal.ts),
 * when no apply runs now: taking the apply lock for a moment says so. While one runs, its journal
 * is only read (the lock as it is at this moment), never folded under it.
 */
async function readLockFolding(open: OpenTarget): Promise<LockFile | undefined> {
  if (!hasJournal(open.lockPath)) return readLock(open.lockPath)
  let held: HeldApplyLock
  try {
    held = await acquireApplyLock(join(open.stateDir, 'apply.lock'), { timeoutMs: 0, command: 'monitors (folding the lock journal)' })
  } catch (error) {
    if (error instanceof ApplyLockError) return readLock(open.lockPath)
    throw error
  }
  try {
    return foldJournal(open.lockPath)
  } finally {
    held.release()
  }
}

/** The lock to update during apply: the one on disk, or a new one for this target. */
export function workingLock(session: Session): LockFile {
  const { target, environment } = session.open
  const lock = session.lock
    ? structuredClone(session.lock)
    : emptyLock({ id: target.id, baseUrl: target.baseUrl, ...(target.accountId ? { accountId: target.accountId } : {}) }, environment)
  // a lock the environment's own setting names, written before environments were declared, records it now
  if (environment !== undefined && lock.environment === undefined) lock.environment = environment
  if (!lock.target.accountId && target.accountId) lock.target.accountId = target.accountId
  // a lock written through this URL before the target was named (MONITORING_TARGET_ID) takes the name
  if (lock.target.id !== target.id) lock.target.id = target.id
  return lock
}

/** Takes `.monitors/apply.lock` so two applies in one checkout never interleave. */
export async function holdApplyLock(session: Session, command: string, lockTimeout: string | undefined): Promise<HeldApplyLock> {
  const timeoutMs = parseDuration(lockTimeout ?? '0')
  if (timeoutMs === undefined) {
    throw new UserError(`--lock-timeout "${lockTimeout}" is not a duration (e.g. 30s, 5m).`)
  }
  const held = await acquireApplyLock(join(session.open.stateDir, 'apply.lock'), { timeoutMs, command })
  try {
    // read again now that no other apply runs: one that held the lock may have changed it, or
    // been killed, leaving its journal to fold
    session.lock = foldJournal(session.open.lockPath)
    assertLockEnvironment(session.lock, session.open.environment, session.open.lockPath, session.open.lockNamedByEnvironment)
    assertLockTarget(session.lock, session.open.target, session.open.lockPath)
  } catch (error) {
    held.release()
    throw error
  }
  return held
}

/**
 * The frame of every command that changes the lock: load the project (problems reported,
 * exit 1), open the target, hold `.monitors/apply.lock` while `work` runs, then release the
 * lock and close the target whatever happens.
 */
export async function withApplySession(
  args: EngineArgs & { lockTimeout?: string },
  command: string,
  work: (project: LoadedProject, session: Session) => Promise<number>,
  options: LoadOptions = {},
): Promise<number> {
  const project = await loadOrReport(args, options)
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

/**
 * Asks for confirmation on a terminal. Without one (CI, a pipe) and without --yes it refuses:
 * nothing changes without an explicit yes.
 */
export async function confirm(question: string, yes: boolean, what: string): Promise<boolean> {
  if (yes) return true
  const { stdin, stderr } = io()
  if (!stdin?.isTTY) {
    throw new UserError(`${what} needs confirmation, but there is no terminal to ask on. Review the plan above and run again with --yes.`)
  }
  const rl = createInterface({ input: stdin, output: stderr as NodeJS.WritableStream })
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
  const c = paint()
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
      : outcome.verb === 'moved'
        ? c.dim(` (from ${change.movedFrom}; lock only)`)
        : ''
  return `${colour(sign)} ${who} ${outcome.verb}${id}${note} ${c.dim(`${outcome.ms}ms`)}\n`
}

function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id
}

/** Totals after an apply or destroy, and on failure what failed and what is left. */
export function reportResult(result: ApplyResult, lockPath: string, what: 'Apply' | 'Destroy'): number {
  const c = paint()
  const count = (verb: string) => result.outcomes.filter((o) => o.ok && o.verb === verb).length
  const done = result.outcomes.filter((o) => o.ok).length
  if (result.failed.length === 0 && !result.interrupted) {
    // forgotten (retainOnDelete) resources still run remotely: never counted as deleted
    const optional = (verb: string) => (count(verb) ? [`${count(verb)} ${verb}`] : [])
    const parts =
      what === 'Destroy'
        ? [`${count('deleted')} deleted`, ...optional('forgotten')]
        : [
            `${count('created')} created`,
            `${count('updated')} updated`,
            ...optional('replaced'),
            `${count('deleted')} deleted`,
            ...optional('moved'),
            ...optional('forgotten'),
          ]
    out(`\n${c.green(`${what} complete:`)} ${parts.join(', ')}.\n`)
    return 0
  }
  const lines = [
    `\n${c.red(`${what} ${result.interrupted ? 'interrupted' : 'failed'}:`)} ${result.failed.length} operation${result.failed.length === 1 ? '' : 's'} failed, ${done} succeeded, ${result.notStarted.length} not started.`,
  ]
  for (const failure of result.failed)
    lines.push(`  failed:      ${failure.change.action} ${failure.change.kind} ${failure.change.logicalId}: ${failure.error?.message}`)
  const shown = result.notStarted.slice(0, 20)
  for (const change of shown) lines.push(`  not started: ${change.action} ${change.kind} ${change.logicalId}`)
  if (result.notStarted.length > shown.length) lines.push(`  … and ${result.notStarted.length - shown.length} more not started`)
  lines.push(`The lock file (${lockPath}) keeps every success; fix the problem and run ${what === 'Apply' ? 'apply' : 'destroy'} again to continue.`)
  err(`${lines.join('\n')}\n`)
  return 1
}

/** With MONITORS_TIMING=1, prints how long each phase took, its CPU time and the memory after it (stderr). */
export function phaseTimer(): (phase: string) => void {
  if (!io().env.MONITORS_TIMING) return () => {}
  const mib = (bytes: number) => `${Math.round(bytes / 1048576)}MiB`
  const memory = () => {
    const { rss, heapUsed } = process.memoryUsage()
    return `rss ${mib(rss)} heap ${mib(heapUsed)}`
  }
  // CPU time too: on a busy machine the wall time says more about the neighbours than the phase
  const cpu = () => {
    const { user, system } = process.cpuUsage()
    return (user + system) / 1000
  }
  let last = performance.now()
  let lastCpu = cpu()
  err(`timing: start ${Math.round(last)}ms after process start (cpu ${Math.round(lastCpu)}ms, ${memory()})\n`)
  return (phase) => {
    const now = performance.now()
    const nowCpu = cpu()
    err(`timing: ${phase} ${Math.round(now - last)}ms (cpu ${Math.round(nowCpu - lastCpu)}ms, ${memory()})\n`)
    last = now
    lastCpu = nowCpu
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
