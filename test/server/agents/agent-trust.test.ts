/**
 * What the server takes from an agent's result, and what it takes from the claim: the run's
 * check and location are the claim's; its start and stop are moved into the claim's window on
 * the server's clock; fields a runner does not make are dropped. An agent with a wrong clock (or
 * one that lies) cannot pin a check's status, move a result to another location or slip fields
 * into what the server stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { caller, startTestServer, type Call } from '../helpers.js'

const T0 = Date.parse('2026-03-01T10:00:00Z')
const DAY = 86_400_000
let now = T0
let server: LocalServer
let call: Call

beforeAll(async () => {
  // no runner: every run is the agent's; the clock is the test's
  server = await startTestServer({ clock: () => now })
  call = caller(server)
})
afterAll(async () => {
  await server?.close()
})

const iso = (ms: number) => new Date(ms).toISOString()

function result(status: 'PASSED' | 'FAILED', startedAt: number, extra: Record<string, unknown> = {}) {
  const failed = status === 'FAILED'
  return {
    runLocation: 'eu-west-1',
    resultType: 'FINAL',
    attempt: 1,
    status,
    hasFailures: failed,
    hasErrors: false,
    isDegraded: false,
    timedOut: false,
    aborted: false,
    failureKind: failed ? 'ASSERTION' : null,
    responseTime: 12,
    startedAt: iso(startedAt),
    stoppedAt: iso(startedAt + 1000),
    error: failed ? 'RESPONSE_CODE EQUALS "NOERROR" failed: got "SERVFAIL"' : null,
    assertions: [],
    details: { kind: 'DNS', rcode: failed ? 'SERVFAIL' : 'NOERROR' },
    attempts: [],
    ...extra,
  }
}

/** Triggers a session of the check at the server's `now`, claims its run as an agent of `location`, posts `body`. */
async function runAs(checkId: string, location: string, body: Record<string, unknown>) {
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } })
  expect(trigger.status, trigger.text).toBe(201)
  const claim = await call('POST', '/v1/agent/claim', { agentId: 'edge-1', locations: [location] })
  expect(claim.json.runs).toHaveLength(1)
  const posted = await call('POST', `/v1/agent/runs/${encodeURIComponent(claim.json.runs[0].runId)}/result`, { result: body })
  expect(posted.status, posted.text).toBe(204)
  const session = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}`)
  const [final] = session.json.results
  return { final, stored: (await call('GET', `/v1/check-results/${checkId}/${final.checkResultId}`)).json }
}

async function dnsCheck(name: string, locations: string[]) {
  const created = await call('POST', '/v1/checks/dns', { name, activated: false, locations, request: { query: 'shop.example.com' } })
  expect(created.status, created.text).toBe(201)
  return created.json.id as string
}

describe('a result posted by an agent', () => {
  it('dated a day ahead is dated inside its claim: it does not pin the status, the next run sets it', async () => {
    now = T0
    const id = await dnsCheck('future', ['eu-west-1'])
    const ahead = await runAs(id, 'eu-west-1', result('FAILED', T0 + DAY))
    expect(ahead.final.startedAt).toBe(iso(T0))
    expect(ahead.final.stoppedAt).toBe(iso(T0))
    expect((await call('GET', `/v1/check-statuses/${id}`)).json).toMatchObject({ hasFailures: true })

    // a minute later the check passes: its status says so
    now = T0 + 60_000
    const next = await runAs(id, 'eu-west-1', result('PASSED', T0 + 60_000))
    expect(next.final.startedAt).toBe(iso(T0 + 60_000))
    expect((await call('GET', `/v1/check-statuses/${id}`)).json).toMatchObject({ hasFailures: false, lastCheckRunId: next.final.checkResultId })
  })

  it("dated before its claim, or stopping before it started, is moved into the claim's window", async () => {
    now = T0 + 2 * DAY
    const id = await dnsCheck('past', ['eu-west-1'])
    const claimedAt = now
    // the agent took 30 s on the server's clock; it says it started a day earlier and stopped before it started
    const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
    const [run] = (await call('POST', '/v1/agent/claim', { agentId: 'edge-1', locations: ['eu-west-1'] })).json.runs
    now = claimedAt + 30_000
    const body = result('PASSED', claimedAt - DAY, { stoppedAt: iso(claimedAt - 2 * DAY) })
    expect((await call('POST', `/v1/agent/runs/${encodeURIComponent(run.runId)}/result`, { result: body })).status).toBe(204)
    const [final] = (await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}`)).json.results
    expect([final.startedAt, final.stoppedAt]).toEqual([iso(claimedAt), iso(claimedAt)])

    // inside the window, the agent's times stand as sent
    const inside = await runAs(id, 'eu-west-1', result('PASSED', now, { startedAt: iso(now), stoppedAt: iso(now) }))
    expect([inside.final.startedAt, inside.final.stoppedAt]).toEqual([iso(now), iso(now)])
  })

  it('names the location of its claim, whatever runLocation it sends', async () => {
    now = T0 + 3 * DAY
    const id = await dnsCheck('where', ['eu-west-1', 'us-east-1'])
    const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
    const claim = await call('POST', '/v1/agent/claim', { agentId: 'edge-1', locations: ['us-east-1', 'eu-west-1'] })
    const runs = claim.json.runs as Array<{ runId: string; location: string }>
    expect(runs.map((r) => r.location).sort()).toEqual(['eu-west-1', 'us-east-1'])
    for (const run of runs) {
      const posted = await call('POST', `/v1/agent/runs/${encodeURIComponent(run.runId)}/result`, {
        result: result('PASSED', now, { runLocation: 'ap-south-1' }),
      })
      expect(posted.status).toBe(204)
    }
    const session = (await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}`)).json
    expect(session.results.map((r: { runLocation: string }) => r.runLocation).sort()).toEqual(['eu-west-1', 'us-east-1'])
    expect((await call('GET', `/v1/check-statuses/${id}`)).json.lastRunLocation).toMatch(/^(eu-west-1|us-east-1)$/)
    for (const final of session.results) {
      expect(JSON.stringify((await call('GET', `/v1/check-results/${id}/${final.checkResultId}`)).json)).not.toContain('ap-south-1')
    }
    const analytics = await call(
      'GET',
      `/v1/analytics/dns/${id}?metrics=availability&groupBy=runLocation&from=${(now - 3600_000) / 1000}&to=${(now + 3600_000) / 1000}`,
    )
    expect(analytics.status, analytics.text).toBe(200)
    expect(analytics.json.series.map((entry: string) => JSON.parse(entry).runLocation).sort()).toEqual(['eu-west-1', 'us-east-1'])
  })

  it("keeps only the fields a runner makes: the check's id and name are the claim's, anything else is dropped", async () => {
    now = T0 + 4 * DAY
    const id = await dnsCheck('fields', ['eu-west-1'])
    const other = await dnsCheck('another check', ['eu-west-1'])
    const { stored } = await runAs(
      id,
      'eu-west-1',
      result('PASSED', now, {
        checkId: other,
        name: 'not its name',
        sslDaysRemaining: 9999,
        heartbeatState: 'RECEIVED',
        injected: '<script>alert(1)</script>',
      }),
    )
    expect(stored.checkId).toBe(id)
    expect(stored.result).toMatchObject({ checkId: id, name: 'fields', runLocation: 'eu-west-1', status: 'PASSED', details: { kind: 'DNS', rcode: 'NOERROR' } })
    for (const field of ['sslDaysRemaining', 'heartbeatState', 'injected']) expect(stored.result).not.toHaveProperty(field)
    expect((await call('GET', `/v1/check-statuses/${id}`)).json.sslDaysRemaining).toBeNull()
    expect((await call('GET', `/v1/check-results/${other}`)).json).toEqual([])
  })
})
