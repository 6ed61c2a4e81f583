/**
 * Playwright check suites: a whole Playwright project (its config, test files, selected
 * projects and tags) run by the real `playwright test` of the check's runtime. The test runner
 * starts worker processes, so Node's permission model cannot hold it; what contains such a run
 * is written in docs/scripts.md ("Playwright check suites"): its own process group killed at the
 * wall clock, the memory watchdog over its whole process tree, an environment of the check's
 * variables only, a copy of the project in a run folder; where the machine can contain runs,
 * the run's sandbox (jail.ts: its uid when the process running it is root, its namespaces, its
 * view, a network whose one way out is the egress proxy, under every policy); where it cannot,
 * when that process is root, a user of its own (contain.ts) that holds it to its files. Else
 * neither file access nor the network.
 */
import { spawn } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { suiteFileBytes } from '../../schema/playwright-check.js'
import { DEFAULT_RUNTIME_ID, findRuntime } from '../../schema/runtimes.js'
import { judge } from '../outcome.js'
import type { AttemptOutcome } from '../types.js'
import { finishArtifacts, formatBytes } from './artifacts.js'
import {
  ARTIFACT_LIMIT_BYTES,
  CHROMIUM_ARGS,
  DEFAULT_DISK_LIMIT_BYTES,
  DEFAULT_MEMORY_LIMIT_MB,
  DEFAULT_SCRIPT_TIMEOUT_MS,
  OUT_OF_MEMORY,
  refusedBySandbox,
  SECRET_PREFIX,
  SERVICE_VARIABLE,
  emptyDetails,
} from './engine.js'
import type { ScriptStep, ScriptTest } from './protocol.js'
import { defaultRuntimeCache, resolveInRuntime, runtimeState } from './runtimes.js'
import {
  allocateRunUser,
  closedToOthers,
  copyBack,
  copyRunFile,
  effectiveUidRange,
  giveTree,
  killUser,
  readRunFile,
  reapUser,
  removeLeftFiles,
  SETPRIV,
  userMemory,
  type RunUser,
} from './contain.js'
import { startEgress, type EgressProxy } from './egress.js'
import { BRIDGE_SOURCE, containment, EGRESS_PORT, EGRESS_PROXY, identityFiles, jailCommand } from './jail.js'
import { NET_GUARD_SOURCE } from './net-guard.js'
import { folderBytes, killTree, processTable, treeMemory } from './sandbox.js'
import { createScrubber } from './scrub.js'
import type { ScriptDetails, ScriptRunOptions, ScriptRunResult, ScriptVariable } from './types.js'
import { systemClock } from '../clock.js'

export interface PlaywrightSuite {
  id?: string | null
  name: string
  runtimeId?: string | null
  /** The project's files, paths relative to its root (config, tests, helpers, fixtures); a binary one's content in base64 (`encoding`). */
  files: ReadonlyArray<{ path: string; content: string; encoding?: 'base64' }>
  /** The config among `files` (default `playwright.config.ts`, `.js` or `.mjs` when there is one). */
  config?: string | null
  /** Playwright projects to run (`--project`); default all. */
  projects?: readonly string[]
  /** Tags to run (`--grep`, e.g. `@smoke`); default all. */
  tags?: readonly string[]
  environmentVariables?: ReadonlyArray<ScriptVariable> | null
  shouldFail?: boolean
}

interface JsonResult {
  status?: string
  duration?: number
  errors?: Array<{ message?: string }>
  steps?: JsonStep[]
}
interface JsonStep {
  title: string
  duration?: number
  error?: { message?: string }
  steps?: JsonStep[]
}
interface JsonSuite {
  title: string
  specs?: Array<{ title: string; tests?: Array<{ projectName?: string; status?: string; results?: JsonResult[] }> }>
  suites?: JsonSuite[]
}

function steps(list: JsonStep[] | undefined): ScriptStep[] {
  return (list ?? []).map((s) => ({
    title: s.title,
    status: s.error ? 'failed' : 'passed',
    duration: Math.round(s.duration ?? 0),
    error: s.error ? { message: s.error.message ?? 'failed' } : null,
    steps: steps(s.steps),
  }))
}

