/**
 * Sub-minute checks (frequency 0, frequencyOffset 10/20/30 seconds: API and TCP checks) on the
 * real server's scheduler and runner, against a TCP and an HTTP server on 127.0.0.1. The test
 * drives the server's clock: it moves from one due time to the next and each step waits (with
 * a generous deadline) for the run due then. Every run starts on its own due time, the check's
 * phase + k × the offset, one after the other without a gap and without drift.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { phaseMs } from '../../../src/server/scheduler/due.js'
import { startHttpServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { caller, startTestServer, type Call } from '../helpers.js'

// on a multiple of 30 s: the due times of every offset fall on the steps
const T0 = Date.parse('2026-03-01T10:00:00Z')
let now = T0
let dir: string
let tcp: Server
let port: number
const sockets = new Set<Socket>()
let http: HttpServerHandle
let server: LocalServer
let call: Call

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-sub-minute-'))
  tcp = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    socket.on('data', () => socket.write('+PONG\r\n'))
  })
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve))
  port = (tcp.address() as AddressInfo).port
  http = await startHttpServer()
  http.route('/health', { status: 200, body: 'ok' })
  server = await startTestServer({ dbPath: join(dir, 'sub.db'), runner: true, privateTargets: 'allow', clock: () => now, schedulerOptions: { tickMs: 20 } })
  call = caller(server)
})
afterAll(async () => {
  await server?.close()
  await http?.close()
  for (const s of sockets) s.destroy()
  await new Promise((resolve) => tcp.close(resolve))
  rmSync(dir, { recursive: true, force: true })
})

async function startTimes(id: string): Promise<number[]> {
  const answer = await call('GET', `/v1/check-results/${id}?resultType=FINAL&limit=100`)
  expect(answer.status).toBe(200)
  return (answer.json as Array<{ startedAt: string; hasFailures: boolean }>).map((r) => Date.parse(r.startedAt)).sort((a, b) => a - b)
}

async function waitFor(what: string, done: () => Promise<boolean>, deadlineMs = 20_000): Promise<void> {
  const until = Date.now() + deadlineMs
  while (!(await done())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe('sub-minute checks', () => {
  it('a TCP check every 10 s and an API check every 20 s run on each of their due times, none skipped, none late', async () => {
    const tcpCheck = await call('POST', '/v1/checks/tcp', {
      name: 'every 10 s',
      frequency: 0,
      frequencyOffset: 10,
      doubleCheck: false,
      request: { hostname: '127.0.0.1', port, data: 'PING\r\n', assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: '+PONG' }] },
    })
    expect(tcpCheck.status, tcpCheck.text).toBe(201)
    const apiCheck = await call('POST', '/v1/checks/api', {
      name: 'every 20 s',
      frequency: 0,
      frequencyOffset: 20,
      doubleCheck: false,
      request: { method: 'GET', url: `${http.origin}/health` },
    })
    expect(apiCheck.status, apiCheck.text).toBe(201)
    const tcpId = tcpCheck.json.id as string
    const apiId = apiCheck.json.id as string

    // created at T0: each first runs the due time it was created in (its phase + k × P at or before T0)
    await waitFor('the first TCP run', async () => (await startTimes(tcpId)).length === 1)
    await waitFor('the first API run', async () => (await startTimes(apiId)).length === 1)
    // then two minutes of the server's clock, from one due time of either check to the next
    const dueTimes = (id: string, period: number) => {
      const phase = phaseMs({ id, frequency: 0, frequencyOffset: period / 1000 })
      return Array.from({ length: 120_000 / period + 1 }, (_, k) => T0 + phase + k * period).filter((t) => t > T0 && t <= T0 + 120_000)
    }
    const tcpDue = dueTimes(tcpId, 10_000)
    const apiDue = dueTimes(apiId, 20_000)
    for (const at of [...new Set([...tcpDue, ...apiDue])].sort((a, b) => a - b)) {
      now = at
      if (tcpDue.includes(at)) await waitFor(`the TCP run due at ${new Date(at).toISOString()}`, async () => (await startTimes(tcpId)).includes(at))
      if (apiDue.includes(at)) await waitFor(`the API run due at ${new Date(at).toISOString()}`, async () => (await startTimes(apiId)).includes(at))
    }
    // each run started on its due time, every one of them, once
    expect((await startTimes(tcpId)).slice(1)).toEqual(tcpDue)
    expect((await startTimes(apiId)).slice(1)).toEqual(apiDue)
    expect(tcpDue.length).toBeGreaterThanOrEqual(11)
    const status = await call('GET', `/v1/check-statuses/${tcpId}`)
    expect(status.json).toMatchObject({ hasFailures: false, hasErrors: false })
  })
})
