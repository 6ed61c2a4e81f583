/**
 * Runs one browser or multi-step check script, once, safely, and answers a result:
 *
 *   runtime prepared? → bundle the stored files with the harness → (browser checks) launch
 *   Chromium in this process with the runtime's Playwright, behind the filtering proxy →
 *   one sandboxed child process runs the bundle → limits watched (wall clock, memory, disk,
 *   output) → browser and child killed whatever happened → artifacts scrubbed and capped →
 *   the verdict (src/runner/outcome.ts's `judge`).
 *
 * Never throws for a run that went wrong: that is in the result (`hasFailures`, `hasErrors`).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { DEFAULT_RUNTIME_ID, findRuntime, RUNTIMES, type Runtime } from '../../schema/runtimes.js'
import { judge } from '../outcome.js'
import type { AttemptOutcome } from '../types.js'
import { adoptScratchImages, finishArtifacts, formatBytes } from './artifacts.js'
import { BROWSER_BRIDGE_PORT, CHROMIUM_ARGS, launchBrowser, type BrowserHandle } from './browser.js'
import { buildRunBundle, scriptModule } from './build.js'
import { CODE_CACHE_DONE, CODE_CACHE_FOLDER, codeCacheDir } from './code-cache.js'
import { allocateRunUser, closedToOthers, copyBack, effectiveUidRange, giveTree, reapUser, type RunUser } from './contain.js'
import { startEgress, type EgressProxy } from './egress.js'
import { containment, EGRESS_PORT, EGRESS_PROXY, identityFiles, jailCommand } from './jail.js'
import { guardPreload, targetGuard } from './net-guard.js'
import type { HarnessConfig, HarnessMessage } from './protocol.js'
import { defaultRuntimeCache, resolveInRuntime, runtimeState } from './runtimes.js'
import { folderBytes, killTree, processTable, sandboxFlags, spawnSandboxed, treeMemory, type SandboxPaths } from './sandbox.js'
import { createScrubber } from './scrub.js'
import type { ArtifactManifest, ScriptCheck, ScriptDetails, ScriptRunOptions, ScriptRunResult, ScriptTest, ScriptVariable } from './types.js'
import { systemClock } from '../clock.js'

export const DEFAULT_SCRIPT_TIMEOUT_MS = 120_000
export const DEFAULT_HEAP_LIMIT_MB = 512
export const DEFAULT_MEMORY_LIMIT_MB = 2048
export const DEFAULT_DISK_LIMIT_BYTES = 512 * 1024 * 1024
/** The spec's limit of what one run uploads. */
export const ARTIFACT_LIMIT_BYTES = 150 * 1000 * 1000
/** The variable set on every run, named after the service (spec: agent 6.1.6). */
export const SERVICE_VARIABLE = 'MONITORS'
/** Variables whose key starts so are secret whatever their flag says (spec: agent 6.1.2). */
export const SECRET_PREFIX = 'MONITORS_SECRET_'
export { CHROMIUM_ARGS }
const LOG_KEEP = 64 * 1024
const MESSAGE_LIMIT = 64 * 1024 * 1024
const MAX_CONSOLE = 1000
const MAX_NETWORK = 2000

type StopReason =
  | { kind: 'timeout' }
  | { kind: 'memory'; bytes: number }
  /** the kernel refused a process of the run memory past its limit (RLIMIT_DATA) */
  | { kind: 'allocation' }
  | { kind: 'disk'; bytes: number }
  | { kind: 'output' }
  | { kind: 'aborted' }

function envFrom(check: ScriptCheck, options: ScriptRunOptions): Record<string, string> {
  const env: Record<string, string> = {}
  const add = (vars: ReadonlyArray<ScriptVariable> | null | undefined) => {
    for (const v of vars ?? []) if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(v.key) && !v.value.includes('\0')) env[v.key] = v.value
  }
  add(options.variables)
  add(check.environmentVariables)
  env[SERVICE_VARIABLE] = 'true'
  if (options.testSession) env.CI = 'true'
  else delete env.CI
  return env
}

function secretsOf(check: ScriptCheck, options: ScriptRunOptions): string[] {
  const out: string[] = [...(options.secrets ?? [])]
  for (const v of [...(options.variables ?? []), ...(check.environmentVariables ?? [])]) {
    if (v.secret || v.key.startsWith(SECRET_PREFIX)) out.push(v.value)
  }
  return out.filter((s) => s.length > 0)
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? text
  )
}

