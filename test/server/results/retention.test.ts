/**
 * Bounded storage of the server's runner: results older than the retention are pruned (in
 * batches, while the runner keeps running), done runs after 10 minutes; a result read back
 * answers every field of the runner's result although its row stores them once.
 * The clock is the test's: each step moves it one minute, then waits for that minute's runs.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer, type LocalServerOptions } from '../../../src/server/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { KEY_A, caller, type Call } from '../helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import { databaseFor, onPostgres } from '../../helpers/postgres-databases.js'

/** The number of check runs kept and the oldest one's due time, read from the database itself. */
async function doneRuns(dbPath: string): Promise<{ n: number; oldest: number }> {
  const sql = `SELECT count(*) AS n, min(due_at) AS oldest FROM check_runs`
  if (onPostgres) {
    const { default: pg } = await import('pg')
    const client = new pg.Client({ connectionString: (await databaseFor(dbPath)).url })
    await client.connect()
    try {
      const row = (await client.query(sql)).rows[0] as { n: string; oldest: string }
      return { n: Number(row.n), oldest: Number(row.oldest) }
    } finally {
      await client.end()
    }
  }
  const raw = new Database(dbPath, { readonly: true })
  try {
    return raw.prepare(sql).get() as { n: number; oldest: number }
  } finally {
    raw.close()
  }
}

let dir: string
let dns: DnsServerHandle
const CHECKS = 25
const LOCATIONS = ['eu-west-1', 'us-east-1']
const T0 = Date.parse('2026-03-01T10:00:30Z')

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-retention-'))
  dns = await startDnsServer()
  for (let i = 0; i < CHECKS; i++) dns.set(`keep-${i}.test`, 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
})

afterAll(async () => {
  await dns.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A server on the shared file whose clock is `clock.now`. */
async function start(clock: { now: number }, options: LocalServerOptions): Promise<LocalServer> {
  return startLocalServer({
    dbPath: join(dir, 'retention.db'),
    apiKeys: [{ key: KEY_A, accountId: 'acc-a' }],
    rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
    runner: true,
    clock: () => clock.now,
    ...options,
    // prunes at their default interval
    schedulerOptions: { tickMs: 20, ...options.schedulerOptions },
  })
}

/** Moves the clock one minute and waits until every check has run in both locations. */
async function minute(server: LocalServer, clock: { now: number }): Promise<void> {
  const before = server.completedRuns()
  clock.now += 60_000
  await waitFor(() => server.completedRuns() >= before + CHECKS * LOCATIONS.length, {
    timeoutMs: 20_000,
    what: `the minute's runs (${server.completedRuns() - before} done)`,
  })
}

async function results(call: Call, checkId: string): Promise<{ total: number; items: Array<{ id: string; startedAt: string }> }> {
  const answer = await call('GET', `/v1/check-results/${checkId}?resultType=FINAL&limit=100`)
  expect(answer.status).toBe(200)
  const total = Number(/\/(\d+)$/.exec(answer.headers.get('content-range') ?? '')?.[1])
  return { total, items: answer.json }
}

describe('retention of results', () => {
  it('a tiny retention keeps only the last minutes: older results pruned in batches while runs go on, done runs after 10 minutes', async () => {
    const clock = { now: T0 }
    // 30 minutes of 25 checks in 2 locations, kept a day: 1,500 results
    const first = await start(clock, { retentionDays: 1 })
    const call = caller(first)
    const ids: string[] = []
    for (let i = 0; i < CHECKS; i++) {
      const answer = await call('POST', '/v1/checks/dns', {
        name: `keep ${i}`,
        frequency: 1,
        locations: LOCATIONS,
        runParallel: true,
        doubleCheck: false,
        request: { query: `keep-${i}.test`, recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
      })
      expect(answer.status).toBe(201)
      ids.push(answer.json.id)
    }
    for (let m = 0; m < 30; m++) await minute(first, clock)
    const oldest = (await results(call, ids[0])).items.at(-1)
    expect(oldest).toBeDefined()
    expect((await results(call, ids[0])).total).toBeGreaterThanOrEqual(58)
    await first.close()

    // the same database with a retention of 5 minutes: more than a batch (1,000) goes at once
    const second = await start(clock, { retentionDays: 5 / 1440 })
    const call2 = caller(second)
    for (let m = 0; m < 3; m++) await minute(second, clock)
    for (const id of ids) {
      const { total, items } = await results(call2, id)
      // the runs of the last 5 minutes (and of the minute being pruned at), in both locations
      expect(total).toBeGreaterThanOrEqual(10)
      expect(total).toBeLessThanOrEqual(14)
      for (const item of items) expect(Date.parse(item.startedAt)).toBeGreaterThanOrEqual(clock.now - 6 * 60_000)
    }
    expect((await call2('GET', `/v1/check-results/${ids[0]}/${oldest?.id}`)).status).toBe(404)
    await second.close()

    // done runs are kept 10 minutes (an agent's repeated post is still known), then deleted
    const runs = await doneRuns(join(dir, 'retention.db'))
    expect(runs.n).toBeLessThanOrEqual(12 * CHECKS * LOCATIONS.length)
    expect(runs.oldest).toBeGreaterThanOrEqual(clock.now - 12 * 60_000)
  }, 120_000)

  it("a result read back has every field of the runner's result, equal to the record's own", async () => {
    const clock = { now: T0 + 86_400_000 }
    const server = await start(clock, { dbPath: join(dir, 'fields.db') })
    const call = caller(server)
    const answer = await call('POST', '/v1/checks/dns', {
      name: 'fields',
      frequency: 1,
      locations: ['eu-west-1'],
      request: { query: 'keep-0.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
    })
    expect(answer.status).toBe(201)
    const id = answer.json.id
    clock.now += 60_000
    await waitFor(() => server.completedRuns() > 0, { what: 'the run' })
    const [listed] = (await results(call, id)).items as Array<Record<string, any>>
    const stored = (await call('GET', `/v1/check-results/${id}/${listed.id}`)).json
    await server.close()
    expect(Object.keys(stored.result)).toEqual([
      'checkId',
      'name',
      'checkType',
      'runLocation',
      'resultType',
      'attempt',
      'startedAt',
      'stoppedAt',
      'responseTime',
      'hasFailures',
      'hasErrors',
      'isDegraded',
      'timedOut',
      'aborted',
      'status',
      'failureKind',
      'error',
      'assertions',
      'details',
    ])
    expect(stored.result).toMatchObject({
      checkId: id,
      name: 'fields',
      checkType: 'DNS',
      runLocation: 'eu-west-1',
      resultType: 'FINAL',
      attempt: 1,
      startedAt: stored.startedAt,
      stoppedAt: stored.stoppedAt,
      responseTime: stored.responseTime,
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      status: 'PASSED',
      error: null,
    })
    expect(stored.result.details).toMatchObject({ kind: 'DNS', query: 'keep-0.test', rcode: 'NOERROR' })
  }, 30_000)
})
