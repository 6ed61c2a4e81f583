import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { createServer, type Server, type Socket } from 'node:net'
import * as dnsPacket from 'dns-packet'
import { encodeHttpsRecord, HTTPS_TYPE, type HttpsRecordData } from '../../src/runner/svcb.js'

/**
 * A small authoritative DNS server on 127.0.0.1 for tests: UDP and TCP on the same port,
 * answering the records and response codes a test chose, per name and type, optionally
 * after a delay or not at all. Unknown names answer NXDOMAIN.
 */

export type TestRecord =
  | { type: 'A' | 'AAAA' | 'CNAME' | 'NS'; data: string; name?: string; ttl?: number }
  | { type: 'MX'; data: { preference: number; exchange: string }; name?: string; ttl?: number }
  | { type: 'TXT'; data: string | string[]; name?: string; ttl?: number }
  | {
      type: 'SOA'
      data: { mname: string; rname: string; serial: number; refresh: number; retry: number; expire: number; minimum: number }
      name?: string
      ttl?: number
    }
  | { type: 'HTTPS'; data: HttpsRecordData; name?: string; ttl?: number }

export interface TestAnswer {
  rcode?: 'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED'
  records?: TestRecord[]
  /** Milliseconds to wait before answering. */
  delayMs?: number
  /** Never answer. */
  drop?: boolean
  /** Over UDP, answer with the TC bit and no records (the client must ask again over TCP). */
  truncateUdp?: boolean
}

export interface DnsServerHandle {
  address: string
  port: number
  /** Answers `name` for `type` ('*' for every type). */
  set(name: string, type: string, answer: TestAnswer): void
  /** Every query received: name, type and protocol. */
  queries: Array<{ name: string; type: string; protocol: 'UDP' | 'TCP' }>
  close(): Promise<void>
}

const RCODES: Record<string, number> = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 }

function key(name: string, type: string): string {
  return `${name.toLowerCase().replace(/\.$/, '')}|${type}`
}

function toAnswer(record: TestRecord, question: string): dnsPacket.Answer {
  const name = record.name ?? question
  const ttl = record.ttl ?? 300
  if (record.type === 'HTTPS') {
    return { type: `UNKNOWN_${HTTPS_TYPE}`, name, ttl, class: 'IN', data: encodeHttpsRecord(record.data) } as unknown as dnsPacket.Answer
  }
  return { type: record.type, name, ttl, class: 'IN', data: record.data } as dnsPacket.Answer
}

export async function startDnsServer(): Promise<DnsServerHandle> {
  const table = new Map<string, TestAnswer>()
  const queries: DnsServerHandle['queries'] = []
  const timers = new Set<NodeJS.Timeout>()
  const tcpSockets = new Set<Socket>()

  function respond(message: Buffer, protocol: 'UDP' | 'TCP', send: (response: Buffer) => void): void {
    let query: dnsPacket.DecodedPacket
    try {
      query = dnsPacket.decode(message)
    } catch {
      return
    }
    const question = query.questions?.[0]
    if (!question) return
    const type = (question.type as string) === `UNKNOWN_${HTTPS_TYPE}` ? 'HTTPS' : question.type
    queries.push({ name: question.name, type, protocol })
    const answer = table.get(key(question.name, type)) ?? table.get(key(question.name, '*')) ?? { rcode: 'NXDOMAIN' as const }
    if (answer.drop) return
    const truncated = protocol === 'UDP' && answer.truncateUdp === true
    const flags =
      dnsPacket.AUTHORITATIVE_ANSWER |
      ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) |
      (truncated ? dnsPacket.TRUNCATED_RESPONSE : 0) |
      RCODES[answer.rcode ?? 'NOERROR']
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags,
      questions: query.questions,
      answers: truncated ? [] : (answer.records ?? []).map((r) => toAnswer(r, question.name)),
    })
    if (answer.delayMs) {
      const timer = setTimeout(() => {
        timers.delete(timer)
        send(response)
      }, answer.delayMs)
      timers.add(timer)
    } else {
      send(response)
    }
  }

  const tcp: Server = createServer((socket) => {
    tcpSockets.add(socket)
    socket.on('close', () => tcpSockets.delete(socket))
    socket.on('error', () => undefined)
    let buffered = Buffer.alloc(0)
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk])
      while (buffered.length >= 2) {
        const length = buffered.readUInt16BE(0)
        if (buffered.length < 2 + length) return
        const message = buffered.subarray(2, 2 + length)
        buffered = buffered.subarray(2 + length)
        respond(message, 'TCP', (response) => {
          if (socket.destroyed) return
          const framed = Buffer.alloc(2 + response.length)
          framed.writeUInt16BE(response.length, 0)
          response.copy(framed, 2)
          socket.write(framed)
        })
      }
    })
  })
  // UDP takes a free port; TCP listens on the same one (tried again on the rare clash).
  let udp: UdpSocket | null = null
  let port = 0
  for (let tries = 0; udp === null; tries += 1) {
    const socket = createSocket('udp4')
    socket.on('message', (message, remote) => {
      respond(message, 'UDP', (response) => socket.send(response, remote.port, remote.address, () => undefined))
    })
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject)
      socket.bind(0, '127.0.0.1', () => resolve())
    })
    const candidate = socket.address().port
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject)
        tcp.listen(candidate, '127.0.0.1', () => {
          tcp.off('error', reject)
          resolve()
        })
      })
      udp = socket
      port = candidate
    } catch (error) {
      await new Promise<void>((resolve) => socket.close(() => resolve()))
      if (tries >= 10) throw error
    }
  }
  const udpSocket: UdpSocket = udp

  return {
    address: '127.0.0.1',
    port,
    queries,
    set(name, type, answer) {
      table.set(key(name, type), answer)
    },
    async close() {
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      for (const socket of tcpSockets) socket.destroy()
      await Promise.all([new Promise<void>((resolve) => udpSocket.close(() => resolve())), new Promise<void>((resolve) => tcp.close(() => resolve()))])
    },
  }
}