/** A failed test's reason in one line: the error's first line, with an assertion's expected and received values. */
function reasonOf(message: string): string {
  const lines = message.split('\n').map((l) => l.trim())
  const extra = lines.filter((l) => /^(Expected|Received)\b[^:]{0,24}:/.test(l)).slice(0, 2)
  return [firstLine(message), ...extra].join(' ').replace(/\s+/g, ' ')
}

/** What Node says when the kernel refuses it memory (an allocation past RLIMIT_DATA). */
export const OUT_OF_MEMORY = /Array buffer allocation failed|Cannot allocate memory|\bENOMEM\b/
const NETWORK_FAILURE = /net::ERR_|ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|EAI_AGAIN|socket hang up/

type ResultMessage = Extract<HarnessMessage, { t: 'result' }>

/** The limits of one run, from its options and their defaults. */
interface RunLimits {
  timeoutMs: number
  /** when the run is stopped, on this process's timer (performance.now: elapsed time, never the clock a test drives) */
  deadline: number
  heapLimitMb: number
  memoryLimitMb: number
  diskLimitBytes: number
}

/** The folders of one run: its bundle and scratch (removed after the run), its artifacts and the browser's home. */
interface RunFolders {
  runDir: string
  home: string
  entry: string
  /** what the script's process reads and writes (contained: its artifacts in the run's folder, copied into `kept` at the end) */
  paths: SandboxPaths
  /** the artifact folder the caller keeps */
  kept: string
}

/**
 * A contained run's hold (jail.ts): its own user (as root), its egress proxy, the one way out of
 * its network, and the unix sockets in its folder the run reaches the runner on.
 */
interface RunJail {
  user: RunUser | null
  /** its /etc/passwd and /etc/group naming its user (jail.ts's identityFiles) */
  identity: { passwd: string; group: string } | undefined
  egress: EgressProxy
  egressSocket: string
  browserSocket: string
}

/** The size of a contained run's own /tmp and /dev/shm (memory), each: its disk limit, at most 256 MiB. */
const JAIL_TMP_MAX = 256 * 1024 * 1024
/** Processes and threads of a run's own uid (Chromium's processes and threads count). */
const JAIL_PROCESSES = 4096

/** What the script's process said and how it ended. */
interface ChildRun {
  result: ResultMessage | null
  /** the tests that ended, as they ended: what is known when no result came */
  partial: ScriptTest[]
  violations: string[]
  logs: string
  fatal: string | null
  stop: StopReason | null
  exit: { code: number | null; signal: NodeJS.Signals | null }
}

/** Runs `check` once; see the module's comment. */
export async function runScript(check: ScriptCheck, options: ScriptRunOptions = {}): Promise<ScriptRunResult> {
  const now = options.now ?? systemClock.now
  const startedAt = now()
  const started = performance.now()
  const timeoutMs = options.timeoutMs ?? DEFAULT_SCRIPT_TIMEOUT_MS
  const limits: RunLimits = {
    timeoutMs,
    deadline: performance.now() + timeoutMs,
    heapLimitMb: options.heapLimitMb ?? DEFAULT_HEAP_LIMIT_MB,
    memoryLimitMb: options.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB,
    diskLimitBytes: options.diskLimitBytes ?? DEFAULT_DISK_LIMIT_BYTES,
  }
  const runtimeId = check.runtimeId ?? DEFAULT_RUNTIME_ID
  const scrub = createScrubber(secretsOf(check, options))
  const limitBytes = options.artifactLimitBytes ?? ARTIFACT_LIMIT_BYTES
  const workDir = options.workDir ?? tmpdir()
  mkdirSync(workDir, { recursive: true })

  const details = emptyDetails(check.checkType, runtimeId, limitBytes)
  const outcome: AttemptOutcome = {
    responseTime: null,
    assertions: [],
    failures: [],
    degraded: [],
    timedOut: false,
    networkError: false,
    runnerError: null,
    aborted: false,
    details: null as never,
  }
  const finish = (): ScriptRunResult =>
    scrub.deep(scriptResult(check, options, outcome, details, { startedAt, stoppedAt: Math.max(now(), startedAt), ms: performance.now() - started }))

  const prepared = preparedRuntime(check, runtimeId, options)
  if ('problem' in prepared) {
    outcome.runnerError = prepared.problem
    return finish()
  }
  const { runtime, runtimeDir } = prepared
  const built = await buildRunBundle(check, runtime, runtimeDir)
  if (!built.ok) {
    outcome.runnerError = `the script could not be built: ${built.problem}`
    return finish()
  }
  primeCodeCache(runtimeDir, limits.heapLimitMb)

  const chromiumPath = options.chromiumPath ?? process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
  const user = runUser(check, options, runtimeDir, chromiumPath)
  if (typeof user === 'string') {
    outcome.runnerError = user
    return finish()
  }
  const contained = containment().available
  const folders = runFolders(workDir, runtimeDir, options, contained, user)
  writeFileSync(folders.entry, built.code)
  let jail: RunJail | null = null
  try {
    if (contained) jail = await holdRun(folders, user, options)
    const run = await runWithBrowser(check, { ...options, chromiumPath }, folders, limits, details, outcome, jail)
    if (run) judgeRun(run, runtime, limits, details, outcome)
  } catch (error) {
    outcome.runnerError ??= `the run could not be contained: ${firstLine((error as Error).message)}`
  } finally {
    await releaseRun(folders, jail, user)
    details.artifacts = await keepArtifacts(folders.kept, details, scrub, limitBytes)
    removeAfter([folders.runDir, folders.home], () => user?.release())
  }
  return finish()
}

