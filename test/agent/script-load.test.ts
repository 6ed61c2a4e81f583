/**
 * An agent's script runs waiting for a place of its script concurrency must not take its slots
 * from the other check types (as on the server's runner, test/server/checks/script-load.test.ts): with
 * more multi-step runs due at its location than it runs at once, a DNS run due after them is
 * claimed and finishes while they still wait. The real server (SQLite or PostgreSQL) with no
 * runner of its own, `monitors agent` with 4 slots and a script concurrency of 1, multi-step
 * scripts of 4 s each (sandboxed processes, no browser) and a DNS server on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../src/server/index.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { prepareTestRuntime } from '../helpers/runtime.js'
import { caller, KEY_A, startTestServer, type Call } from '../server/helpers.js'
import { spawnAgent, type AgentProcess } from './helpers.js'

let dns: DnsServerHandle
let server: LocalServer
let call: Call
let agent: AgentProcess

beforeAll(async () => {
  dns = await startDnsServer()
  dns.set('shop.test', 'A', { records: [{ type: 'A', data: '192.0.2.7' }] })
  const runtimeCache = await prepareTestRuntime()
  server = await startTestServer({ scheduler: true, runner: false, schedulerOptions: { tickMs: 100 } })
  call = caller(server)
  agent = spawnAgent(['--locations', 'eu-west-2', '--health-port', '0', '--poll-interval', '100ms', '--concurrency', '4', '--script-concurrency', '1'], {
    MONITORING_API_URL: server.url,
    MONITORING_API_KEY: KEY_A,
    MONITORS_RUNTIME_CACHE: runtimeCache,
  })
  await agent.waitFor(/1 of them browser, multi-step or Playwright/, 60_000)
}, 180_000)
afterAll(async () => {
  if (agent) {
    agent.child.kill('SIGTERM')
    await agent.exited
  }
  await server?.close()
  await dns?.close()
})

async function trigger(ids: string[]): Promise<string[]> {
  const answer = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: ids } })
  expect(answer.status, answer.text).toBe(201)
  return answer.json.sessions.map((s: { checkSessionId: string }) => s.checkSessionId)
}

async function waitFor(session: string): Promise<void> {
  const deadline = Date.now() + 180_000
  for (;;) {
    const done = await call('GET', `/v1/check-sessions/${session}/completion?maxWaitSeconds=30`)
    if (done.status === 408 && Date.now() < deadline) continue
    expect(done.status, done.text).toBe(200)
    return
  }
}

async function stoppedAt(checkId: string): Promise<number> {
  const results = await call('GET', `/v1/check-results/${checkId}?resultType=FINAL`)
  expect(results.json, results.text).toHaveLength(1)
  return Date.parse(results.json[0].stoppedAt)
}

describe('an agent under script load', () => {
  it('a DNS run due after more multi-step runs than the agent has slots finishes before the second of them', async () => {
    const script = "import { test } from '@playwright/test'\ntest('wait', async () => { await new Promise((r) => setTimeout(r, 4000)) })\n"
    const multi: string[] = []
    for (let i = 0; i < 6; i++) {
      const created = await call('POST', '/v1/checks/multistep', { name: `Slow ${i}`, activated: false, doubleCheck: false, locations: ['eu-west-2'], script })
      expect(created.status, created.text).toBe(201)
      multi.push(created.json.id)
    }
    const check = await call('POST', '/v1/checks/dns', {
      name: 'Shop DNS',
      activated: false,
      doubleCheck: false,
      frequency: 1,
      locations: ['eu-west-2'],
      request: { query: 'shop.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
    })
    expect(check.status, check.text).toBe(201)
    const multiSessions = await trigger(multi)
    // the agent claims the multi-step runs first (it polls every 100 ms): the first has finished
    await agent.waitFor(/"Slow \d" eu-west-2 PASSED/, 120_000)
    const [dnsSession] = await trigger([check.json.id])
    await waitFor(dnsSession)
    for (const session of multiSessions) await waitFor(session)
    const dnsDone = await stoppedAt(check.json.id)
    const multiDone = (await Promise.all(multi.map(stoppedAt))).sort((a, b) => a - b)
    // one multi-step run at a time, 4 s each: the second stops 4 s or more after the first
    expect(multiDone[1] - multiDone[0]).toBeGreaterThanOrEqual(3500)
    expect(
      dnsDone,
      `DNS stopped at ${new Date(dnsDone).toISOString()}; multi-step runs at ${multiDone.map((t) => new Date(t).toISOString()).join(', ')}\n${agent.output()}`,
    ).toBeLessThan(multiDone[1])
    expect(agent.stderr()).not.toMatch(/refused|failed inside/)
  }, 300_000)
})
