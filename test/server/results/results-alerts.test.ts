/**
 * Alert state from real runs (alertSettings, muted, triggerIncident): notifications are
 * recorded in the database (their deliveries come later); incidents are read through the API.
 * Later runs are run with their wall clock moved forward, for reminders and time-based escalation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startResultsBench, type ResultsBench } from './results-helpers.js'

let bench: ResultsBench

beforeAll(async () => {
  bench = await startResultsBench()
})
afterAll(async () => {
  await bench.close()
})

const MINUTE = 60_000
const ok = (query: string, delayMs = 0) => bench.dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }], delayMs })
const fail = (query: string) => bench.dns.set(query, 'A', { rcode: 'SERVFAIL' })

async function kinds(checkId: string): Promise<string[]> {
  return (await bench.store.alerts.notifications('acc-a', checkId)).map((n) => n.kind)
}

/** runs and records; answers the notifications this run produced */
async function step(checkId: string, options: { location?: string; clockOffsetMs?: number } = {}): Promise<string[]> {
  const { outcome } = await bench.runAndRecord(checkId, options)
  expect(outcome.recorded).toBe(true)
  return outcome.notifications
}

const own = (alertSettings: Record<string, unknown>) => ({ useGlobalAlertSettings: false, alertSettings })

describe('run-based escalation, reminders and recovery', () => {
  it('alerts after failedRunThreshold failed runs, reminds `amount` times every `interval` minutes, recovers on a pass', async () => {
    const query = 'escalate.example.test'
    const id = await bench.createCheck(
      query,
      own({
        escalationType: 'RUN_BASED',
        runBasedEscalation: { failedRunThreshold: 3 },
        reminders: { amount: 2, interval: 5 },
      }),
    )
    fail(query)
    expect(await step(id)).toEqual([])
    expect(await step(id)).toEqual([])
    expect(await kinds(id)).toEqual([])
    expect(await step(id)).toEqual(['ALERT_FAILURE'])
    expect(await step(id)).toEqual([])
    expect(await step(id, { clockOffsetMs: 5 * MINUTE + 2_000 })).toEqual(['REMINDER'])
    expect(await step(id, { clockOffsetMs: 6 * MINUTE })).toEqual([])
    expect(await step(id, { clockOffsetMs: 10 * MINUTE + 2_000 })).toEqual(['REMINDER'])
    expect(await step(id, { clockOffsetMs: 30 * MINUTE })).toEqual([])
    ok(query)
    expect(await step(id, { clockOffsetMs: 31 * MINUTE })).toEqual(['ALERT_RECOVERY'])
    expect(await step(id, { clockOffsetMs: 32 * MINUTE })).toEqual([])
    expect(await kinds(id)).toEqual(['ALERT_FAILURE', 'REMINDER', 'REMINDER', 'ALERT_RECOVERY'])
    const status = (await bench.call('GET', `/v1/check-statuses/${id}`)).json
    expect(status.hasFailures).toBe(false)

    // a pass in between starts the count again
    fail(query)
    expect(await step(id, { clockOffsetMs: 33 * MINUTE })).toEqual([])
    expect(await step(id, { clockOffsetMs: 34 * MINUTE })).toEqual([])
    ok(query)
    expect(await step(id, { clockOffsetMs: 35 * MINUTE })).toEqual([])
    fail(query)
    expect(await step(id, { clockOffsetMs: 36 * MINUTE })).toEqual([])
    expect(await kinds(id)).toEqual(['ALERT_FAILURE', 'REMINDER', 'REMINDER', 'ALERT_RECOVERY'])
  })

  it("useGlobalAlertSettings (the default) applies the account's settings: alert on the first failed run", async () => {
    const query = 'global.example.test'
    const id = await bench.createCheck(query, { alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 5 } } })
    fail(query)
    expect(await step(id)).toEqual(['ALERT_FAILURE'])
    ok(query)
    expect(await step(id)).toEqual(['ALERT_RECOVERY'])
  })

  it('a muted check records no notification, on failure or recovery, while its status moves', async () => {
    const query = 'muted.example.test'
    const id = await bench.createCheck(query, { muted: true })
    fail(query)
    expect(await step(id)).toEqual([])
    expect((await bench.call('GET', `/v1/check-statuses/${id}`)).json.hasFailures).toBe(true)
    ok(query)
    expect(await step(id)).toEqual([])
    expect((await bench.call('GET', `/v1/check-statuses/${id}`)).json.hasFailures).toBe(false)
    expect(await kinds(id)).toEqual([])

    // unmuted, the same runs alert
    await bench.call('PUT', `/v1/checks/dns/${id}`, {
      name: 'unmuted',
      doubleCheck: false,
      request: { query, nameServer: bench.dns.address, port: bench.dns.port },
    })
    fail(query)
    expect(await step(id)).toEqual(['ALERT_FAILURE'])
  })

  it('a degraded run alerts as degraded and recovers', async () => {
    const query = 'degraded.example.test'
    // thresholds far from a loaded machine's answer times: an answer at once passes, one after 1.5 s is degraded
    const id = await bench.createCheck(query, { degradedResponseTime: 1000, maxResponseTime: 5000 })
    ok(query, 1500)
    expect(await step(id)).toEqual(['ALERT_DEGRADED'])
    expect(await step(id)).toEqual([])
    fail(query)
    expect(await step(id)).toEqual(['ALERT_FAILURE'])
    ok(query)
    expect(await step(id)).toEqual(['ALERT_RECOVERY'])
  })
})