/** The code caches being primed, by folder and heap limit (one primer each at a time). */
const priming = new Map<string, Promise<void>>()

/**
 * Primes the runtime's code cache (code-cache.ts) for scripts of this heap limit, when it is not
 * yet: a process of its own, outside every sandbox, as this process's user (the cache is then
 * read-only to every run), loads the runtime's Playwright and writes what V8 compiled. The run
 * that starts it does not wait for it (it compiles as without a cache); the next runs use it.
 * Answers the priming, for the tests.
 */
export function primeCodeCache(runtimeDir: string, heapLimitMb: number): Promise<void> {
  const base = path.join(runtimeDir, CODE_CACHE_FOLDER)
  const key = `${base}\0${heapLimitMb}`
  const known = priming.get(key)
  if (known) return known
  const modules = [resolveInRuntime(runtimeDir, 'playwright-core'), resolveInRuntime(runtimeDir, '@playwright/test')]
  const done = (async () => {
    let primer: string
    try {
      primer = scriptModule('code-cache-prime')
    } catch {
      return
    }
    if (modules.some((m) => !m)) return
    const heapFlag = `--max-old-space-size=${heapLimitMb}`
    if (existsSync(path.join(codeCacheDir(base, String(heapLimitMb)), CODE_CACHE_DONE))) return
    // under Node's permission model: it reads the runtime and its own files, and writes the cache only
    mkdirSync(base, { recursive: true, mode: 0o755 })
    // (each path once: Node 20 aborts on a path given twice)
    const reads = [...new Set([runtimeDir, realpathSync(runtimeDir), path.dirname(primer)])].map((p) => `--allow-fs-read=${p}`)
    const permissions = ['--experimental-permission', ...reads, `--allow-fs-write=${base}`, '--disable-warning=ExperimentalWarning']
    const child = spawn(
      process.execPath,
      [...permissions, heapFlag, primer, base, realpathSync(path.join(runtimeDir, 'node_modules')), ...(modules as string[])],
      {
        cwd: runtimeDir,
        stdio: 'ignore',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      },
    )
    await new Promise((resolve) => {
      child.on('close', resolve)
      child.on('error', resolve)
    })
  })().catch(() => undefined)
  priming.set(key, done)
  return done
}

/** Folders of runs that answered, being removed (removed at once, should this process exit first). */
const removing = new Set<string>()

/**
 * Removes a run's folders (its browser's profile among them: a few hundred files) once the run
 * has answered, off its time and this process's event loop, then calls `then` (the run's uid is
 * free once nothing of it is left; never, when a folder could not be removed).
 */
function removeAfter(dirs: string[], then: () => void): void {
  if (removing.size === 0) process.once('exit', removeNow)
  for (const dir of dirs) removing.add(dir)
  void Promise.all(
    dirs.map((dir) =>
      rm(dir, { recursive: true, force: true }).then(
        () => true,
        () => false,
      ),
    ),
  ).then((removed) => {
    for (const dir of dirs) removing.delete(dir)
    if (removing.size === 0) process.off('exit', removeNow)
    // a folder left behind keeps its uid from the next run, as a failed removal did before
    if (removed.every(Boolean)) then()
  })
}

function removeNow(): void {
  for (const dir of removing) rmSync(dir, { recursive: true, force: true })
}

/**
 * The run's own user, when it is contained and this process is root (null: none), or why it
 * cannot start: every uid in use, or a file it needs closed to other users (its user could not
 * read it).
 */
