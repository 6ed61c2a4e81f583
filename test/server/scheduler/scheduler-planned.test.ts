/**
 * Runs planned ahead, then the check changed: the planner works from the checks it read last
 * (re-read only when the schedule's version moves), and a claim leaves out the runs of a check
 * deactivated since they were planned. The clock is the test's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { caller, startTestServer } from '../helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

let dns: DnsServerHandle
beforeAll(async () => {
  dns = await startDnsServer()
  dns.set('planned.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
})
afterAll(() => dns.close())

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
// frequency 1, frequencyOffset 5: due at second 30 of every minute
const DUE = Date.parse('2026-03-01T10:00:30Z')

describe('runs planned before their check changed', () => {
  it('a check deactivated after its run was planned does not run; activated again, it runs at its next due time', async () => {
    const clock = { now: DUE - 100 }
    const server = await startTestServer({ runner: true, privateTargets: 'allow', clock: () => clock.now, schedulerOptions: { tickMs: 200 } })
    try {
      const call = caller(server)
      const body = {
        name: 'planned',
        frequency: 1,
        frequencyOffset: 5,
        locations: ['eu-west-1'],
        request: { query: 'planned.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
      }
      const created = await call('POST', '/v1/checks/dns', body)
      expect(created.status).toBe(201)
      const id = created.json.id
      await sleep(600) // planned: due within the next tick
      expect((await call('PUT', `/v1/checks/dns/${id}`, { ...body, activated: false })).status).toBe(200)
      clock.now = DUE + 1000
      await sleep(800)
      expect(server.completedRuns()).toBe(0)
      expect((await call('GET', `/v1/check-results/${id}`)).json).toEqual([])

      expect((await call('PUT', `/v1/checks/dns/${id}`, { ...body, activated: true })).status).toBe(200)
      clock.now = DUE + 60_000
      await waitFor(() => server.completedRuns() > 0, { what: 'the run' })
      const results = (await call('GET', `/v1/check-results/${id}`)).json
      expect(results).toHaveLength(1)
      expect(results[0].startedAt).toBe(new Date(DUE + 60_000).toISOString())
    } finally {
      await server.close()
    }
  }, 30_000)
})
