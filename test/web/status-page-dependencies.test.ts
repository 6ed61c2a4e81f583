/**
 * What a public status page says beyond incidents, on the real server, from runs recorded
 * through the server's own result path: a service whose check fails while a check it depends on
 * fails (its alerts and incident held back) says why, naming the dependency's service when it is
 * on the page and nothing internal otherwise; and, when the page asks for it
 * (`showResponseTime`), each service's average response time over the last 24 hours from the
 * rollups. The same in a real browser: browser.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../src/server/index.js'
import { recordRuns, type KnownRun } from '../server/analytics/analytics-helpers.js'
import { caller, expect400, startTestServer, type Call } from '../server/helpers.js'

const HOUR = 3_600_000
let now = Date.now()
const clock = { get: () => now, set: (ms: number) => void (now = ms) }
const run = (hoursAgo: number, passed: boolean, responseTime: number): KnownRun => ({
  at: new Date(now - hoursAgo * HOUR).toISOString(),
  location: 'eu-west-1',
  passed,
  responseTime,
  details: { kind: 'API', statusCode: passed ? 200 : 500, timings: null },
})

let server: LocalServer
let api: Call
const anonymous = () => caller(server, null)
const ids: Record<string, string> = {}
let page: Record<string, unknown>

async function created(path: string, body: unknown): Promise<any> {
  const answer = await api('POST', path, body)
  expect(answer.status, answer.text).toBe(201)
  return answer.json
}

async function apiCheck(name: string, extra: Record<string, unknown>): Promise<string> {
  return (
    await created('/v1/checks/api', {
      name,
      activated: false,
      frequency: 5,
      locations: ['eu-west-1'],
      request: { method: 'GET', url: 'http://127.0.0.1:9/health' },
      ...extra,
    })
  ).id
}
const incidentOf = (serviceId: string, name: string) => ({ triggerIncident: { serviceId, severity: 'MAJOR', name: `${name} fails`, description: '' } })

async function summary(): Promise<Record<string, any>> {
  const answer = await anonymous()('GET', '/status/deps-shop/summary.json')
  expect(answer.status, answer.text).toBe(200)
  return Object.fromEntries(answer.json.cards[0].services.map((s: { name: string }) => [s.name, s]))
}

beforeAll(async () => {
  server = await startTestServer({ clock: () => now })
  api = caller(server)
  for (const name of ['Database', 'Shop', 'Reports']) ids[name] = (await created('/v1/status-pages/services', { name })).id
  page = { name: 'Deps shop', url: 'deps-shop', cards: [{ name: 'Everything', services: ['Database', 'Shop', 'Reports'].map((n) => ({ id: ids[n] })) }] }
  await created('/v1/status-pages', page)
  ids.db = await apiCheck('db primary', incidentOf(ids.Database, 'Database'))
  ids.shop = await apiCheck('shop frontend', { dependsOn: [ids.db], ...incidentOf(ids.Shop, 'Shop') })
  // a check no service names: its name must never reach the public page
  ids.auth = await apiCheck('internal-auth-ldap', {})
  ids.reports = await apiCheck('reports job', { dependsOn: [ids.auth], ...incidentOf(ids.Reports, 'Reports') })
  // 30 hours ago (outside the last 24): must not count in the response time
  await recordRuns(api, ids.db, [run(30, true, 9000), run(2, true, 100), run(1, false, 300)], clock)
  await recordRuns(api, ids.shop, [run(1, false, 1500)], clock)
  await recordRuns(api, ids.auth, [run(1, false, 50)], clock)
  await recordRuns(api, ids.reports, [run(1, false, 70)], clock)
}, 120_000)
afterAll(async () => {
  await server?.close()
})

describe('a status page and dependsOn', () => {
  it("says why a service's failing check alerts no one: the dependency's service when it is on the page, else neutral words naming no check", async () => {
    // the alerts are held back, so the dependents opened no incident: the page would say nothing without it
    expect((await api('GET', `/v1/check-statuses/${ids.shop}`)).json.alertsSuppressedBy).toEqual([{ checkId: ids.db, name: 'db primary' }])
    const services = await summary()
    expect(services.Shop.affectedBy).toEqual({ services: ['Database'], upstream: false, state: 'partial_outage', text: 'Affected by Database' })
    expect(services.Reports.affectedBy).toEqual({ services: [], upstream: true, state: 'partial_outage', text: 'Affected by an upstream dependency' })
    // no incident of their own, yet not "operational": their checks fail
    expect([services.Shop.state, services.Shop.openIncidents]).toEqual(['partial_outage', []])
    expect(services.Reports.state).toBe('partial_outage')
    expect(services.Database.affectedBy).toBeNull()
    expect(services.Database.state).toBe('major_outage')

    const html = await anonymous()('GET', '/status/deps-shop')
    expect(html.status).toBe(200)
    expect(html.text).not.toMatch(/<script/i)
    expect(html.text).toMatch(new RegExp(`data-service-id="${ids.Shop}"[^]*?<p class="note affected" data-affected-by>Affected by Database</p>`))
    expect(html.text).toMatch(
      new RegExp(`data-service-id="${ids.Reports}"[^]*?<p class="note affected" data-affected-by>Affected by an upstream dependency</p>`),
    )
    expect(html.text.match(/data-affected-by/g)).toHaveLength(2)
    // the dependency no service names: neither its name nor its id on the public page or its JSON
    // (the Database check's own name is in its incident's text, as triggerIncident writes it)
    const json = (await anonymous()('GET', '/status/deps-shop/summary.json')).text
    for (const text of [html.text, json]) {
      for (const secret of ['internal-auth-ldap', ids.auth, ids.db]) expect(text.includes(secret), secret).toBe(false)
    }
  })

  it('says nothing once the dependency recovers', async () => {
    await recordRuns(api, ids.db, [run(0.5, true, 200)], clock)
    const services = await summary()
    expect(services.Shop.affectedBy).toBeNull()
    expect(services.Reports.affectedBy).not.toBeNull()
    await recordRuns(api, ids.db, [run(0.4, false, 300)], clock)
    expect((await summary()).Shop.affectedBy).not.toBeNull()
  })
})

describe("a status page's showResponseTime", () => {
  it('is off by default: no response time in the page or its JSON', async () => {
    expect((await api('GET', '/v1/status-pages')).json.entries[0].showResponseTime).toBeUndefined()
    const services = await summary()
    expect('responseTime' in services.Database).toBe(false)
    expect((await anonymous()('GET', '/status/deps-shop')).text).not.toContain('Response time')
  })

  it("on, shows each service's average over the last 24 hours from the rollups, with its unit", async () => {
    const pageId = (await api('GET', '/v1/status-pages')).json.entries[0].id
    const put = await api('PUT', `/v1/status-pages/${pageId}`, { ...page, showResponseTime: true })
    expect(put.status, put.text).toBe(200)
    expect(put.json.showResponseTime).toBe(true)
    const services = await summary()
    // 100, 300, 200 and 300 in the last 24 hours; the 9000 of 30 hours ago is not counted
    expect(services.Database.responseTime).toEqual({ averageMs: 225, runs: 4, hours: 24 })
    expect(services.Shop.responseTime).toEqual({ averageMs: 1500, runs: 1, hours: 24 })
    const html = (await anonymous()('GET', '/status/deps-shop')).text
    expect(html).toContain('<p class="note response-time" data-response-time="225">Response time: <strong>225 ms</strong> average over the last 24 hours</p>')
    expect(html).toContain('<strong>1.50 s</strong>')

    const bad = await api('PUT', `/v1/status-pages/${pageId}`, { ...page, showResponseTime: 'yes' })
    expect(expect400(bad, 'payload')).toEqual(['showResponseTime'])
  })
})
