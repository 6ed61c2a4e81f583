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
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { DEFAULT_RUNTIME_ID, findRuntime, RUNTIMES, type Runtime } from '../../schema/runtimes.js'
import { judge } from '../outcome.js'
import type { TargetPolicy } from '../targets.js'
import type { AttemptOutcome } from '../types.js'
import { adoptScratchImages, finishArtifacts, formatBytes } from './artifacts.js'
import { buildRunBundle } from './build.js'
import { startEgress, type EgressProxy } from './egress.js'
import { nativeImport } from './native-import.js'
import { guardPreload, targetGuard } from './net-guard.js'
import type { HarnessConfig, HarnessMessage } from './protocol.js'
import { startProxy, type BrowserProxy } from './proxy.js'
import { defaultRuntimeCache, resolveInRuntime, runtimeState } from './runtimes.js'
import { folderBytes, killTree, processTable, spawnSandboxed, treeMemory, type SandboxPaths } from './sandbox.js'
import { createScrubber } from './scrub.js'
import type { ArtifactManifest, ScriptCheck, ScriptDetails, ScriptRunOptions, ScriptRunResult, ScriptTest, ScriptVariable } from './types.js'

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
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
]
const LOG_KEEP = 64 * 1024
const MESSAGE_LIMIT = 64 * 1024 * 1024
const MAX_CONSOLE = 1000
const MAX_NETWORK = 2000

type StopReason =
  | { kind: 'timeout' }
  | { kind: 'memory'; bytes: number }
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
  return text.split('\n').map((l) => l.trim()).find((l) => l.length > 0) ?? text
}

/** A failed test's reason in one line: the error's first line, with an assertion's expected and received values. */
function reasonOf(message: string): string {
  const lines = message.split('\n').map((l) => l.trim())
  const extra = lines.filter((l) => /^(Expected|Received)\b[^:]{0,24}:/.test(l)).slice(0, 2)
  return [firstLine(message), ...extra].join(' ').replace(/\s+/g, ' ')
}

const NETWORK_FAILURE = /net::ERR_|ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|EAI_AGAIN|socket hang up/

interface BrowserHandle {
  endpoint: string
  pid: number | undefined
  proxy: BrowserProxy
  /** The browser's way out under `deny` (egress.ts); null under `allow`. */
  egress: EgressProxy | null
  close(): Promise<void>
}

async function launchBrowser(runtimeDir: string, chromiumPath: string, home: string, runDir: string, timeoutMs: number, policy: TargetPolicy): Promise<BrowserHandle> {
  const entry = resolveInRuntime(runtimeDir, 'playwright-core')
  if (!entry) throw new Error(`the runtime in ${runtimeDir} has no playwright-core: prepare it again`)
  const mod = (await nativeImport(pathToFileURL(entry).href)) as { chromium?: unknown; default?: { chromium?: unknown } }
  const chromium = (mod.chromium ?? mod.default?.chromium) as {
    launchServer(options: Record<string, unknown>): Promise<{ wsEndpoint(): string; process(): { pid?: number }; kill(): Promise<void>; close(): Promise<void> }>
  }
  // under `deny`, every connection of the browser (and of its API requests) goes out through
  // the egress proxy, which applies the policy; WebRTC's UDP is off, so it cannot go around it
  const egress = policy.privateTargets === 'deny' ? await startEgress(policy) : null
  const server = await chromium.launchServer({
    executablePath: chromiumPath,
    args: egress ? [...CHROMIUM_ARGS, '--force-webrtc-ip-handling-policy=disable_non_proxied_udp'] : CHROMIUM_ARGS,
    ...(egress ? { proxy: { server: egress.url } } : {}),
    headless: true,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    timeout: Math.max(1000, timeoutMs),
    // the browser gets none of the server's environment (its keys, its database URL)
    // (MONITORS_RUN names the run the browser belongs to, for whoever looks at the process list)
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home, XDG_CONFIG_HOME: home, XDG_CACHE_HOME: home, LANG: 'C.UTF-8', MONITORS_RUN: runDir },
  }).catch(async (error: unknown) => {
    await egress?.close()
    throw error
  })
  const pid = server.process().pid
  let proxy: BrowserProxy
  try {
    proxy = await startProxy(server.wsEndpoint(), { contextProxies: !egress })
  } catch (error) {
    await server.kill().catch(() => undefined)
    await egress?.close()
    throw error
  }
  return {
    endpoint: proxy.endpoint,
    pid,
    proxy,
    egress,
    close: async () => {
      await proxy.close().catch(() => undefined)
      await server.kill().catch(() => undefined)
      killTree(pid)
      await egress?.close()
    },
  }
}

