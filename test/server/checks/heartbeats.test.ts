/**
 * Heartbeat checks on the real server: a clock the test moves by hand and a fast scheduler
 * tick. Period 1 minute, grace 30 seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { caller, dnsBody, startTestServer, type Call } from '../helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const T0 = Date.parse('2026-03-01T10:00:00Z')
const S = 1000
let now = T0
let server: LocalServer
let call: Call
let anonymous: Call

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const body = (extra: Record<string, unknown> = {}) => ({
  name: 'nightly backup',
  heartbeat: { period: 1, periodUnit: 'minutes', grace: 30, graceUnit: 'seconds' },
  ...extra,
})

async function events(checkId: string): Promise<Array<{ id: string; state: string; timestamp: string }>> {
  const answer = await call('GET', `/v1/checks/heartbeats/${checkId}/events?startTime=${T0 - S}&endTime=${now + S}`)
  expect(answer.status).toBe(200)
  return answer.json[0].events.slice().reverse()
}

async function until<T>(probe: () => Promise<T | undefined>, ms = 5000): Promise<T> {
  return (await waitFor(probe, { timeoutMs: ms, intervalMs: 20 })) as T
}

beforeAll(async () => {
  server = await startTestServer({ clock: () => now, scheduler: true, schedulerOptions: { tickMs: 20 } })
  call = caller(server)
  anonymous = caller(server, null)
})
afterAll(async () => {
  await server.close()
})

describe('heartbeat checks', () => {
  let id: string
  let token: string

  it('creates a heartbeat check with a ping token and URL, validated like every check', async () => {
    const created = await call('POST', '/v1/checks/heartbeat', body({ heartbeat: { ...body().heartbeat, pingToken: 'mine', pingUrl: 'x' } }))
    expect(created.status).toBe(201)
    expect(created.json.checkType).toBe('HEARTBEAT')
    id = created.json.id
    token = created.json.heartbeat.pingToken
    expect(token).toMatch(/^[0-9a-f-]{36}$/)
    expect(created.json.heartbeat.pingUrl).toBe(`${server.url}/ping/${token}`)
    const bad = await call('POST', '/v1/checks/heartbeat', body({ heartbeat: { period: 10, periodUnit: 'seconds', grace: 0, graceUnit: 'weeks' } }))
    expect(bad.status).toBe(400)
    expect(bad.text).toContain('heartbeat.period')
    expect(bad.text).toContain('heartbeat.graceUnit')
  })

  it('keeps the token on update and answers 404 for a check of another type', async () => {
    const updated = await call('PUT', `/v1/checks/heartbeat/${id}`, body({ tags: ['nightly'], heartbeat: { ...body().heartbeat, pingToken: 'other' } }))
    expect(updated.status).toBe(200)
    expect(updated.json.heartbeat.pingToken).toBe(token)
    expect(updated.json.tags).toEqual(['nightly'])
    const dns = await call('POST', '/v1/checks/dns', dnsBody())
    expect((await call('PUT', `/v1/checks/heartbeat/${dns.json.id}`, body())).status).toBe(404)
    const listed = await call('GET', '/v1/checks?checkType=HEARTBEAT')
    expect(listed.json.map((c: { id: string }) => c.id)).toEqual([id])
  })

  it('answers pings without a key: on time RECEIVED, inside the grace GRACE, after it LATE', async () => {
    now = T0 + 30 * S
    const onTime = await anonymous('GET', `/ping/${token}`)
    expect(onTime.status).toBe(200)
    expect(onTime.text).toBe('OK')
    now += 70 * S // 10 s into the grace
    expect((await anonymous('POST', `/ping/${token}`, undefined, { 'user-agent': 'cron/1.0' })).status).toBe(200)
    now += 95 * S // 5 s after period + grace
    expect((await anonymous('GET', `/ping/${token}`)).status).toBe(200)
    const states = (await events(id)).map((e) => [e.state, e.timestamp])
    expect(states).toEqual([
      ['RECEIVED', new Date(T0 + 30 * S).toISOString()],
      ['GRACE', new Date(T0 + 100 * S).toISOString()],
      ['FAILING', new Date(T0 + 190 * S).toISOString()], // the missed period, recorded before the late ping
      ['LATE', new Date(T0 + 195 * S).toISOString()],
    ])
    const status = await call('GET', `/v1/check-statuses/${id}`)
    expect(status.json.hasFailures).toBe(false) // the late ping recovered it
  })

  it('fails the check once when a period and grace pass without a ping (scheduler tick)', async () => {
    now = T0 + 195 * S + 91 * S
    const failing = await until(async () => {
      const all = await events(id)
      return all.length === 5 ? all : undefined
    })
    expect(failing[4].state).toBe('FAILING')
    expect(failing[4].timestamp).toBe(new Date(T0 + 285 * S).toISOString())
    const status = await call('GET', `/v1/check-statuses/${id}`)
    expect(status.json.hasFailures).toBe(true)
    await sleep(200) // many ticks later: still one FAILING for that period
    expect((await events(id)).length).toBe(5)
    const one = await call('GET', `/v1/checks/heartbeats/${id}/events/${failing[4].id}`)
    expect(one.status).toBe(200)
    expect(one.json.event.state).toBe('FAILING')
  })

  it('computes availability from the events: (RECEIVED + GRACE) / (RECEIVED + GRACE + FAILING)', async () => {
    const answer = await call('GET', `/v1/checks/heartbeats/${id}/availability?startTime=${T0}&endTime=${T0 + 300 * S}`)
    expect(answer.status).toBe(200)
    // RECEIVED, GRACE pass; two FAILING periods; the LATE ping is counted by its FAILING
    expect(answer.json).toEqual({ successRatio: { previousPeriod: 100, currentPeriod: 50 }, totalEntitiesCurrentPeriod: 4 })
    const firstHalf = await call(
      'GET',
      `/v1/checks/heartbeats/${id}/availability?startTime=${new Date(T0).toISOString()}&endTime=${new Date(T0 + 150 * S).toISOString()}`,
    )
    expect(firstHalf.json).toEqual({ successRatio: { previousPeriod: 100, currentPeriod: 100 }, totalEntitiesCurrentPeriod: 2 })
    const defaults = await call('GET', `/v1/checks/heartbeats/${id}/availability`)
    expect(defaults.json.totalEntitiesCurrentPeriod).toBe(4)
  })

  it('answers its pings and missed periods as its check results, newest first; the status links to the newest', async () => {
    const listed = await call('GET', `/v1/check-results/${id}?limit=100`)
    expect(listed.status).toBe(200)
    expect(listed.headers.get('content-range')).toBe('0-4/5')
    const seen = listed.json.map(
      (r: { status: string; startedAt: string; resultType: string; runLocation: string; result: { details: { kind: string; state: string } } }) => [
        r.result.details.state,
        r.status,
        r.startedAt,
        r.resultType,
        r.runLocation,
        r.result.details.kind,
      ],
    )
    expect(seen).toEqual([
      ['FAILING', 'FAILED', new Date(T0 + 285 * S).toISOString(), 'FINAL', 'heartbeat', 'HEARTBEAT'],
      ['LATE', 'PASSED', new Date(T0 + 195 * S).toISOString(), 'FINAL', 'heartbeat', 'HEARTBEAT'],
      ['FAILING', 'FAILED', new Date(T0 + 190 * S).toISOString(), 'FINAL', 'heartbeat', 'HEARTBEAT'],
      ['GRACE', 'PASSED', new Date(T0 + 100 * S).toISOString(), 'FINAL', 'heartbeat', 'HEARTBEAT'],
      ['RECEIVED', 'PASSED', new Date(T0 + 30 * S).toISOString(), 'FINAL', 'heartbeat', 'HEARTBEAT'],
    ])
    expect(listed.json[0].error).toBe('No ping received within the period and grace')
    expect(listed.json[3].result.details.userAgent).toBe('cron/1.0')
    const status = await call('GET', `/v1/check-statuses/${id}`)
    const newest = await call('GET', `/v1/check-results/${id}/${status.json.lastCheckRunId}`)
    expect(newest.status).toBe(200)
    expect(newest.json).toMatchObject({ id: status.json.lastCheckRunId, checkId: id, status: 'FAILED', checkSessionId: null })
    expect((await call('GET', `/v1/check-results/${id}?resultType=FINAL&limit=2&page=2`)).json.map((r: { id: string }) => r.id)).toEqual([
      listed.json[2].id,
      listed.json[3].id,
    ])
  })

  it('answers 404 to an unknown token and to a check that is not a heartbeat', async () => {
    const unknown = await anonymous('GET', '/ping/00000000-0000-0000-0000-000000000000')
    expect(unknown.status).toBe(404)
    expect(unknown.text).not.toBe('OK')
    const dns = await call('POST', '/v1/checks/dns', dnsBody({ name: 'another' }))
    expect((await call('GET', `/v1/checks/heartbeats/${dns.json.id}/availability`)).status).toBe(404)
    expect((await anonymous('GET', `/v1/checks/heartbeats/${id}/availability`)).status).toBe(401)
  })

  it('forgets the token when the check is deleted', async () => {
    expect((await call('DELETE', `/v1/checks/${id}`)).status).toBe(204)
    expect((await anonymous('POST', `/ping/${token}`)).status).toBe(404)
    expect((await call('GET', `/v1/checks/heartbeats/${id}/events`)).status).toBe(404)
  })
})

describe('a heartbeat check that is never pinged', () => {
  it('fails once for every period that passes without a ping: alerts after the second with failedRunThreshold 2, counts a jump of the clock period by period, recovers at the next ping', async () => {
    const start = now
    const created = await call(
      'POST',
      '/v1/checks/heartbeat',
      body({
        name: 'never pinged',
        useGlobalAlertSettings: false,
        alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
      }),
    )
    expect(created.status, created.text).toBe(201)
    const id = created.json.id
    const failing = async () => (await events(id)).filter((e) => e.state === 'FAILING')
    const failedCount = (count: number) => until(async () => ((await failing()).length === count ? true : undefined))
    const notifications = async () =>
      ((await call('GET', `/v1/alert-notifications?checkId=${id}`)).json as Array<{ alertType: string; created_at: string }>)
        .sort((a, b) => a.created_at.localeCompare(b.created_at))
        .map((n) => n.alertType)
    // period 1 minute, grace 30 s: the k-th period of the silence (k from 0) is missed at start + k × 60 s + 90 s
    now = start + 91 * S
    await failedCount(1)
    expect((await call('GET', `/v1/check-statuses/${id}`)).json.hasFailures).toBe(true)
    expect(await notifications()).toEqual([]) // one failed run of the two the threshold asks for
    now = start + 151 * S
    await failedCount(2)
    expect(await notifications()).toEqual(['ALERT_FAILURE'])
    // the clock jumps three periods at once: three more failed runs, one a period
    now = start + 331 * S
    await failedCount(5)
    expect((await failing()).map((e) => e.timestamp)).toEqual([90, 150, 210, 270, 330].map((s) => new Date(start + s * S).toISOString()))
    const results = (await call('GET', `/v1/check-results/${id}?limit=100`)).json as Array<{
      status: string
      result: { details: { state: string; periodStartedAt: string } }
    }>
    expect(results.map((r) => [r.status, r.result.details.state, r.result.details.periodStartedAt])).toEqual(
      [240, 180, 120, 60, 0].map((s) => ['FAILED', 'FAILING', new Date(start + s * S).toISOString()]),
    )
    expect(await notifications()).toEqual(['ALERT_FAILURE']) // still alerting: no second alert, no reminder asked for
    // a ping ends the silence: LATE, passing, one recovery; the periods before it stay counted once
    now = start + 335 * S
    expect((await anonymous('GET', `/ping/${created.json.heartbeat.pingToken}`)).status).toBe(200)
    expect((await events(id)).map((e) => e.state)).toEqual(['FAILING', 'FAILING', 'FAILING', 'FAILING', 'FAILING', 'LATE'])
    expect((await call('GET', `/v1/check-statuses/${id}`)).json.hasFailures).toBe(false)
    expect(await notifications()).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY'])
    const availability = await call('GET', `/v1/checks/heartbeats/${id}/availability?startTime=${start}&endTime=${now + S}`)
    expect(availability.json).toMatchObject({ successRatio: { currentPeriod: 0 }, totalEntitiesCurrentPeriod: 5 })
  })
})

describe('heartbeat checks on one database served by two processes', () => {
  it('records FAILING once per missed period, whichever scheduler sees it first, also when the clock jumps several periods', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = mkdtempSync(join(tmpdir(), 'monitors-heartbeats-'))
    let clock = T0
    const options = { dbPath: join(dir, 'db.sqlite'), clock: () => clock, scheduler: true, schedulerOptions: { tickMs: 5 } }
    const a = await startTestServer(options)
    const b = await startTestServer(options)
    try {
      const created = await caller(a)('POST', '/v1/checks/heartbeat', body({ name: 'shared' }))
      expect(created.status).toBe(201)
      const failing = async () => {
        const answer = await caller(b)('GET', `/v1/checks/heartbeats/${created.json.id}/events?startTime=${T0}&endTime=${clock + S}`)
        return (answer.json[0].events as Array<{ state: string; timestamp: string }>).filter((e) => e.state === 'FAILING')
      }
      clock += 91 * S // past period + grace since the period started
      await until(async () => ((await failing()).length >= 1 ? true : undefined))
      await sleep(100) // both schedulers tick many times
      expect((await failing()).length).toBe(1) // the clock still: the next period has not passed
      clock += 4 * 60 * S // four more periods at once, swept by both
      await until(async () => ((await failing()).length >= 5 ? true : undefined))
      // a ping ends the silence (recording what no sweep did yet): each period once
      expect((await caller(a, null)('GET', `/ping/${created.json.heartbeat.pingToken}`)).status).toBe(200)
      expect((await failing()).map((e) => e.timestamp).reverse()).toEqual([90, 150, 210, 270, 330].map((s) => new Date(T0 + s * S).toISOString()))
      const results = (await caller(b)('GET', `/v1/check-results/${created.json.id}?limit=100`)).json as Array<{ status: string }>
      expect(results.map((r) => r.status)).toEqual(['PASSED', 'FAILED', 'FAILED', 'FAILED', 'FAILED', 'FAILED'])
      const states = (await caller(b)('GET', `/v1/checks/heartbeats/${created.json.id}/events?startTime=${T0}&endTime=${clock + S}`)).json[0].events.map(
        (e: { state: string }) => e.state,
      )
      expect(states[0]).toBe('LATE')
    } finally {
      await a.close()
      await b.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('heartbeat events and retention', () => {
  it('prunes events older than the retention period, as results are', async () => {
    let clock = T0
    const server = await startTestServer({ clock: () => clock, scheduler: true, retentionDays: 1, schedulerOptions: { tickMs: 5, pruneEveryMs: 1 } })
    try {
      const api = caller(server)
      const created = await api('POST', '/v1/checks/heartbeat', body({ heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' } }))
      clock = T0 + 1000
      expect((await caller(server, null)('GET', `/ping/${created.json.heartbeat.pingToken}`)).status).toBe(200)
      const count = async () =>
        (await api('GET', `/v1/checks/heartbeats/${created.json.id}/events?startTime=0&endTime=${clock + 1}`)).json[0].events.filter(
          (e: { state: string }) => e.state === 'RECEIVED',
        ).length
      expect(await count()).toBe(1)
      clock = T0 + 2 * 86_400_000 // the ping is now older than the one day kept
      await until(async () => ((await count()) === 0 ? true : undefined))
    } finally {
      await server.close()
    }
  })
})