function runUser(check: ScriptCheck, options: ScriptRunOptions, runtimeDir: string, chromiumPath: string): RunUser | null | string {
  if (!containment().available) return null
  const range = effectiveUidRange(options.uidRange)
  if (!range) return null
  const needed: Array<[string, string]> = [
    ['the runtime', runtimeDir],
    ['the runtime', path.join(runtimeDir, 'node_modules')],
    ['Node', process.execPath],
  ]
  if (check.checkType === 'BROWSER') needed.push(['Chromium', chromiumPath])
  for (const [what, target] of needed) {
    const closed = closedToOthers(target)
    if (closed) {
      return (
        `${what} (${target}) cannot be read by the run's own user: ${closed.path} is closed to other users (mode ${closed.mode}). A script run by root runs as a user of its own (docs/scripts.md): ` +
        'prepare the runtimes in a folder other users can read (--runtime-cache or MONITORS_RUNTIME_CACHE, e.g. /var/cache/monitors/runtimes)'
      )
    }
  }
  return (
    allocateRunUser(range) ??
    `every uid of ${range.first}-${range.last} is in use by another run: the run did not start (--script-uid-range sets a larger range)`
  )
}

/** The run's folders given to its user, and its egress proxy started on a socket only that user may connect to. */
async function holdRun(folders: RunFolders, user: RunUser | null, options: ScriptRunOptions): Promise<RunJail> {
  const egressSocket = path.join(folders.runDir, 'egress.sock')
  const browserSocket = path.join(folders.runDir, 'browser.sock')
  // on its socket for the run's bridges, and on 127.0.0.1 for its browser's API requests, which Playwright makes in this process
  const egress = await startEgress(options, { path: egressSocket, tcp: true })
  if (user) {
    giveTree(folders.paths.scratch, user.uid, user.gid)
    giveTree(folders.paths.artifacts, user.uid, user.gid)
    giveTree(folders.home, user.uid, user.gid)
    // the run's folder and bundle: root's, passable and readable, not writable
    for (const d of [folders.runDir, folders.paths.bundle]) chmodSync(d, 0o755)
    chownSync(egressSocket, user.uid, user.gid)
    chmodSync(egressSocket, 0o600)
  }
  const identity = user ? identityFiles(folders.runDir, user, folders.paths.scratch) : undefined
  return { user, identity, egress, egressSocket, browserSocket }
}

/**
 * After the run: every process of its user killed, its egress proxy closed, what it wrote in its
 * artifact folder copied into the kept one (regular files only, never through a link), and the
 * images its script saved in its scratch folder taken too.
 */
async function releaseRun(folders: RunFolders, jail: RunJail | null, user: RunUser | null): Promise<void> {
  if (user) await reapUser(user.uid)
  await jail?.egress.close()
  if (folders.kept === folders.paths.artifacts) return adoptScratchImages(folders.paths.scratch, folders.kept)
  const owner = user?.uid ?? process.getuid?.() ?? 0
  copyBack(folders.paths.artifacts, folders.kept, owner)
  adoptScratchImages(folders.paths.scratch, folders.kept, owner)
}

/** A run's details before anything ran: what a run that could not start answers. */
export function emptyDetails(kind: ScriptDetails['kind'], runtimeId: string, limitBytes: number): ScriptDetails {
  return {
    kind,
    runtimeId,
    playwrightVersion: null,
    nodeVersion: process.version,
    tests: [],
    pages: [],
    webVitals: null,
    errors: { consoleErrors: 0, networkErrors: 0, userScriptErrors: 0, documentErrors: 0 },
    console: [],
    network: [],
    logs: '',
    violations: [],
    memory: { peakScriptRssBytes: 0, peakBrowserRssBytes: 0 },
    artifacts: { dir: null, files: [], totalBytes: 0, limitBytes, dropped: [] },
  }
}

/** The run's result (not scrubbed yet): the verdict of its outcome, its times and its details. */
function scriptResult(
  check: ScriptCheck,
  options: ScriptRunOptions,
  outcome: AttemptOutcome,
  details: ScriptDetails,
  time: { startedAt: number; stoppedAt: number; ms: number },
): ScriptRunResult {
  const verdict = judge(outcome, check.shouldFail ?? false)
  return {
    checkId: check.id ?? null,
    name: check.name,
    checkType: check.checkType,
    runLocation: options.location ?? 'local',
    resultType: 'FINAL',
    attempt: 1,
    startedAt: new Date(time.startedAt).toISOString(),
    stoppedAt: new Date(time.stoppedAt).toISOString(),
    responseTime: Math.round(time.ms),
    hasFailures: verdict.hasFailures,
    hasErrors: verdict.hasErrors,
    isDegraded: verdict.isDegraded,
    timedOut: verdict.timedOut,
    aborted: verdict.aborted,
    status: verdict.status,
    failureKind: verdict.failureKind,
    error: verdict.error,
    assertions: [],
    details,
  }
}