type ResultMessage = Extract<HarnessMessage, { t: 'result' }>

/** The limits of one run, from its options and their defaults. */
interface RunLimits {
  timeoutMs: number
  /** when the run is stopped, by the clock of the machine (Date.now) */
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
  paths: SandboxPaths
}

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
  const now = options.now ?? Date.now
  const startedAt = now()
  const started = performance.now()
  const timeoutMs = options.timeoutMs ?? DEFAULT_SCRIPT_TIMEOUT_MS
  const limits: RunLimits = {
    timeoutMs,
    deadline: Date.now() + timeoutMs,
    heapLimitMb: options.heapLimitMb ?? DEFAULT_HEAP_LIMIT_MB,
    memoryLimitMb: options.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB,
    diskLimitBytes: options.diskLimitBytes ?? DEFAULT_DISK_LIMIT_BYTES,
  }
  const runtimeId = check.runtimeId ?? DEFAULT_RUNTIME_ID
  const scrub = createScrubber(secretsOf(check, options))
  const limitBytes = options.artifactLimitBytes ?? ARTIFACT_LIMIT_BYTES
  const workDir = options.workDir ?? tmpdir()
  mkdirSync(workDir, { recursive: true })

  const details = emptyDetails(check, runtimeId, limitBytes)
  const outcome: AttemptOutcome = { responseTime: null, assertions: [], failures: [], degraded: [], timedOut: false, networkError: false, runnerError: null, aborted: false, details: null as never }
  const finish = (): ScriptRunResult => scrub.deep(scriptResult(check, options, outcome, details, { startedAt, stoppedAt: Math.max(now(), startedAt), ms: performance.now() - started }))

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

  const folders = runFolders(workDir, runtimeDir, options)
  writeFileSync(folders.entry, built.code)
  try {
    const run = await runWithBrowser(check, options, folders, limits, details, outcome)
    if (run) judgeRun(run, runtime, limits, details, outcome)
  } finally {
    details.artifacts = await keepArtifacts(folders.paths.artifacts, folders.paths.scratch, details, scrub, limitBytes)
    rmSync(folders.runDir, { recursive: true, force: true })
    rmSync(folders.home, { recursive: true, force: true })
  }
  return finish()
}

