import { connect, isIP, type Socket } from 'node:net'
import type { TcpCheck } from '../schema/tcp-check.js'
import { evaluateAssertion } from './assertions.js'
import { resolveTarget } from './targets.js'
import { emptyOutcome, type AttemptOutcome, type RunOptions, type TcpDetails } from './types.js'

/**
 * TCP checks: resolve `hostname` (IPv4 or IPv6, through the private-target policy), connect to
 * the checked address and `port`, send `data` when set, and read the answer:
 * - the answer is read when `data` is sent or a RESPONSE_DATA assertion needs it (a banner);
 *   otherwise the run ends once connected;
 * - reading stops when the server closes the connection, when MAX_TCP_RESPONSE_BYTES have come,
 *   or when nothing more came for TCP_READ_QUIET_MS after the last bytes (a server that
 *   answers and keeps the connection open); that quiet wait is not counted in any timing;
 * - no byte at all within the time limit (maxResponseTime, else DEFAULT_TCP_TIMEOUT_MS) is a
 *   failure, timed out, unless the server closed the connection without a word (then the
 *   answer is empty and the assertions say whether that is wrong).
 * Timings (ms): `dns` the lookup (0 for an IP address), `connect` the TCP handshake, `data`
 * from the connection (or the data sent) to the answer's last byte, `total` their sum: the run's
 * response time.
 */

/** Bytes of the answer kept and asserted on; more is not read. */
export const MAX_TCP_RESPONSE_BYTES = 64 * 1024
/** After the last bytes of an answer, this long without more ends the read. */
export const TCP_READ_QUIET_MS = 200
/** Time limit of a run when the check sets no maxResponseTime. */
export const DEFAULT_TCP_TIMEOUT_MS = 30_000

const round = (n: number) => Math.round(n * 1000) / 1000

/** What a TCP run records before anything happened. */
export function tcpDetails(check: TcpCheck): TcpDetails {
  return {
    kind: 'TCP',
    hostname: check.request.hostname,
    port: check.request.port,
    ipFamily: check.request.ipFamily,
    remoteAddress: null,
    dataSent: check.request.data !== null,
    response: '',
    responseSize: 0,
    responseTruncated: false,
    timings: null,
  }
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
  EPIPE: 'connection closed by the server while sending',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed (temporary)',
  ENODATA: 'host name has no address of this family',
}

function describe(error: NodeJS.ErrnoException): string {
  const known = error.code ? NETWORK_CODES[error.code] : undefined
  return known ? `${known} (${error.code})` : error.message
}

interface Exchange {
  connectMs: number | null
  dataMs: number | null
  remoteAddress: string | null
  chunks: Buffer[]
  size: number
  truncated: boolean
  error: NodeJS.ErrnoException | null
  timedOut: boolean
  aborted: boolean
  /** the server closed the connection (end or close) before the read ended on its own */
  closedByPeer: boolean
}

/** Connects, sends, reads: the socket part of a run, against a checked address. */
function exchange(address: string, port: number, data: string | null, read: boolean, limitMs: number, signal?: AbortSignal): Promise<Exchange> {
  return new Promise((resolve) => {
    const result: Exchange = {
      connectMs: null,
      dataMs: null,
      remoteAddress: null,
      chunks: [],
      size: 0,
      truncated: false,
      error: null,
      timedOut: false,
      aborted: false,
      closedByPeer: false,
    }
    const started = performance.now()
    let connectedAt = 0
    let lastByteAt = 0
    let done = false
    let quiet: NodeJS.Timeout | undefined
    let socket: Socket
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(limit)
      clearTimeout(quiet)
      signal?.removeEventListener('abort', onAbort)
      if (result.connectMs !== null && (read || data !== null)) {
        // to the last byte read; an empty answer: to the moment the read ended
        result.dataMs = round((lastByteAt || performance.now()) - connectedAt)
      }
      socket.destroy()
      resolve(result)
    }
    const limit = setTimeout(() => {
      result.timedOut = true
      finish()
    }, limitMs)
    const onAbort = () => {
      result.aborted = true
      finish()
    }
    socket = connect({ host: address, port, family: isIP(address) })
    if (signal?.aborted) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
    socket.on('connect', () => {
      connectedAt = performance.now()
      result.connectMs = round(connectedAt - started)
      result.remoteAddress = socket.remoteAddress ?? null
      if (data !== null) socket.write(data)
      if (!read) finish()
    })
    socket.on('data', (chunk: Buffer) => {
      if (done) return
      lastByteAt = performance.now()
      const room = MAX_TCP_RESPONSE_BYTES - result.size
      if (chunk.length >= room) {
        result.chunks.push(chunk.subarray(0, room))
        result.size += room
        // the bound reached: reading stops there, whatever may follow
        result.truncated = true
        finish()
        return
      }
      result.chunks.push(chunk)
      result.size += chunk.length
      clearTimeout(quiet)
      quiet = setTimeout(finish, TCP_READ_QUIET_MS)
    })
    socket.on('end', () => {
      result.closedByPeer = true
      finish()
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // a reset after an answer came is the server closing rudely: the answer stands
      if (result.connectMs !== null && error.code === 'ECONNRESET') result.closedByPeer = true
      else result.error = error
      finish()
    })
    socket.on('close', () => {
      if (!done) result.closedByPeer = true
      finish()
    })
  })
}