/** The check's runtime, when it exists, supports the check and is prepared on this machine; else why not. */
function preparedRuntime(
  check: ScriptCheck,
  runtimeId: string,
  options: ScriptRunOptions,
): { runtime: Runtime; runtimeDir: string } | { problem: string | null } {
  const runtime = findRuntime(runtimeId)
  if (!runtime) return { problem: `runtime ${runtimeId} does not exist (runtimes: ${RUNTIMES.map((r) => r.name).join(', ')})` }
  if (runtime.stage === 'REMOVED') return { problem: `runtime ${runtimeId} was removed on ${runtime.runtimeEndOfLife}: choose runtime ${DEFAULT_RUNTIME_ID}` }
  if (check.checkType === 'MULTI_STEP' && !runtime.multiStepSupport) return { problem: `runtime ${runtimeId} does not support multi-step checks` }
  const state = runtimeState(runtimeId, options.runtimeCache ?? defaultRuntimeCache())
  if (!state.prepared) return { problem: state.missing }
  return { runtime, runtimeDir: realpathSync(state.dir) }
}

/**
 * A run's folders. Contained, the run writes its artifacts in its own folder (copied into the
 * kept one at the end); with a user of its own, that folder is made in the temporary folder (its
 * user passes there).
 */
function runFolders(workDir: string, runtimeDir: string, options: ScriptRunOptions, contained: boolean, user: RunUser | null): RunFolders {
  const runDir = realpathSync(mkdtempSync(path.join(user ? tmpdir() : workDir, 'monitors-run-')))
  const kept = options.artifactsDir ? path.resolve(options.artifactsDir) : realpathSync(mkdtempSync(path.join(workDir, 'monitors-artifacts-')))
  mkdirSync(kept, { recursive: true })
  const artifacts = contained ? path.join(runDir, 'artifacts') : realpathSync(kept)
  const paths = { bundle: path.join(runDir, 'bundle'), runtimeDir, scratch: path.join(runDir, 'scratch'), artifacts }
  // the browser's home and temporary folder: short, as Chromium puts unix sockets there (108 bytes at most)
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'monitors-b-')))
  for (const d of [paths.bundle, paths.scratch, paths.artifacts]) mkdirSync(d, { recursive: true })
  return { runDir, home, entry: path.join(paths.bundle, 'run.cjs'), paths, kept: realpathSync(kept) }
}

/**
 * The script's process run to its end, beside a browser for a browser check (closed whatever
 * happened; what its proxy refused is among the violations). Null when the browser could not
 * be started (the outcome says why).
 */
async function runWithBrowser(
  check: ScriptCheck,
  options: ScriptRunOptions & { chromiumPath: string },
  folders: RunFolders,
  limits: RunLimits,
  details: ScriptDetails,
  outcome: AttemptOutcome,
  jail: RunJail | null,
): Promise<ChildRun | null> {
  const launching: Promise<BrowserHandle | null> =
    check.checkType !== 'BROWSER'
      ? Promise.resolve(null)
      : launchBrowser({
          runtimeDir: folders.paths.runtimeDir,
          chromiumPath: options.chromiumPath,
          home: folders.home,
          runDir: folders.runDir,
          timeoutMs: Math.min(60_000, limits.deadline - performance.now()),
          policy: options,
          jail: jail
            ? {
                spec: jailLimits(jail, limits),
                runDir: folders.runDir,
                egress: jail.egress,
                egressSocket: jail.egressSocket,
                browserSocket: jail.browserSocket,
              }
            : null,
        })
  // a launch that fails is told where it is awaited (superviseChild), not as an unhandled rejection meanwhile
  launching.catch(() => undefined)
  try {
    const run = await superviseChild(check, options, folders, limits, launching, details, jail)
    const browser = await launching
    if (browser) run.violations.push(...browser.proxy.violations.map((v) => v.detail))
    const egress = jail?.egress ?? browser?.egress
    if (egress) run.violations.push(...egress.refusals)
    return run
  } catch (error) {
    if (!(error instanceof LaunchFailed)) throw error
    outcome.runnerError = `the browser could not be started: ${firstLine(error.message)}`
    return null
  } finally {
    await (await launching.catch(() => null))?.close()
  }
}

/** The browser of a run could not be started. */
class LaunchFailed extends Error {}

