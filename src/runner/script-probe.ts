/**
 * The prober of browser and multi-step checks: one attempt is one run of the script engine
 * (src/runner/script: a sandboxed child process, Chromium for a browser check), turned into the
 * outcome every prober answers, so that retries, `shouldFail` and the verdict are runCheck's as
 * for the other types. The run's artifacts stay in the folder `details.artifacts.dir` names: the
 * caller (the scheduler, the agent, `monitors test`) keeps, uploads or shows them, then removes it.
 */
import { rmSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { runScript } from './script/engine.js'
import { runPlaywrightSuite } from './script/suite.js'
import type { ScriptCheck, ScriptDetails, ScriptRunOptions, ScriptRunResult, ScriptVariable } from './script/types.js'
import type { AttemptOutcome, RunOptions } from './types.js'
import type { BrowserCheck, MultiStepCheck } from '../schema/script-check.js'
import type { PlaywrightCheck } from '../schema/playwright-check.js'

/** Script runs at a time by default: one per two cores (a browser needs about one core while it renders), at least 1. */
export function defaultScriptConcurrency(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2))
}

/**
 * At most `size` works at a time; the others wait in order. A waiting work whose signal aborts
 * leaves the queue (it never started).
 */
export class Semaphore {
  private active = 0
  private readonly queue: Array<() => void> = []

  constructor(readonly size: number) {
    if (!(size >= 1)) throw new Error(`a semaphore needs a size of 1 or more (got ${size})`)
  }

  /** Works running and waiting. */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.queue.length }
  }

  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.active >= this.size) {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener('abort', leave)
          resolve()
        }
        const leave = () => {
          const at = this.queue.indexOf(go)
          if (at >= 0) this.queue.splice(at, 1)
          reject(signal?.reason ?? new Error('aborted'))
        }
        if (signal?.aborted) return leave()
        signal?.addEventListener('abort', leave, { once: true })
        this.queue.push(go)
      })
    }
    this.active++
    try {
      return await work()
    } finally {
      this.active--
      this.queue.shift()?.()
    }
  }
}

/** The account's variables as the script engine takes them. */
function scriptVariables(variables: RunOptions['variables']): ScriptVariable[] {
  return Object.entries(variables ?? {}).map(([key, v]) => (typeof v === 'string' ? { key, value: v } : { key, value: v.value, secret: v.secret }))
}

/** The details of a script run of which nothing is known (the prober failed before the engine answered). */
export function blankScriptDetails(check: BrowserCheck | MultiStepCheck | PlaywrightCheck): ScriptDetails {
  return {
    kind: check.checkType,
    runtimeId: check.runtimeId ?? '',
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
    artifacts: { dir: null, files: [], totalBytes: 0, limitBytes: 0, dropped: [] },
  }
}

/** The engine's options of one run: the prober's (context.script), the account's variables, the location. */
function runOptions(location: string, context: Omit<RunOptions, 'location'>): ScriptRunOptions {
  const options = context.script ?? {}
  return {
    runtimeCache: options.runtimeCache,
    chromiumPath: options.chromiumPath,
    workDir: options.workDir,
    uidRange: options.uidRange,
    timeoutMs: Math.min(options.timeoutMs ?? 120_000, context.timeoutMs ?? Infinity),
    memoryLimitMb: options.memoryLimitMb,
    tracing: options.tracing,
    testSession: options.testSession,
    variables: scriptVariables(context.variables),
    privateTargets: context.privateTargets,
    allowedTargets: context.allowedTargets,
    location,
    signal: context.signal,
    now: context.now,
  }
}

/** A run of the engine or of a suite, through the limiter when there is one, as a prober's outcome. */
async function outcomeOf(run: () => Promise<ScriptRunResult>, blank: () => ScriptDetails, context: Omit<RunOptions, 'location'>): Promise<AttemptOutcome> {
  const limiter = context.script?.limiter
  let result
  try {
    result = limiter ? await limiter.run(run, context.signal) : await run()
  } catch (error) {
    const outcome: AttemptOutcome = {
      responseTime: null,
      assertions: [],
      failures: [],
      degraded: [],
      timedOut: false,
      networkError: false,
      runnerError: `the run did not start: ${(error as Error).message}`,
      aborted: context.signal?.aborted ?? false,
      details: blank(),
    }
    return outcome
  }
  return {
    responseTime: result.responseTime,
    assertions: [],
    failures: result.hasFailures && !result.hasErrors ? [result.error ?? 'the script failed'] : [],
    degraded: [],
    timedOut: result.timedOut,
    networkError: result.failureKind === 'NETWORK_ERROR',
    runnerError: result.hasErrors ? (result.error ?? 'the run failed') : null,
    aborted: result.aborted,
    details: result.details,
  }
}

