/**
 * Script runs waiting for a place of the script concurrency must not take the runner's slots
 * from the other check types: with more multi-step runs due than the server runs at once, a
 * DNS run triggered after them is claimed and finishes while they still wait. The real server
 * (SQLite file or PostgreSQL), a runner of 4 slots and a script concurrency of 1, multi-step
 * scripts of 4 s each (sandboxed processes, no browser) and a DNS server on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { prepareTestRuntime } from '../../helpers/runtime.js'
import { caller, startTestServer, type Call } from '../helpers.js'

let dir: string
let dns: DnsServerHandle
let server: LocalServer
let call: Call

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-script-load-'))
  dns = await startDnsServer()
  dns.set('shop.test', 'A', { records: [{ type: 'A', data: '192.0.2.7' }] })
  const runtimeCache = await prepareTestRuntime()
  server = await startTestServer({
    dbPath: join(dir, 'load.db'),
    runner: true,
    privateTargets: 'allow',
    runtimeCache,
    scriptConcurrency: 1,
    schedulerOptions: { tickMs: 50, concurrency: 4 },
  })
  call = caller(server)
}, 180_000)
afterAll(async () => {
  await server?.close()
  await dns?.close()
  rmSync(dir, { recursive: true, force: true })
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

describe('script runs under load', () => {
  it('a DNS run triggered after more multi-step runs than the runner has slots finishes before the second of them', async () => {
    const script = "import { test } from '@playwright/test'\ntest('wait', async () => { await new Promise((r) => setTimeout(r, 4000)) })\n"
    const multi: string[] = []
    for (let i = 0; i < 6; i++) {
      const created = await call('POST', '/v1/checks/multistep', { name: `Slow ${i}`, activated: false, doubleCheck: false, script })
      expect(created.status, created.text).toBe(201)
      multi.push(created.json.id)
    }
    const check = await call('POST', '/v1/checks/dns', {
      name: 'Shop DNS',
      activated: false,
      doubleCheck: false,
      request: { query: 'shop.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
    })
    expect(check.status, check.text).toBe(201)
    const multiSessions = await trigger(multi)
    // the runner claims the multi-step runs first (it claims every 50 ms)
    await new Promise((r) => setTimeout(r, 1500))
    const [dnsSession] = await trigger([check.json.id])
    await waitFor(dnsSession)
    for (const session of multiSessions) await waitFor(session)
    const dnsDone = await stoppedAt(check.json.id)
    const multiDone = (await Promise.all(multi.map(stoppedAt))).sort((a, b) => a - b)
    // one multi-step run at a time, 4 s each: the second stops 8 s or more after they began
    expect(multiDone[1] - multiDone[0]).toBeGreaterThanOrEqual(3500)
    expect(
      dnsDone,
      `DNS stopped at ${new Date(dnsDone).toISOString()}; multi-step runs at ${multiDone.map((t) => new Date(t).toISOString()).join(', ')}`,
    ).toBeLessThan(multiDone[1])
  }, 300_000)
})
