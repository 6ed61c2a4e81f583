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
import { parseAllowedTarget, runCheck, type CheckRunResult, type PrivateTargets, type RunnableCheck } from '../runner/index.js'
import { LOCATIONS } from '../schema/enums.js'
import { startHealthServer, type HealthServer } from './health.js'
import { UserError } from '../errors.js'

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
  if (options.locations.length === 0) throw new UserError(`No location: pass --locations with one or more of ${LOCATIONS.join(', ')}.`)
  const unknown = options.locations.filter((l) => !(LOCATIONS as readonly string[]).includes(l))
  if (unknown.length > 0) {
    throw new UserError(
      `--locations: ${unknown.map((l) => JSON.stringify(l)).join(', ')} ${unknown.length === 1 ? 'is not a location' : 'are not locations'}. ` +
        `Allowed: ${LOCATIONS.join(', ')}.`,
    )
  }
  const c = options.concurrency ?? DEFAULT_CONCURRENCY
  if (!Number.isInteger(c) || c < 1 || c > 1000) throw new UserError(`--concurrency must be a whole number from 1 to 1000 (got ${c}).`)
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
  return [...new Set(values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean))]
}

const SUPPORTED = new Set(['DNS', 'ICMP', 'API'])

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

export async function startAgent(options: AgentOptions): Promise<Agent> {
  checkAgentOptions(options)
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`))
  const stamp = (line: string) => `${new Date().toISOString()} ${redact(line)}`
  const info = (line: string) => log(stamp(line))
  const problem = (line: string) => warn(stamp(line))

  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS
  const agentId = options.agentId ?? `${hostname()}-${process.pid}`
  const locations = [...options.locations]

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

  let stopping = false
  let exitCode = 0
  const forced = new AbortController()
  const inFlight = new Map<string, Promise<void>>()
  const stats = { claimed: 0, ran: 0, posted: 0, dropped: 0, lost: 0, skipped: 0 }

  // The loop sleeps until its timer or the shutdown; when every slot is busy, until one frees.
  // (A run that ends while slots are free does not trigger a claim: the next poll will.)
  let wake: (() => void) | undefined
  let waitingForSlot = false
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      waitingForSlot = !Number.isFinite(ms)
      const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined
      function done() {
        if (timer) clearTimeout(timer)
        wake = undefined
        waitingForSlot = false
        resolve()
      }
      wake = done
    })
  const wakeUp = () => wake?.()
  const slotFreed = () => {
    if (waitingForSlot) wakeUp()
  }

  let health: HealthServer
  try {
    health = await startHealthServer({ port: options.healthPort ?? DEFAULT_HEALTH_PORT, host: options.healthHost, ready: () => !stopping })
  } catch (error) {
    await client.close()
    throw error
  }

  /** Waits without keeping a forced stop waiting. */
  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      if (forced.signal.aborted) return resolve()
      const timer = setTimeout(finish, ms)
      forced.signal.addEventListener('abort', finish, { once: true })
      function finish() {
        clearTimeout(timer)
        forced.signal.removeEventListener('abort', finish)
        resolve()
      }
    })

  async function postResult(run: ClaimedRun, result: CheckRunResult, lease: { lost: boolean }): Promise<void> {
    const path = `/v1/agent/runs/${encodeURIComponent(run.runId)}/result`
    let failures = 0
    let uncertain = false
    for (;;) {
      if (forced.signal.aborted) {
        stats.lost++
        problem(`The result of run ${run.runId} (${JSON.stringify(run.check.name)} ${run.location}) was not posted: stopped before it could be delivered; the server runs it again when its lease expires.`)
        return
      }
      try {
        await client.post(path, { result })
        stats.posted++
        if (failures > 0) info(`Posted the result of run ${run.runId} after ${failures + 1} attempts.`)
        return
      } catch (error) {
        if (error instanceof ApiError && (error.status === 409 || error.status === 404)) {
          stats.dropped++
          const why = error.status === 409
            ? lease.lost ? 'its lease was lost' : 'its lease was lost (another runner has the run)'
            : 'the server does not know the run'
          const note = uncertain ? '; an earlier attempt whose answer was lost may have delivered it' : ''
          info(`Result of run ${run.runId} (${JSON.stringify(run.check.name)} ${run.location}) dropped: ${why}${note}.`)
          return
        }
        const transient = error instanceof NetworkError || error instanceof ServerError || error instanceof RateLimitError
        if (!transient) {
          stats.lost++
          problem(`The result of run ${run.runId} (${JSON.stringify(run.check.name)} ${run.location}) was refused: ${(error as Error).message}`)
          return
        }
        if (!(error instanceof NetworkError) || error.maybeSent) uncertain = true
        if (failures === 0 || failures % 10 === 0) {
          problem(`Posting the result of run ${run.runId} failed (${(error as Error).message}); trying again.`)
        }
        await delay(backoffDelay(Math.min(failures, 8), { retries: 0, baseMs: 250, maxMs: 10_000 }) + 100)
        failures++
      }
    }
  }

  async function execute(run: ClaimedRun): Promise<void> {
    const started = performance.now()
    const controller = new AbortController()
    const onForced = () => controller.abort()
    forced.signal.addEventListener('abort', onForced, { once: true })
    const lease = { lost: false }
    let extending = false
    // renewed at a third of the lease, so two renewals may fail before it runs out
    const extender = setInterval(async () => {
      if (extending || lease.lost) return
      extending = true
      try {
        await client.post(`/v1/agent/runs/${encodeURIComponent(run.runId)}/extend`, { leaseSeconds })
      } catch (error) {
        if (error instanceof ApiError && (error.status === 409 || error.status === 404)) {
          lease.lost = true
          problem(`Lost the lease of run ${run.runId} (${JSON.stringify(run.check.name)} ${run.location}): another runner has it; stopping this run.`)
          controller.abort()
        } else {
          problem(`Extending the lease of run ${run.runId} failed (${(error as Error).message}); trying again.`)
        }
      } finally {
        extending = false
      }
    }, Math.max(1000, (leaseSeconds * 1000) / 3))
    try {
      if (!SUPPORTED.has(run.check.checkType)) {
        // not ours to run: the lease runs out and the server decides what to do with it
        stats.skipped++
        problem(`Run ${run.runId}: ${run.check.checkType} checks are not run by this agent (DNS, ICMP and API are); skipped.`)
        return
      }
      const result = await runCheck(run.check, { location: run.location, signal: controller.signal, variables: run.variables, privateTargets: options.privateTargets, allowedTargets: options.allowedTargets })
      stats.ran++
      if (lease.lost) {
        stats.dropped++
        info(`${runLine(run, result, performance.now() - started)}: not posted, the lease was lost`)
        return
      }
      info(runLine(run, result, performance.now() - started))
      await postResult(run, result, lease)
    } catch (error) {
      // runCheck does not throw; anything here is a bug, and must not stop the other runs
      stats.lost++
      problem(`Run ${run.runId} failed inside the agent: ${(error as Error).message}`)
    } finally {
      clearInterval(extender)
      forced.signal.removeEventListener('abort', onForced)
    }
  }

  function start(run: ClaimedRun): void {
    const task = execute(run).finally(() => {
      inFlight.delete(run.runId)
      slotFreed()
    })
    inFlight.set(run.runId, task)
  }

  async function claim(max: number): Promise<ClaimedRun[]> {
    const response = await client.post<{ runs?: ClaimedRun[] }>('/v1/agent/claim', { agentId, locations, max, leaseSeconds })
    const runs = response.body?.runs
    return Array.isArray(runs) ? runs : []
  }

  async function loop(): Promise<void> {
    let failures = 0
    while (!stopping) {
      const free = concurrency - inFlight.size
      if (free <= 0) {
        await pause(Infinity)
        continue
      }
      const max = Math.min(free, MAX_CLAIM)
      let runs: ClaimedRun[]
      try {
        runs = await claim(max)
        if (failures > 0) info(`Claiming works again after ${failures} failed ${failures === 1 ? 'attempt' : 'attempts'}.`)
        failures = 0
      } catch (error) {
        if (error instanceof ApiError && [400, 401, 403, 404].includes(error.status)) {
          const hint = error.status === 404 ? ' Does this server serve the agent routes (/v1/agent/*)?' : ''
          problem(`Claiming runs was refused: ${sentence(error.message)}${hint} Stopping.`)
          exitCode = 1
          stopping = true
          break
        }
        if (failures === 0 || failures % 30 === 0) problem(`Claiming runs failed: ${sentence((error as Error).message)} Trying again.`)
        failures++
        await pause(Math.min(30_000, pollIntervalMs * 2 ** Math.min(failures - 1, 5)))
        continue
      }
      // runs claimed, even while shutdown began, are leased to this agent: they are run
      for (const run of runs) {
        stats.claimed++
        start(run)
      }
      if (stopping) break
      // a full batch: more may be due, claim again at once (or when a slot frees)
      if (runs.length < max) await pause(pollIntervalMs)
    }
  }

  const looping = loop()
  let finished: Promise<number> | undefined
  const finish = (): Promise<number> => {
    finished ??= (async () => {
      await looping
      stopping = true
      while (inFlight.size > 0) await Promise.all([...inFlight.values()])
      await health.close()
      await client.close()
      return exitCode
    })()
    return finished
  }
  // a fatal refusal ends the loop by itself
  const done = looping.then(() => finish())

  info(`Agent ${agentId} serving ${locations.join(', ')} from ${redact(client.baseUrl)} (${concurrency} at once, lease ${leaseSeconds} s); health probes on port ${health.port}.`)

  return {
    agentId,
    healthPort: health.port,
    ready: () => !stopping,
    stats: () => ({ ...stats, inFlight: inFlight.size }),
    stop(reason?: string) {
      if (!stopping) {
        stopping = true
        const n = inFlight.size
        info(`${reason ? `${reason}: ` : ''}shutting down: no more claims, readiness 503; finishing ${n} ${n === 1 ? 'run' : 'runs'} in flight.`)
        wakeUp()
      }
      return done
    },
    abort() {
      stopping = true
      forced.abort()
      wakeUp()
    },
    done,
  }
}