function testsOf(suite: JsonSuite, parents: string[]): ScriptTest[] {
  const here = suite.title ? [...parents, suite.title] : parents
  const out: ScriptTest[] = []
  for (const spec of suite.specs ?? []) {
    for (const t of spec.tests ?? []) {
      const last = t.results?.[t.results.length - 1]
      const raw = last?.status ?? (t.status === 'skipped' ? 'skipped' : 'failed')
      const status: ScriptTest['status'] = raw === 'passed' ? 'passed' : raw === 'skipped' ? 'skipped' : raw === 'timedOut' ? 'timedOut' : 'failed'
      const message = last?.errors?.[0]?.message
      out.push({
        title: spec.title,
        titlePath: [...(t.projectName ? [t.projectName] : []), ...here, spec.title],
        status: t.status === 'expected' || t.status === 'flaky' ? (status === 'skipped' ? 'skipped' : 'passed') : status,
        duration: Math.round(last?.duration ?? 0),
        error:
          message && t.status !== 'expected'
            ? { message: message.replace(/\u001b\[[0-9;]*m/g, ''), kind: raw === 'timedOut' ? 'timeout' : /expect\(/.test(message) ? 'assertion' : 'error' }
            : null,
        steps: steps(last?.steps),
      })
    }
  }
  for (const child of suite.suites ?? []) out.push(...testsOf(child, here))
  return out
}

/** The config `playwright test` runs with: the suite's own, with the runner's browser, report, output and (in a network of its own) proxy. */
function wrapperConfig(userConfig: string | null, chromiumPath: string, reportFile: string, outputDir: string, tracing: string, proxy: string | null): string {
  const trace = tracing === 'on' ? 'on' : tracing === 'off' ? 'off' : 'retain-on-failure'
  const proxied = proxy ? `, proxy: { server: ${JSON.stringify(proxy)} }` : ''
  return [
    userConfig ? `import base from ${JSON.stringify(`./${userConfig.replace(/\.[cm]?[jt]s$/, '')}`)}` : 'const base = {}',
    `const launch = (use = {}) => ({ ...use, trace: ${JSON.stringify(trace)}, screenshot: 'only-on-failure', video: 'off'${proxied}, launchOptions: { ...(use.launchOptions ?? {}), executablePath: ${JSON.stringify(chromiumPath)}, args: [...(use.launchOptions?.args ?? []), ...${JSON.stringify(CHROMIUM_ARGS)}] } })`,
    'const config = base.default ?? base',
    'export default {',
    '  ...config,',
    '  use: launch(config.use),',
    '  projects: config.projects ? config.projects.map((p) => ({ ...p, use: launch(p.use) })) : undefined,',
    `  reporter: [['json', { outputFile: ${JSON.stringify(reportFile)} }]],`,
    `  outputDir: ${JSON.stringify(outputDir)},`,
    '  retries: 0,',
    '  workers: config.workers ?? 1,',
    '}',
    '',
  ].join('\n')
}

type SuiteStop = 'timeout' | 'memory' | 'disk' | 'aborted'

/** How `playwright test` ended: its exit code, its last output, and why it was stopped if it was. */
interface SuiteExit {
  exit: number | null
  logs: string
  stop: SuiteStop | null
  /** the memory of its process tree when the memory limit stopped it */
  memory: number
  /** what its folders held when the disk limit stopped it */
  disk: number
}

interface SuiteReport {
  suites?: JsonSuite[]
  errors?: Array<{ message?: string }>
  config?: { version?: string }
}

/** The run's runtime, its Playwright CLI and its user; or the problem that keeps the run from starting (its runnerError). */
function suiteRuntime(runtimeId: string, options: ScriptRunOptions) {
  const runtime = findRuntime(runtimeId)
  const state = runtimeState(runtimeId, options.runtimeCache ?? defaultRuntimeCache())
  if (!runtime || !state.prepared) return { problem: state.missing }
  const cli = resolveInRuntime(state.dir, '@playwright/test/cli')
  if (!cli) return { problem: `runtime ${runtimeId} has no @playwright/test: prepare it again` }
  const range = effectiveUidRange(options.uidRange)
  if (!range) return { runtime, state, cli, user: null }
  const problem = containmentProblem(state.dir, options)
  if (problem) return { problem }
  const user: RunUser | null = allocateRunUser(range)
  if (!user)
    return { problem: `every uid of ${range.first}-${range.last} is in use by another run: the run did not start (--script-uid-range sets a larger range)` }
  return { runtime, state, cli, user }
}

/** Runs a Playwright check suite once; see the module's comment. Never throws for a run that went wrong. */
export async function runPlaywrightSuite(suite: PlaywrightSuite, options: ScriptRunOptions = {}): Promise<ScriptRunResult> {
  const now = options.now ?? systemClock.now
  const startedAt = now()
  const started = performance.now()
  const timeoutMs = options.timeoutMs ?? DEFAULT_SCRIPT_TIMEOUT_MS
  const runtimeId = suite.runtimeId ?? DEFAULT_RUNTIME_ID
  const { env, secrets } = suiteVariables(suite, options)
  const scrub = createScrubber(secrets)
  const limitBytes = options.artifactLimitBytes ?? ARTIFACT_LIMIT_BYTES
  const details = emptyDetails('PLAYWRIGHT', runtimeId, limitBytes)
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
  const finish = (): ScriptRunResult => {
    const verdict = judge(outcome, suite.shouldFail ?? false)
    return scrub.deep({
      checkId: suite.id ?? null,
      name: suite.name,
      checkType: 'PLAYWRIGHT',
      runLocation: options.location ?? 'local',
      resultType: 'FINAL',
      attempt: 1,
      startedAt: new Date(startedAt).toISOString(),
      stoppedAt: new Date(Math.max(now(), startedAt)).toISOString(),
      responseTime: Math.round(performance.now() - started),
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
    })
  }
  const prepared = suiteRuntime(runtimeId, options)
  if ('problem' in prepared) {
    outcome.runnerError = prepared.problem ?? null
    return finish()
  }
  const { runtime, state, cli, user } = prepared
  let folders: SuiteFolders
  try {
    folders = suiteFolders(options, user)
  } catch (error) {
    user?.release()
    throw error
  }
  const held: { egress: EgressProxy | null } = { egress: null }
  try {
    await runSuiteIn(
      folders,
      { suite, stateDir: state.dir, cli, playwrightVersion: runtime.dependencies['@playwright/test'], user, env, timeoutMs, options, details, outcome },
      held,
    )
  } finally {
    await held.egress?.close()
    await keepSuiteArtifacts(folders, user, details, scrub, limitBytes)
  }
  return finish()
}

/** What runSuiteIn needs of the run. */
interface SuiteRun {
  suite: PlaywrightSuite
  stateDir: string
  cli: string
  playwrightVersion: string | undefined
  user: RunUser | null
  env: Record<string, string>
  timeoutMs: number
  options: ScriptRunOptions
  details: ScriptDetails
  outcome: AttemptOutcome
}

/** The run in its folders: the project written, the network made, `playwright test` run and judged. The egress proxy is left in `held` for the caller to close. */
async function runSuiteIn(folders: SuiteFolders, run: SuiteRun, held: { egress: EgressProxy | null }): Promise<void> {
  const { suite, cli, user, env, timeoutMs, options, details, outcome } = run
  const outside = writeProject(suite, folders.project, run.stateDir)
  if (outside) {
    outcome.runnerError = `the suite's file ${outside} is outside its project`
    return
  }
  // contained (jail.ts), the run has a sandbox of its own, and a network whose one way out is the egress proxy
  const network = containment().available ? runNetwork(folders, user) : null
  const args = [cli, ...playwrightArguments(suite, options, folders.project, folders.reportFile, folders.output, network ? EGRESS_PROXY : null)]
  if (user) giveTree(folders.runDir, user.uid, user.gid)
  if (network) {
    try {
      held.egress = await egressFor(network, user, options)
    } catch (error) {
      outcome.runnerError = `the run's network could not be made: ${(error as Error).message}`
      return
    }
  }
  const written = folders.output === folders.artifacts ? [folders.runDir, folders.artifacts] : [folders.runDir]
  const ended = await runPlaywright(args, folders, suiteEnvironment(env, folders.home, options, network), timeoutMs, options, details, user, network, written)
  details.logs = ended.logs
  const report = readReport(folders.reportFile)
  details.playwrightVersion = report?.config?.version ?? run.playwrightVersion ?? null
  details.tests = (report?.suites ?? []).flatMap((s) => testsOf(s, []))
  judgeSuite(ended, report, details, timeoutMs, options, outcome)
  if (held.egress) {
    details.violations = [...held.egress.refusals]
    refusedBySandbox(details, outcome)
  }
}

/** The egress proxy of a run's network, on its socket, which only the run's user may connect to. */
async function egressFor(network: RunNetwork, user: RunUser | null, options: ScriptRunOptions): Promise<EgressProxy> {
  const egress = await startEgress(options, { path: network.socket })
  if (user) {
    chownSync(network.socket, user.uid, user.gid)
    chmodSync(network.socket, 0o600)
  }
  return egress
}

/**
 * A contained run's network (its sandbox's own, whose one way out is the egress proxy): the
 * bridge (jail.ts) that carries 127.0.0.1:3128 there to the proxy's socket, the preload that
 * sends the Node processes' HTTP(S) clients through that socket, and the run's own passwd and
 * group naming its user.
 */
function runNetwork(folders: SuiteFolders, user: RunUser | null): RunNetwork {
  const network = {
    bridge: path.join(folders.runDir, 'bridge.cjs'),
    socket: path.join(folders.runDir, 'egress.sock'),
    preload: path.join(folders.runDir, 'route.cjs'),
  }
  writeFileSync(network.bridge, BRIDGE_SOURCE)
  writeFileSync(network.preload, `'use strict'\n${NET_GUARD_SOURCE}\nrouteThrough(${JSON.stringify(network.socket)}, () => undefined)\n`)
  return { ...network, identity: user ? identityFiles(folders.runDir, user, folders.home) : undefined }
}

/** The folders of one run: its own (project, home, report), and where its artifacts are kept. */
interface SuiteFolders {
  runDir: string
  project: string
  home: string
  reportFile: string
  /** Where `playwright test` writes its results: the kept folder, or one in the run's folder when the run has a user of its own. */
  output: string
  /** The folder the caller keeps. */
  artifacts: string
}

/**
 * A run's folders. With a user of its own, the run's folder is made in the temporary folder
 * (which every user can pass; given to the run's user once written) and its results are
 * written there, copied into the kept folder at the end.
 */
function suiteFolders(options: ScriptRunOptions, user: RunUser | null): SuiteFolders {
  const workDir = options.workDir ?? tmpdir()
  mkdirSync(workDir, { recursive: true })
  const runDir = realpathSync(mkdtempSync(path.join(user ? tmpdir() : workDir, 'monitors-suite-')))
  const artifacts = options.artifactsDir ? path.resolve(options.artifactsDir) : realpathSync(mkdtempSync(path.join(workDir, 'monitors-artifacts-')))
  mkdirSync(artifacts, { recursive: true })
  const folders = {
    runDir,
    project: path.join(runDir, 'project'),
    home: path.join(runDir, 'home'),
    reportFile: path.join(runDir, 'report.json'),
    output: user ? path.join(runDir, 'results') : artifacts,
    artifacts,
  }
  mkdirSync(folders.home, { recursive: true })
  mkdirSync(folders.output, { recursive: true })
  return folders
}

/**
 * The run's results kept (copied back as root's own files when the run had a user, whose
 * processes are all gone by then), scrubbed and capped; the run's folder removed, with what the
 * run's user left in the shared temporary folders.
 */
async function keepSuiteArtifacts(
  folders: SuiteFolders,
  user: RunUser | null,
  details: ScriptDetails,
  scrub: ReturnType<typeof createScrubber>,
  limitBytes: number,
): Promise<void> {
  try {
    if (user) {
      killUser(user.uid)
      copyBack(folders.output, folders.artifacts, user.uid)
    }
    if (details.logs) writeFileSync(path.join(folders.artifacts, 'script.log'), scrub.text(details.logs))
    // Playwright's JSON report too, under the same rule as the other results
    copyRunFile(folders.reportFile, path.join(folders.artifacts, 'report.json'), user?.uid ?? null)
    details.artifacts = await finishArtifacts(folders.artifacts, scrub, limitBytes)
  } catch (error) {
    details.artifacts.dropped.push({ name: '*', kind: 'other', bytes: 0, reason: `the artifacts could not be kept: ${(error as Error).message}` })
  }
  rmSync(folders.runDir, { recursive: true, force: true })
  if (user) {
    removeLeftFiles(user.uid)
    user.release()
  }
}

/**
 * Why a run with a user of its own cannot start here (null: it can): the runtime, Node and the
 * temporary folder must be open to other users; a cache under root's home (0700) is not.
 */
function containmentProblem(runtimeDir: string, options: ScriptRunOptions): string | null {
  const cache = path.dirname(runtimeDir)
  for (const target of [runtimeDir, path.join(runtimeDir, 'node_modules')]) {
    const closed = closedToOthers(target)
    if (closed) {
      return (
        `the runtime cache ${cache} cannot be read by the run's own user: ${closed.path} is closed to other users (mode ${closed.mode}). ` +
        'A Playwright check suite run by root runs as a user of its own (docs/scripts.md): prepare the runtimes in a folder other users can read ' +
        `(--runtime-cache or MONITORS_RUNTIME_CACHE, e.g. /var/cache/monitors/runtimes), or open ${closed.path} to them (chmod o+rx)`
      )
    }
  }
  for (const [what, target] of [
    ['Node', process.execPath],
    ['Chromium', chromiumOf(options)],
    ['the temporary folder', tmpdir()],
  ]) {
    const closed = closedToOthers(target)
    if (closed)
      return `${what} (${target}) cannot be used by the run's own user: ${closed.path} is closed to other users (mode ${closed.mode}); a Playwright check suite run by root runs as a user of its own (docs/scripts.md)`
  }
  return null
}

function chromiumOf(options: ScriptRunOptions): string {
  return options.chromiumPath ?? process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
}

/** The suite's variables (the account's, then the suite's own) and the secrets among them. */
function suiteVariables(suite: PlaywrightSuite, options: ScriptRunOptions): { env: Record<string, string>; secrets: string[] } {
  const secrets = [...(options.secrets ?? [])]
  const env: Record<string, string> = {}
  for (const v of [...(options.variables ?? []), ...(suite.environmentVariables ?? [])]) {
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(v.key)) env[v.key] = v.value
    if ((v.secret || v.key.startsWith(SECRET_PREFIX)) && v.value) secrets.push(v.value)
  }
  return { env, secrets }
}

/** The environment of `playwright test`: the suite's variables, and none of the server's (contained: its Node processes' route through the egress proxy). */
function suiteEnvironment(env: Record<string, string>, home: string, options: ScriptRunOptions, network: RunNetwork | null): Record<string, string> {
  const childEnv: Record<string, string> = {
    ...env,
    [SERVICE_VARIABLE]: 'true',
    PATH: '/usr/bin:/bin',
    HOME: home,
    FORCE_COLOR: '0',
    PW_TEST_HTML_REPORT_OPEN: 'never',
  }
  if (network) childEnv.NODE_OPTIONS = `--require ${network.preload}`
  if (options.testSession) childEnv.CI = 'true'
  else delete childEnv.CI
  return childEnv
}

/**
 * The suite's files written into the project folder (each one's exact bytes: a screenshot
 * baseline as it was), beside the runtime's packages; the path of the first file that would land
 * outside the folder (nothing more is written then).
 */
function writeProject(suite: PlaywrightSuite, project: string, runtimeDir: string): string | undefined {
  for (const f of suite.files) {
    const target = path.resolve(project, f.path)
    if (path.relative(project, target).startsWith('..')) return f.path
    mkdirSync(path.dirname(target), { recursive: true })
    writeFileSync(target, suiteFileBytes(f))
  }
  // the project's imports of @playwright/test and the runtime's other packages
  symlinkSync(path.join(runtimeDir, 'node_modules'), path.join(project, 'node_modules'), 'dir')
  return undefined
}

/** `test` with the wrapper config (written into the project), the projects and the tags asked for. */
function playwrightArguments(
  suite: PlaywrightSuite,
  options: ScriptRunOptions,
  project: string,
  reportFile: string,
  artifacts: string,
  proxy: string | null,
): string[] {
  const names = new Set(suite.files.map((f) => f.path))
  const userConfig = suite.config ?? ['playwright.config.ts', 'playwright.config.js', 'playwright.config.mjs'].find((c) => names.has(c)) ?? null
  const wrapper = path.join(project, 'monitors.playwright.config.ts')
  writeFileSync(
    wrapper,
    wrapperConfig(userConfig, chromiumOf(options), reportFile, path.join(artifacts, 'test-results'), options.tracing ?? 'retain-on-failure', proxy),
  )
  const args = ['test', '--config', wrapper, ...(suite.projects ?? []).flatMap((p) => ['--project', p])]
  if (suite.tags && suite.tags.length > 0) args.push('--grep', suite.tags.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'))
  return args
}

/** A contained run's network of its own: the bridge's file, the egress proxy's socket and the route's preload, in the run's folder. */
interface RunNetwork {
  bridge: string
  socket: string
  preload: string
  identity: { passwd: string; group: string } | undefined
}

/**
 * How `playwright test` is started. Contained: in its sandbox (jail.ts: as its own user when
 * this process is root, its own namespaces, a read-only view with its run folder writable), behind
 * the bridge of its network. Else, as a user of its own: through setpriv with its uid and gid,
 * no supplementary group and no_new_privs (a setuid program it runs gains nothing); without
 * setpriv, by Node's spawn with the uid and gid (Node drops the supplementary groups), without
 * no_new_privs. Otherwise as this process's user.
 */
function startAs(
  user: RunUser | null,
  args: string[],
  network: RunNetwork | null,
  folders: SuiteFolders,
  options: ScriptRunOptions,
): [string, string[], { uid?: number; gid?: number }] {
  if (network) {
    const chromium = chromiumOf(options)
    const readOnly = [path.dirname(network.bridge), ...(chromium.startsWith('/usr/') ? [] : [path.dirname(chromium)])]
    const limit = options.diskLimitBytes ?? DEFAULT_DISK_LIMIT_BYTES
    const tmp = Math.min(limit, 256 * 1024 * 1024)
    const [command, commandArgs] = jailCommand(process.execPath, [network.bridge, `${EGRESS_PORT}=${network.socket}`, '--', process.execPath, ...args], {
      user,
      identity: network.identity,
      readOnly: [...readOnly, runtimeOf(folders)],
      writable: [folders.runDir],
      cwd: folders.project,
      tmpBytes: tmp,
      shmBytes: tmp,
      processes: 4096,
      fileBytes: limit,
      dataBytes: (options.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB) * 1024 * 1024,
    })
    return [command, commandArgs, {}]
  }
  if (!user) return [process.execPath, args, {}]
  if (existsSync(SETPRIV))
    return [SETPRIV, ['--no-new-privs', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', process.execPath, ...args], {}]
  return [process.execPath, args, { uid: user.uid, gid: user.gid }]
}

/** The runtime a project's node_modules links to (read-only in the run's sandbox). */
function runtimeOf(folders: SuiteFolders): string {
  return path.dirname(realpathSync(path.join(folders.project, 'node_modules')))
}

/** Runs `playwright test` in its own process group, killed at the wall clock, over the memory or disk limit (of `folders`) or on abort. */
async function runPlaywright(
  args: string[],
  run: SuiteFolders,
  env: Record<string, string>,
  timeoutMs: number,
  options: ScriptRunOptions,
  details: ScriptDetails,
  user: RunUser | null,
  network: RunNetwork | null,
  folders: string[],
): Promise<SuiteExit> {
  const [command, commandArgs, ids] = startAs(user, args, network, run, options)
  const child = spawn(command, commandArgs, { cwd: network ? '/' : run.project, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...ids })
  const ended: SuiteExit = { exit: null, logs: '', stop: null, memory: 0, disk: 0 }
  const keep = (c: Buffer) => (ended.logs = (ended.logs + c.toString('utf8')).slice(-64 * 1024))
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const kill = (why: SuiteStop) => {
    ended.stop ??= why
    killTree(child.pid)
    if (user) killUser(user.uid)
  }
  const memoryLimit = (options.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB) * 1024 * 1024
  const diskLimit = options.diskLimitBytes ?? DEFAULT_DISK_LIMIT_BYTES
  const timer = setTimeout(() => kill('timeout'), timeoutMs)
  let ticks = 0
  const watchdog = setInterval(() => {
    // with a user of its own: every process of that user (a detached one too)
    const used = user ? userMemory(user.uid) : treeMemory(child.pid, processTable())
    details.memory.peakScriptRssBytes = Math.max(details.memory.peakScriptRssBytes, used)
    if (used > memoryLimit) {
      ended.memory = used
      kill('memory')
    }
    // every second: what the run wrote in its folders (its project, home, report and results)
    if (++ticks % 2 === 0) {
      const disk = folders.reduce((sum, dir) => sum + folderBytes(dir, diskLimit), 0)
      if (disk > diskLimit) {
        ended.disk = disk
        kill('disk')
      }
    }
  }, 500)
  const onAbort = () => kill('aborted')
  options.signal?.addEventListener('abort', onAbort)
  ended.exit = await new Promise<number | null>((resolve) => {
    child.on('close', (code) => resolve(code))
    // not started (the user could not be changed to, say): its reason in the logs
    child.on('error', (error) => {
      keep(Buffer.from(`${error.message}\n`))
      resolve(null)
    })
  })
  clearTimeout(timer)
  clearInterval(watchdog)
  options.signal?.removeEventListener('abort', onAbort)
  killTree(child.pid)
  if (user) await reapUser(user.uid)
  else killLeftBehind(env.HOME)
  return ended
}

/**
 * Kills the processes a run left behind outside its tree (a test that spawned one `detached`
 * and returned: it was re-parented when its worker ended): every process of this user whose
 * environment still holds the run's own HOME (a folder made for this run alone).
 */
/** (A run with a user of its own is cleaned up by that user instead: contain.ts's killUser.) */
function killLeftBehind(home: string): void {
  const entry = Buffer.from(`HOME=${home}\0`)
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return
  }
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      if (readFileSync(`/proc/${name}/environ`).includes(entry)) process.kill(Number(name), 'SIGKILL')
    } catch {
      /* gone, or not ours */
    }
  }
}

/** The JSON report, or null when there is none (or not a whole one). */
function readReport(reportFile: string): SuiteReport | null {
  try {
    // never through a link: the run's user may have made one to a file of root's
    return JSON.parse(readRunFile(reportFile) ?? '')
  } catch {
    return null
  }
}

/** The verdict of a suite that ended: its failed tests and errors, or why it has no report. */
function judgeSuite(
  ended: SuiteExit,
  report: SuiteReport | null,
  details: ScriptDetails,
  timeoutMs: number,
  options: ScriptRunOptions,
  outcome: AttemptOutcome,
): void {
  for (const t of details.tests.filter((x) => x.status === 'failed' || x.status === 'timedOut')) {
    outcome.failures.push(`${t.titlePath.join(' › ')}: ${(t.error?.message ?? t.status).split('\n')[0]}`)
  }
  for (const e of report?.errors ?? []) outcome.failures.push((e.message ?? 'error').split('\n')[0])
  outcome.timedOut = details.tests.some((t) => t.status === 'timedOut')
  const { logs } = ended
  // a write the kernel refused at the file size limit (RLIMIT_FSIZE, the disk limit: EFBIG, or SIGXFSZ where it is not ignored) went over the disk limit
  const overFileSize = [logs, ...details.tests.map((t) => t.error?.message ?? '')].some((text) => /\bEFBIG\b|SIGXFSZ/.test(text))
  // and one it refused memory at the limit of a process (RLIMIT_DATA, the memory limit), over the memory limit
  const overData =
    !overFileSize && [logs, ...details.tests.map((t) => t.error?.message ?? '')].some((text) => OUT_OF_MEMORY.test(text) || /heap out of memory/i.test(text))
  const stop = ended.stop ?? (overFileSize ? 'disk' : overData ? 'memory' : null)
  if (overData && !ended.stop) ended.memory = Math.max(ended.memory, (options.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB) * 1024 * 1024)
  if (overFileSize && !ended.stop) ended.disk = Math.max(ended.disk, options.diskLimitBytes ?? DEFAULT_DISK_LIMIT_BYTES)
  if (stop === 'timeout') {
    outcome.timedOut = true
    outcome.failures.push(`the run exceeded its limit of ${Math.round(timeoutMs / 100) / 10} s and was stopped`)
  } else if (stop === 'memory') {
    outcome.runnerError = `the suite used ${formatBytes(ended.memory)}, over the memory limit of ${options.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB} MB: the run was stopped`
  } else if (stop === 'disk') {
    outcome.runnerError = `the suite wrote ${formatBytes(ended.disk)}, over the disk limit of ${formatBytes(options.diskLimitBytes ?? DEFAULT_DISK_LIMIT_BYTES)}: the run was stopped`
  } else if (stop === 'aborted') {
    outcome.aborted = true
    outcome.runnerError = 'the run was aborted'
  } else if (!report) {
    outcome.runnerError = `playwright test ended without a report (exit code ${ended.exit})${logs.trim() ? `: ${logs.trim().split('\n').slice(-3).join(' ')}` : ''}`
  } else if (details.tests.length === 0 && outcome.failures.length === 0) {
    outcome.failures.push('the suite ran no test (check its projects and tags)')
  }
}
