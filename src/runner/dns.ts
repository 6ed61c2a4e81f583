import { createSocket } from 'node:dgram'
import { readFileSync } from 'node:fs'
import { connect, isIP } from 'node:net'
import { lookup } from 'node:dns/promises'
import { getServers } from 'node:dns'
import { randomInt } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import * as dnsPacket from 'dns-packet'
import type { DnsCheck } from '../schema/check.js'
import { evaluateAssertion, readJsonPath } from './assertions.js'
import { decodeHttpsRecord, HTTPS_TYPE } from './svcb.js'
import { resolveTarget } from './targets.js'
import { emptyOutcome, type AssertionResult, type AttemptOutcome, type DnsAnswerRecord, type DnsDetails, type DnsJsonAnswer, type RunOptions } from './types.js'

/** Runner-side limit of one DNS exchange when the check sets no maxResponseTime. */
export const DEFAULT_DNS_TIMEOUT_MS = 5000

/** Type numbers of the record types API.md names (HTTPS is not known to dns-packet by name). */
const TYPE_NUMBERS: Record<string, number> = { A: 1, NS: 2, CNAME: 5, SOA: 6, MX: 15, TXT: 16, AAAA: 28, HTTPS: HTTPS_TYPE }
const TYPE_NAMES: Record<number, string> = Object.fromEntries(Object.entries(TYPE_NUMBERS).map(([k, v]) => [v, k]))

const RCODE_NUMBERS: Record<string, number> = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  YXDOMAIN: 6,
  YXRRSET: 7,
  NXRRSET: 8,
  NOTAUTH: 9,
  NOTZONE: 10,
}

/** Name servers of a resolv.conf text, in order. */
export function parseResolvConf(text: string): string[] {
  const servers: string[] = []
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim()
    const match = /^nameserver\s+(\S+)/.exec(line)
    if (match) servers.push(match[1].replace(/%.*$/, ''))
  }
  return servers
}

/** The system's resolvers: /etc/resolv.conf, else what node was configured with. */
export function systemNameServers(): string[] {
  try {
    const servers = parseResolvConf(readFileSync('/etc/resolv.conf', 'utf8'))
    if (servers.length > 0) return servers
  } catch {
    // no resolv.conf (not Linux): fall back to node's view
  }
  return getServers().map((s) => {
    const bracketed = /^\[(.+)\](?::\d+)?$/.exec(s)
    if (bracketed) return bracketed[1]
    return isIP(s) ? s : s.replace(/:\d+$/, '')
  })
}

/** `host`, `host:port`, `[v6]:port` or a bare IPv6 address. */
export function splitServer(nameServer: string): { host: string; port: number | null } {
  const bracketed = /^\[(.+)\](?::(\d+))?$/.exec(nameServer)
  if (bracketed) return { host: bracketed[1], port: bracketed[2] ? Number(bracketed[2]) : null }
  if (isIP(nameServer) === 6) return { host: nameServer, port: null }
  const hostPort = /^(.+):(\d+)$/.exec(nameServer)
  if (hostPort) return { host: hostPort[1], port: Number(hostPort[2]) }
  return { host: nameServer, port: null }
}

export class DnsExchangeError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'network' | 'aborted',
  ) {
    super(message)
  }
}

interface ExchangeTarget {
  address: string
  port: number
  protocol: 'UDP' | 'TCP'
  timeoutMs: number
  signal?: AbortSignal
}

/**
 * Sends one query and waits for its answer. Resolves with the raw response and the time
 * between sending the first byte and receiving the whole answer (ms, monotonic clock).
 */
