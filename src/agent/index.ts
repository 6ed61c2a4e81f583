/**
 * The self-hosted agent: claims the due runs of its locations from a Monitoring API server,
 * runs them with the shared runners, keeps their leases alive while they run, posts every
 * result, and serves the spec's health probes. Depends only on src/api, src/runner and
 * src/schema.
 *
 * The server side (README, "monitors agent"): POST /v1/agent/claim, POST
 * /v1/agent/runs/{runId}/extend and POST /v1/agent/runs/{runId}/result.
 */
import { hostname } from 'node:os'
import { ApiClient, ApiError, NetworkError, RateLimitError, ServerError, backoffDelay, redact } from '../api/index.js'
import {
  defaultScriptConcurrency,
  detachRunArtifacts,
  discardFolders,
  parseAllowedTarget,
  Semaphore,
  type ScriptProbeOptions,
  runCheck,
  type CheckRunResult,
  type PrivateTargets,
  type RunnableCheck,
} from '../runner/index.js'
import { statSync } from 'node:fs'
import path from 'node:path'
import { LeaseLost, RunLoop, type WorkSource } from '../runner/run-loop.js'
import { LOCATIONS } from '../schema/enums.js'
import { privateLocationSlugProblem } from '../schema/private-location.js'
import { CHECK_TYPE_TABLE, isScriptCheckType, isServiceCheckType, SCRIPT_CHECK_TYPES, SERVICE_CHECK_TYPES, typesInProse } from '../schema/check-types.js'
import { startHealthServer, type HealthServer } from './health.js'
import { AgentMetrics } from './metrics.js'
import { UserError } from '../errors.js'
import type { UidRange } from '../runner/script/contain.js'

export { startHealthServer, type HealthServer } from './health.js'

export const DEFAULT_HEALTH_PORT = 8081
export const DEFAULT_CONCURRENCY = 10
export const DEFAULT_POLL_INTERVAL_MS = 1000
export const DEFAULT_LEASE_SECONDS = 60
/** Bounds of the claim route: runs per claim and lease length. */
export const MAX_CLAIM = 50
export const MIN_LEASE_SECONDS = 10
export const MAX_LEASE_SECONDS = 600

export interface AgentOptions {
  apiUrl: string
  apiKey: string
  accountId?: string
  /** Locations this agent serves (the spec's list). */
  locations: readonly string[]
  /** Runs at once. Default 10. */
  concurrency?: number
  /**
   * Browser, multi-step and Playwright suite runs at once (default: one per two cores, at least
   * 1). The agent holds at most twice as many of them (running or waiting for a place) and claims
   * only other check types past that, so its other checks keep their schedule.
   */
  scriptConcurrency?: number
  /** Wait between claims when nothing was due. Default 1000 ms. */
  pollIntervalMs?: number
  /** Lease asked for each run (10–600 s), extended while the run lasts. Default 60. */
  leaseSeconds?: number
  /** Port of the health probes (0 picks a free one). Default 8081. */
  healthPort?: number
  /** Address the probes listen on (default: every interface, so a prober from outside reaches them). */
  healthHost?: string
  /** Names this agent to the server. Default `<hostname>-<pid>`. */
  agentId?: string
  /** Allows a plain http:// URL to a host that is not this machine. */
  insecureHttp?: boolean
  /** Seconds to wait for each API answer. Default 30. */
  timeoutSeconds?: number
  /**
   * The private-target policy of its runs (docs/security.md). Default `allow`: an agent runs
   * inside the network it watches, for its own account.
   */
  privateTargets?: PrivateTargets
  /** Exceptions to `deny`: an address, a CIDR range or an address:port each. */
  allowedTargets?: readonly string[]
  /** The bearer token of GET /metrics on the health port (default: none, open like the probes). */
  metricsToken?: string
  /** The uids Playwright suite runs are given when the agent is root (src/runner/script/contain.ts; 'off': none). */
  scriptUidRange?: UidRange | 'off'
  /** One line per run and per event (default stdout). */
  log?: (line: string) => void
  /** Problems: claims or posts that failed (default stderr). */
  warn?: (line: string) => void
}

