/**
 * The API to the letter: what an independent tester of every operation found, each settled
 * against the reference (the hosted service's public description) or API.md, on the real
 * server. Error groups paged as the reference pages them, every 400 naming its field, the
 * 408's name, messages that agree with their rule, and the differences docs/api.md settles
 * (a trigger without a filter, isCancelled, triggerIncident null, results of an unknown or
 * another account's check).
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { dnsCheckSchema } from '../../../src/schema/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { KEY_B, caller, dnsBody, expect400, startTestServer, type Call } from '../helpers.js'
import { startResultsBench, type ResultsBench } from '../results/results-helpers.js'

const heartbeatBody = (extra: Record<string, unknown> = {}) => ({
  name: 'nightly job',
  heartbeat: { period: 1, periodUnit: 'hours', grace: 10, graceUnit: 'minutes' },
  ...extra,
})

describe('error groups are paged as the reference pages them', () => {
  let bench: ResultsBench
  let checkA: string
  let checkB: string

  beforeAll(async () => {
    bench = await startResultsBench()
    checkA = await bench.createCheck('a.example.test', { name: 'A' })
    checkB = await bench.createCheck('b.example.test', { name: 'B' })
    // 25 groups of A and 3 of B, recorded as results record them
    for (let i = 0; i < 28; i++) {
      const checkId = i < 25 ? checkA : checkB
      const message = `failure kind ${String.fromCharCode(97 + (i % 26))}${i >= 26 ? 'x' : ''} of ${checkId === checkA ? 'A' : 'B'}`
      await bench.store.errorGroups.record('acc-a', checkId, {
        errorHash: `hash-${i}`,
        rawErrorMessage: message,
        cleanedErrorMessage: message,
        seenAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
      })
    }
  })
  afterAll(async () => {
    await bench.close()
  })

  it('GET /v1/error-groups: 10 by default, limit 1-100, page from 1, with content-range', async () => {
    const first = await bench.call('GET', '/v1/error-groups')
    expect(first.status).toBe(200)
    expect(first.json).toHaveLength(10)
    expect(first.headers.get('content-range')).toBe('0-9/28')
    const all = await bench.call('GET', '/v1/error-groups?limit=100')
    expect(all.json).toHaveLength(28)
    const pages = []
    for (let page = 1; page <= 3; page++) pages.push(...(await bench.call('GET', `/v1/error-groups?limit=10&page=${page}`)).json)
    expect(pages.map((g: { id: string }) => g.id)).toEqual(all.json.map((g: { id: string }) => g.id))
    const last = await bench.call('GET', '/v1/error-groups?limit=10&page=3')
    expect(last.json).toHaveLength(8)
    expect(last.headers.get('content-range')).toBe('20-27/28')
    const beyond = await bench.call('GET', '/v1/error-groups?page=4')
    expect(beyond.json).toEqual([])
    expect(beyond.headers.get('content-range')).toBe('*/28')
  })

  it("GET /v1/error-groups/checks/{checkId}: the same paging over the check's groups", async () => {
    const page = await bench.call('GET', `/v1/error-groups/checks/${checkA}?limit=5&page=5`)
    expect(page.status).toBe(200)
    expect(page.json).toHaveLength(5)
    expect(page.json.every((g: { checkId: string }) => g.checkId === checkA)).toBe(true)
    expect(page.headers.get('content-range')).toBe('20-24/25')
    expect((await bench.call('GET', `/v1/error-groups/checks/${checkB}`)).json).toHaveLength(3)
    expect((await bench.call('GET', `/v1/error-groups/checks/${checkA}`)).json).toHaveLength(10)
  })

  it('a bad limit or page is a 400 naming it, on both routes', async () => {
    for (const base of ['/v1/error-groups', `/v1/error-groups/checks/${checkA}`]) {
      const abc = await bench.call('GET', `${base}?limit=abc`)
      expect(expect400(abc, 'query')).toEqual(['limit'])
      expect(abc.json.message).toBe('limit: must be a number (got "abc")')
      expect(expect400(await bench.call('GET', `${base}?limit=0`), 'query')).toEqual(['limit'])
      expect((await bench.call('GET', `${base}?limit=101`)).json.message).toBe('limit: must be at most 100 (got "101")')
      expect(expect400(await bench.call('GET', `${base}?page=0`), 'query')).toEqual(['page'])
      expect(expect400(await bench.call('GET', `${base}?page=1.5`), 'query')).toEqual(['page'])
    }
  })
})