function emptyDetails(check: ScriptCheck, runtimeId: string, limitBytes: number): ScriptDetails {
  return {
    kind: check.checkType,
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
  check: ScriptCheck, options: ScriptRunOptions, outcome: AttemptOutcome, details: ScriptDetails,
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
function preparedRuntime(check: ScriptCheck, runtimeId: string, options: ScriptRunOptions): { runtime: Runtime; runtimeDir: string } | { problem: string | null } {
  const runtime = findRuntime(runtimeId)
  if (!runtime) return { problem: `runtime ${runtimeId} does not exist (runtimes: ${RUNTIMES.map((r) => r.name).join(', ')})` }
  if (runtime.stage === 'REMOVED') return { problem: `runtime ${runtimeId} was removed on ${runtime.runtimeEndOfLife}: choose runtime ${DEFAULT_RUNTIME_ID}` }
  if (check.checkType === 'MULTI_STEP' && !runtime.multiStepSupport) return { problem: `runtime ${runtimeId} does not support multi-step checks` }
  const state = runtimeState(runtimeId, options.runtimeCache ?? defaultRuntimeCache())
  if (!state.prepared) return { problem: state.missing }
  return { runtime, runtimeDir: realpathSync(state.dir) }
}

function runFolders(workDir: string, runtimeDir: string, options: ScriptRunOptions): RunFolders {
  const runDir = realpathSync(mkdtempSync(path.join(workDir, 'monitors-run-')))
  const artifacts = options.artifactsDir ? path.resolve(options.artifactsDir) : realpathSync(mkdtempSync(path.join(workDir, 'monitors-artifacts-')))
  mkdirSync(artifacts, { recursive: true })
  const paths = { bundle: path.join(runDir, 'bundle'), runtimeDir, scratch: path.join(runDir, 'scratch'), artifacts: realpathSync(artifacts) }
  // the browser's home and temporary folder: short, as Chromium puts unix sockets there (108 bytes at most)
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'monitors-b-')))
  for (const d of [paths.bundle, paths.scratch]) mkdirSync(d, { recursive: true })
  return { runDir, home, entry: path.join(paths.bundle, 'run.cjs'), paths }
}

/**
 * The script's process run to its end, beside a browser for a browser check (closed whatever
 * happened; what its proxy refused is among the violations). Null when the browser could not
 * be started (the outcome says why).
 */
async function runWithBrowser(
  check: ScriptCheck, options: ScriptRunOptions, folders: RunFolders, limits: RunLimits, details: ScriptDetails, outcome: AttemptOutcome,
): Promise<ChildRun | null> {
  let browser: BrowserHandle | null = null
  if (check.checkType === 'BROWSER') {
    try {
      browser = await launchBrowser(folders.paths.runtimeDir, options.chromiumPath ?? process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', folders.home, folders.runDir, Math.min(60_000, limits.deadline - Date.now()), options)
    } catch (error) {
      outcome.runnerError = `the browser could not be started: ${firstLine((error as Error).message)}`
      return null
    }
  }
  try {
    const run = await superviseChild(check, options, folders, limits, browser, details)
    if (browser) run.violations.push(...browser.proxy.violations.map((v) => v.detail), ...(browser.egress?.refusals ?? []))
    return run
  } finally {
    await browser?.close()
  }
}

/** Spawns the sandboxed script, sends it its config, keeps what it says, and stops it at its limits. */
async function superviseChild(
  check: ScriptCheck, options: ScriptRunOptions, folders: RunFolders, limits: RunLimits, browser: BrowserHandle | null, details: ScriptDetails,
): Promise<ChildRun> {
  const { paths } = folders
  const run: ChildRun = { result: null, partial: [], violations: [], logs: '', fatal: null, stop: null, exit: { code: null, signal: null } }
  // under `deny`, the script's own connections are checked in its process (its browser's endpoint excepted)
  const guard = targetGuard(options, browser ? [`127.0.0.1:${new URL(browser.endpoint).port}`] : [])
  const preload = guard ? path.join(paths.bundle, 'guard.cjs') : undefined
  if (preload && guard) writeFileSync(preload, guardPreload(guard))
  const child = spawnSandboxed(folders.entry, paths, limits.heapLimitMb, envFrom(check, options), preload)
  const margin = Math.min(5000, Math.max(500, Math.round(limits.timeoutMs * 0.1)))
  const config: HarnessConfig = {
    checkType: check.checkType,
    wsEndpoint: browser?.endpoint ?? null,
    artifactsDir: paths.artifacts,
    deadline: limits.deadline - margin,
    testTimeoutMs: options.testTimeoutMs ?? 0,
    tracing: options.tracing ?? 'retain-on-failure',
    maxConsoleEntries: MAX_CONSOLE,
    maxNetworkEntries: MAX_NETWORK,
  }
  const keepLog = (chunk: Buffer) => {
    run.logs = (run.logs + chunk.toString('utf8')).slice(-LOG_KEEP)
  }
  child.stdout?.on('data', keepLog)
  child.stderr?.on('data', keepLog)
  let messageBytes = 0
  const kill = (reason: StopReason) => {
    run.stop ??= reason
    killTree(child.pid)
    try {
      child.kill('SIGKILL')
    } catch {
      /* gone */
    }
  }
  child.on('message', (m: HarnessMessage) => {
    messageBytes += JSON.stringify(m).length
    if (messageBytes > MESSAGE_LIMIT) return kill({ kind: 'output' })
    if (m.t === 'result') run.result = m
    else if (m.t === 'test-end') run.partial.push(m.test)
    else if (m.t === 'violation') run.violations.push(m.resource ? `${m.permission} ${m.resource}` : m.permission)
    else if (m.t === 'fatal') run.fatal = m.message
  })
  child.send(config)
  const onAbort = () => kill({ kind: 'aborted' })
  options.signal?.addEventListener('abort', onAbort)
  if (options.signal?.aborted) onAbort()
  const hardTimer = setTimeout(() => kill({ kind: 'timeout' }), Math.max(0, limits.deadline - Date.now()))
  const watchdog = watchResources(child.pid, browser?.pid, paths, limits, details, kill)
  // 'close': the process has ended and its output has been read to the end
  run.exit = await new Promise<ChildRun['exit']>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }))
    child.on('error', (error) => {
      run.fatal ??= `the script's process could not be started: ${error.message}`
      resolve({ code: null, signal: null })
    })
  })
  clearTimeout(hardTimer)
  clearInterval(watchdog)
  options.signal?.removeEventListener('abort', onAbort)
  killTree(child.pid)
  return run
}