/** The run's browser, once it is up (LaunchFailed when it could not start). */
async function launched(launching: Promise<BrowserHandle | null>): Promise<BrowserHandle | null> {
  try {
    return await launching
  } catch (error) {
    throw new LaunchFailed((error as Error).message)
  }
}

/** The user and limits of a contained run's sandboxes (the script's, its browser's). */
function jailLimits(jail: RunJail, limits: RunLimits) {
  const tmp = Math.min(JAIL_TMP_MAX, limits.diskLimitBytes)
  return {
    user: jail.user,
    identity: jail.identity,
    tmpBytes: tmp,
    shmBytes: tmp,
    processes: JAIL_PROCESSES,
    fileBytes: limits.diskLimitBytes,
    dataBytes: limits.memoryLimitMb * 1024 * 1024,
  }
}

/**
 * The script's process: contained, in its sandbox (its folder read-only, its scratch and
 * artifact folders writable, the runtime read-only) with the network guard, its route through
 * the egress proxy and its bridges to the runner's sockets preloaded; else in the permission
 * model's process as it is, the guard preloaded under `deny`.
 */
function startChild(
  check: ScriptCheck,
  options: ScriptRunOptions,
  folders: RunFolders,
  limits: RunLimits,
  browser: BrowserHandle | null,
  jail: RunJail | null,
): ChildProcess {
  const { paths } = folders
  const env = envFrom(check, options)
  if (!jail) {
    // under `deny`, the script's own connections are checked in its process (its browser's endpoint excepted)
    const guard = targetGuard(options, browser ? [`127.0.0.1:${new URL(browser.endpoint).port}`] : [])
    const preload = guard ? path.join(paths.bundle, 'guard.cjs') : undefined
    if (preload && guard) writeFileSync(preload, guardPreload(guard))
    return spawnSandboxed(folders.entry, paths, limits.heapLimitMb, env, preload)
  }
  const guard = targetGuard(options, [`127.0.0.1:${EGRESS_PORT}`, `127.0.0.1:${BROWSER_BRIDGE_PORT}`])
  const preload = path.join(paths.bundle, 'guard.cjs')
  writeFileSync(
    preload,
    guardPreload(guard, jail.egressSocket, [
      [EGRESS_PORT, jail.egressSocket],
      ...(check.checkType === 'BROWSER' ? [[BROWSER_BRIDGE_PORT, jail.browserSocket] as const] : []),
    ]),
  )
  const [command, args] = jailCommand(process.execPath, [...sandboxFlags(paths, limits.heapLimitMb), '--require', preload, folders.entry], {
    ...jailLimits(jail, limits),
    readOnly: [folders.runDir, paths.runtimeDir],
    writable: [paths.scratch, paths.artifacts],
    cwd: paths.scratch,
  })
  return spawn(command, args, { cwd: '/', env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], serialization: 'json', detached: true })
}

/**
 * Spawns the sandboxed script, sends it its config, keeps what it says, and stops it at its
 * limits. Contained, the script's process starts while its browser does (it reaches the browser
 * through the run's socket, named before the browser is up) and loads the runtime's Playwright
 * meanwhile; uncontained, once the browser is up (its guard names the browser's endpoint).
 */
async function superviseChild(
  check: ScriptCheck,
  options: ScriptRunOptions,
  folders: RunFolders,
  limits: RunLimits,
  launching: Promise<BrowserHandle | null>,
  details: ScriptDetails,
  jail: RunJail | null,
): Promise<ChildRun> {
  const { paths } = folders
  const run: ChildRun = { result: null, partial: [], violations: [], logs: '', fatal: null, stop: null, exit: { code: null, signal: null } }
  let browser = jail ? null : await launched(launching)
  const child = startChild(check, options, folders, limits, browser, jail)
  const kill = (reason: StopReason) => {
    run.stop ??= reason
    killTree(child.pid)
    try {
      child.kill('SIGKILL')
    } catch {
      /* gone */
    }
  }
  // 'close': the process has ended and its output has been read to the end
  const exited = new Promise<ChildRun['exit']>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }))
    child.on('error', (error) => {
      run.fatal ??= `the script's process could not be started: ${error.message}`
      resolve({ code: null, signal: null })
    })
  })
  listen(child, run, kill)
  const onAbort = () => kill({ kind: 'aborted' })
  options.signal?.addEventListener('abort', onAbort)
  if (options.signal?.aborted) onAbort()
  const hardTimer = setTimeout(() => kill({ kind: 'timeout' }), Math.max(0, limits.deadline - performance.now()))
  const stopWatching = () => {
    clearTimeout(hardTimer)
    options.signal?.removeEventListener('abort', onAbort)
    killTree(child.pid)
  }
  if (jail) {
    try {
      browser = await launched(launching)
    } catch (error) {
      kill({ kind: 'aborted' })
      await exited
      stopWatching()
      throw error
    }
  }
  if (child.connected) child.send(harnessConfig(check, options, paths, limits, browser, jail))
  const watchdog = watchResources(child.pid, browser?.pid, paths, limits, details, kill)
  run.exit = await exited
  clearInterval(watchdog)
  stopWatching()
  return run
}