/** A run as POST /v1/agent/claim hands it out. */
export interface ClaimedRun {
  runId: string
  location: string
  dueAt: string
  leaseExpiresAt: string
  sessionId: string | null
  check: RunnableCheck & { id: string; name: string; checkType: string }
  /** For an API check: the account's variables its `{{KEY}}` references are resolved from. */
  variables?: Record<string, { value: string; secret?: boolean }>
  /** For an API check: the snippets it runs as its setup and teardown scripts, by id. */
  snippets?: Record<string, { name: string; script: string }>
}

export interface AgentStats {
  claimed: number
  /** Runs finished by the runner (whatever their result). */
  ran: number
  /** Results the server accepted. */
  posted: number
  /** Results the server refused because another runner had the run (409) or did not know it (404). */
  dropped: number
  /** Results that could not be delivered (a refusal other than 409/404, or a forced stop). */
  lost: number
  /** Runs of a check type this agent does not run (left to their lease). */
  skipped: number
  inFlight: number
}

export interface Agent {
  agentId: string
  /** Port the health probes listen on (the one picked when 0 was asked). */
  healthPort: number
  /** True until shutdown starts (what /-/readiness says). */
  ready(): boolean
  stats(): AgentStats
  /**
   * Graceful shutdown: no more claims, readiness 503, the runs in flight finish and their
   * results are posted; resolves with the exit code when everything is done.
   */
  stop(reason?: string): Promise<number>
  /**
   * Stops now: the runs in flight are aborted and their results are not posted (their leases
   * expire and the server runs them again). For a second Ctrl-C.
   */
  abort(): void
  /** Resolves with the exit code when the agent has stopped (0, or 1 after a fatal refusal). */
  done: Promise<number>
}

/** Checks the options a user gives; throws one clear line for the first one that is wrong. */
export function checkAgentOptions(options: AgentOptions): void {
  const where = options.apiUrl
  if (!where) throw new UserError('No API URL: set MONITORING_API_URL or pass --api-url (the Monitoring API the agent takes runs from).')
  if (!options.apiKey) throw new UserError('No API key: set MONITORING_API_KEY or pass --api-key.')
  if (options.locations.length === 0)
    throw new UserError(`No location: pass --locations with one or more of ${LOCATIONS.join(', ')}, or a private location's slugName.`)
  // a name that is no public location is a private location's slug (the server says whether the key serves it)
  const unknown = options.locations.filter((l) => !(LOCATIONS as readonly string[]).includes(l) && privateLocationSlugProblem(l) !== null)
  if (unknown.length > 0) {
    throw new UserError(
      `--locations: ${unknown.map((l) => JSON.stringify(l)).join(', ')} ${unknown.length === 1 ? 'is not a location' : 'are not locations'}. ` +
        `Allowed: ${LOCATIONS.join(', ')}, or the slugName of a private location (1 to 30 letters, digits and hyphens).`,
    )
  }
  const c = options.concurrency ?? DEFAULT_CONCURRENCY
  if (!Number.isInteger(c) || c < 1 || c > 1000) throw new UserError(`--concurrency must be a whole number from 1 to 1000 (got ${c}).`)
  const s = options.scriptConcurrency ?? 1
  if (!Number.isInteger(s) || s < 1 || s > 1000) throw new UserError(`--script-concurrency must be a whole number from 1 to 1000 (got ${s}).`)
  const p = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS
  if (!Number.isFinite(p) || p < 50 || p > 600_000) throw new UserError(`--poll-interval must be from 50ms to 10m (got ${p} ms).`)
  const l = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS
  if (!Number.isInteger(l) || l < MIN_LEASE_SECONDS || l > MAX_LEASE_SECONDS) {
    throw new UserError(`--lease must be a whole number of seconds from ${MIN_LEASE_SECONDS} to ${MAX_LEASE_SECONDS} (got ${l}).`)
  }
  for (const entry of options.allowedTargets ?? []) {
    try {
      parseAllowedTarget(entry)
    } catch (error) {
      throw new UserError(`--allow-target ${(error as Error).message}.`)
    }
  }
  const h = options.healthPort ?? DEFAULT_HEALTH_PORT
  if (!Number.isInteger(h) || h < 0 || h > 65535) throw new UserError(`--health-port must be 0-65535 (0 picks a free port), got ${h}.`)
}