export function exchange(query: Buffer, id: number, target: ExchangeTarget): Promise<{ response: Buffer; responseTime: number }> {
  return new Promise((resolve, reject) => {
    let settled = false
    let started = 0
    const cleanups: Array<() => void> = []
    const finish = (error: Error | null, response?: Buffer) => {
      if (settled) return
      settled = true
      const responseTime = performance.now() - started
      for (const c of cleanups) c()
      if (error) reject(error)
      else resolve({ response: response as Buffer, responseTime })
    }
    const timer = setTimeout(
      () => {
        finish(new DnsExchangeError(`no answer from ${target.address} port ${target.port} over ${target.protocol} within ${target.timeoutMs} ms`, 'timeout'))
      },
      Math.max(0, target.timeoutMs),
    )
    cleanups.push(() => clearTimeout(timer))
    if (target.signal) {
      const onAbort = () => finish(new DnsExchangeError('run aborted', 'aborted'))
      if (target.signal.aborted) return onAbort()
      target.signal.addEventListener('abort', onAbort, { once: true })
      cleanups.push(() => target.signal?.removeEventListener('abort', onAbort))
    }
    const networkError = (error: NodeJS.ErrnoException) => {
      const what = error.code === 'ECONNREFUSED' ? 'connection refused' : error.code === 'ECONNRESET' ? 'connection reset' : error.message
      finish(new DnsExchangeError(`${target.protocol} query to ${target.address} port ${target.port} failed: ${what}`, 'network'))
    }

    if (target.protocol === 'UDP') {
      const socket = createSocket(isIP(target.address) === 6 ? 'udp6' : 'udp4')
      cleanups.push(() => {
        try {
          socket.close()
        } catch {
          /* already closed */
        }
      })
      socket.on('error', networkError)
      socket.on('message', (message) => {
        if (message.length >= 2 && message.readUInt16BE(0) === id) finish(null, message)
      })
      socket.connect(target.port, target.address, () => {
        started = performance.now()
        socket.send(query, (error) => {
          if (error) networkError(error)
        })
      })
      return
    }

    const socket = connect({ host: target.address, port: target.port })
    cleanups.push(() => socket.destroy())
    started = performance.now()
    let buffered = Buffer.alloc(0)
    socket.on('error', networkError)
    socket.on('connect', () => {
      const framed = Buffer.alloc(2 + query.length)
      framed.writeUInt16BE(query.length, 0)
      query.copy(framed, 2)
      socket.write(framed)
    })
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk])
      while (buffered.length >= 2) {
        const length = buffered.readUInt16BE(0)
        if (buffered.length < 2 + length) return
        const message = buffered.subarray(2, 2 + length)
        buffered = buffered.subarray(2 + length)
        if (message.length >= 2 && message.readUInt16BE(0) === id) return finish(null, message)
      }
    })
    socket.on('end', () =>
      finish(new DnsExchangeError(`TCP query to ${target.address} port ${target.port} failed: the server closed the connection without an answer`, 'network')),
    )
  })
}

function absolute(name: string): string {
  if (name === '' || name === '.') return '.'
  return name.endsWith('.') ? name : `${name}.`
}

function quoteTxt(part: Buffer | string): string {
  const text = Buffer.isBuffer(part) ? part.toString('utf8') : part
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`
}

/** Presentation form of one record's data. */
export function recordData(answer: dnsPacket.Answer): string {
  const a = answer as { type: string; data?: unknown }
  switch (a.type) {
    case 'A':
    case 'AAAA':
      return String(a.data)
    case 'CNAME':
    case 'NS':
    case 'PTR':
    case 'DNAME':
      return absolute(String(a.data))
    case 'MX': {
      const d = a.data as dnsPacket.MxData
      return `${d.preference ?? 0} ${absolute(d.exchange)}`
    }
    case 'TXT': {
      const d = a.data as dnsPacket.TxtData
      const parts = Array.isArray(d) ? d : [d]
      return parts.map(quoteTxt).join(' ')
    }
    case 'SOA': {
      const d = a.data as dnsPacket.SoaData
      const rname = d.rname.includes('@') ? d.rname.replace('.', '\\.').replace('@', '.') : d.rname
      return `${absolute(d.mname)} ${absolute(rname)} ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`
    }
    case `UNKNOWN_${HTTPS_TYPE}`:
      try {
        return decodeHttpsRecord(a.data as Buffer)
      } catch {
        return `\\# ${(a.data as Buffer).length} ${(a.data as Buffer).toString('hex')}`
      }
    default:
      if (Buffer.isBuffer(a.data)) return `\\# ${a.data.length} ${a.data.toString('hex')}`
      return typeof a.data === 'string' ? a.data : JSON.stringify(a.data)
  }
}

