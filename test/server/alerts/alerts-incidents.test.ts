/**
 * Incidents from real runs, end to end: a check with `triggerIncident` run by the server's own
 * runner opens an incident on its service only once its alert escalation is reached, keeps
 * `notifySubscribers`, posts a RESOLVED update when it recovers, and its alerts name the
 * incident. GET /v1/incidents is paged like checks, newest first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { expect400 } from '../helpers.js'
import { startAlertsBench, startReceiver, type AlertsBench, type Receiver } from './alerts-helpers.js'

let dns: DnsServerHandle
let hooks: Receiver
let bench: AlertsBench

beforeAll(async () => {
  dns = await startDnsServer()
  hooks = await startReceiver()
  bench = await startAlertsBench(dns, { alerts: { pollMs: 50 } })
})
afterAll(async () => {
  await bench?.close()
  await hooks?.close()
  await dns?.close()
})

const ok = (query: string) => dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
const fail = (query: string) => dns.set(query, 'A', { rcode: 'SERVFAIL' })

async function incidentsNamed(name: string): Promise<any[]> {
  const answer = await bench.call('GET', '/v1/incidents?limit=100')
  expect(answer.status).toBe(200)
  return answer.json.filter((i: { name: string }) => i.name === name)
}

describe('triggerIncident from real runs', () => {
  it('opens after the escalation (2 failed runs), keeps notifySubscribers, resolves on recovery; the alerts name the incident', async () => {
    const service = (await bench.call('POST', '/v1/status-pages/services', { name: 'Checkout' })).json
    const query = 'checkout.test'
    const id = await bench.createCheck(query, {
      name: 'Checkout resolver',
      useGlobalAlertSettings: false,
      alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
      triggerIncident: { serviceId: service.id, severity: 'MAJOR', name: 'Checkout down', description: 'Checkout does not resolve', notifySubscribers: true },
      alertChannels: { webhook: [{ name: 'incidents', url: `${hooks.url}/incidents` }] },
    })
    fail(query)
    expect((await bench.runOnce(id)).status).toBe('FAILED')
    // one failed run is below the threshold: no incident, no alert
    expect(await incidentsNamed('Checkout down')).toEqual([])
    expect((await bench.call('GET', `/v1/alert-notifications?checkId=${id}`)).json).toEqual([])

    expect((await bench.runOnce(id)).status).toBe('FAILED')
    const [opened] = await incidentsNamed('Checkout down')
    expect(opened).toMatchObject({ severity: 'MAJOR', services: [{ id: service.id, name: 'Checkout' }] })
    expect(opened.incidentUpdates).toHaveLength(1)
    expect(opened.incidentUpdates[0]).toMatchObject({ status: 'INVESTIGATING', description: 'Checkout does not resolve', notifySubscribers: true })
    const [failure] = await hooks.waitFor('/incidents', 1)
    expect(failure.json).toMatchObject({ alertType: 'ALERT_FAILURE', incidentId: opened.id })

    // failing on: the same incident, nothing added
    await bench.runOnce(id)
    expect(await incidentsNamed('Checkout down')).toHaveLength(1)

    ok(query)
    expect((await bench.runOnce(id)).status).toBe('PASSED')
    const [resolved] = await incidentsNamed('Checkout down')
    expect(resolved.id).toBe(opened.id)
    expect(resolved.incidentUpdates.map((u: any) => [u.status, u.notifySubscribers])).toEqual([
      ['RESOLVED', true],
      ['INVESTIGATING', true],
    ])
    expect(resolved.incidentUpdates[0].description).toBe('Checkout resolver recovered')
    const [, recovery] = await hooks.waitFor('/incidents', 2)
    expect(recovery.json).toMatchObject({ alertType: 'ALERT_RECOVERY', incidentId: opened.id })

    // failing again (past the threshold) opens a new incident
    fail(query)
    await bench.runOnce(id)
    await bench.runOnce(id)
    const both = await incidentsNamed('Checkout down')
    expect(both).toHaveLength(2)
    expect(both[1].id).toBe(opened.id)
  })

  it('notifySubscribers false is kept as false', async () => {
    const service = (await bench.call('POST', '/v1/status-pages/services', { name: 'Search' })).json
    const query = 'search.test'
    const id = await bench.createCheck(query, {
      triggerIncident: { serviceId: service.id, severity: 'MINOR', name: 'Search down', description: '', notifySubscribers: false },
    })
    fail(query)
    await bench.runOnce(id)
    ok(query)
    await bench.runOnce(id)
    const [incident] = await incidentsNamed('Search down')
    expect(incident.incidentUpdates.map((u: any) => [u.status, u.notifySubscribers])).toEqual([
      ['RESOLVED', false],
      ['INVESTIGATING', false],
    ])
    // no description given: the update says what failed
    expect(incident.incidentUpdates[1].description).toMatch(/^check search\.test is failing: .*SERVFAIL/)
  })
})

describe('GET /v1/incidents', () => {
  it('is paged like checks (limit 1-100, default 10; page from 1), newest first, with content-range', async () => {
    const other = (await import('../helpers.js')).caller(bench.server, (await import('../helpers.js')).KEY_B)
    const ids: string[] = []
    for (let n = 1; n <= 12; n++) {
      const created = await other('POST', '/v1/incidents', { name: `incident ${n}`, severity: 'MINOR' })
      expect(created.status).toBe(201)
      ids.push(created.json.id)
    }
    const newestFirst = [...ids].reverse()
    const first = await other('GET', '/v1/incidents')
    expect(first.status).toBe(200)
    expect(first.json.map((i: { id: string }) => i.id)).toEqual(newestFirst.slice(0, 10))
    expect(first.headers.get('content-range')).toBe('0-9/12')
    const second = await other('GET', '/v1/incidents?page=2')
    expect(second.json.map((i: { id: string }) => i.id)).toEqual(newestFirst.slice(10))
    expect(second.headers.get('content-range')).toBe('10-11/12')
    const small = await other('GET', '/v1/incidents?limit=5&page=2')
    expect(small.json.map((i: { id: string }) => i.id)).toEqual(newestFirst.slice(5, 10))
    const past = await other('GET', '/v1/incidents?limit=100&page=2')
    expect(past.json).toEqual([])
    expect(past.headers.get('content-range')).toBe('*/12')

    for (const bad of ['limit=0', 'limit=101', 'limit=abc', 'page=0', 'page=-1', 'limit=1.5']) {
      const keys = expect400(await other('GET', `/v1/incidents?${bad}`), 'query')
      expect(keys).toEqual([bad.split('=')[0]])
    }
  })
})