/** `eu-west-1,us-east-1` (also repeated flags), trimmed, without duplicates. */
export function parseLocations(values: readonly string[]): string[] {
  return [
    ...new Set(
      values
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter(Boolean),
    ),
  ]
}

/** The check types an agent runs (their table entries say `agents: true`). */
const supported = (type: string): boolean => isServiceCheckType(type) && CHECK_TYPE_TABLE[type].agents
const SUPPORTED_NAMES = typesInProse(SERVICE_CHECK_TYPES.filter((type) => CHECK_TYPE_TABLE[type].agents))

/** Ends a message with a full stop, so another sentence may follow. */
function sentence(text: string): string {
  return /[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`
}

function formatMs(ms: number): string {
  return ms < 10 ? `${Math.round(ms * 10) / 10} ms` : `${Math.round(ms)} ms`
}

/** One log line per run: check name, location, status, milliseconds. */
export function runLine(run: ClaimedRun, result: CheckRunResult, elapsedMs: number): string {
  const status = result.hasErrors && result.status === 'FAILED' ? 'ERROR' : result.status
  const time = result.responseTime !== null ? formatMs(result.responseTime) : `- (${formatMs(elapsedMs)} elapsed)`
  const retries = result.attempts.length > 0 ? ` after ${result.attempts.length} ${result.attempts.length === 1 ? 'retry' : 'retries'}` : ''
  const why = result.error && result.status !== 'PASSED' ? `: ${result.error}` : ''
  return `${JSON.stringify(run.check.name)} ${run.location} ${status} ${time}${retries}${why} (run ${run.runId})`
}

/** What the parts of a running agent share. */
interface AgentContext {
  client: ApiClient
  agentId: string
  locations: string[]
  leaseSeconds: number
  info: (line: string) => void
  problem: (line: string) => void
  stats: Omit<AgentStats, 'inFlight'>
  /** a forced stop (a second Ctrl-C): results in flight are not posted */
  forced: AbortSignal
  /** the private-target policy of the runs (docs/security.md) */
  targets: Pick<AgentOptions, 'privateTargets' | 'allowedTargets'>
  metrics: AgentMetrics
  /** how browser and multi-step checks run here: a few at a time */
  script: ScriptProbeOptions & { limiter: Semaphore }
  /** script runs this agent holds (running, or waiting for a place of the script concurrency) */
  heldScripts: number
}

const described = (run: ClaimedRun) => `run ${run.runId} (${JSON.stringify(run.check.name)} ${run.location})`

/** Waits without keeping a forced stop waiting. */
function delay(ms: number, forced: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (forced.aborted) return resolve()
    const timer = setTimeout(finish, ms)
    forced.addEventListener('abort', finish, { once: true })
    function finish() {
      clearTimeout(timer)
      forced.removeEventListener('abort', finish)
      resolve()
    }
  })
}

/**
 * Posts a run's result: a network error, a lost answer or a 5xx sends it again with backoff (the
 * server records a result posted twice under one claim once); a 409 or 404 drops it.
 */
async function postResult(ctx: AgentContext, run: ClaimedRun, result: CheckRunResult): Promise<void> {
  const path = `/v1/agent/runs/${encodeURIComponent(run.runId)}/result`
  let failures = 0
  let uncertain = false
  for (;;) {
    if (ctx.forced.aborted) {
      ctx.stats.lost++
      ctx.problem(`The result of ${described(run)} was not posted: stopped before it could be delivered; the server runs it again when its lease expires.`)
      return
    }
    try {
      await ctx.client.post(path, { result })
      ctx.stats.posted++
      if (failures > 0) ctx.info(`Posted the result of run ${run.runId} after ${failures + 1} attempts.`)
      return
    } catch (error) {
      if (error instanceof ApiError && (error.status === 409 || error.status === 404)) {
        ctx.stats.dropped++
        const why = error.status === 409 ? 'its lease was lost (another runner has the run)' : 'the server does not know the run'
        const note = uncertain ? '; an earlier attempt whose answer was lost may have delivered it' : ''
        ctx.info(`Result of ${described(run)} dropped: ${why}${note}.`)
        return
      }
      const transient = error instanceof NetworkError || error instanceof ServerError || error instanceof RateLimitError
      if (!transient) {
        ctx.stats.lost++
        ctx.problem(`The result of ${described(run)} was refused: ${(error as Error).message}`)
        return
      }
      if (!(error instanceof NetworkError) || error.maybeSent) uncertain = true
      if (failures === 0 || failures % 10 === 0) ctx.problem(`Posting the result of run ${run.runId} failed (${(error as Error).message}); trying again.`)
      await delay(backoffDelay(Math.min(failures, 8), { retries: 0, baseMs: 250, maxMs: 10_000 }) + 100, ctx.forced)
      failures++
    }
  }
}

/** Runs one claimed run and posts its result (not when its lease was lost meanwhile). */
async function executeRun(ctx: AgentContext, run: ClaimedRun, signal: AbortSignal): Promise<void> {
  const started = performance.now()
  if (!supported(run.check.checkType)) {
    // not ours to run: the lease runs out and the server decides what to do with it
    ctx.stats.skipped++
    ctx.problem(`Run ${run.runId}: ${run.check.checkType} checks are not run by this agent (${SUPPORTED_NAMES} are); skipped.`)
    return
  }
  const due = Date.parse(run.dueAt)
  if (Number.isFinite(due)) ctx.metrics.lag.observe({}, Math.max(0, Date.now() - due) / 1000)
  const result = await runCheck(run.check, {
    location: run.location,
    signal,
    variables: run.variables,
    snippets: run.snippets,
    ...ctx.targets,
    script: ctx.script,
  })
  ctx.stats.ran++
  if (!signal.aborted) ctx.metrics.recordRun(run.check, run.location, result)
  if (signal.reason instanceof LeaseLost) {
    ctx.stats.dropped++
    ctx.info(`${runLine(run, result, performance.now() - started)}: not posted, the lease was lost`)
    return
  }
  ctx.info(runLine(run, result, performance.now() - started))
  // a browser or multi-step run's artifacts: uploaded first, then the result that names them
  const folders = detachRunArtifacts(result)
  try {
    await uploadArtifacts(ctx, run, [folders.final, ...folders.attempts], [result, ...result.attempts])
    await postResult(ctx, run, result)
  } finally {
    discardFolders(folders)
  }
}

/** Uploads the files each result's manifest names (index 0 the result's, n its n-th attempt's); a failed upload leaves the result without them. */
async function uploadArtifacts(ctx: AgentContext, run: ClaimedRun, folders: Array<string | null>, results: Array<{ details: unknown }>): Promise<void> {
  for (const [index, dir] of folders.entries()) {
    if (!dir) continue
    const files = (results[index].details as { artifacts?: { files?: Array<{ name: string }> } }).artifacts?.files ?? []
    for (const file of files) {
      try {
        // streamed from disk: the server writes it as it comes
        const local = path.join(dir, ...file.name.split('/'))
        await ctx.client.putFile(
          `/v1/agent/runs/${encodeURIComponent(run.runId)}/artifacts`,
          { path: local, length: statSync(local).size },
          { index, name: file.name },
        )
      } catch (error) {
        ctx.problem(`Artifact ${file.name} of ${described(run)} was not uploaded: ${(error as Error).message}`)
      }
    }
  }
}

/**
 * Claims up to `max` runs, script runs among them only while fewer than twice the script
 * concurrency are held (as the server's runner does): runs waiting for a script place would
 * otherwise take the agent's slots one by one, and its DNS, API and other checks would wait
 * behind them. The script runs left stay due: claimed once places free up, by this agent or
 * another one serving the location. One request (`maxOfCheckTypes`, which a server older than
 * it ignores: it then hands out every type, as before).
 */
async function claimRuns(ctx: AgentContext, max: number): Promise<ClaimedRun[]> {
  const { client, agentId, locations, leaseSeconds } = ctx
  const room = Math.max(0, 2 * ctx.script.limiter.size - ctx.heldScripts)
  const limit = room < max ? { maxOfCheckTypes: { checkTypes: SCRIPT_CHECK_TYPES, max: room } } : {}
  const response = await client.post<{ runs?: ClaimedRun[] }>('/v1/agent/claim', { agentId, locations, max, leaseSeconds, ...limit })
  const runs = response.body?.runs
  const claimed = Array.isArray(runs) ? runs : []
  ctx.stats.claimed += claimed.length
  return claimed
}

/** Runs one claimed run, counted among the script runs held while it lasts when it is one. */
async function heldRun(ctx: AgentContext, run: ClaimedRun, signal: AbortSignal): Promise<void> {
  if (!isScriptCheckType(run.check.checkType)) return executeRun(ctx, run, signal)
  ctx.heldScripts++
  try {
    return await executeRun(ctx, run, signal)
  } finally {
    ctx.heldScripts--
  }
}

/** The server's agent routes as the run loop's source of work. */
function agentRuns(ctx: AgentContext): WorkSource<ClaimedRun> {
  const { client, leaseSeconds } = ctx
  return {
    claim: (max) => claimRuns(ctx, max),
    extend: async (run) => {
      try {
        await client.post(`/v1/agent/runs/${encodeURIComponent(run.runId)}/extend`, { leaseSeconds })
        return true
      } catch (error) {
        if (error instanceof ApiError && (error.status === 409 || error.status === 404)) {
          ctx.problem(`Lost the lease of ${described(run)}: another runner has it; stopping this run.`)
          return false
        }
        throw error
      }
    },
    // no release: runs claimed while shutting down are leased to this agent, so they are run
  }
}

/** The run loop of an agent: `onFatal` is told of a claim refusal that will not change. */
function agentLoop(ctx: AgentContext, concurrency: number, pollIntervalMs: number, onFatal: () => void): RunLoop<ClaimedRun> {
  return new RunLoop<ClaimedRun>({
    source: agentRuns(ctx),
    key: (run) => run.runId,
    concurrency,
    maxClaim: MAX_CLAIM,
    pollMs: pollIntervalMs,
    // renewed at a third of the lease, so two renewals may fail before it runs out
    extendEveryMs: Math.max(1000, (ctx.leaseSeconds * 1000) / 3),
    backoffMs: (failures) => Math.min(30_000, pollIntervalMs * 2 ** Math.min(failures - 1, 5)),
    work: (run, signal) => heldRun(ctx, run, signal),
    onClaimError: (error, failures) => {
      if (error instanceof ApiError && [400, 401, 403, 404].includes(error.status)) {
        const hint = error.status === 404 ? ' Does this server serve the agent routes (/v1/agent/*)?' : ''
        ctx.problem(`Claiming runs was refused: ${sentence(error.message)}${hint} Stopping.`)
        onFatal()
        return 'stop'
      }
      if (failures === 1 || (failures - 1) % 30 === 0) ctx.problem(`Claiming runs failed: ${sentence((error as Error).message)} Trying again.`)
      return 'retry'
    },
    onRecovered: (failures) => ctx.info(`Claiming works again after ${failures} failed ${failures === 1 ? 'attempt' : 'attempts'}.`),
    onExtendError: (run, error) => ctx.problem(`Extending the lease of run ${run.runId} failed (${(error as Error).message}); trying again.`),
    // runCheck does not throw; anything here is a bug, and must not stop the other runs
    onWorkError: (run, error) => {
      ctx.stats.lost++
      ctx.problem(`Run ${run.runId} failed inside the agent: ${(error as Error).message}`)
    },
  })
}

export async function startAgent(options: AgentOptions): Promise<Agent> {
  checkAgentOptions(options)
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`))
  const stamp = (line: string) => `${new Date().toISOString()} ${redact(line)}`
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
  const client = new ApiClient({
    baseUrl: options.apiUrl,
    apiKey: options.apiKey,
    accountId: options.accountId,
    insecureHttp: options.insecureHttp,
    timeoutMs: (options.timeoutSeconds ?? 30) * 1000,
    // results and claims are retried by the agent itself (see postResult), not twice over
    retry: { retries: 2 },
    connections: Math.min(16, concurrency + 2),
  })
  const forced = new AbortController()
  const ctx: AgentContext = {
    client,
    agentId: options.agentId ?? `${hostname()}-${process.pid}`,
    locations: [...options.locations],
    leaseSeconds: options.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
    info: (line) => log(stamp(line)),
    problem: (line) => warn(stamp(line)),
    stats: { claimed: 0, ran: 0, posted: 0, dropped: 0, lost: 0, skipped: 0 },
    forced: forced.signal,
    targets: { privateTargets: options.privateTargets, allowedTargets: options.allowedTargets },
    metrics: new AgentMetrics(),
    script: { limiter: new Semaphore(options.scriptConcurrency ?? defaultScriptConcurrency()), uidRange: options.scriptUidRange },
    heldScripts: 0,
  }
  let stopping = false
  let exitCode = 0
  let health: HealthServer
  let loop: RunLoop<ClaimedRun> | undefined
  try {
    health = await startHealthServer({
      port: options.healthPort ?? DEFAULT_HEALTH_PORT,
      host: options.healthHost,
      ready: () => !stopping,
      metrics: () => ctx.metrics.render({ ...ctx.stats, inFlight: loop?.size ?? 0 }, !stopping),
      metricsToken: options.metricsToken,
    })
  } catch (error) {
    await client.close()
    throw error
  }
  loop = agentLoop(ctx, concurrency, options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, () => {
    exitCode = 1
    stopping = true
  })
  loop.start()

  let finished: Promise<number> | undefined
  const finish = (): Promise<number> => {
    finished ??= (async () => {
      stopping = true
      await loop.stop()
      await health.close()
      await client.close()
      return exitCode
    })()
    return finished
  }
  // a fatal refusal ends the loop by itself
  const done = loop.done.then(() => finish())
  ctx.info(
    `Agent ${ctx.agentId} serving ${ctx.locations.join(', ')} from ${redact(client.baseUrl)} (${concurrency} at once, ${ctx.script.limiter.size} of them browser, multi-step or Playwright, lease ${ctx.leaseSeconds} s); health probes on port ${health.port}.`,
  )

  return {
    agentId: ctx.agentId,
    healthPort: health.port,
    ready: () => !stopping,
    stats: () => ({ ...ctx.stats, inFlight: loop.size }),
    stop(reason?: string) {
      if (!stopping) {
        stopping = true
        const n = loop.size
        ctx.info(`${reason ? `${reason}: ` : ''}shutting down: no more claims, readiness 503; finishing ${n} ${n === 1 ? 'run' : 'runs'} in flight.`)
      }
      return finish()
    },
    abort() {
      stopping = true
      forced.abort()
      loop.abort()
      void finish()
    },
    done,
  }
}
