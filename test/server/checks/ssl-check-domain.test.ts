/**
 * `sslCheckDomain` on the real server: a TCP check (a type with no certificate of its own) that
 * names `localhost` gets the certificate that domain serves (a TLS server on 127.0.0.1 with a
 * certificate the test makes, reached through the runner's test-only `tlsPort`), in its status
 * and in the certificate alerts; an unreachable domain is the run's certificate error and the run
 * passes; under the deny policy the domain is refused; a value that is not a domain is a 400.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer, LocalServerOptions } from '../../../src/server/index.js'
import { startTlsServer, type TlsServerHandle } from '../../helpers/http-server.js'
import { runCheck } from '../../../src/runner/index.js'
import { caller, expect400, startTestServer, type Call } from '../helpers.js'

let dir: string
let plain: Server
let plainPort: number
let fiveDays: TlsServerHandle
const servers: LocalServer[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-ssl-domain-'))
  // the TCP checks' own target: a server that accepts connections
  plain = createServer((socket) => socket.end())
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve))
  plainPort = (plain.address() as AddressInfo).port
  fiveDays = await startTlsServer({ validDays: 5, extraHours: 3 })
})
afterAll(async () => {
  for (const server of servers) await server.close()
  await fiveDays?.close()
  await new Promise((r) => plain?.close(r))
  rmSync(dir, { recursive: true, force: true })
})

async function start(name: string, options: LocalServerOptions, tlsPort: number): Promise<Call> {
  const server = await startTestServer({ dbPath: join(dir, `${name}.db`), runner: true, schedulerOptions: { tickMs: 50, runOptions: { tlsPort } }, ...options })
  servers.push(server)
  return caller(server)
}

async function run(call: Call, id: string) {
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
  expect(trigger.status, trigger.text).toBe(201)
  const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
  expect(done.status, done.text).toBe(200)
  const result = await call('GET', new URL(done.json.results[0].checkResultLink).pathname)
  expect(result.status, result.text).toBe(200)
  return result.json
}

const kinds = async (call: Call, id: string) =>
  ((await call('GET', `/v1/alert-notifications?checkId=${id}`)).json as Array<{ alertType: string; created_at: string }>)
    .sort((a, b) => a.created_at.localeCompare(b.created_at))
    .map((n) => n.alertType)

const tcpCheck = (extra: Record<string, unknown> = {}) => ({
  name: 'Database with a certificate',
  activated: false,
  doubleCheck: false,
  request: { hostname: '127.0.0.1', port: plainPort },
  sslCheckDomain: 'localhost',
  alertSettings: { sslCertificates: { alertThreshold: 14 } },
  ...extra,
})

describe('sslCheckDomain', () => {
  it('a TCP check naming a domain with a 5-day certificate alerts ALERT_SSL at a 14-day threshold, and recovers once it is renewed', async () => {
    const call = await start('alerts', { privateTargets: 'allow' }, fiveDays.port)
    const check = await call('POST', '/v1/checks/tcp', tcpCheck())
    expect(check.status, check.text).toBe(201)
    expect(check.json.sslCheckDomain).toBe('localhost')
    const id = check.json.id
    const first = await run(call, id)
    expect(first.status).toBe('PASSED')
    expect(first.result.sslDaysRemaining).toBe(5)
    expect(first.result.sslCheck).toMatchObject({ domain: 'localhost', daysRemaining: 5 })
    expect((await call('GET', `/v1/check-statuses/${id}`)).json.sslDaysRemaining).toBe(5)
    expect(await kinds(call, id)).toEqual(['ALERT_SSL'])
    await fiveDays.renew(90)
    try {
      await run(call, id)
      expect((await call('GET', `/v1/check-statuses/${id}`)).json.sslDaysRemaining).toBe(90)
      expect(await kinds(call, id)).toEqual(['ALERT_SSL', 'ALERT_SSL_RECOVERY'])
    } finally {
      await fiveDays.renew(5)
    }
  })

  it("an unreachable domain is the run's certificate error: the run passes, no days, no certificate alert", async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((r) => closed.close(r))
    const call = await start('unreachable', { privateTargets: 'allow' }, port)
    const check = await call('POST', '/v1/checks/tcp', tcpCheck())
    const result = await run(call, check.json.id)
    expect(result.status).toBe('PASSED')
    expect(result.error).toBeNull()
    expect(result.result.sslCheck).toEqual({ domain: 'localhost', daysRemaining: null, error: `localhost:${port} refused the connection` })
    const status = (await call('GET', `/v1/check-statuses/${check.json.id}`)).json
    expect(status).toMatchObject({ hasFailures: false, hasErrors: false, sslDaysRemaining: null })
    expect(await kinds(call, check.json.id)).toEqual([])
  })

  it('under the deny policy a domain resolving to a private address is refused; the check itself, an exception, passes', async () => {
    const call = await start('deny', { privateTargets: 'deny', allowedTargets: [`127.0.0.1:${plainPort}`] }, fiveDays.port)
    const check = await call('POST', '/v1/checks/tcp', tcpCheck())
    expect(check.status, check.text).toBe(201)
    const result = await run(call, check.json.id)
    expect(result.status).toBe('PASSED')
    expect(result.result.sslCheck.daysRemaining).toBeNull()
    expect(result.result.sslCheck.error).toMatch(/^localhost resolves to a loopback address .*: refused by the private-target policy/)
    expect((await call('GET', `/v1/check-statuses/${check.json.id}`)).json.sslDaysRemaining).toBeNull()
    expect(await kinds(call, check.json.id)).toEqual([])
  })

  it('a value that is not a domain name is a 400 naming sslCheckDomain, on ICMP and TCP checks alike', async () => {
    const call = await start('validation', { privateTargets: 'allow' }, fiveDays.port)
    const tcp = await call('POST', '/v1/checks/tcp', tcpCheck({ sslCheckDomain: 'https://shop.example.com/health' }))
    expect(expect400(tcp, 'payload')).toEqual(['sslCheckDomain'])
    expect(tcp.json.message).toMatch(/sslCheckDomain.*must be a domain name such as example\.com/)
    const icmp = await call('POST', '/v1/checks/icmp', {
      name: 'Ping',
      heartbeat: {},
      script: '',
      request: { hostname: '127.0.0.1' },
      sslCheckDomain: 'shop.example.com:8443',
    })
    expect(expect400(icmp, 'payload')).toEqual(['sslCheckDomain'])
    expect((await call('GET', '/v1/checks')).json).toEqual([])
  })
})

describe('sslCheckDomain from an agent', () => {
  it("a result an agent posts keeps the domain's certificate: the status has its days and the certificate alert is given", async () => {
    const server = await startTestServer({ dbPath: join(dir, 'agent.db') })
    servers.push(server)
    const call = caller(server)
    const check = await call('POST', '/v1/checks/tcp', tcpCheck({ locations: ['eu-west-1'] }))
    expect(check.status, check.text).toBe(201)
    const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })
    expect(trigger.status, trigger.text).toBe(201)
    const claim = await call('POST', '/v1/agent/claim', { agentId: 'agent-1', locations: ['eu-west-1'], leaseSeconds: 30 })
    const [run] = claim.json.runs
    expect(run.check.sslCheckDomain).toBe('localhost')
    const result = await runCheck(run.check, { location: run.location, tlsPort: fiveDays.port })
    expect(result.sslDaysRemaining).toBe(5)
    expect((await call('POST', `/v1/agent/runs/${run.runId}/result`, { result })).status).toBe(204)
    expect((await call('GET', `/v1/check-statuses/${check.json.id}`)).json.sslDaysRemaining).toBe(5)
    expect(await kinds(call, check.json.id)).toEqual(['ALERT_SSL'])
    // the certificate of another domain than the check's is dropped, as any field a runner does not make
    const again = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })
    expect(again.status, again.text).toBe(201)
    const [next] = (await call('POST', '/v1/agent/claim', { agentId: 'agent-1', locations: ['eu-west-1'], leaseSeconds: 30 })).json.runs
    const forged = {
      ...(await runCheck(next.check, { location: next.location, tlsPort: fiveDays.port })),
      sslDaysRemaining: 9999,
      sslCheck: { domain: 'other.example.com', daysRemaining: 9999, error: null },
    }
    expect((await call('POST', `/v1/agent/runs/${next.runId}/result`, { result: forged })).status).toBe(204)
    expect((await call('GET', `/v1/check-statuses/${check.json.id}`)).json.sslDaysRemaining).toBeNull()
    expect(await kinds(call, check.json.id)).toEqual(['ALERT_SSL'])
  })
})
