import { spawn } from 'node:child_process'
import type { IcmpCheck } from '../schema/check.js'
import { evaluateAssertion, readJsonPath } from './assertions.js'
import { resolveTarget } from './targets.js'
import { emptyOutcome, type AssertionResult, type AttemptOutcome, type IcmpDetails, type LatencyStats, type RunOptions } from './types.js'
import { childEnvironment } from './child-env.js'

/**
 * ICMP checks send real echo requests through the system ping (Debian's iputils-ping): it
 * holds the raw-socket privilege a node process does not have. It is spawned with an
 * argument array, never through a shell, and its output is parsed.
 */

export const DEFAULT_PING_INTERVAL_SECONDS = 0.2
/** Per-packet wait when the check sets no maxResponseTime. */
export const DEFAULT_PACKET_TIMEOUT_MS = 10_000
export const MIN_PACKET_TIMEOUT_MS = 1000
export const PING_INSTALL_HINT = 'install iputils-ping (apt-get install iputils-ping)'

export interface PingOutput {
  ipAddress: string | null
  packetsSent: number
  packetsReceived: number
  /** Null when ping was stopped before it printed its statistics. */
  packetLoss: number | null
  latency: LatencyStats | null
  pings: Array<{ seq: number; ttl: number | null; time: number }>
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000
}

function statsOf(times: number[]): LatencyStats | null {
  if (times.length === 0) return null
  const avg = times.reduce((a, b) => a + b, 0) / times.length
  const variance = times.reduce((a, t) => a + (t - avg) ** 2, 0) / times.length
  return { avg: round(avg), min: round(Math.min(...times)), max: round(Math.max(...times)), stddev: round(Math.sqrt(variance)) }
}

/** Reads iputils ping output (run with -n). Null when it holds no statistics at all. */
export function parsePingOutput(stdout: string): PingOutput | null {
  const ipAddress = /^PING\s+\S+?\s?\(([^)\s]+)\)/m.exec(stdout)?.[1] ?? null
  const pings: PingOutput['pings'] = []
  const seen = new Set<number>()
  for (const match of stdout.matchAll(/icmp_seq=(\d+)(?:\s+ttl=(\d+))?\s+time=([\d.]+)\s*ms(?!.*DUP!)/g)) {
    const seq = Number(match[1])
    if (seen.has(seq)) continue
    seen.add(seq)
    pings.push({ seq, ttl: match[2] ? Number(match[2]) : null, time: Number(match[3]) })
  }
  const summary = /(\d+) packets transmitted, (\d+) (?:packets )?received,.*?([\d.]+)% packet loss/.exec(stdout)
  if (!summary) {
    if (pings.length === 0) return null
    return { ipAddress, packetsSent: pings.length, packetsReceived: pings.length, packetLoss: null, latency: statsOf(pings.map((p) => p.time)), pings }
  }
  const rtt = /(?:rtt|round-trip) min\/avg\/max\/(?:mdev|stddev) = ([\d.]+)\/([\d.]+)\/([\d.]+)\/([\d.]+) ms/.exec(stdout)
  const latency = rtt ? { min: Number(rtt[1]), avg: Number(rtt[2]), max: Number(rtt[3]), stddev: Number(rtt[4]) } : statsOf(pings.map((p) => p.time))
  return {
    ipAddress,
    packetsSent: Number(summary[1]),
    packetsReceived: Number(summary[2]),
    packetLoss: Number(summary[3]),
    latency,
    pings,
  }
}

/**
 * Arguments for one ping run; the hostname (or `address`, when the runner resolved it itself)
 * comes after `--` so it is never read as an option.
 */
export function pingArguments(request: IcmpCheck['request'], packetTimeoutMs: number, intervalSeconds: number, address?: string): string[] {
  return [
    '-n',
    request.ipFamily === 'IPv6' ? '-6' : '-4',
    '-c',
    String(request.pingCount),
    '-i',
    String(intervalSeconds),
    '-W',
    String(Math.max(0.001, packetTimeoutMs / 1000)),
    '--',
    address ?? request.hostname,
  ]
}

interface SpawnResult {
  stdout: string
  stderr: string
  code: number | null
  spawnError: NodeJS.ErrnoException | null
  killedFor: 'timeout' | 'abort' | null
}