describe('every 400 names its field', () => {
  let server: LocalServer
  let call: Call

  beforeAll(async () => {
    server = await startTestServer()
    call = caller(server)
  })
  afterAll(async () => {
    await server.close()
  })

  it('heartbeat availability and events: a bad startTime or endTime, or an inverted window', async () => {
    const id = (await call('POST', '/v1/checks/heartbeat', heartbeatBody())).json.id
    for (const route of ['availability', 'events']) {
      const base = `/v1/checks/heartbeats/${id}/${route}`
      const start = await call('GET', `${base}?startTime=yesterday`)
      expect(expect400(start, 'query')).toEqual(['startTime'])
      expect(start.json.message).toBe('startTime: must be an ISO date, date-time or epoch milliseconds (got "yesterday")')
      expect(start.json.attributes.issues).toEqual([{ path: 'startTime', message: 'must be an ISO date, date-time or epoch milliseconds (got "yesterday")' }])
      expect(expect400(await call('GET', `${base}?endTime=2026-13-45`), 'query')).toEqual(['endTime'])
      const inverted = await call('GET', `${base}?startTime=2026-03-02T00:00:00Z&endTime=2026-03-01T00:00:00Z`)
      expect(expect400(inverted, 'query')).toEqual(['startTime', 'endTime'])
      expect(inverted.json.message).toBe('startTime: must be before endTime (got startTime 2026-03-02T00:00:00.000Z, endTime 2026-03-01T00:00:00.000Z)')
      // a time out of the range of dates is refused, not a 500
      expect(expect400(await call('GET', `${base}?startTime=99999999999999999999`), 'query')).toEqual(['startTime'])
    }
  })

  it('a session trigger naming a heartbeat check: the checkId item, and why', async () => {
    const dns = (await call('POST', '/v1/checks/dns', dnsBody({ activated: false }))).json.id
    const heartbeat = (await call('POST', '/v1/checks/heartbeat', heartbeatBody())).json.id
    const answer = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [dns, heartbeat] } })
    expect(expect400(answer, 'payload')).toEqual(['target.checkId.1'])
    expect(answer.json.message).toBe(
      `target.checkId.1: is a HEARTBEAT check (${heartbeat}): a heartbeat check is judged by the pings it receives and cannot be triggered; sessions run DNS, ICMP, API, TCP, URL, BROWSER, MULTI_STEP and PLAYWRIGHT checks`,
    )
  })
})

describe('messages agree with their rule', () => {
  let server: LocalServer
  let call: Call

  beforeAll(async () => {
    server = await startTestServer()
    call = caller(server)
  })
  afterAll(async () => {
    await server.close()
  })

  const message = async (path: string, key: string, source: 'query' | 'payload' = 'query', method = 'GET', body?: unknown) => {
    const answer = await call(method, path, body)
    expect(expect400(answer, source)).toEqual([key])
    return answer.json.message as string
  }

  it('a repeated or infinite number says so, never "must be a number (got number)"', async () => {
    expect(await message('/v1/checks?limit=1&limit=2', 'limit')).toBe('limit: must be given once (got 2 values)')
    expect(await message('/v1/variables?page=2&page=3&page=4', 'page')).toBe('page: must be given once (got 3 values)')
    expect(await message('/v1/checks?limit=Infinity', 'limit')).toBe('limit: must be a number (got "Infinity")')
    expect(await message('/v1/checks?limit=1e999', 'limit')).toBe('limit: must be a finite number (got "1e999")')
    // JSON reads 1e999 as Infinity
    const infinite = await message(
      '/v1/checks/dns',
      'degradedResponseTime',
      'payload',
      'POST',
      '{"name":"n","request":{"query":"example.com"},"degradedResponseTime":1e999}',
    )
    expect(infinite).toBe('degradedResponseTime: must be a finite number (got Infinity)')
    const id = (await call('POST', '/v1/checks/heartbeat', heartbeatBody())).json.id
    expect(await message(`/v1/checks/heartbeats/${id}/events?startTime=1&startTime=2`, 'startTime')).toBe('startTime: must be given once (got 2 values)')
  })

  it('an empty value is no number (not "must be at least 1 (got 0)")', async () => {
    expect(await message('/v1/checks?limit=', 'limit')).toBe('limit: must be a number (got "")')
    expect(await message('/v1/incidents?page=', 'page')).toBe('page: must be a number (got "")')
    expect(await message('/v1/status-pages?limit=', 'limit')).toBe('limit: must be a number (got "")')
  })

  it('a limit of 1-10 says 1-10, never the safe-integer bound', async () => {
    const id = (await call('POST', '/v1/checks/heartbeat', heartbeatBody())).json.id
    const text = await message(`/v1/checks/heartbeats/${id}/events?limit=-1e20`, 'limit')
    expect(text).toBe('limit: must be at least 1 (got "-1e20")')
    expect(text).not.toContain('9007199254740991')
    expect(await message(`/v1/checks/heartbeats/${id}/events?limit=1e20`, 'limit')).toBe('limit: must be at most 10 (got "1e20")')
  })

  it('aggregationInterval=1.0 is taken as limit=1.0 is', async () => {
    const id = (await call('POST', '/v1/checks/dns', dnsBody({ activated: false }))).json.id
    const both = await call('GET', `/v1/analytics/dns/${id}?metrics=availability&aggregationInterval=60.0&limit=1.0`)
    expect(both.status, both.text).toBe(200)
    expect(both.json.pagination).toEqual({ page: 1, limit: 1 })
    expect(await message(`/v1/analytics/dns/${id}?metrics=availability&aggregationInterval=1.5`, 'aggregationInterval')).toBe(
      'aggregationInterval: must be a whole number of minutes from 1 to 43200 (got "1.5")',
    )
  })

  it('a field with an empty name is named, not called the body', async () => {
    // the PATCH body of an error group is strict: the body is read before the group is looked up
    const patched = await call('PATCH', `/v1/error-groups/${randomUUID()}`, { '': true })
    expect(expect400(patched, 'payload')).toEqual(['""'])
    expect(patched.json.message).toBe('"": is not a known field (a field name cannot be empty)')
    expect(patched.json.message).not.toMatch(/^body/)
  })
})

