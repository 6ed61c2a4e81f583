/**
 * A check paused and resumed runs at its next due time: neither the run planned before it was
 * paused nor a due time that fell while it was paused runs when it is resumed. The planner and
 * the runner are driven step by step here (no timers), so the order of their loops is the
 * test's, not the machine's: each case is the interleaving that made a resumed check run at once.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openStore, startLocalServer, type LocalServer } from '../../../src/server/index.js'
import { Scheduler } from '../../../src/server/scheduler/index.js'
import type { Store } from '../../../src/server/store/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { KEY_A, caller, type Call } from '../helpers.js'

// frequency 1, frequencyOffset 5: due at second 30 of every minute
const DUE = Date.parse('2026-03-01T10:00:30Z')

let dir: string
let dns: DnsServerHandle
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-resume-'))
  dns = await startDnsServer()
  dns.set('resume.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
afterAll(async () => {
  await dns.close()
  rmSync(dir, { recursive: true, force: true })
})

interface Setup {
  call: Call
  scheduler: Scheduler
  clock: { now: number }
  body: Record<string, unknown>
  id: string
  finals: () => Promise<string[]>
}

async function setUp(name: string): Promise<Setup> {
  const path = join(dir, `${name}.db`)
  const server: LocalServer = await startLocalServer({ dbPath: path, apiKeys: [{ key: KEY_A, accountId: 'acc-a' }] })
  cleanups.push(() => server.close())
  const store: Store = await openStore(path)
  cleanups.push(() => store.close())
  const clock = { now: DUE - 100 }
  // tickMs 200: the planner plans what falls due within the next 200 ms
  const scheduler = new Scheduler({ store, services: { now: () => clock.now }, tickMs: 200 })
  cleanups.push(() => scheduler.stop())
  const call = caller(server)
  const body = {
    name,
    frequency: 1,
    frequencyOffset: 5,
    locations: ['eu-west-1'],
    request: { query: 'resume.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
  }
  const created = await call('POST', '/v1/checks/dns', body)
  expect(created.status).toBe(201)
  const id = created.json.id as string
  const finals = async () => {
    const answer = await call('GET', `/v1/check-results/${id}?resultType=FINAL&limit=100`)
    expect(answer.status).toBe(200)
    return (answer.json as Array<{ startedAt: string }>).map((r) => r.startedAt)
  }
  return { call, scheduler, clock, body, id, finals }
}

async function setActivated(s: Setup, activated: boolean): Promise<void> {
  expect((await s.call('PUT', `/v1/checks/dns/${s.id}`, { ...s.body, activated })).status).toBe(200)
}

/** One tick of the scheduler (plan, claim, run) at the test's clock, and the runs it started recorded. */
async function runDue(s: Setup): Promise<void> {
  await s.scheduler.tick()
  await s.scheduler.stop() // waits for the runs in flight
}

describe('a paused check, resumed', () => {
  it('does not run the run planned before it was paused, even when no claim came while it was paused', async () => {
    const s = await setUp('planned-before')
    expect(await s.scheduler.planDue(s.clock.now)).toBe(1) // DUE is planned ahead
    await setActivated(s, false)
    s.clock.now = DUE + 1000
    await setActivated(s, true) // resumed before any runner claimed
    await s.scheduler.planDue(s.clock.now)
    await runDue(s)
    expect(await s.finals()).toEqual([])
  })

  it('does not catch up on a due time that fell while it was paused', async () => {
    const s = await setUp('fell-while-paused')
    await setActivated(s, false)
    await s.scheduler.planDue(s.clock.now) // the planner sees it paused
    s.clock.now = DUE + 1000
    expect(await s.scheduler.planDue(s.clock.now)).toBe(0)
    await setActivated(s, true)
    // DUE is within the grace of a missed run, but it fell while the check was paused
    expect(await s.scheduler.planDue(s.clock.now)).toBe(0)
    await runDue(s)
    expect(await s.finals()).toEqual([])
  })

  it('runs at its next due time after it was resumed', async () => {
    const s = await setUp('next-due')
    await s.scheduler.planDue(s.clock.now)
    await setActivated(s, false)
    s.clock.now = DUE + 1000
    await s.scheduler.planDue(s.clock.now)
    await setActivated(s, true)
    await s.scheduler.planDue(s.clock.now)
    s.clock.now = DUE + 60_000
    expect(await s.scheduler.planDue(s.clock.now)).toBe(1)
    await runDue(s)
    expect(await s.finals()).toEqual([new Date(DUE + 60_000).toISOString()])
  })

  it('a check that was never paused still runs the run planned for it', async () => {
    const s = await setUp('unpaused')
    expect(await s.scheduler.planDue(s.clock.now)).toBe(1)
    // an update that does not pause it keeps the planned run
    expect((await s.call('PUT', `/v1/checks/dns/${s.id}`, { ...s.body, name: 'renamed' })).status).toBe(200)
    s.clock.now = DUE + 10
    await runDue(s)
    expect(await s.finals()).toEqual([new Date(DUE + 10).toISOString()])
  })
})