function runPing(path: string, args: string[], limitMs: number, signal?: AbortSignal): Promise<SpawnResult> {
  return new Promise((resolve) => {
    const result: SpawnResult = { stdout: '', stderr: '', code: null, spawnError: null, killedFor: null }
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(path, args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnvironment({ LC_ALL: 'C' }) })
    } catch (error) {
      result.spawnError = error as NodeJS.ErrnoException
      resolve(result)
      return
    }
    let done = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      resolve(result)
    }
    const stop = (why: 'timeout' | 'abort') => {
      result.killedFor = why
      // SIGINT makes ping print its statistics for the packets sent so far.
      child.kill('SIGINT')
      setTimeout(() => {
        if (!done) child.kill('SIGKILL')
      }, 500).unref()
    }
    const timer = setTimeout(() => stop('timeout'), limitMs)
    const onAbort = () => stop('abort')
    if (signal?.aborted) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      result.stdout += c
    })
    child.stderr?.setEncoding('utf8').on('data', (c: string) => {
      result.stderr += c
    })
    child.on('error', (error) => {
      result.spawnError = error
      finish()
    })
    child.on('close', (code) => {
      result.code = code
      finish()
    })
  })
}

/** Errors of ping itself that mean this machine cannot ping, not that the target is down. */
const MACHINE_PROBLEMS = [
  /operation not permitted/i,
  /permission denied/i,
  /address family not supported by protocol/i,
  /cannot assign requested address/i,
  /socket:/i,
  /invalid argument/i,
  /usage:/i,
]

/** An ICMP check's details before ping ran. */
export function blankIcmpDetails(request: IcmpCheck['request']): IcmpDetails {
  return {
    kind: 'ICMP',
    hostname: request.hostname,
    ipFamily: request.ipFamily,
    ipAddress: null,
    pingCount: request.pingCount,
    packetsSent: 0,
    packetsReceived: 0,
    packetLoss: null,
    latency: null,
    pings: [],
  }
}

/** One attempt of an ICMP check. */
export async function runIcmpAttempt(check: IcmpCheck, options: RunOptions): Promise<AttemptOutcome> {
  const request = check.request
  const details = blankIcmpDetails(request)
  const outcome = emptyOutcome(details)
  const pingPath = options.pingPath ?? 'ping'
  const interval = options.pingIntervalSeconds ?? DEFAULT_PING_INTERVAL_SECONDS
  // A reply is waited for up to maxResponseTime (at least a second: a slower reply fails the
  // latency threshold anyway, but still counts as received).
  const packetTimeoutMs = Math.max(MIN_PACKET_TIMEOUT_MS, check.maxResponseTime ?? DEFAULT_PACKET_TIMEOUT_MS)
  const expectedMs = request.pingCount * interval * 1000 + packetTimeoutMs + 2000
  const limitMs = options.timeoutMs !== undefined ? Math.min(options.timeoutMs, expectedMs) : expectedMs
  const target = await checkedAddress(check, options, outcome)
  if (target === null) return outcome
  const run = await runPing(pingPath, pingArguments(request, packetTimeoutMs, interval, target.address), limitMs, options.signal)

  if (run.spawnError) {
    outcome.runnerError = spawnProblem(run.spawnError, pingPath)
    return outcome
  }
  if (run.killedFor === 'abort') {
    outcome.aborted = true
    outcome.runnerError = 'run aborted while pinging'
  }

  const parsed = parsePingOutput(run.stdout)
  if (!parsed) {
    if (!outcome.aborted) recordNoOutput(check, run, limitMs, outcome)
    return outcome
  }

  Object.assign(details, parsed)
  if (run.killedFor === 'timeout') outcome.timedOut = true
  outcome.responseTime = parsed.latency ? parsed.latency.avg : null
  outcome.assertions = icmpAssertions(check, details, parsed)
  judgeReplies(check, parsed, outcome)
  if (outcome.timedOut && !outcome.aborted) {
    outcome.failures.push(`ping did not finish within ${limitMs} ms (${parsed.packetsSent} of ${request.pingCount} packets sent)`)
  }
  return outcome
}

/**
 * The private-target policy: with `deny`, the host is resolved and checked here, before ping is
 * spawned, and ping is given the checked address (it never resolves the name again). Null when
 * ping must not run (the reason is in the outcome); `address` undefined: ping resolves the name.
 */