/** What the harness is told when the run starts. */
function harnessConfig(
  check: ScriptCheck,
  options: ScriptRunOptions,
  paths: SandboxPaths,
  limits: RunLimits,
  browser: BrowserHandle | null,
  jail: RunJail | null,
): HarnessConfig {
  const margin = Math.min(5000, Math.max(500, Math.round(limits.timeoutMs * 0.1)))
  return {
    checkType: check.checkType,
    wsEndpoint: browser?.endpoint ?? null,
    artifactsDir: paths.artifacts,
    budgetMs: limits.deadline - margin - performance.now(),
    testTimeoutMs: options.testTimeoutMs ?? 0,
    tracing: options.tracing ?? 'retain-on-failure',
    maxConsoleEntries: MAX_CONSOLE,
    maxNetworkEntries: MAX_NETWORK,
    requestProxy: jail ? EGRESS_PROXY : null,
  }
}

/** Keeps what the script's process says: its output (the last 64 KiB) and its messages (stopped past 64 MB). */
function listen(child: ChildProcess, run: ChildRun, kill: (reason: StopReason) => void): void {
  const keepLog = (chunk: Buffer) => {
    run.logs = (run.logs + chunk.toString('utf8')).slice(-LOG_KEEP)
  }
  child.stdout?.on('data', keepLog)
  child.stderr?.on('data', keepLog)
  let messageBytes = 0
  child.on('message', (m: HarnessMessage) => {
    messageBytes += JSON.stringify(m).length
    if (messageBytes > MESSAGE_LIMIT) return kill({ kind: 'output' })
    if (m.t === 'result') run.result = m
    else if (m.t === 'test-end') run.partial.push(m.test)
    // a refusal of the network guard says itself what it refused; the permission model's names the permission and the path
    else if (m.t === 'violation') run.violations.push(m.permission === 'Network' ? m.resource : m.resource ? `${m.permission} ${m.resource}` : m.permission)
    else if (m.t === 'fatal') run.fatal = m.message
  })
}

/** Every half second: the memory of the script and its browser (peaks kept in the details); every second, the disk they wrote. */
function watchResources(
  childPid: number | undefined,
  browserPid: number | undefined,
  paths: SandboxPaths,
  limits: RunLimits,
  details: ScriptDetails,
  kill: (reason: StopReason) => void,
): NodeJS.Timeout {
  const memoryLimit = limits.memoryLimitMb * 1024 * 1024
  const diskLimit = limits.diskLimitBytes
  let tick = 0
  return setInterval(() => {
    tick += 1
    const table = processTable()
    const script = treeMemory(childPid, table)
    const chrome = treeMemory(browserPid, table)
    details.memory.peakScriptRssBytes = Math.max(details.memory.peakScriptRssBytes, script)
    details.memory.peakBrowserRssBytes = Math.max(details.memory.peakBrowserRssBytes, chrome)
    if (script + chrome > memoryLimit) kill({ kind: 'memory', bytes: script + chrome })
    if (tick % 2 === 0) {
      const disk = folderBytes(paths.scratch, diskLimit) + folderBytes(paths.artifacts, diskLimit)
      if (disk > diskLimit) kill({ kind: 'disk', bytes: disk })
    }
  }, 500)
}

