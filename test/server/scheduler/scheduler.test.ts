/**
 * The scheduler on the real server, against the test DNS server, with a fast tick and a clock
 * the test moves on by whole minutes: each minute is done when a sentinel check (every minute,
 * never paused) has run once more, so a check that must not run is seen not to have run.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer, type LocalServerOptions } from '../../../src/server/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { KEY_A, caller, type Call } from '../helpers.js'

let dir: string
let dns: DnsServerHandle
const servers: LocalServer[] = []

/**
 * A clock the test moves by whole minutes, starting on a due time of the checks (frequency 1,
 * frequencyOffset 1: six seconds past each minute), so a check runs when created and once at each
 * minute the clock moves on: how many times each has run is known exactly.
 */
function drivenClock() {
  let now = Date.parse('2026-03-01T10:00:06Z')
  return {
    clock: () => now,
    minute: () => {
      now += 60_000
    },
  }
}

/**
 * Waits until each check (its name: its id) has run exactly `times` times: queried the DNS server
 * and recorded its FINAL result. The clock moves on only then: a run still in flight when it
 * jumps a minute would time out.
 */
async function ranTimes(call: Call, checks: Record<string, string>, times: number): Promise<void> {
  const counts = async () => Promise.all(Object.entries(checks).map(async ([name, id]) => [queries(`${name}.test`), (await finals(call, id)).length]))
  await expect.poll(counts, { timeout: 5_000, interval: 20 }).toEqual(Object.keys(checks).map(() => [times, times]))
}

async function start(db: string, options: LocalServerOptions): Promise<LocalServer> {
  const server = await startLocalServer({
    dbPath: join(dir, db),
    apiKeys: [{ key: KEY_A, accountId: 'acc-a' }],
    rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
    ...options,
  })
  servers.push(server)
  return server
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const queries = (name: string) => dns.queries.filter((q) => q.name === name).length

const dnsCheck = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  frequency: 1,
  frequencyOffset: 1,
  request: { query: `${name}.test`, recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
  ...extra,
})

async function create(call: Call, body: Record<string, unknown>): Promise<string> {
  const answer = await call('POST', '/v1/checks/dns', body)
  expect(answer.status).toBe(201)
  return answer.json.id
}

