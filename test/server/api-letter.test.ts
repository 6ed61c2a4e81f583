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
import type { LocalServer } from '../../src/server/index.js'
import { dnsCheckSchema } from '../../src/schema/index.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { KEY_B, caller, dnsBody, expect400, startTestServer, type Call } from './helpers.js'
import { startResultsBench, type ResultsBench } from './results-helpers.js'

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
      await bench.store.errorGroups.record('acc-a', checkId, { errorHash: `hash-${i}`, rawErrorMessage: message, cleanedErrorMessage: message, seenAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() })
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

  it('GET /v1/error-groups/checks/{checkId}: the same paging over the check\'s groups', async () => {
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
    const infinite = await message('/v1/checks/dns', 'degradedResponseTime', 'payload', 'POST', '{"name":"n","request":{"query":"example.com"},"degradedResponseTime":1e999}')
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
    expect(await message(`/v1/analytics/dns/${id}?metrics=availability&aggregationInterval=1.5`, 'aggregationInterval'))
      .toBe('aggregationInterval: must be a whole number of minutes from 1 to 43200 (got "1.5")')
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
