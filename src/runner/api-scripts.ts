/**
 * An API check's setup and teardown scripts around its request (docs/scripts.md): which scripts
 * a check runs (its setup snippet then its `localSetupScript`; its teardown snippet then its
 * `localTearDownScript`), the request as a setup script sees and changes it, the response as a
 * teardown script sees and changes it (before the assertions), and what each script did, in the
 * run's details. The scripts run in the sandbox of script/api-scripts.ts.
 */
import { DEFAULT_RUNTIME_ID } from '../schema/runtimes.js'
import type { ApiCheck } from '../schema/api-check.js'
import { API_METHODS } from '../schema/api-check.js'
import { ApiScriptSandbox, type PhaseOutcome, type ScriptRequest, type ScriptResponse } from './script/api-scripts.js'
import { defaultRuntimeCache, runtimeState } from './script/runtimes.js'
import { createScrubber, type Scrubber } from './script/scrub.js'
import { targetGuard } from './script/net-guard.js'
import { SCRIPTS_OFF } from './script-probe.js'
import type { ApiScriptReport, RunOptions } from './types.js'

/** The variable set on every run, as for browser checks (spec: agent 6.1.6). */
const SERVICE_VARIABLE = 'MONITORS'
/** Variables whose key starts so are secret whatever their flag says (spec: agent 6.1.2). */
const SECRET_PREFIX = 'MONITORS_SECRET_'

interface NamedScript {
  /** how messages name it: `snippet 12 "Auth helper"`, `localSetupScript` */
  label: string
  source: string
}

/** The scripts of a check, or why one of them cannot be found. */
function scriptsOf(check: ApiCheck, options: RunOptions): { setup: NamedScript[]; tearDown: NamedScript[] } | { problem: string } {
  const pick = (field: 'setupSnippetId' | 'tearDownSnippetId', local: string | null | undefined, what: 'setup' | 'teardown'): NamedScript[] | string => {
    const out: NamedScript[] = []
    const id = check[field]
    if (id !== null && id !== undefined) {
      const snippet = options.snippets?.[String(id)]
      if (!snippet) return `the ${what} snippet ${id} (${field}) does not exist: it was deleted, or belongs to another account`
      out.push({ label: `snippet ${id} "${snippet.name}"`, source: snippet.script })
    }
    if (typeof local === 'string' && local.trim() !== '') out.push({ label: what === 'setup' ? 'localSetupScript' : 'localTearDownScript', source: local })
    return out
  }
  const setup = pick('setupSnippetId', check.localSetupScript, 'setup')
  if (typeof setup === 'string') return { problem: setup }
  const tearDown = pick('tearDownSnippetId', check.localTearDownScript, 'teardown')
  if (typeof tearDown === 'string') return { problem: tearDown }
  return { setup, tearDown }
}

/** Whether a check has any setup or teardown script (most have none: nothing is started for them). */
export function hasApiScripts(check: ApiCheck): boolean {
  return (
    [check.setupSnippetId, check.tearDownSnippetId].some((v) => v !== null && v !== undefined) ||
    [check.localSetupScript, check.localTearDownScript].some((v) => typeof v === 'string' && v.trim() !== '')
  )
}

/** The scripts' environment (the account's variables, `MONITORS=true`, `CI=true` in a test session) and its secret values. */
function environment(options: RunOptions): { env: Record<string, string>; secrets: string[] } {
  const env: Record<string, string> = {}
  const secrets: string[] = []
  for (const [key, entry] of Object.entries(options.variables ?? {})) {
    const value = typeof entry === 'string' ? entry : entry.value
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) || value.includes('\0')) continue
    env[key] = value
    if ((typeof entry !== 'string' && entry.secret) || key.startsWith(SECRET_PREFIX)) secrets.push(value)
  }
  env[SERVICE_VARIABLE] = 'true'
  if (options.testSession) env.CI = 'true'
  return { env, secrets }
}

/** The scripts of one attempt: started before the request, closed after the teardown. */
export class ApiScripts {
  readonly reports: ApiScriptReport[] = []
  private env: Record<string, string>
  private scrubber: Scrubber | null = null

  private constructor(
    private readonly scripts: { setup: NamedScript[]; tearDown: NamedScript[] },
    private readonly sandbox: ApiScriptSandbox,
    private readonly initialEnv: Record<string, string>,
    private readonly secrets: Set<string>,
  ) {
    this.env = initialEnv
  }

  /** Scrubs every form of the secrets known so far (the account's, and the request's once it is prepared). */
  private get scrub(): Scrubber {
    this.scrubber ??= createScrubber(this.secrets)
    return this.scrubber
  }

  /** The check's scripts, their process started; a problem (a missing snippet, a run that cannot be contained) instead when one cannot be run. */
  static async open(check: ApiCheck, options: RunOptions): Promise<ApiScripts | { problem: string }> {
    const scripts = scriptsOf(check, options)
    if ('problem' in scripts) return scripts
    if (options.script?.scripts === false) return { problem: SCRIPTS_OFF }
    const { env, secrets } = environment(options)
    const runtimeId = (check as { runtimeId?: string | null }).runtimeId ?? DEFAULT_RUNTIME_ID
    const state = runtimeState(runtimeId, options.runtimeCache ?? defaultRuntimeCache())
    const sandbox = await ApiScriptSandbox.open({
      env,
      runtimeDir: state.prepared ? state.dir : null,
      runtimeMissing: state.missing,
      workDir: options.workDir,
      signal: options.signal,
      ...options.scriptLimits,
      // the scripts' own connections follow the check's private-target policy, in their process and at the egress proxy
      guard: targetGuard(options),
      policy: { privateTargets: options.privateTargets, allowedTargets: options.allowedTargets },
      uidRange: options.script?.uidRange,
    })
    if ('problem' in sandbox) return sandbox
    return new ApiScripts(scripts, sandbox, env, new Set(secrets))
  }