async function finals(call: Call, checkId: string): Promise<Array<{ runLocation: string; result: { runLocation: string } }>> {
  const answer = await call('GET', `/v1/check-results/${checkId}?resultType=FINAL&limit=100`)
  expect(answer.status).toBe(200)
  return answer.json
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-scheduler-'))
  dns = await startDnsServer()
  for (const name of [
    'sentinel',
    'every-minute',
    'paused',
    'in-maintenance',
    'shared-0',
    'shared-1',
    'shared-2',
    'shared-3',
    'shared-4',
    'shared-5',
    'lease',
  ]) {
    dns.set(`${name}.test`, 'A', { records: [{ type: 'A', data: '192.0.2.9' }] })
  }
})
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})
afterAll(async () => {
  await dns.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('scheduled runs', () => {
  it('an activated check runs every minute, in its locations in turn; activated: false and a maintenance window stop it', async () => {
    const time = drivenClock()
    const server = await start('schedule.db', { runner: true, clock: time.clock, schedulerOptions: { tickMs: 20 } })
    const call = caller(server)
    const now = time.clock()
    const window = await call('POST', '/v1/maintenance-windows', {
      name: 'upgrade',
      tags: ['db'],
      startsAt: new Date(now - 3_600_000).toISOString(),
      endsAt: new Date(now + 86_400_000).toISOString(),
    })
    expect(window.status).toBe(201)
    const every = await create(call, dnsCheck('every-minute', { locations: ['eu-west-1', 'us-east-1'], tags: ['web'] }))
    const paused = await create(call, dnsCheck('paused', { activated: false }))
    const maintained = await create(call, dnsCheck('in-maintenance', { tags: ['db', 'web'] }))
    const sentinel = { sentinel: await create(call, dnsCheck('sentinel')) }
    const both = { ...sentinel, 'every-minute': every }
    // each ran when created, then once a minute; the others never
    await ranTimes(call, both, 1)
    for (let minute = 1; minute <= 4; minute++) {
      time.minute()
      await ranTimes(call, both, 1 + minute)
    }
    expect(queries('paused.test')).toBe(0)
    expect(queries('in-maintenance.test')).toBe(0)
    expect(await finals(call, paused)).toEqual([])
    expect(await finals(call, maintained)).toEqual([])

    // one FINAL result per run, one location per run in turn
    const results = await finals(call, every)
    const locations = results.map((r) => r.runLocation).reverse()
    for (let i = 1; i < locations.length; i++) expect(locations[i]).not.toBe(locations[i - 1])
    expect(new Set(locations)).toEqual(new Set(['eu-west-1', 'us-east-1']))

    // deactivated: no run after it, for three minutes in which the sentinel ran three times
    const body = (await call('GET', `/v1/checks/${every}`)).json
    const { id: _id, checkType: _type, created_at: _c, updated_at: _u, ...rest } = body
    expect((await call('PUT', `/v1/checks/dns/${every}`, { ...rest, activated: false })).status).toBe(200)
    for (let minute = 1; minute <= 3; minute++) {
      time.minute()
      await ranTimes(call, sentinel, 5 + minute)
    }
    expect(queries('every-minute.test')).toBe(5)

    // the window ends: the maintained check runs again at its next due time
    const windowId = window.json.id
    expect(
      (
        await call('PUT', `/v1/maintenance-windows/${windowId}`, {
          ...window.json,
          id: undefined,
          created_at: undefined,
          updated_at: undefined,
          endsAt: new Date(now).toISOString(),
        })
      ).status,
    ).toBe(200)
    time.minute()
    await ranTimes(call, sentinel, 9)
    await ranTimes(call, { 'in-maintenance': maintained }, 1)
  }, 40_000)

  it('runParallel runs every location at each due time', async () => {
    const time = drivenClock()
    const server = await start('parallel.db', { runner: true, clock: time.clock, schedulerOptions: { tickMs: 20 } })
    const call = caller(server)
    const id = await create(call, dnsCheck('shared-5', { locations: ['eu-west-1', 'us-east-1', 'ap-south-1'], runParallel: true }))
    await ranTimes(call, { 'shared-5': id }, 3)
    for (let minute = 1; minute <= 2; minute++) {
      time.minute()
      await ranTimes(call, { 'shared-5': id }, 3 + 3 * minute)
    }
    await server.close()
    const results = await finals(caller(await start('parallel.db', {})), id)
    // three due times (when created, then two minutes), each in all three locations
    expect(results).toHaveLength(9)
    expect(new Set(results.map((r) => r.runLocation))).toEqual(new Set(['eu-west-1', 'us-east-1', 'ap-south-1']))
    expect(queries('shared-5.test')).toBe(9)
  }, 20_000)

  it('two servers on one database never run the same due run twice', async () => {
    const time = drivenClock()
    // a run at a time each, and each run 100 ms: the five runs of a minute are more than one server
    // takes before the other's next tick, so both share them (a driven clock makes all five due at once)
    for (let i = 0; i < 5; i++) dns.set(`shared-${i}.test`, 'A', { records: [{ type: 'A', data: '192.0.2.9' }], delayMs: 100 })
    const options = { runner: true, clock: time.clock, schedulerOptions: { tickMs: 10, concurrency: 1 } }
    const one = await start('shared.db', options)
    const two = await start('shared.db', options)
    const call = caller(one)
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push(await create(i % 2 ? caller(two) : call, dnsCheck(`shared-${i}`)))
    const checks = Object.fromEntries(ids.map((id, i) => [`shared-${i}`, id]))
    await ranTimes(call, checks, 1)
    for (let minute = 1; minute <= 4; minute++) {
      time.minute()
      await ranTimes(call, checks, 1 + minute)
    }
    await Promise.all(servers.splice(0).map((s) => s.close()))
    let total = 0
    const reader = await start('shared.db', {})
    for (let i = 0; i < 5; i++) {
      const results = await finals(caller(reader), ids[i])
      // one query and one result per due time: never two runners on one run
      expect(results).toHaveLength(5)
      expect(queries(`shared-${i}.test`)).toBe(results.length)
      total += results.length
    }
    // both shared the work
    expect(one.completedRuns()).toBeGreaterThan(0)
    expect(two.completedRuns()).toBeGreaterThan(0)
    expect(one.completedRuns() + two.completedRuns()).toBe(total)
  }, 30_000)
})

describe('leases', () => {
  it('a run whose runner died is run again once its lease expires; the server leaves live agents their locations', async () => {
    let now = Date.parse('2026-03-01T10:00:00Z')
    const clock = () => now
    // no runner: the run waits for the agent
    const first = await start('lease.db', { scheduler: true, clock, schedulerOptions: { tickMs: 20 } })
    const call = caller(first)
    const id = await create(call, dnsCheck('lease', { activated: false, locations: ['eu-west-1'] }))
    const session = (await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })).json.sessions[0]
    const claimed = (await call('POST', '/v1/agent/claim', { agentId: 'dies', locations: ['eu-west-1'], leaseSeconds: 10 })).json.runs
    expect(claimed).toHaveLength(1)

    // a server with its runner on the same database: the agent's lease and its location are its own
    const second = await start('lease.db', { runner: true, clock, schedulerOptions: { tickMs: 20 } })
    await sleep(300)
    expect(queries('lease.test')).toBe(0)
    now += 11_000 // the lease expired, the agent still counts as serving eu-west-1 (2 × lease)
    await sleep(300)
    expect(queries('lease.test')).toBe(0)
    now += 10_000 // the agent is gone: the server's runner takes the run
    const done = await caller(second)('GET', `/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=5`)
    expect(done.status).toBe(200)
    expect(done.json.status).toBe('PASSED')
    expect(done.json.results).toHaveLength(1)
    expect(queries('lease.test')).toBe(1)

    // the dead agent comes back with its result: too late
    const late = {
      resultType: 'FINAL',
      attempts: [],
      runLocation: 'eu-west-1',
      status: 'PASSED',
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      responseTime: 1,
      startedAt: '2026-03-01T10:00:00Z',
      stoppedAt: '2026-03-01T10:00:01Z',
      error: null,
    }
    expect((await call('POST', `/v1/agent/runs/${claimed[0].runId}/result`, { result: late })).status).toBe(409)
    expect(await finals(call, id)).toHaveLength(1)
  }, 15_000)
})

describe('retention', () => {
  it('results older than the retention period are pruned, with their sessions', async () => {
    let now = Date.parse('2026-03-01T10:00:00Z')
    const server = await start('retention.db', { runner: true, retentionDays: 1, clock: () => now, schedulerOptions: { tickMs: 20, pruneEveryMs: 60_000 } })
    const call = caller(server)
    const id = await create(call, dnsCheck('lease', { activated: false }))
    const session = (await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })).json.sessions[0]
    expect((await call('GET', `/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=5`)).status).toBe(200)
    now += 20 * 3_600_000 // within the day: kept
    await sleep(200)
    expect(await finals(call, id)).toHaveLength(1)
    now += 5 * 3_600_000 // older than a day: pruned at the next prune
    await expect.poll(async () => (await finals(call, id)).length, { timeout: 3_000, interval: 20 }).toBe(0)
    expect((await call('GET', `/v1/check-sessions/${session.checkSessionId}`)).status).toBe(404)
  }, 10_000)
})
