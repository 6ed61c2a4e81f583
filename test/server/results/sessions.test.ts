/**
 * Check sessions on the real server with its runner on: triggered checks run once per
 * location against the test DNS server and are long-polled to completion.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { caller, startTestServer, type Call } from '../helpers.js'

let dir: string
let dns: DnsServerHandle
let server: LocalServer
let call: Call

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-sessions-'))
  dns = await startDnsServer()
  dns.set('up.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
  dns.set('slow.test', 'A', { records: [{ type: 'A', data: '192.0.2.2' }], delayMs: 2500 })
  server = await startTestServer({ dbPath: join(dir, 'sessions.db'), runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
  call = caller(server)
})
afterAll(async () => {
  await server.close()
  await dns.close()
  rmSync(dir, { recursive: true, force: true })
})

// deactivated: only the sessions run them, never the schedule
const dnsCheck = (name: string, query: string, extra: Record<string, unknown> = {}) => ({
  name,
  activated: false,
  request: { query, recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
  assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }],
  ...extra,
})

async function create(body: Record<string, unknown>): Promise<string> {
  const answer = await call('POST', '/v1/checks/dns', body)
  expect(answer.status).toBe(201)
  return answer.json.id
}

describe('check sessions', () => {
  it('a passing check, in two locations, long-polled to PASSED', async () => {
    const id = await create(dnsCheck('up', 'up.test', { locations: ['eu-west-1', 'us-east-1'], tags: ['web'] }))
    const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
    expect(trigger.status).toBe(201)
    expect(trigger.json.sessions).toHaveLength(1)
    const session = trigger.json.sessions[0]
    expect(session).toMatchObject({ checkId: id, name: 'up' })
    expect(session.checkSessionLink).toBe(`${server.url}/v1/check-sessions/${session.checkSessionId}`)

    const done = await call('GET', `/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=10`)
    expect(done.status).toBe(200)
    expect(done.json).toMatchObject({
      checkSessionId: session.checkSessionId,
      checkId: id,
      checkType: 'DNS',
      status: 'PASSED',
      name: 'up',
      runLocations: ['eu-west-1', 'us-east-1'],
    })
    expect(done.json.timeElapsed).toBe(Date.parse(done.json.stoppedAt) - Date.parse(done.json.startedAt))
    const results = done.json.results
    expect(results.map((r: { runLocation: string }) => r.runLocation).sort()).toEqual(['eu-west-1', 'us-east-1'])
    for (const r of results)
      expect(r).toMatchObject({ resultType: 'FINAL', hasErrors: false, hasFailures: false, isDegraded: false, aborted: false, checkId: id, checkType: 'DNS' })
    // every figure is from a run that happened: two queries reached the DNS server
    expect(dns.queries.filter((q) => q.name === 'up.test')).toHaveLength(2)
    // the result link answers the stored result
    const stored = await call('GET', new URL(results[0].checkResultLink).pathname)
    expect(stored.status).toBe(200)
    expect(stored.json.result.details).toMatchObject({ kind: 'DNS', rcode: 'NOERROR', query: 'up.test' })
  })

  it('a failing check is FAILED, its retries kept as ATTEMPT results', async () => {
    const id = await create(dnsCheck('down', 'missing.test', { retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0, maxRetries: 2 }, tags: ['web'] }))
    const { sessions } = (await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })).json
    const done = await call('GET', `/v1/check-sessions/${sessions[0].checkSessionId}/completion`)
    expect(done.status).toBe(200)
    expect(done.json.status).toBe('FAILED')
    expect(done.json.runLocations).toEqual(['local'])
    expect(done.json.results.map((r: { resultType: string }) => r.resultType)).toEqual(['ATTEMPT', 'ATTEMPT', 'FINAL'])
    expect(done.json.results.map((r: { attempt: number }) => r.attempt)).toEqual([1, 2, 3])
    for (const r of done.json.results) expect(r).toMatchObject({ hasFailures: true, status: 'FAILED' })
    expect(done.json.results[2].error).toMatch(/NXDOMAIN/)
    expect(dns.queries.filter((q) => q.name === 'missing.test')).toHaveLength(3)
  })

  it('tags target every check carrying one of them', async () => {
    const { sessions } = (await call('POST', '/v1/check-sessions/trigger', { target: { tags: ['web'] } })).json
    expect(sessions.map((s: { name: string }) => s.name).sort()).toEqual(['down', 'up'])
    for (const s of sessions) expect((await call('GET', `/v1/check-sessions/${s.checkSessionId}/completion`)).status).toBe(200)
  })

  it('not finished within maxWaitSeconds: 408 with Retry-After; the session so far is RUNNING; then DEGRADED', async () => {
    const id = await create(
      dnsCheck('slow', 'slow.test', {
        request: { query: 'slow.test', nameServer: '127.0.0.1', port: dns.port },
        degradedResponseTime: 1000,
        maxResponseTime: 5000,
      }),
    )
    const { sessions } = (await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })).json
    const path = `/v1/check-sessions/${sessions[0].checkSessionId}`
    const started = Date.now()
    const waiting = await call('GET', `${path}/completion?maxWaitSeconds=1`)
    expect(waiting.status).toBe(408)
    expect(Date.now() - started).toBeGreaterThanOrEqual(950)
    expect(waiting.headers.get('retry-after')).toBe('1')
    expect(waiting.json.message).toMatch(/has not finished/)
    const sofar = await call('GET', path)
    expect(sofar.status).toBe(200)
    expect(sofar.json).toMatchObject({ status: 'RUNNING', stoppedAt: null, results: [] })
    const done = await call('GET', `${path}/completion?maxWaitSeconds=10`)
    expect(done.status).toBe(200)
    // slower than degradedResponseTime, within maxResponseTime
    expect(done.json.status).toBe('DEGRADED')
    expect(done.json.results[0]).toMatchObject({ isDegraded: true, hasFailures: false })
  })

  it('unknown sessions answer 404, bad queries and bodies 400', async () => {
    expect((await call('GET', '/v1/check-sessions/no-such-session/completion')).status).toBe(404)
    expect((await call('GET', '/v1/check-sessions/no-such-session')).status).toBe(404)
    const id = await create(dnsCheck('any', 'up.test'))
    const { sessions } = (await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })).json
    const tooLong = await call('GET', `/v1/check-sessions/${sessions[0].checkSessionId}/completion?maxWaitSeconds=31`)
    expect(tooLong.status).toBe(400)
    expect(tooLong.json.attributes.keys).toEqual(['maxWaitSeconds'])
    const notArray = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: id } })
    expect(notArray.status).toBe(400)
    expect(notArray.json.attributes.keys).toEqual(['target.checkId'])
    const unknown = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: ['not-a-check'] } })
    expect(unknown.status).toBe(404)
    expect(unknown.json.message).toMatch(/not-a-check/)
  })
})

describe('every FINAL result goes through onFinalResult', () => {
  it("once per run, with the check and the runner's result, inside the transaction that records it", async () => {
    const seen: Array<{ checkId: string; status: string; attempts: number; stored: number }> = []
    const hooked = await startTestServer({
      runner: true,
      privateTargets: 'allow',
      schedulerOptions: { tickMs: 50 },
      onFinalResult: async (tx, check, result, recorded) => {
        // the transaction already holds the result being recorded
        const stored = (await tx.results.list('acc-a', { checkId: check.id, limit: 10, offset: 0 })).total
        seen.push({ checkId: check.id, status: result.status, attempts: result.attempts.length, stored })
        expect(recorded.final.resultType).toBe('FINAL')
      },
    })
    try {
      const call2 = caller(hooked)
      const id = (
        await call2('POST', '/v1/checks/dns', dnsCheck('hooked', 'missing.test', { retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0, maxRetries: 1 } }))
      ).json.id
      const { sessions } = (await call2('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })).json
      expect((await call2('GET', `/v1/check-sessions/${sessions[0].checkSessionId}/completion`)).status).toBe(200)
      expect(seen).toEqual([{ checkId: id, status: 'FAILED', attempts: 1, stored: 2 }])
    } finally {
      await hooked.close()
    }
  })
})
