/**
 * Runs never vanish: a runner that cannot keep up skips runs, and every one it skips is counted
 * (by reason, check type and location) and shown, in GET /v1/scheduler/skipped-runs and in
 * /metrics, where the backlog of due runs nobody claimed is a gauge. When runs must be dropped
 * each check keeps its newest due run, and the checks waiting longest are claimed first: no
 * check is starved while others run. Planning is counted once however many servers plan. The
 * clock is the test's.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openStore, startLocalServer, type LocalServer, type LocalServerOptions } from '../../../src/server/index.js'
import { Scheduler } from '../../../src/server/scheduler/index.js'
import { StoreUnavailable } from '../../../src/server/store/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { readExposition } from '../../helpers/prometheus.js'
import { KEY_A, caller, type Call } from '../helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const TOKEN = 'metrics-token-0123456789abcdef'
// frequency 1, frequencyOffset 5: every check is due at second 30 of every minute
const DUE = Date.parse('2026-03-01T10:00:30Z')
const MINUTE = 60_000

let dir: string
let dns: DnsServerHandle
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-backlog-'))
  dns = await startDnsServer()
  dns.set('backlog.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
  dns.set('slow.backlog.test', 'A', { records: [{ type: 'A', data: '192.0.2.2' }], delayMs: 150 })
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
afterAll(async () => {
  await dns.close()
  rmSync(dir, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function server(name: string, options: LocalServerOptions = {}): Promise<{ server: LocalServer; call: Call }> {
  const started = await startLocalServer({
    dbPath: join(dir, `${name}.db`),
    apiKeys: [{ key: KEY_A, accountId: 'acc-a' }],
    rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
    metricsToken: TOKEN,
    ...options,
  })
  cleanups.push(() => started.close())
  return { server: started, call: caller(started) }
}

async function createChecks(call: Call, count: number, query = 'backlog.test'): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const created = await call('POST', '/v1/checks/dns', {
      name: `backlog ${i}`,
      frequency: 1,
      frequencyOffset: 5,
      locations: ['eu-west-1'],
      request: { query, recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
    })
    expect(created.status).toBe(201)
    ids.push(created.json.id as string)
  }
  return ids
}

async function finalsOf(call: Call, id: string): Promise<number> {
  const answer = await call('GET', `/v1/check-results/${id}?resultType=FINAL&limit=100`)
  expect(answer.status).toBe(200)
  return (answer.json as unknown[]).length
}

async function metrics(target: LocalServer) {
  const response = await fetch(`${target.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  expect(response.status).toBe(200)
  return readExposition(await response.text())
}

describe('a runner that falls behind', () => {
  it("runs every check in turn, keeps each check's newest due run, and counts every run it skipped: the totals add up", async () => {
    const { call } = await server('behind')
    const CHECKS = 12
    const SLOTS = 3
    const MINUTES = 8
    const ids = await createChecks(call, CHECKS)
    const store = await openStore(join(dir, 'behind.db'))
    cleanups.push(() => store.close())
    const clock = { now: DUE + 10 }
    // three runs at a time, claimed at each tick only: each minute, 3 of the 12 due runs run
    const scheduler = new Scheduler({ store, services: { now: () => clock.now }, tickMs: 200, concurrency: SLOTS })
    cleanups.push(() => scheduler.stop())
    for (let minute = 0; minute < MINUTES; minute++) {
      clock.now = DUE + minute * MINUTE + 10
      const before = scheduler.completed
      await scheduler.tick()
      await waitFor(() => scheduler.completed >= before + SLOTS, { what: `minute ${minute}'s runs` })
      expect(scheduler.completed, `minute ${minute}`).toBe(before + SLOTS)
    }
    // no check starved: 24 runs went round the 12 checks twice (the same checks every minute, before)
    const runs = await Promise.all(ids.map((id) => finalsOf(call, id)))
    expect(runs).toEqual(ids.map(() => (MINUTES * SLOTS) / CHECKS))

    // every run not made is counted, as late (a newer run of its check fell due before it was claimed)
    const answer = await call(
      'GET',
      `/v1/scheduler/skipped-runs?from=${new Date(DUE - 2 * MINUTE).toISOString()}&to=${new Date(DUE + MINUTES * MINUTE).toISOString()}`,
    )
    expect(answer.status, answer.text).toBe(200)
    const body = answer.json as {
      total: number
      byReason: Record<string, number>
      skipped: Array<{ checkId: string; name: string; checkType: string; location: string; reason: string; count: number; lastDueAt: string }>
      backlog: { due: number; oldestDueAt: string | null; locations: Array<{ location: string; due: number }> }
    }
    expect(body.byReason).toEqual({ late: body.total, missed: 0, maintenance: 0, 'no-agent': 0 })
    // the last minute's runs not claimed wait: one per check that did not run then
    expect(body.backlog.due).toBe(CHECKS - SLOTS)
    expect(body.backlog.locations).toEqual([{ location: 'eu-west-1', due: CHECKS - SLOTS, oldestDueAt: expect.any(String) }])
    // every due time of every check ran, was skipped or waits: nothing vanished
    const due = CHECKS * MINUTES
    expect(runs.reduce((a, b) => a + b, 0) + body.total + body.backlog.due).toBe(due)
    for (const id of ids) {
      const skipped = body.skipped.filter((s) => s.checkId === id).reduce((n, s) => n + s.count, 0)
      expect(skipped, id).toBeGreaterThan(0)
      expect(body.skipped.filter((s) => s.checkId === id).every((s) => s.checkType === 'DNS' && s.location === 'eu-west-1' && s.reason === 'late')).toBe(true)
    }
    // one check alone, and a check of another account (none) is a 404
    const one = (
      await call('GET', `/v1/scheduler/skipped-runs?checkId=${ids[0]}&from=${(DUE - 2 * MINUTE) / 1000}&to=${Math.floor((DUE + MINUTES * MINUTE) / 1000)}`)
    ).json
    expect(one.skipped.map((s: { checkId: string }) => s.checkId)).toEqual([ids[0]])
    expect((await call('GET', '/v1/scheduler/skipped-runs?checkId=nope')).status).toBe(404)
    expect((await call('GET', '/v1/scheduler/skipped-runs?from=yesterday')).status).toBe(400)
  }, 60_000)

  it('a planner that stopped for minutes counts every due time that passed meanwhile as missed, once', async () => {
    const { call } = await server('stalled')
    const [id] = await createChecks(call, 1)
    const store = await openStore(join(dir, 'stalled.db'))
    cleanups.push(() => store.close())
    const clock = { now: DUE + 10 }
    const skipped: number[] = []
    // a planner alone (no runner): the due runs it plans wait, the ones it could not plan are counted
    const planner = new Scheduler({
      store,
      services: { now: () => clock.now },
      run: false,
      onPlanned: (_planned, counts) => skipped.push(...counts.map((c) => c.count)),
    })
    cleanups.push(() => planner.stop())
    await planner.tick()
    // stalled from DUE + 10 s to 4 minutes later: the due times of minutes 1 to 3 passed unplanned
    clock.now = DUE + 4 * MINUTE + 10
    await planner.tick()
    await planner.tick()
    const answer = (await call('GET', `/v1/scheduler/skipped-runs?checkId=${id}&from=${(DUE - MINUTE) / 1000}&to=${(DUE + 5 * MINUTE) / 1000}`)).json
    expect(answer.byReason).toEqual({ late: 0, missed: 3, maintenance: 0, 'no-agent': 0 })
    expect(answer.skipped).toEqual([
      expect.objectContaining({ checkId: id, location: 'eu-west-1', reason: 'missed', count: 3, lastDueAt: new Date(DUE + 3 * MINUTE).toISOString() }),
    ])
    expect(skipped.reduce((a, b) => a + b, 0)).toBe(3)
    // the run of DUE and the one of minute 4 wait for a runner
    expect((await store.runs.backlog(clock.now)).reduce((n, b) => n + b.due, 0)).toBe(2)
  }, 30_000)

  it('on a server: /metrics counts the runs skipped by reason, check type and location (a series from the start), and shows the backlog', async () => {
    const clock = { now: DUE - 1000 }
    const { server: busy, call } = await server('busy', {
      runner: true,
      clock: () => clock.now,
      schedulerOptions: { tickMs: 50, concurrency: 1 },
    })
    await createChecks(call, 6, 'slow.backlog.test')
    // before any skip, every reason has its series at 0 (an alert on increase() sees the first)
    await expect.poll(async () => (await metrics(busy)).samples('monitors_scheduler_runs_skipped_total').length, { timeout: 5_000 }).toBe(4)
    const zero = await metrics(busy)
    for (const reason of ['late', 'missed', 'maintenance', 'no-agent']) {
      expect(zero.value('monitors_scheduler_runs_skipped_total', { reason, check_type: 'DNS', location: 'eu-west-1' })).toBe(0)
    }
    // six checks due each minute, one slot, each run 150 ms: a minute every 400 ms is too fast for it
    for (let minute = 0; minute < 6; minute++) {
      clock.now = DUE + minute * MINUTE + 10
      await sleep(400)
    }
    const during = await metrics(busy)
    expect(during.value('monitors_scheduler_backlog_runs', { location: 'eu-west-1' })).toBeGreaterThan(0)
    expect(during.value('monitors_scheduler_backlog_oldest_seconds', { location: 'eu-west-1' })).toBeGreaterThanOrEqual(0)
    // the clock stops: what is due runs out (a run claimed is neither waiting nor counted until
    // it is recorded, so the totals are read until the last one is: a run that vanished never balances them)
    const totals = async () => {
      const after = await metrics(busy)
      const late = after.value('monitors_scheduler_runs_skipped_total', { reason: 'late', check_type: 'DNS', location: 'eu-west-1' })
      const api = (await call('GET', `/v1/scheduler/skipped-runs?from=${(DUE - 2 * MINUTE) / 1000}&to=${(DUE + 6 * MINUTE) / 1000}`)).json
      const ran = after.samples('monitors_check_runs_total').reduce((n, s) => n + s.value, 0)
      return { after, late, api, ran, planned: after.value('monitors_scheduler_runs_planned_total') }
    }
    await expect
      .poll(
        async () => {
          const { late, api, ran, planned } = await totals()
          return { unaccounted: planned - ran - late - api.backlog.due, backlog: api.backlog.due }
        },
        { timeout: 10_000, interval: 200 },
      )
      .toEqual({ unaccounted: 0, backlog: 0 })
    const { after, late, api, ran, planned } = await totals()
    expect(late).toBeGreaterThan(0)
    expect(api.byReason.late).toBe(late)
    expect(ran + late).toBe(planned)
    expect(after.value('monitors_scheduler_backlog_runs', { location: 'eu-west-1' })).toBe(0)
  }, 60_000)
})

describe('counted once', () => {
  it('a recording transaction tried again (the database away a moment) counts its result once in /metrics', async () => {
    const clock = { now: DUE - 1000 }
    // the first result's transaction fails as when the database goes away: it is tried again
    let failed = 0
    const { server: runner, call } = await server('retried', {
      runner: true,
      clock: () => clock.now,
      schedulerOptions: { tickMs: 50 },
      onFinalResult: async () => {
        if (failed++ === 0) throw new StoreUnavailable('The database is unavailable: connection refused')
      },
      warn: () => undefined,
    })
    const [id] = await createChecks(call, 1)
    clock.now = DUE + 10
    // the run due at DUE recorded (a run at the check's creation may come before it)
    const finals = async () => (await call('GET', `/v1/check-results/${id}?resultType=FINAL&limit=100`)).json as Array<{ startedAt: string }>
    await expect.poll(async () => (await finals()).some((r) => Date.parse(r.startedAt) >= DUE), { timeout: 10_000 }).toBe(true)
    expect(failed).toBeGreaterThanOrEqual(2)
    const counted = (await metrics(runner)).samples('monitors_check_runs_total').reduce((n, s) => n + s.value, 0)
    expect(counted).toBe((await finals()).length)
  }, 30_000)

  it('two servers planning the same due times count each planned run once between them', async () => {
    const clock = { now: DUE + 10 }
    const options = { clock: () => clock.now, scheduler: true, schedulerOptions: { tickMs: 50 } }
    const { server: one, call } = await server('twice', options)
    const { server: two } = await server('twice', options)
    await createChecks(call, 5)
    const store = await openStore(join(dir, 'twice.db'))
    cleanups.push(() => store.close())
    const waiting = async () => (await store.runs.backlog(clock.now)).reduce((n, b) => n + b.due, 0)
    // no runner anywhere: every run planned stays due, so the rows are the backlog
    await expect.poll(waiting, { timeout: 5_000 }).toBe(5)
    clock.now += MINUTE
    await expect.poll(waiting, { timeout: 5_000 }).toBe(10)
    clock.now += MINUTE
    await expect.poll(waiting, { timeout: 5_000 }).toBe(15)
    await sleep(300) // both planners ticked since
    const planned = (await metrics(one)).value('monitors_scheduler_runs_planned_total') + (await metrics(two)).value('monitors_scheduler_runs_planned_total')
    expect(planned).toBe(15)
  }, 30_000)
})
