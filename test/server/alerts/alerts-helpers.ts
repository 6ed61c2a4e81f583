import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect } from 'vitest'
import type { AlertChannelKind } from '../../../src/schema/index.js'
import type { LocalServer, LocalServerOptions } from '../../../src/server/index.js'
import type { DnsServerHandle } from '../../helpers/dns-server.js'
import { caller, startTestServer, type Call } from '../helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

/** A request the receiver got, when it got it (ms). */
export interface Received {
  method: string
  /** path with the query string */
  url: string
  headers: IncomingMessage['headers']
  body: string
  json: any
  at: number
}

/** How a path answers: a status, or a promise the answer waits for (`hold`), in turn; the last one repeats. */
export type Answer = number | { status: number; headers?: Record<string, string>; hold?: Promise<void> }

/**
 * A real HTTP server standing for webhook and Slack receivers: counts what each path gets and
 * answers as told (500 then 200, hold until the test releases it, never).
 */
export interface Receiver {
  url: string
  received(path: string): Received[]
  answer(path: string, ...answers: Answer[]): void
  /** waits until `path` got `count` requests (polls; fails after `timeoutMs`) */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

export async function startReceiver(): Promise<Receiver> {
  const got = new Map<string, Received[]>()
  const answers = new Map<string, Answer[]>()
  const open = new Set<ServerResponse>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = req.url ?? '/'
      const path = url.split('?')[0]
      const body = Buffer.concat(chunks).toString('utf8')
      let json: unknown
      try {
        json = body ? JSON.parse(body) : undefined
      } catch {
        json = undefined
      }
      const list = got.get(path) ?? []
      list.push({ method: req.method ?? '', url, headers: req.headers, body, json, at: Date.now() })
      got.set(path, list)
      const queue = answers.get(path) ?? [200]
      const answer = queue.length > 1 ? queue.shift()! : queue[0]
      const { status, headers, hold } = typeof answer === 'number' ? { status: answer, headers: undefined, hold: undefined } : answer
      open.add(res)
      const respond = () => {
        open.delete(res)
        if (res.destroyed) return
        res.writeHead(status, { 'content-type': 'text/plain', ...headers })
        res.end(status >= 400 ? `receiver says ${status}` : 'ok')
      }
      if (hold) void hold.then(respond)
      else respond()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}`,
    received: (path) => got.get(path) ?? [],
    answer: (path, ...list) => void answers.set(path, list),
    async waitFor(path, count, timeoutMs = 20_000) {
      await waitFor(() => (got.get(path)?.length ?? 0) >= count, { timeoutMs, intervalMs: 25, what: `${count} requests to ${path}` })
      return got.get(path)!
    },
    async close() {
      for (const res of open) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  return receiver
}

/** A promise and the function that settles it. */
export function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void
  const wait = new Promise<void>((resolve) => (open = resolve))
  return { wait, open }
}

/** Polls `read` until `accept` holds (or fails after `timeoutMs` with the last value). */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  let value!: T
  await waitFor(async () => accept((value = await read())), { timeoutMs, intervalMs: 50, what: 'the answer accepted' })
  return value
}

/**
 * The real server with its own runner (checks run for real against `dns`), alert deliveries on
 * with these settings, and helpers: a DNS check whose runs fail or pass as the DNS server says,
 * run once by a check session.
 */
export interface AlertsBench {
  server: LocalServer
  call: Call
  createCheck(query: string, extra?: Record<string, unknown>): Promise<string>
  /** runs the check once (a session) and answers the session's completion */
  runOnce(checkId: string): Promise<{ status: string; results: Array<{ checkResultId: string }> }>
  deliveries(checkId: string): Promise<any[]>
  close(): Promise<void>
}

export async function startAlertsBench(dns: DnsServerHandle, options: LocalServerOptions = {}): Promise<AlertsBench> {
  // its DNS server and receivers are on 127.0.0.1: a server of two accounts would refuse them by default
  const server = await startTestServer({ runner: true, schedulerOptions: { tickMs: 50 }, privateTargets: 'allow', ...options })
  const call = caller(server)
  return {
    server,
    call,
    async createCheck(query, extra = {}) {
      const answer = await call('POST', '/v1/checks/dns', {
        name: `check ${query}`,
        activated: false,
        doubleCheck: false,
        maxResponseTime: 2000,
        degradedResponseTime: 1500,
        ...extra,
        request: { query, recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
      })
      if (answer.status !== 201) throw new Error(`POST check: ${answer.status} ${answer.text}`)
      return answer.json.id
    },
    async runOnce(checkId) {
      const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } })
      expect(trigger.status).toBe(201)
      const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
      expect(done.status).toBe(200)
      return done.json
    },
    async deliveries(checkId) {
      const answer = await call('GET', `/v1/alert-deliveries?checkId=${checkId}&limit=100`)
      expect(answer.status).toBe(200)
      return answer.json
    },
    close: () => server.close(),
  }
}

/**
 * A configuration of every account-level channel type, each secret value holding `SECRET`
 * (and nothing else holding it): what a test of secrets posts, reads back and delivers. Typed by
 * the types, so a new channel type does not compile until it has its sample here.
 */
export const CHANNEL_SAMPLES = {
  EMAIL: { address: 'oncall@example.com' },
  SLACK: { url: 'https://hooks.slack.example/services/T0/B0/SECRET-slack-token' },
  WEBHOOK: {
    name: 'ops hook',
    url: 'https://hooks.example.com/alerts',
    headers: [
      { key: 'Authorization', value: 'Bearer SECRET-webhook-header', secret: true },
      { key: 'X-Team', value: 'ops', secret: false },
    ],
    queryParameters: [{ key: 'token', value: 'SECRET-webhook-query', secret: true }],
  },
  SMS: { name: 'pager', number: '+15550100' },
  PAGERDUTY: { serviceKey: 'SECRET-pagerduty-routing-key', serviceName: 'shop' },
  OPSGENIE: { name: 'ops', apiKey: 'SECRET-opsgenie-api-key', region: 'EU', priority: 'P2' },
  MSTEAMS: { name: 'ops', url: 'https://teams.example/webhookb2/SECRET-teams-token' },
} satisfies Record<AlertChannelKind, Record<string, unknown>>