async function checkedAddress(check: IcmpCheck, options: RunOptions, outcome: AttemptOutcome): Promise<{ address?: string } | null> {
  const request = check.request
  if (options.privateTargets !== 'deny') return {}
  try {
    const target = await resolveTarget(options, request.hostname, null, request.ipFamily === 'IPv6' ? 6 : 4)
    if (target.refused !== undefined) {
      outcome.runnerError = `request.hostname ${target.refused}`
      return null
    }
    return { address: target.address }
  } catch (error) {
    outcome.networkError = true
    outcome.failures.push(
      `ping ${request.hostname} (${request.ipFamily}) failed: host name not found (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    )
    return null
  }
}

/** Why ping could not be started, with the hint to install it. */
function spawnProblem(error: NonNullable<SpawnResult['spawnError']>, pingPath: string): string {
  const code = error.code
  return code === 'ENOENT'
    ? `ping is not installed on this machine (${pingPath} not found): ${PING_INSTALL_HINT}`
    : code === 'EACCES'
      ? `ping at ${pingPath} cannot be executed (permission denied): ${PING_INSTALL_HINT}`
      : `ping could not be started (${error.message}): ${PING_INSTALL_HINT}`
}

/** Ping printed no summary: it timed out, this machine cannot ping, or the target's side failed (unknown host, unreachable). */
function recordNoOutput(check: IcmpCheck, run: SpawnResult, limitMs: number, outcome: AttemptOutcome): void {
  const request = check.request
  const message = (run.stderr.trim().split('\n').pop() ?? '').replace(/^ping:\s*/, '')
  if (run.killedFor === 'timeout') {
    outcome.timedOut = true
    outcome.networkError = true
    outcome.failures.push(`no answer from ping for ${request.hostname} within ${limitMs} ms`)
  } else if (MACHINE_PROBLEMS.some((re) => re.test(run.stderr))) {
    outcome.runnerError = `this machine cannot send ${request.ipFamily} echo requests to ${request.hostname}: ${message || `ping exited with code ${run.code}`}`
  } else {
    // Unknown host, network unreachable, …: the target's side.
    outcome.networkError = true
    outcome.failures.push(`ping ${request.hostname} (${request.ipFamily}) failed: ${message || `ping exited with code ${run.code}`}`)
  }
}

/** The check's assertions: LATENCY on the parsed statistics, JSON_RESPONSE on the details. */
function icmpAssertions(check: IcmpCheck, details: IcmpDetails, parsed: PingOutput): AssertionResult[] {
  const jsonResponse = { ...details } as Record<string, unknown>
  delete jsonResponse.kind
  return check.request.assertions.map((a) => {
    if (a.source === 'LATENCY') {
      const value = parsed.latency ? parsed.latency[a.property as keyof LatencyStats] : null
      return evaluateAssertion(a, value ?? null, ' ms')
    }
    if (!a.property) return evaluateAssertion(a, jsonResponse)
    const found = readJsonPath(jsonResponse, a.property)
    return evaluateAssertion(a, found.found ? found.value : undefined)
  })
}

/** No reply at all fails the run; else packet loss and average latency against their thresholds. */
function judgeReplies(check: IcmpCheck, parsed: PingOutput, outcome: AttemptOutcome): void {
  const request = check.request
  if (parsed.packetsReceived === 0) {
    outcome.networkError = true
    outcome.failures.push(
      `no reply from ${request.hostname}${parsed.ipAddress ? ` (${parsed.ipAddress})` : ''}: ${parsed.packetsSent} packets sent, 100% packet loss`,
    )
    return
  }
  const loss = parsed.packetLoss
  if (loss !== null && check.maxPacketLossThreshold !== null && loss > check.maxPacketLossThreshold) {
    outcome.failures.push(`packet loss ${parsed.packetLoss}% is over maxPacketLossThreshold ${check.maxPacketLossThreshold}%`)
  } else if (loss !== null && check.degradedPacketLossThreshold !== null && loss > check.degradedPacketLossThreshold) {
    outcome.degraded.push(`packet loss ${parsed.packetLoss}% is over degradedPacketLossThreshold ${check.degradedPacketLossThreshold}%`)
  }
  const avg = parsed.latency?.avg ?? 0
  if (check.maxResponseTime !== null && avg > check.maxResponseTime) {
    outcome.failures.push(`average latency ${avg} ms is over maxResponseTime ${check.maxResponseTime} ms`)
  } else if (check.degradedResponseTime !== null && avg > check.degradedResponseTime) {
    outcome.degraded.push(`average latency ${avg} ms is over degradedResponseTime ${check.degradedResponseTime} ms`)
  }
}