/** The verdict of a run that ended: its tests and pages in the details, its failures and errors in the outcome. */
function judgeRun(run: ChildRun, runtime: Runtime, limits: RunLimits, details: ScriptDetails, outcome: AttemptOutcome): void {
  const r = run.result
  details.tests = r?.tests ?? run.partial
  details.pages = r?.pages ?? []
  details.webVitals = details.pages.find((p) => p.webVitals)?.webVitals ?? null
  details.console = r?.console ?? []
  details.network = r?.network ?? []
  details.errors = r?.counts ?? details.errors
  details.playwrightVersion = r?.playwrightVersion ?? runtime.dependencies['@playwright/test'] ?? null
  details.violations = [...new Set(run.violations)]
  const failed = details.tests.filter((t) => t.status === 'failed' || t.status === 'timedOut')
  for (const t of failed) outcome.failures.push(`${t.titlePath.join(' › ')}: ${reasonOf(t.error?.message ?? t.status)}`)
  if (r?.loadError) outcome.failures.push(firstLine(r.loadError.message))
  outcome.timedOut = failed.some((t) => t.status === 'timedOut')
  outcome.networkError = failed.length > 0 && failed.every((t) => t.error?.kind !== 'assertion' && NETWORK_FAILURE.test(t.error?.message ?? ''))
  // a write the kernel refused at the file size limit (RLIMIT_FSIZE, the disk limit) went over the disk limit
  // and one it refused memory at the limit of a process (RLIMIT_DATA, the memory limit), over the memory limit
  const said = [run.logs, ...details.tests.map((t) => t.error?.message ?? '')]
  const overFileSize = said.some((text) => /\bEFBIG\b|SIGXFSZ/.test(text)) || run.exit.signal === 'SIGXFSZ'
  const overData = said.some((text) => OUT_OF_MEMORY.test(text))
  const reason = run.stop ?? (overFileSize ? { kind: 'disk' as const, bytes: limits.diskLimitBytes } : overData ? { kind: 'allocation' as const } : null)
  if (reason?.kind === 'timeout') {
    outcome.timedOut = true
    outcome.failures.push(`the run exceeded its limit of ${Math.round(limits.timeoutMs / 100) / 10} s and was stopped`)
  } else if (reason?.kind === 'aborted') {
    outcome.aborted = true
    outcome.runnerError = 'the run was aborted'
  } else if (reason) {
    outcome.runnerError = stopProblem(reason, limits)
  } else if (run.fatal) {
    outcome.runnerError = run.fatal
  } else if (!r) {
    outcome.runnerError = noResultProblem(run, limits)
  }
  refusedBySandbox(details, outcome)
  details.logs = run.logs
}

/** What the sandbox refused (a browser check's, a suite's) fails the run with hasErrors, when nothing else did. */
export function refusedBySandbox(details: ScriptDetails, outcome: AttemptOutcome): void {
  if (details.violations.length > 0 && !outcome.runnerError) outcome.runnerError = `the sandbox refused: ${details.violations.join('; ')}`
}

/** Why the run was stopped at one of its limits. */
function stopProblem(reason: Exclude<StopReason, { kind: 'timeout' | 'aborted' }>, limits: RunLimits): string {
  switch (reason.kind) {
    case 'memory':
      return `the script and its browser used ${formatBytes(reason.bytes)}, over the memory limit of ${limits.memoryLimitMb} MB: the run was stopped`
    case 'allocation':
      return `a process of the run was refused memory, over the memory limit of ${limits.memoryLimitMb} MB: the run was stopped`
    case 'disk':
      return `the script wrote ${formatBytes(reason.bytes)}, over the disk limit of ${formatBytes(limits.diskLimitBytes)}: the run was stopped`
    case 'output':
      return 'the script sent more than 64 MB of messages: the run was stopped'
  }
}

/** Why the script's process ended without a result: out of memory, else its exit and last words. */
function noResultProblem(run: ChildRun, limits: RunLimits): string {
  const { logs, exit } = run
  return /heap out of memory|Reached heap limit|Allocation failed/i.test(logs)
    ? `the script ran out of memory (its heap limit is ${limits.heapLimitMb} MB)`
    : `the script's process ended without a result (${exit.signal ?? `exit code ${exit.code}`})${logs.trim() ? `: ${firstLine(logs.trim().split('\n').slice(-3).join('\n'))}` : ''}`
}

async function keepArtifacts(dir: string, details: ScriptDetails, scrub: ReturnType<typeof createScrubber>, limitBytes: number): Promise<ArtifactManifest> {
  try {
    if (details.console.length > 0) writeFileSync(path.join(dir, 'console.json'), JSON.stringify(scrub.deep(details.console), null, 1))
    if (details.network.length > 0) writeFileSync(path.join(dir, 'network.json'), JSON.stringify(scrub.deep(details.network), null, 1))
    if (details.logs) writeFileSync(path.join(dir, 'script.log'), scrub.text(details.logs))
    return await finishArtifacts(dir, scrub, limitBytes)
  } catch (error) {
    return {
      dir: null,
      files: [],
      totalBytes: 0,
      limitBytes,
      dropped: [{ name: '*', kind: 'other', bytes: 0, reason: `the artifacts could not be kept: ${(error as Error).message}` }],
    }
  }
}