describe('the 408 of an unfinished completion', () => {
  it('says Request Time-out, as API.md and the reference do', async () => {
    // no runner: the session's runs wait, so the completion times out
    const server = await startTestServer()
    try {
      const call = caller(server)
      const id = (await call('POST', '/v1/checks/dns', dnsBody({ activated: false }))).json.id
      const { sessions } = (await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })).json
      const waiting = await call('GET', `/v1/check-sessions/${sessions[0].checkSessionId}/completion?maxWaitSeconds=1`)
      expect(waiting.status).toBe(408)
      expect(waiting.json).toMatchObject({ statusCode: 408, error: 'Request Time-out' })
      expect(waiting.headers.get('retry-after')).toBe('1')
    } finally {
      await server.close()
    }
  })
})

describe('check sessions, as the reference has them', () => {
  let dns: DnsServerHandle
  let server: LocalServer
  let call: Call

  beforeAll(async () => {
    dns = await startDnsServer()
    dns.set('up.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    // two accounts deny private targets; the name server here is on loopback
    server = await startTestServer({ runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
    call = caller(server)
  })
  afterAll(async () => {
    await server.close()
    await dns.close()
  })

  const check = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    request: { query: 'up.test', nameServer: '127.0.0.1', port: dns.port },
    // far apart: the schedule does not run it during the test
    frequency: 1440,
    ...extra,
  })

  it('a trigger without a filter runs every activated DNS, ICMP and API check of the account; none: 404', async () => {
    const b = caller(server, KEY_B)
    // nothing to run yet: the reference's 404
    const none = await b('POST', '/v1/check-sessions/trigger', {})
    expect(none.status).toBe(404)
    expect(none.json).toEqual({ statusCode: 404, error: 'Not Found', message: 'No matching checks were found.' })
    const on = (await b('POST', '/v1/checks/dns', check('on'))).json.id
    expect((await b('POST', '/v1/checks/dns', check('paused', { activated: false }))).status).toBe(201)
    expect((await b('POST', '/v1/checks/heartbeat', heartbeatBody())).status).toBe(201)
    for (const body of [undefined, {}, { target: {} }, { target: { checkId: [], tags: [] } }]) {
      const answer = await b('POST', '/v1/check-sessions/trigger', body)
      expect(answer.status, JSON.stringify(body)).toBe(201)
      expect(answer.json.sessions.map((s: { checkId: string }) => s.checkId)).toEqual([on])
    }
  })

  it("the reference's matchTags: OR of ANDs, !tag for a check without it; deactivated checks too", async () => {
    const make = async (name: string, tags: string[], extra: Record<string, unknown> = {}) =>
      (await call('POST', '/v1/checks/dns', check(name, { tags, ...extra }))).json.id
    const web = await make('prod web', ['prod', 'web'])
    await make('prod skipped', ['prod', 'skip-e2e'])
    const staging = await make('staging', ['staging'], { activated: false })
    await make('other', ['dev'])
    const answer = await call('POST', '/v1/check-sessions/trigger', { target: { matchTags: [['prod', '!skip-e2e'], ['staging']] } })
    expect(answer.status, answer.text).toBe(201)
    expect(answer.json.sessions.map((s: { checkId: string }) => s.checkId).sort()).toEqual([web, staging].sort())
    const none = await call('POST', '/v1/check-sessions/trigger', { target: { matchTags: [['prod', 'dev']] } })
    expect(none.status).toBe(404)
    expect(expect400(await call('POST', '/v1/check-sessions/trigger', { target: { matchTags: ['prod'] } }), 'payload')).toEqual(['target.matchTags.0'])
  })

  it('session results carry isCancelled, always false here', async () => {
    const id = (await call('POST', '/v1/checks/dns', check('cancellable', { activated: false }))).json.id
    const { sessions } = (await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })).json
    const done = await call('GET', `/v1/check-sessions/${sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
    expect(done.status).toBe(200)
    expect(done.json.results).toHaveLength(1)
    expect(done.json.results[0]).toMatchObject({ aborted: false, isCancelled: false })
    const read = await call('GET', `/v1/check-sessions/${sessions[0].checkSessionId}`)
    expect(read.json.results[0].isCancelled).toBe(false)
  })
})

describe('a trigger is bounded', () => {
  let bench: ResultsBench

  beforeAll(async () => {
    bench = await startResultsBench()
  })
  afterAll(async () => {
    await bench.close()
  })

  it('more than 1000 matching checks is a 400 naming target, and no session is made', async () => {
    const data = dnsCheckSchema.parse({ name: 'many', tags: ['many'], request: { query: 'many.example.test' } })
    for (let i = 0; i < 1001; i++) await bench.store.checks.create('acc-a', 'DNS', { ...data, name: `many ${i}` })
    for (const body of [{}, { target: { tags: ['many'] } }]) {
      const answer = await bench.call('POST', '/v1/check-sessions/trigger', body)
      expect(expect400(answer, 'payload')).toEqual(['target'])
      expect(answer.json.message).toMatch(/^target: matches more than 1000 checks.*one trigger starts at most 1000: name fewer with checkId or tags$/)
    }
    // nothing half-made: no due run waits for a runner
    const claim = () => bench.store.runs.claim({ owner: 'test', max: 100, leaseMs: 60_000, now: Date.now() + 1000 })
    expect(await claim()).toEqual([])
    const page = await bench.store.checks.list('acc-a', { tags: ['many'], limit: 1, offset: 0 })
    const one = (JSON.parse(page!.json.toString()) as Array<{ id: string }>)[0].id
    const fine = await bench.call('POST', '/v1/check-sessions/trigger', { target: { checkId: [one] } })
    expect(fine.status).toBe(201)
    expect(fine.json.sessions).toHaveLength(1)
    expect((await claim()).map((r) => r.checkId)).toEqual([one])
  }, 120_000)
})

describe('triggerIncident: null, and results of checks that are not yours', () => {
  let server: LocalServer
  let call: Call

  beforeAll(async () => {
    server = await startTestServer()
    call = caller(server)
  })
  afterAll(async () => {
    await server.close()
  })

  it('triggerIncident: null is taken (the reference makes it nullable) and answered as sent', async () => {
    const dns = await call('POST', '/v1/checks/dns', dnsBody({ triggerIncident: null }))
    expect(dns.status, dns.text).toBe(201)
    expect(dns.json.triggerIncident).toBeNull()
    expect((await call('GET', `/v1/checks/${dns.json.id}`)).json.triggerIncident).toBeNull()
    expect((await call('PUT', `/v1/checks/dns/${dns.json.id}`, dnsBody({ triggerIncident: null }))).status).toBe(200)
    expect((await call('POST', '/v1/checks/heartbeat', heartbeatBody({ triggerIncident: null }))).status).toBe(201)
    expect((await call('POST', '/v1/checks/api', { name: 'api', request: { url: 'http://127.0.0.1:9/', method: 'GET' }, triggerIncident: null })).status).toBe(
      201,
    )
  })

  it("GET /v1/check-results/{checkId}: 404 for an unknown check and for another account's, as every per-check route", async () => {
    const unknown = await call('GET', `/v1/check-results/${randomUUID()}`)
    expect(unknown.status).toBe(404)
    expect(unknown.json).toEqual({ statusCode: 404, error: 'Not Found', message: 'Check not found' })
    const mine = (await call('POST', '/v1/checks/dns', dnsBody({ activated: false }))).json.id
    expect((await call('GET', `/v1/check-results/${mine}`)).status).toBe(200)
    const theirs = await caller(server, KEY_B)('GET', `/v1/check-results/${mine}`)
    expect(theirs.status).toBe(404)
    expect(theirs.json).toEqual(unknown.json)
  })
})
