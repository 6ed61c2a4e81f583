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