/**
 * The text an assertion on RESPONSE_DATA sees, narrowed by `regex` to its first capture group
 * (or the whole match); undefined when the regex does not match.
 */
function narrowed(text: string, regex: string | null): string | undefined {
  if (!regex) return text
  const match = new RegExp(regex).exec(text)
  return match ? (match[1] ?? match[0]) : undefined
}

/** One attempt of a TCP check. */
export async function runTcpAttempt(check: TcpCheck, options: RunOptions): Promise<AttemptOutcome> {
  const request = check.request
  const details = tcpDetails(check)
  const outcome = emptyOutcome(details)
  const target = `${request.hostname.includes(':') && !request.hostname.startsWith('[') ? `[${request.hostname}]` : request.hostname}:${request.port}`
  const limitMs = Math.min(check.maxResponseTime ?? DEFAULT_TCP_TIMEOUT_MS, options.timeoutMs ?? Infinity)
  const started = performance.now()

  // the lookup, checked against the private-target policy: the socket connects to the checked address only
  let address: string
  let dnsMs = 0
  try {
    const resolved = await resolveTarget(options, request.hostname, request.port, request.ipFamily === 'IPv6' ? 6 : 4)
    dnsMs = isIP(request.hostname.replace(/^\[(.*)\]$/, '$1')) ? 0 : round(performance.now() - started)
    if (resolved.refused !== undefined) {
      outcome.runnerError = `request.hostname ${resolved.refused}`
      return outcome
    }
    address = resolved.address
  } catch (error) {
    outcome.networkError = true
    outcome.failures.push(`connecting to ${target} (${request.ipFamily}) failed: ${describe(error as NodeJS.ErrnoException)}`)
    return outcome
  }
  if (request.ipFamily === 'IPv6' ? isIP(address) !== 6 : isIP(address) !== 4) {
    outcome.networkError = true
    outcome.failures.push(`connecting to ${target} failed: ${request.hostname} is not an ${request.ipFamily} address`)
    return outcome
  }

  const read = request.data !== null || request.assertions.some((a) => a.source === 'RESPONSE_DATA')
  const run = await exchange(address, request.port, request.data, read, Math.max(1, limitMs - dnsMs), options.signal)
  details.remoteAddress = run.remoteAddress
  const response = Buffer.concat(run.chunks)
  details.response = response.toString('utf8')
  details.responseSize = run.size
  details.responseTruncated = run.truncated

  if (run.aborted) {
    outcome.aborted = true
    outcome.runnerError = 'run aborted'
    return outcome
  }
  if (run.connectMs === null) {
    outcome.networkError = true
    if (run.timedOut) {
      outcome.timedOut = true
      outcome.failures.push(`connecting to ${target} timed out after ${Math.round(limitMs)} ms`)
    } else {
      outcome.failures.push(`connecting to ${target} failed: ${run.error ? describe(run.error) : 'the connection closed'}`)
    }
    return outcome
  }
  const total = round(dnsMs + run.connectMs + (run.dataMs ?? 0))
  details.timings = { dns: dnsMs, connect: run.connectMs, data: run.dataMs ?? 0, total }
  outcome.responseTime = total

  if (run.error) {
    outcome.networkError = true
    outcome.failures.push(`the connection to ${target} failed: ${describe(run.error)}`)
  } else if (run.timedOut && run.size === 0) {
    outcome.networkError = true
    outcome.timedOut = true
    outcome.failures.push(`no answer from ${target} within ${Math.round(limitMs)} ms`)
  } else if (run.timedOut) {
    outcome.timedOut = true
    outcome.failures.push(`the answer from ${target} did not end within ${Math.round(limitMs)} ms (${run.size} bytes read)`)
  }

  outcome.assertions = request.assertions.map((a) =>
    a.source === 'RESPONSE_TIME' ? evaluateAssertion(a, total, ' ms') : evaluateAssertion(a, narrowed(details.response, a.regex)),
  )

  if (!run.timedOut) {
    if (check.maxResponseTime !== null && total > check.maxResponseTime) {
      outcome.failures.push(`response time ${total} ms is over maxResponseTime ${check.maxResponseTime} ms`)
    } else if (check.degradedResponseTime !== null && total > check.degradedResponseTime) {
      outcome.degraded.push(`response time ${total} ms is over degradedResponseTime ${check.degradedResponseTime} ms`)
    }
  }
  return outcome
}
