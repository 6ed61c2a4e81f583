/**
 * TCP checks on the real server: /v1/checks/tcp with the checks' validation, accounts kept
 * apart, a triggered session run by the server's runner against a TCP server the test starts
 * on 127.0.0.1, and what the run feeds: the result, the status, the analytics at
 * /v1/analytics/tcp-checks/{id}, the metrics listing and the dashboard.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { KEY_A, KEY_B, caller, expect400, startTestServer, type Call } from '../helpers.js'

let dir: string
let tcp: Server
let port: number
const sockets = new Set<Socket>()
const received: string[] = []
let server: LocalServer
let call: Call
let callB: Call

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-tcp-checks-'))
  // a line server: answers `+<line>` and keeps the connection open
  tcp = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    socket.on('data', (chunk) => {
      received.push(chunk.toString())
      socket.write(`+${chunk.toString().trim()}\r\n`)
    })
  })
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve))
  port = (tcp.address() as AddressInfo).port
  server = await startTestServer({ dbPath: join(dir, 'tcp.db'), runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
  call = caller(server)
  callB = caller(server, KEY_B)
})
afterAll(async () => {
  await server?.close()
  for (const s of sockets) s.destroy()
  await new Promise((resolve) => tcp.close(resolve))
  rmSync(dir, { recursive: true, force: true })
})

const tcpCheck = (extra: Record<string, unknown> = {}) => ({
  name: 'Line server',
  activated: false,
  request: {
    hostname: '127.0.0.1',
    port,
    data: 'PING\r\n',
    assertions: [
      { source: 'RESPONSE_DATA', comparison: 'EQUALS', target: '+PING\r\n' },
      { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '5000' },
    ],
  },
  ...extra,
})

async function triggerAndWait(id: string) {
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
  expect(trigger.status, trigger.text).toBe(201)
  const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
  expect(done.status, done.text).toBe(200)
  return done
}

describe('TCP checks on the server', () => {
  it('POST creates (201) with the reference defaults; GET and the list filtered by checkType TCP answer it', async () => {
    const created = await call('POST', '/v1/checks/tcp', tcpCheck({ frequency: 0, frequencyOffset: 10 }))
    expect(created.status, created.text).toBe(201)
    expect(created.json).toMatchObject({
      checkType: 'TCP',
      frequency: 0,
      frequencyOffset: 10,
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
      request: { hostname: '127.0.0.1', port, data: 'PING\r\n', ipFamily: 'IPv4' },
    })
    expect(created.json.request.assertions[0]).toEqual({ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: '+PING\r\n', property: '', regex: '' })
    const one = await call('GET', `/v1/checks/${created.json.id}`)
    expect(one.json).toEqual(created.json)
    const list = await call('GET', '/v1/checks?checkType=TCP')
    expect(list.json.map((c: { id: string }) => c.id)).toContain(created.json.id)
    expect(list.json.every((c: { checkType: string }) => c.checkType === 'TCP')).toBe(true)
  })

  it("PUT replaces (200); another type's id or another account's check is 404", async () => {
    const created = await call('POST', '/v1/checks/tcp', tcpCheck({ name: 'To replace' }))
    const replaced = await call('PUT', `/v1/checks/tcp/${created.json.id}`, tcpCheck({ name: 'Replaced', maxResponseTime: 1000 }))
    expect(replaced.status).toBe(200)
    expect(replaced.json).toMatchObject({ id: created.json.id, name: 'Replaced', maxResponseTime: 1000, checkType: 'TCP' })
    const dns = await call('POST', '/v1/checks/dns', { name: 'A DNS check', request: { query: 'example.com' } })
    expect((await call('PUT', `/v1/checks/tcp/${dns.json.id}`, tcpCheck())).status).toBe(404)
    expect((await call('PUT', `/v1/checks/dns/${created.json.id}`, { name: 'x', request: { query: 'example.com' } })).status).toBe(404)
    // account B sees account A's check exactly as a missing one
    const missing = await callB('GET', '/v1/checks/00000000-0000-4000-8000-000000000000')
    const other = await callB('GET', `/v1/checks/${created.json.id}`)
    expect(other.status).toBe(404)
    expect(other.json).toEqual(missing.json)
    expect((await callB('PUT', `/v1/checks/tcp/${created.json.id}`, tcpCheck())).status).toBe(404)
    expect((await callB('GET', `/v1/analytics/tcp-checks/${created.json.id}?metrics=total`)).status).toBe(404)
  })

  it('invalid bodies are 400s naming the field', async () => {
    expect(expect400(await call('POST', '/v1/checks/tcp', tcpCheck({ request: { hostname: 'db.example.com' } })), 'payload')).toEqual(['request.port'])
    expect(expect400(await call('POST', '/v1/checks/tcp', tcpCheck({ request: { hostname: 'http://db.example.com', port: 1 } })), 'payload')).toEqual([
      'request.hostname',
    ])
    expect(expect400(await call('POST', '/v1/checks/tcp', tcpCheck({ frequency: 0 })), 'payload')).toEqual(['frequencyOffset'])
    expect(expect400(await call('POST', '/v1/checks/tcp', tcpCheck({ degradedResponseTime: 46000 })), 'payload')).toEqual(['degradedResponseTime'])
  })

  it('a triggered session runs it: PASSED, the phases in the result, the status, analytics and metrics listing', async () => {
    const created = await call('POST', '/v1/checks/tcp', tcpCheck({ name: 'Session run' }))
    const before = received.length
    const done = await triggerAndWait(created.json.id)
    expect(done.json).toMatchObject({ checkType: 'TCP', status: 'PASSED' })
    expect(received.slice(before)).toContain('PING\r\n')
    const stored = await call('GET', new URL(done.json.results[0].checkResultLink).pathname)
    expect(stored.status).toBe(200)
    const details = stored.json.result.details
    expect(details).toMatchObject({ kind: 'TCP', hostname: '127.0.0.1', port, response: '+PING\r\n', remoteAddress: '127.0.0.1' })
    for (const phase of ['dns', 'connect', 'data', 'total']) expect(typeof details.timings[phase]).toBe('number')

    const status = await call('GET', `/v1/check-statuses/${created.json.id}`)
    expect(status.json).toMatchObject({ checkId: created.json.id, hasFailures: false, hasErrors: false, sslDaysRemaining: null })

    const analytics = await call(
      'GET',
      `/v1/analytics/tcp-checks/${created.json.id}?quickRange=last24Hours&metrics=total,dns,connection,data,availability,total_p95`,
    )
    expect(analytics.status, analytics.text).toBe(200)
    expect(analytics.json).toMatchObject({ checkId: created.json.id, checkType: 'TCP', name: 'Session run' })
    expect(analytics.json.metadata.connection).toEqual({ unit: 'milliseconds', label: 'TCP connect (average)', aggregation: 'avg' })
    const [entry] = analytics.json.series.map((s: unknown) => (typeof s === 'string' ? JSON.parse(s) : s))
    expect(entry.availability).toBe(100)
    expect(entry.total).toBeCloseTo(details.timings.total, 2)
    expect(entry.connection).toBeCloseTo(details.timings.connect, 2)
    expect(entry.data).toBeCloseTo(details.timings.data, 2)
    // the reference's metric names only; an API check's are refused
    expect(expect400(await call('GET', `/v1/analytics/tcp-checks/${created.json.id}?metrics=responseTime`), 'query')).toEqual(['metrics'])
    const names = await call('GET', '/v1/analytics/metrics?checkType=TCP')
    expect(names.status).toBe(200)
    expect(JSON.stringify(names.json)).toContain('connection_p99')
  })

  it('a failing answer fails the run with the assertion in the error', async () => {
    const created = await call(
      'POST',
      '/v1/checks/tcp',
      tcpCheck({
        name: 'Wrong answer',
        request: { hostname: '127.0.0.1', port, data: 'PING\n', assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PONG' }] },
      }),
    )
    const done = await triggerAndWait(created.json.id)
    expect(done.json.status).toBe('FAILED')
    const status = await call('GET', `/v1/check-statuses/${created.json.id}`)
    expect(status.json.hasFailures).toBe(true)
  })

  it('the dashboard lists TCP among the types and shows a TCP check with its figures', async () => {
    const created = await call('POST', '/v1/checks/tcp', tcpCheck({ name: 'On the dashboard' }))
    await triggerAndWait(created.json.id)
    const login = await fetch(`${server.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ apiKey: KEY_A }).toString(),
    })
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]
    const list = await (await fetch(`${server.url}/?type=TCP`, { headers: { cookie } })).text()
    expect(list).toContain('<option value="TCP" selected')
    expect(list).toContain('On the dashboard')
    const page = await (await fetch(`${server.url}/dashboard/checks/${created.json.id}`, { headers: { cookie } })).text()
    expect(page).toContain('TCP')
    expect(page).toMatch(/data-metric="availability">100 ?%/)
    expect(page).toMatch(/data-metric="p95">[\d.]+ ms/)
  })
})
