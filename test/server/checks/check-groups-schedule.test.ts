/**
 * The scheduler runs a group's checks with the group's settings: a deactivated group runs none of
 * its checks (activated ones included) until it is activated again; a check that names no
 * locations runs in the group's. A clock 60 times faster than real time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { caller, startTestServer } from '../helpers.js'

let dns: DnsServerHandle
let server: LocalServer

const SPEED = 60
function fastClock(): () => number {
  const realStart = Date.now()
  const virtualStart = Date.parse('2026-03-01T10:00:00Z')
  return () => virtualStart + (Date.now() - realStart) * SPEED
}
const queries = (name: string) => dns.queries.filter((q) => q.name === name).length

beforeAll(async () => {
  dns = await startDnsServer()
  for (const name of ['in-paused-group.test', 'in-active-group.test']) dns.set(name, 'A', { records: [{ type: 'A', data: '192.0.2.9' }] })
  server = await startTestServer({ runner: true, clock: fastClock(), schedulerOptions: { tickMs: 20 }, privateTargets: 'allow' })
})
afterAll(async () => {
  await server?.close()
  await dns?.close()
})

describe("scheduled runs of a group's checks", () => {
  it("a deactivated group runs none of its checks; activated again, they run, in the group's locations", async () => {
    const call = caller(server)
    const paused = await call('POST', '/v1/check-groups', { name: 'Paused group', activated: false, locations: ['ap-south-1'] })
    const active = await call('POST', '/v1/check-groups', { name: 'Active group', locations: ['ap-south-1'] })
    expect([paused.status, active.status]).toEqual([201, 201])
    const check = (name: string, groupId: number) =>
      call('POST', '/v1/checks/dns', {
        name,
        frequency: 1,
        activated: true,
        groupId,
        request: { query: name, recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
      })
    const inPaused = await check('in-paused-group.test', paused.json.id)
    const inActive = await check('in-active-group.test', active.json.id)
    expect([inPaused.status, inActive.status]).toEqual([201, 201])

    // about three scheduled minutes: the active group's check runs, the paused group's never
    await expect.poll(() => queries('in-active-group.test'), { timeout: 15_000, interval: 100 }).toBeGreaterThanOrEqual(2)
    expect(queries('in-paused-group.test')).toBe(0)
    const none = await call('GET', `/v1/check-results/${inPaused.json.id}?resultType=FINAL&limit=100`)
    expect(none.json).toEqual([])
    const ran = await call('GET', `/v1/check-results/${inActive.json.id}?resultType=FINAL&limit=100`)
    expect(new Set(ran.json.map((r: any) => r.runLocation))).toEqual(new Set(['ap-south-1']))

    // activated again: its checks run
    expect((await call('PUT', `/v1/check-groups/${paused.json.id}`, { name: 'Paused group', activated: true, locations: ['ap-south-1'] })).status).toBe(200)
    await expect.poll(() => queries('in-paused-group.test'), { timeout: 15_000, interval: 100 }).toBeGreaterThanOrEqual(1)
    await expect
      .poll(async () => (await call('GET', `/v1/check-results/${inPaused.json.id}?resultType=FINAL&limit=100`)).json.length, { timeout: 10_000, interval: 100 })
      .toBeGreaterThanOrEqual(1)
    const after = await call('GET', `/v1/check-results/${inPaused.json.id}?resultType=FINAL&limit=100`)
    expect(after.json[0].runLocation).toBe('ap-south-1')
  }, 40_000)
})