describe('time-based escalation and the parallel run threshold', () => {
  it('TIME_BASED alerts once the check has been failing for minutesFailingThreshold minutes', async () => {
    const query = 'time.example.test'
    const id = await bench.createCheck(query, own({ escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 10 } }))
    fail(query)
    expect(await step(id)).toEqual([])
    expect(await step(id, { clockOffsetMs: 5 * MINUTE })).toEqual([])
    expect(await step(id, { clockOffsetMs: 10 * MINUTE + 2_000 })).toEqual(['ALERT_FAILURE'])
    ok(query)
    expect(await step(id, { clockOffsetMs: 11 * MINUTE })).toEqual(['ALERT_RECOVERY'])
  })

  it('parallelRunFailureThreshold: alerting only while that share of the locations fails', async () => {
    const query = 'parallel.example.test'
    const id = await bench.createCheck(query, {
      locations: ['eu-west-1', 'us-east-1'],
      runParallel: true,
      ...own({ escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, parallelRunFailureThreshold: { enabled: true, percentage: 100 } }),
    })
    fail(query)
    expect(await step(id, { location: 'eu-west-1' })).toEqual([])
    expect(await step(id, { location: 'us-east-1' })).toEqual(['ALERT_FAILURE'])
    ok(query)
    expect(await step(id, { location: 'eu-west-1' })).toEqual(['ALERT_RECOVERY'])
    fail(query)
    expect(await step(id, { location: 'eu-west-1' })).toEqual(['ALERT_FAILURE'])
  })
})

describe('triggerIncident', () => {
  it('opens an incident on its service when the check starts alerting and resolves it when it recovers', async () => {
    const service = await bench.call('POST', '/v1/status-pages/services', { name: 'Public DNS' })
    expect(service.status).toBe(201)
    const query = 'incident.example.test'
    const id = await bench.createCheck(query, {
      name: 'resolver',
      triggerIncident: {
        serviceId: service.json.id,
        severity: 'CRITICAL',
        name: 'Resolver down',
        description: 'The resolver answers SERVFAIL',
        notifySubscribers: true,
      },
      ...own({ escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } }),
    })
    const incidents = async () => (await bench.call('GET', '/v1/incidents?limit=100')).json.filter((i: { name: string }) => i.name === 'Resolver down')

    fail(query)
    await step(id)
    expect(await incidents()).toEqual([])
    const alerting = await bench.runAndRecord(id)
    expect(alerting.outcome.notifications).toEqual(['ALERT_FAILURE'])
    let [incident] = await incidents()
    expect(alerting.outcome.openedIncidentId).toBe(incident.id)
    expect(incident.severity).toBe('CRITICAL')
    expect(incident.services.map((s: { id: string }) => s.id)).toEqual([service.json.id])
    expect(incident.incidentUpdates).toHaveLength(1)
    expect(incident.incidentUpdates[0]).toMatchObject({ status: 'INVESTIGATING', description: 'The resolver answers SERVFAIL', notifySubscribers: true })

    // still failing: the same incident, nothing added
    await step(id)
    expect(await incidents()).toHaveLength(1)

    ok(query)
    expect(await step(id)).toEqual(['ALERT_RECOVERY'])
    ;[incident] = await incidents()
    expect(incident.incidentUpdates.map((u: { status: string }) => u.status)).toEqual(['RESOLVED', 'INVESTIGATING'])
    expect(incident.incidentUpdates[0].description).toBe('resolver recovered')

    // failing again opens a new incident
    fail(query)
    await step(id)
    await step(id)
    expect(await incidents()).toHaveLength(2)
  })

  it('a muted check still opens and resolves its incident (muting silences notifications only)', async () => {
    const service = await bench.call('POST', '/v1/status-pages/services', { name: 'Muted service' })
    const query = 'muted-incident.example.test'
    const id = await bench.createCheck(query, {
      muted: true,
      triggerIncident: { serviceId: service.json.id, severity: 'MINOR', name: 'Muted check down', description: 'down' },
    })
    fail(query)
    const { outcome } = await bench.runAndRecord(id)
    expect(outcome.notifications).toEqual([])
    expect(outcome.openedIncidentId).toBeDefined()
    ok(query)
    const recovered = await bench.runAndRecord(id)
    expect(recovered.outcome.resolvedIncidentId).toBe(outcome.openedIncidentId)
    const incident = (await bench.call('GET', `/v1/incidents/${outcome.openedIncidentId}`)).json
    expect(incident.incidentUpdates[0].status).toBe('RESOLVED')
    expect(await kinds(id)).toEqual([])
  })
})