/** Every half second: the memory of the script and its browser (peaks kept in the details); every second, the disk they wrote. */
function watchResources(
  childPid: number | undefined, browserPid: number | undefined, paths: SandboxPaths, limits: RunLimits, details: ScriptDetails,
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
  const reason = run.stop
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
    case 'memory': return `the script and its browser used ${formatBytes(reason.bytes)}, over the memory limit of ${limits.memoryLimitMb} MB: the run was stopped`
    case 'disk': return `the script wrote ${formatBytes(reason.bytes)}, over the disk limit of ${formatBytes(limits.diskLimitBytes)}: the run was stopped`
    case 'output': return 'the script sent more than 64 MB of messages: the run was stopped'
  }
}

/** Why the script's process ended without a result: out of memory, else its exit and last words. */
function noResultProblem(run: ChildRun, limits: RunLimits): string {
  const { logs, exit } = run
  return /heap out of memory|Reached heap limit|Allocation failed/i.test(logs)
    ? `the script ran out of memory (its heap limit is ${limits.heapLimitMb} MB)`
    : `the script's process ended without a result (${exit.signal ?? `exit code ${exit.code}`})${logs.trim() ? `: ${firstLine(logs.trim().split('\n').slice(-3).join('\n'))}` : ''}`
}

async function keepArtifacts(dir: string, scratch: string, details: ScriptDetails, scrub: ReturnType<typeof createScrubber>, limitBytes: number): Promise<ArtifactManifest> {
  try {
    adoptScratchImages(scratch, dir)
    if (details.console.length > 0) writeFileSync(path.join(dir, 'console.json'), JSON.stringify(scrub.deep(details.console), null, 1))
    if (details.network.length > 0) writeFileSync(path.join(dir, 'network.json'), JSON.stringify(scrub.deep(details.network), null, 1))
    if (details.logs) writeFileSync(path.join(dir, 'script.log'), scrub.text(details.logs))
    return await finishArtifacts(dir, scrub, limitBytes)
  } catch (error) {
    return { dir: null, files: [], totalBytes: 0, limitBytes, dropped: [{ name: '*', kind: 'other', bytes: 0, reason: `the artifacts could not be kept: ${(error as Error).message}` }] }
  }
}
