/**
 * GET /metrics after real runs: DNS checks run by the server's own runner against a local DNS
 * server, an API check against a local HTTP server, an alert delivered to a local webhook
 * receiver; the answer read with a real Prometheus text parser. An account's key sees its own
 * checks only; the operator's metrics token sees every account's checks (with their account)
 * and the server's own metrics.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { startHttpServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { histogramCount, readExposition } from '../../helpers/prometheus.js'
import { eventually, startAlertsBench, startReceiver, type AlertsBench, type Receiver } from '../alerts/alerts-helpers.js'
import { KEY_B, caller } from '../helpers.js'
import { startAgent } from '../../../src/agent/index.js'

const TOKEN = 'metrics-token-0123456789abcdef'
const AGENT_KEY = 'key-agent-0123456789abcdef0123456789'

let dns: DnsServerHandle
let http: HttpServerHandle
let hooks: Receiver
let bench: AlertsBench

beforeAll(async () => {
  dns = await startDnsServer()
  http = await startHttpServer()
  hooks = await startReceiver()
  bench = await startAlertsBench(dns, {
    metricsToken: TOKEN,
    alerts: { pollMs: 100, timeoutMs: 5000 },
    apiKeys: [
      { key: 'key-a-0123456789abcdef0123456789abcdef', accountId: 'acc-a' },
      { key: KEY_B, accountId: 'acc-b' },
      { key: AGENT_KEY, accountId: 'acc-a', role: 'agent' },
    ],
  })
})
afterAll(async () => {
  await bench?.close()
  await hooks?.close()
  await http?.close()
  await dns?.close()
})

async function scrape(authorization?: string): Promise<{ status: number; type: string | null; text: string }> {
  const response = await fetch(`${bench.server.url}/metrics`, { headers: authorization ? { authorization } : {} })
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() }
}

describe('GET /metrics', () => {
  it("after real runs, an account key sees its checks' status, runs by status, phases and outbox; the operator token sees every account and the server", async () => {
    dns.set('resolver.metrics.test', 'A', { rcode: 'SERVFAIL' })
    dns.set('other.metrics.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    http.route('/health', { status: 200, body: 'ok' })
    const failing = await bench.createCheck('resolver.metrics.test', {
      name: 'Shop "resolver"',
      alertChannels: { webhook: [{ name: 'ops', url: `${hooks.url}/hook` }] },
    })
    const api = (
      await bench.call('POST', '/v1/checks/api', {
        name: 'Shop API',
        activated: false,
        request: { method: 'GET', url: `${http.origin}/health` },
      })
    ).json.id as string
    const callB = caller(bench.server, KEY_B)
    const other = (
      await callB('POST', '/v1/checks/dns', {
        name: 'B resolver',
        activated: false,
        doubleCheck: false,
        request: { query: 'other.metrics.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
      })
    ).json.id as string

    expect((await bench.runOnce(failing)).status).toBe('FAILED')
    expect((await bench.runOnce(failing)).status).toBe('FAILED')
    expect((await bench.runOnce(api)).status).toBe('PASSED')
    const trigger = await callB('POST', '/v1/check-sessions/trigger', { target: { checkId: [other] } })
    expect((await callB('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)).json.status).toBe('PASSED')
    await hooks.waitFor('/hook', 1)
    await eventually(
      () => bench.deliveries(failing),
      (list) => list[0]?.status === 'DELIVERED',
    )
    for (let i = 0; i < 3; i++) expect((await bench.call('GET', `/v1/checks/${api}`)).status).toBe(200)
    expect((await bench.call('GET', '/v1/no-such-route')).status).toBe(404)

    // account A's key
    const mine = await scrape('Bearer key-a-0123456789abcdef0123456789abcdef')
    expect(mine.status).toBe(200)
    expect(mine.type).toBe('text/plain; version=0.0.4; charset=utf-8')
    const a = readExposition(mine.text)
    const failingLabels = { check_id: failing, check_name: 'Shop "resolver"', check_type: 'DNS' }
    expect(a.value('monitors_check_status', failingLabels)).toBe(2)
    expect(a.value('monitors_check_up', failingLabels)).toBe(0)
    expect(a.value('monitors_check_status', { check_id: api, check_type: 'API' })).toBe(0)
    expect(a.value('monitors_check_up', { check_id: api })).toBe(1)
    expect(a.value('monitors_check_activated', { check_id: api })).toBe(0)
    expect(a.value('monitors_check_runs_total', { ...failingLabels, location: 'local', status: 'failed' })).toBe(2)
    expect(a.samples('monitors_check_runs_total', { check_id: failing, status: 'passed' })).toEqual([])
    expect(a.value('monitors_check_runs_total', { check_id: api, status: 'passed' })).toBe(1)
    expect(a.value('monitors_check_response_time_seconds', { check_id: api })).toBeGreaterThan(0)
    expect(a.value('monitors_check_last_result_timestamp_seconds', { check_id: api })).toBeGreaterThan(Date.now() / 1000 - 600)
    const phases = a
      .samples('monitors_check_phase_duration_seconds', { check_id: api, location: 'local' })
      .map((s) => s.labels.phase)
      .sort()
    expect(phases).toEqual(['dns', 'download', 'firstByte', 'tcp', 'tls'])
    expect(a.value('monitors_alert_deliveries', { status: 'DELIVERED' })).toBe(1)
    expect(a.value('monitors_alert_deliveries', { status: 'PENDING' })).toBe(0)
    // nothing of account B, no account label, none of the server's own metrics
    expect(mine.text).not.toContain(other)
    expect(mine.text).not.toContain('account=')
    expect(a.families.has('monitors_http_requests_total')).toBe(false)
    expect(a.families.has('monitors_store_operation_duration_seconds')).toBe(false)

    // the operator's token
    const all = await scrape(`Bearer ${TOKEN}`)
    expect(all.status).toBe(200)
    const o = readExposition(all.text)
    expect(o.value('monitors_check_status', { account: 'acc-b', check_id: other, check_name: 'B resolver' })).toBe(0)
    expect(o.value('monitors_check_status', { account: 'acc-a', check_id: failing })).toBe(2)
    expect(o.value('monitors_check_runs_total', { account: 'acc-b', check_id: other, status: 'passed' })).toBe(1)
    expect(o.value('monitors_alert_deliveries', { account: 'acc-a', status: 'DELIVERED' })).toBe(1)
    expect(o.value('monitors_alert_delivery_attempts_total', { channel_type: 'WEBHOOK', outcome: 'DELIVERED' })).toBe(1)
    // requests by route pattern, never by URL
    expect(o.value('monitors_http_requests_total', { method: 'GET', route: '/v1/checks/:id', status: '200' })).toBeGreaterThanOrEqual(3)
    expect(o.value('monitors_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1)
    expect(all.text).not.toContain(`route="/v1/checks/${api}"`)
    // the scheduler's runner started the four runs, each after its due time
    expect(histogramCount(all.text, 'monitors_scheduler_run_lag_seconds')).toBeGreaterThanOrEqual(4)
    expect(o.families.get('monitors_scheduler_runs_planned_total')?.type).toBe('COUNTER')
    // store latency: every run was recorded in a transaction
    expect(histogramCount(all.text, 'monitors_store_operation_duration_seconds', { operation: 'transaction' })).toBeGreaterThanOrEqual(4)
    expect(histogramCount(all.text, 'monitors_store_operation_duration_seconds', { operation: 'checks.create' })).toBe(3)
    expect(o.value('monitors_process_start_time_seconds')).toBeGreaterThan(0)

    // a deleted check is gone at once
    expect((await bench.call('DELETE', `/v1/checks/${api}`)).status).toBe(204)
    expect((await scrape(`Bearer ${TOKEN}`)).text).not.toContain(api)
  })

  it('answers 401 without a key or with a wrong token, 403 to an agent key', async () => {
    expect((await scrape()).status).toBe(401)
    const wrong = await scrape('Bearer metrics-token-wrong-0123456789')
    expect(wrong.status).toBe(401)
    expect(JSON.parse(wrong.text)).toMatchObject({ statusCode: 401 })
    expect((await scrape(`Bearer ${AGENT_KEY}`)).status).toBe(403)
  })
})

describe('the Grafana dashboard of examples/', () => {
  it('is a dashboard whose every panel queries metrics the server exports', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../../examples/grafana/monitors-dashboard.json', import.meta.url), 'utf8'))
    expect(dashboard.title).toBeTruthy()
    expect(dashboard.panels.length).toBeGreaterThan(10)
    const families = readExposition((await scrape(`Bearer ${TOKEN}`)).text).families
    const used = new Set<string>()
    for (const panel of dashboard.panels) {
      expect(panel.targets.length, panel.title).toBeGreaterThan(0)
      for (const target of panel.targets) for (const [name] of String(target.expr).matchAll(/monitors_[a-z_]+/g)) used.add(name)
    }
    for (const variable of dashboard.templating.list) for (const [name] of String(variable.definition ?? '').matchAll(/monitors_[a-z_]+/g)) used.add(name)
    const exported = (name: string) =>
      families.has(name) || (/_(bucket|sum|count)$/.test(name) && families.get(name.replace(/_(bucket|sum|count)$/, ''))?.type === 'HISTOGRAM')
    expect([...used].filter((name) => !exported(name))).toEqual([])
    expect(used.size).toBeGreaterThan(12)
  })
})

describe('GET /metrics on an agent', () => {
  it('counts the runs it ran by check and status, beside its health probes; a metrics token is required when set', async () => {
    dns.set('agent.metrics.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    const check = await bench.createCheck('agent.metrics.test', { name: 'Agent resolver', locations: ['eu-west-1'] })
    const agent = await startAgent({
      apiUrl: bench.server.url,
      apiKey: AGENT_KEY,
      locations: ['eu-west-1'],
      healthPort: 0,
      healthHost: '127.0.0.1',
      pollIntervalMs: 100,
      metricsToken: TOKEN,
      log: () => undefined,
      warn: () => undefined,
    })
    try {
      // the server leaves eu-west-1 to the agent once it has claimed (its own metrics say when)
      const claims = async () =>
        readExposition((await scrape(`Bearer ${TOKEN}`)).text).samples('monitors_http_requests_total', { route: '/v1/agent/claim', status: '200' })
      await eventually(claims, (found) => found.length === 1)
      expect((await bench.runOnce(check)).status).toBe('PASSED')
      const url = `http://127.0.0.1:${agent.healthPort}/metrics`
      expect((await fetch(url)).status).toBe(401)
      const answer = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } })
      expect(answer.status).toBe(200)
      expect(answer.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
      const m = readExposition(await answer.text())
      expect(
        m.value('monitors_agent_check_runs_total', {
          check_id: check,
          check_name: 'Agent resolver',
          check_type: 'DNS',
          location: 'eu-west-1',
          status: 'passed',
        }),
      ).toBe(1)
      expect(m.value('monitors_agent_runs_claimed_total')).toBe(1)
      expect(m.value('monitors_agent_results_posted_total')).toBe(1)
      expect(m.value('monitors_agent_ready')).toBe(1)
      expect((await fetch(`http://127.0.0.1:${agent.healthPort}/-/readiness`)).status).toBe(200)
    } finally {
      await agent.stop()
    }
  })
})