function typeName(type: string): string {
  return type === `UNKNOWN_${HTTPS_TYPE}` ? 'HTTPS' : type
}

function typeNumber(type: string): number {
  if (TYPE_NUMBERS[type] !== undefined) return TYPE_NUMBERS[type]
  const unknown = /^UNKNOWN_(\d+)$/.exec(type)
  if (unknown) return Number(unknown[1])
  return 0
}

function toRecord(answer: dnsPacket.Answer): DnsAnswerRecord {
  const a = answer as { name: string; type: string; ttl?: number }
  return { name: absolute(a.name), type: typeName(a.type), ttl: a.ttl ?? 0, data: recordData(answer) }
}

/** What a decoded response gives the assertions. */
export function describeResponse(packet: dnsPacket.DecodedPacket): {
  rcode: string
  answers: DnsAnswerRecord[]
  textAnswer: string
  jsonAnswer: DnsJsonAnswer
} {
  const rcode = (packet as { rcode?: string }).rcode ?? 'NOERROR'
  const answers = (packet.answers ?? []).filter((a) => a.type !== 'OPT').map(toRecord)
  const authorities = (packet.authorities ?? []).filter((a) => a.type !== 'OPT').map(toRecord)
  const textAnswer = answers.map((r) => `${r.name}\t${r.ttl}\tIN\t${r.type}\t${r.data}`).join('\n')
  const jsonRecord = (r: DnsAnswerRecord) => ({ name: r.name, type: TYPE_NUMBERS[r.type] ?? typeNumber(r.type), TTL: r.ttl, data: r.data })
  const jsonAnswer: DnsJsonAnswer = {
    Status: RCODE_NUMBERS[rcode] ?? Number(/^RCODE_(\d+)$/.exec(rcode)?.[1] ?? 0),
    TC: packet.flag_tc,
    RD: packet.flag_rd,
    RA: packet.flag_ra,
    AD: packet.flag_ad,
    CD: packet.flag_cd,
    Question: (packet.questions ?? []).map((q) => ({ name: absolute(q.name), type: typeNumber(q.type) })),
    Answer: answers.map(jsonRecord),
    Authority: authorities.map(jsonRecord),
  }
  return { rcode, answers, textAnswer, jsonAnswer }
}

export function encodeQuery(query: string, recordType: string, id: number): Buffer {
  const type = TYPE_NAMES[TYPE_NUMBERS[recordType]] === 'HTTPS' ? `UNKNOWN_${HTTPS_TYPE}` : recordType
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: type as dnsPacket.RecordType, class: 'IN', name: query.replace(/\.$/, '') }],
  })
}

async function resolveAddress(host: string): Promise<string> {
  if (isIP(host)) return host
  const found = await lookup(host)
  return found.address
}

type DnsRequest = DnsCheck['request']

export interface DnsQueryResult {
  rcode: string
  answers: DnsAnswerRecord[]
  textAnswer: string
  jsonAnswer: DnsJsonAnswer
  responseTime: number
  truncated: boolean
}