/** One run of a browser or multi-step check's script, as a prober's outcome. */
export async function runScriptAttempt(
  check: (BrowserCheck | MultiStepCheck) & { id?: string | null },
  location: string,
  context: Omit<RunOptions, 'location'>,
): Promise<AttemptOutcome> {
  if (context.script?.scripts === false) {
    return {
      responseTime: null,
      assertions: [],
      failures: [],
      degraded: [],
      timedOut: false,
      networkError: false,
      runnerError: SCRIPTS_OFF,
      aborted: false,
      details: blankScriptDetails(check),
    }
  }
  const scriptCheck: ScriptCheck = {
    id: check.id ?? null,
    name: check.name,
    checkType: check.checkType,
    runtimeId: check.runtimeId ?? null,
    script: check.script,
    scriptPath: check.scriptPath ?? null,
    dependencies: check.dependencies ?? [],
    environmentVariables: (check.environmentVariables ?? []).map((v) => ({ key: v.key, value: v.value, secret: v.secret })),
    // the verdict (shouldFail included) is runCheck's, as for every type
    shouldFail: false,
  }
  return outcomeOf(
    () => runScript(scriptCheck, runOptions(location, context)),
    () => blankScriptDetails(check),
    context,
  )
}

/** Why a suite's run failed where suites do not run (a machine that cannot contain them, without --playwright-suites, or with --no-playwright-suites). */
export const SUITES_OFF =
  'this server does not run Playwright check suites: it runs them by default only where each run is contained (a sandbox of its own: docs/scripts.md), or, under --private-targets allow, where it can give each run a user of its own (as root), where `playwright test` is held to its files; its operator enables them with --playwright-suites, or run the check at a private location (monitors agent)'

/** Why a script's run failed where scripts it cannot contain are refused (--private-targets deny on a machine that cannot contain them, without --uncontained-scripts). */
export const SCRIPTS_OFF =
  'this server does not run scripts it cannot contain under --private-targets deny: this machine gives its runs no sandbox of their own (docs/scripts.md, "The containment"), so the script would be held only by the walls inside its own process; its operator runs them anyway with --uncontained-scripts, or run the check at a private location (monitors agent)'

/** One run of a Playwright check suite (`playwright test` of its runtime: src/runner/script/suite.ts), as a prober's outcome. */
export async function runSuiteAttempt(
  check: PlaywrightCheck & { id?: string | null },
  location: string,
  context: Omit<RunOptions, 'location'>,
): Promise<AttemptOutcome> {
  if (context.script?.suites === false) {
    return {
      responseTime: null,
      assertions: [],
      failures: [],
      degraded: [],
      timedOut: false,
      networkError: false,
      runnerError: SUITES_OFF,
      aborted: false,
      details: blankScriptDetails(check),
    }
  }
  const suite = {
    id: check.id ?? null,
    name: check.name,
    runtimeId: check.runtimeId ?? null,
    files: check.files,
    config: check.playwrightConfigPath ?? null,
    projects: check.pwProjects ?? [],
    tags: check.pwTags ?? [],
    environmentVariables: (check.environmentVariables ?? []).map((v) => ({ key: v.key, value: v.value, secret: v.secret })),
    // the verdict (shouldFail included) is runCheck's, as for every type
    shouldFail: false,
  }
  return outcomeOf(
    () => runPlaywrightSuite(suite, runOptions(location, context)),
    () => blankScriptDetails(check),
    context,
  )
}

/** A result with details (a run's or an attempt's). */
interface WithDetails {
  details: unknown
}

/**
 * Takes the artifact folder out of a result's details (in place): a stored result never names a
 * path of the machine that ran it. Answers the folder, or null when the run kept none.
 */
export function detachArtifactFolder(result: WithDetails): string | null {
  const details = result.details as { artifacts?: { dir?: string | null } } | null
  const dir = details?.artifacts?.dir
  if (!details?.artifacts || typeof dir !== 'string') return null
  result.details = { ...details, artifacts: { ...details.artifacts, dir: null } }
  return dir
}

/** The artifact folders of a run (its final result, then each retried attempt), detached from their details. */
export function detachRunArtifacts(result: WithDetails & { attempts?: WithDetails[] }): { final: string | null; attempts: Array<string | null> } {
  return { final: detachArtifactFolder(result), attempts: (result.attempts ?? []).map(detachArtifactFolder) }
}

/** Removes folders a run left that were not kept (a run lost, a duplicate). */
export function discardFolders(folders: { final: string | null; attempts: Array<string | null> }): void {
  for (const dir of [folders.final, ...folders.attempts]) if (dir) rmSync(dir, { recursive: true, force: true })
}