  /** Values the scripts must never show (the request's secrets), added to the scrubbed ones. */
  addSecrets(values: Iterable<string>): void {
    for (const v of values)
      if (v !== '' && !this.secrets.has(v)) {
        this.secrets.add(v)
        this.scrubber = null
      }
  }

  /**
   * Runs the setup scripts on the request; answers the request they left and the variables
   * they set or changed, or the error of the first that failed.
   */
  async setup(request: ScriptRequest): Promise<{ request: ScriptRequest; variables: Record<string, string> } | { error: string }> {
    let current = request
    for (const script of this.scripts.setup) {
      const outcome = await this.sandbox.run(script.source, current, null)
      this.report('setup', script, outcome)
      if (!outcome.ok || outcome.refused.length > 0) return { error: this.failure('setup', script, outcome) }
      const problem = requestProblem(outcome.request)
      if (problem) return { error: `setup script (${script.label}) left an invalid request: ${problem}` }
      current = outcome.request
      this.env = outcome.env
    }
    return { request: current, variables: this.changedVariables() }
  }

  /** Runs the teardown scripts on the response; answers the response they left, or the error of the first that failed. */
  async tearDown(request: ScriptRequest, response: ScriptResponse): Promise<{ response: ScriptResponse } | { error: string; assertion: boolean }> {
    let current = response
    for (const script of this.scripts.tearDown) {
      const outcome = await this.sandbox.run(script.source, request, current)
      this.report('teardown', script, outcome)
      // an assertion the script made (node:assert, chai, expect) fails the check; anything else (a refusal of
      // the sandbox among them, even one the script caught) is an error of the run
      if (outcome.refused.length > 0) return { error: this.failure('teardown', script, outcome), assertion: false }
      if (!outcome.ok) return { error: this.failure('teardown', script, outcome), assertion: /^(AssertionError|JestAssertionError)\b/.test(outcome.error) }
      const problem = responseProblem(outcome.response)
      if (problem) return { error: `teardown script (${script.label}) left an invalid response: ${problem}`, assertion: false }
      current = outcome.response as ScriptResponse
    }
    return { response: current }
  }

  get hasTearDown(): boolean {
    return this.scripts.tearDown.length > 0
  }

  close(): void {
    this.sandbox.close()
  }

  /** What the setup scripts set in process.env (the process's own HOME and TMPDIR aside). */
  private changedVariables(): Record<string, string> {
    const out: Record<string, string> = {}
    for (const [key, value] of Object.entries(this.env)) {
      if (key === 'HOME' || key === 'TMPDIR') continue
      if (typeof value === 'string' && this.initialEnv[key] !== value) out[key] = value
    }
    return out
  }

  /** Why a script fails its run: what the sandbox refused it (caught by the script or not), else its error. */
  private failure(phase: 'setup' | 'teardown', script: NamedScript, outcome: PhaseOutcome): string {
    if (outcome.refused.length > 0) return this.scrub.text(`${phase} script (${script.label}) failed: the sandbox refused: ${outcome.refused.join('; ')}`)
    return this.scrub.text(`${phase} script (${script.label}) failed: ${outcome.ok ? 'no error' : outcome.error}`)
  }

  private report(phase: 'setup' | 'teardown', script: NamedScript, outcome: PhaseOutcome): void {
    this.reports.push({
      phase,
      script: script.label,
      durationMs: outcome.durationMs,
      error: outcome.refused.length > 0 ? this.failure(phase, script, outcome) : outcome.ok ? null : this.scrub.text(outcome.error),
      logs: this.scrub.text(outcome.logs),
    })
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const allStrings = (v: unknown) => isObject(v) && Object.values(v).every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')

/** Why the request a setup script left cannot be sent; null when it can. */
function requestProblem(r: ScriptRequest): string | null {
  if (!isObject(r)) return 'request is not an object'
  if (typeof r.url !== 'string') return 'request.url must be a string'
  if (typeof r.method !== 'string' || !(API_METHODS as readonly string[]).includes(r.method.toUpperCase()))
    return `request.method must be one of ${API_METHODS.join(', ')}`
  if (typeof r.body !== 'string') return 'request.body must be a string (JSON.stringify an object)'
  if (!allStrings(r.headers)) return 'request.headers must be an object of strings'
  if (!allStrings(r.queryParameters)) return 'request.queryParameters must be an object of strings'
  return null
}

function responseProblem(r: ScriptResponse | null): string | null {
  if (!isObject(r)) return 'response is not an object'
  if (!Number.isInteger(r.statusCode) || r.statusCode < 100 || r.statusCode > 999) return 'response.statusCode must be an integer from 100 to 999'
  if (typeof r.body !== 'string') return 'response.body must be a string (JSON.stringify an object)'
  if (!allStrings(r.headers)) return 'response.headers must be an object of strings'
  return null
}