/** One query over the request's protocol; a truncated UDP answer is asked again over TCP. */
export async function queryDns(
  request: Pick<DnsRequest, 'query' | 'recordType' | 'protocol'>,
  server: { address: string; port: number },
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<DnsQueryResult> {
  const id = randomInt(0, 65536)
  const packet = encodeQuery(request.query, request.recordType, id)
  const first = await exchange(packet, id, { ...server, protocol: request.protocol, timeoutMs: options.timeoutMs, signal: options.signal })
  let decoded = dnsPacket.decode(first.response)
  let responseTime = first.responseTime
  if (request.protocol === 'UDP' && decoded.flag_tc) {
    const left = Math.max(0, options.timeoutMs - responseTime)
    const again = await exchange(packet, id, { ...server, protocol: 'TCP', timeoutMs: left, signal: options.signal })
    decoded = dnsPacket.decode(again.response)
    responseTime += again.responseTime
  }
  return { ...describeResponse(decoded), responseTime, truncated: decoded.flag_tc }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100
}

/** One attempt of a DNS check: the query, the response code, the assertions, the thresholds. */
export async function runDnsAttempt(check: DnsCheck, options: RunOptions): Promise<AttemptOutcome> {
  const request = check.request
  const configured = request.nameServer ? splitServer(request.nameServer) : null
  const fallback = configured ? null : ((options.systemNameServers ?? systemNameServers)()[0] ?? null)
  const host = configured?.host ?? fallback
  const port = request.port ?? configured?.port ?? 53
  const details: DnsDetails = {
    kind: 'DNS',
    query: request.query,
    recordType: request.recordType,
    nameServer: host,
    port,
    protocol: request.protocol,
    rcode: null,
    answers: [],
    textAnswer: '',
    jsonAnswer: null,
  }
  const outcome = emptyOutcome(details)
  if (!host) {
    outcome.runnerError = 'no name server: the check sets no request.nameServer and this machine has no resolver configured (/etc/resolv.conf)'
    return outcome
  }

  const limits = [check.maxResponseTime ?? DEFAULT_DNS_TIMEOUT_MS]
  if (options.timeoutMs !== undefined) limits.push(options.timeoutMs)
  const timeoutMs = Math.min(...limits)

  let address: string
  try {
    // the name server a check names falls under the private-target policy; the system's own
    // resolver (no nameServer) is the server's, not the check's, and is always used
    if (configured && options.privateTargets === 'deny') {
      const target = await resolveTarget(options, host, port)
      if (target.refused !== undefined) {
        outcome.runnerError = `request.nameServer ${target.refused}`
        return outcome
      }
      address = target.address
    } else address = await resolveAddress(host)
  } catch (error) {
    outcome.networkError = true
    outcome.failures.push(`name server ${host} could not be resolved: ${(error as Error).message}`)
    return outcome
  }

  let result: DnsQueryResult
  try {
    result = await queryDns(request, { address, port }, { timeoutMs, signal: options.signal })
  } catch (error) {
    if (error instanceof DnsExchangeError) {
      if (error.kind === 'aborted') {
        outcome.aborted = true
        outcome.runnerError = 'run aborted before the name server answered'
      } else {
        outcome.networkError = true
        outcome.timedOut = error.kind === 'timeout'
        outcome.failures.push(error.message)
      }
      return outcome
    }
    outcome.runnerError = `DNS query failed: ${(error as Error).message}`
    return outcome
  }

  outcome.responseTime = round(result.responseTime)
  details.rcode = result.rcode
  details.answers = result.answers
  details.textAnswer = result.textAnswer
  details.jsonAnswer = result.jsonAnswer

  const assertions: AssertionResult[] = request.assertions.map((a) => {
    switch (a.source) {
      case 'RESPONSE_CODE':
        return evaluateAssertion(a, result.rcode)
      case 'RESPONSE_TIME':
        return evaluateAssertion(a, outcome.responseTime, ' ms')
      case 'TEXT_ANSWER':
        return evaluateAssertion(a, result.textAnswer)
      case 'JSON_ANSWER': {
        if (!a.property) return evaluateAssertion(a, result.jsonAnswer)
        const found = readJsonPath(result.jsonAnswer, a.property)
        return evaluateAssertion(a, found.found ? found.value : undefined)
      }
    }
  })
  outcome.assertions = assertions

  // Without a RESPONSE_CODE assertion, anything but NOERROR fails the run.
  if (!request.assertions.some((a) => a.source === 'RESPONSE_CODE') && result.rcode !== 'NOERROR') {
    outcome.failures.push(`response code ${result.rcode} (expected NOERROR) from ${host} port ${port}`)
  }
  if (check.maxResponseTime !== null && outcome.responseTime > check.maxResponseTime) {
    outcome.failures.push(`response time ${outcome.responseTime} ms is over maxResponseTime ${check.maxResponseTime} ms`)
  } else if (check.degradedResponseTime !== null && outcome.responseTime > check.degradedResponseTime) {
    outcome.degraded.push(`response time ${outcome.responseTime} ms is over degradedResponseTime ${check.degradedResponseTime} ms`)
  }
  return outcome
}
