/**
 * How results are kept: a passing run whose answer is its template's (the last full row of its
 * check and location, that UTC day) is a compact row of its day's partition; a failure, a changed
 * answer and the first run of a day are full rows. Every route answers a compact result as it
 * answers a full one (its details are its template's, its times its own). Retention drops whole
 * days and no longer answers what stopped before the cutoff. A database written before this
 * layout upgrades and answers its results as it did.
 * The clock is the test's: each step moves it one minute, then waits for that minute's runs.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer, type LocalServerOptions } from '../../src/server/index.js'
import { MIGRATIONS as SQLITE_MIGRATIONS, migrate as migrateSqlite } from '../../src/server/store/sqlite/migrations.js'
import { MIGRATIONS as POSTGRES_MIGRATIONS, migrate as migratePostgres } from '../../src/server/store/postgres/migrations.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { KEY_A, KEY_B, caller, type Call } from './helpers.js'
import { waitFor } from '../helpers/wait-for.js'
import { databaseFor, onPostgres } from '../helpers/postgres-databases.js'

let dir: string
let dns: DnsServerHandle
const LOCATIONS = ['eu-west-1', 'us-east-1']
// four minutes before midnight (UTC): the runs cross into the next day
const T0 = Date.parse('2026-05-10T23:56:30Z')

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-result-storage-'))
  dns = await startDnsServer()
})

afterAll(async () => {
  await dns.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Rows as the database holds them: full rows, templates, and compact rows by day table (of the test's days). */
async function stored(dbPath: string): Promise<{ full: number; templates: number; compact: Record<string, number> }> {
  const full = `SELECT count(*) AS n, coalesce(sum(CASE WHEN is_template THEN 1 ELSE 0 END), 0) AS t FROM check_results`
  if (onPostgres) {
    const client = new pg.Client({ connectionString: (await databaseFor(dbPath)).url })
    await client.connect()
    try {
      const row = (await client.query(full)).rows[0] as { n: string; t: string }
      const parts = (await client.query(`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'result_runs' ORDER BY 1`)).rows as Array<{ name: string }>
      const compact: Record<string, number> = {}
      for (const { name } of parts.filter((p) => p.name.startsWith('result_runs_202605'))) compact[name] = Number((await client.query(`SELECT count(*) AS n FROM ${name}`)).rows[0].n)
      return { full: Number(row.n), templates: Number(row.t), compact }
    } finally {
      await client.end()
    }
  }
  const raw = new Database(dbPath, { readonly: true })
  try {
    const row = raw.prepare(full).get() as { n: number; t: number }
    const names = raw.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'result_runs_*' ORDER BY 1`).pluck().all() as string[]
    const compact = Object.fromEntries(names.map((name) => [name, raw.prepare(`SELECT count(*) FROM ${name}`).pluck().get() as number]))
    return { full: row.n, templates: row.t, compact }
  } finally {
    raw.close()
  }
}

async function start(dbPath: string, clock: { now: number }, options: LocalServerOptions = {}): Promise<LocalServer> {
  return startLocalServer({
    dbPath,
    apiKeys: [{ key: KEY_A, accountId: 'acc-a' }, { key: KEY_B, accountId: 'acc-b' }],
    rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
    runner: true,
    // the DNS server of the test is on 127.0.0.1; two accounts would deny private targets
    privateTargets: 'allow',
    clock: () => clock.now,
    ...options,
    schedulerOptions: { tickMs: 20, ...options.schedulerOptions },
  })
}

/** Waits until the server has completed `n` runs since it started. */
async function runsDone(server: LocalServer, n: number): Promise<void> {
  await waitFor(() => server.completedRuns() >= n, { timeoutMs: 30_000, what: `${n} runs (${server.completedRuns()} done)` })
}

/**
 * Waits for the runs a check makes when it is created (one per location). Until they are done, a
 * minute's wait would count them and end one minute early, leaving that minute's runs in flight.
 */
async function firstRuns(server: LocalServer): Promise<void> {
  await runsDone(server, LOCATIONS.length)
}

/** Moves the clock one minute and waits until the check has run in both locations. */
async function minute(server: LocalServer, clock: { now: number }): Promise<void> {
  const before = server.completedRuns()
  clock.now += 60_000
  await runsDone(server, before + LOCATIONS.length)
}

type Result = { id: string; checkId: string; runLocation: string; status: string; startedAt: string; stoppedAt: string; result: Record<string, any> } & Record<string, any>

async function results(call: Call, checkId: string, query = ''): Promise<{ total: number; items: Result[] }> {
  const answer = await call('GET', `/v1/check-results/${checkId}?limit=100${query}`)
  expect(answer.status).toBe(200)
  return { total: Number(/\/(\d+)$/.exec(answer.headers.get('content-range') ?? '')?.[1]), items: answer.json }
}

const answerOf = (r: Result) => r.result.details.answers.map((a: { data: string }) => a.data)

/**
 * How the results answered should be kept, by the rule: per location, oldest first, a failure is
 * a full row; a passing run is compact when the last template of its location (the last passing
 * full row) is of the same UTC day with the same details, else it is a full row and the template.
 */
function model(items: Result[]): { full: number; templates: number; compact: Record<string, number> } {
  const out = { full: 0, templates: 0, compact: {} as Record<string, number> }
  const templates = new Map<string, { day: string; details: string }>()
  for (const r of [...items].sort((a, b) => a.startedAt.localeCompare(b.startedAt))) {
    const day = r.created_at.slice(0, 10)
    const details = JSON.stringify(r.result.details)
    const template = templates.get(r.runLocation)
    if (r.status !== 'PASSED') out.full++
    else if (template && template.day === day && template.details === details) {
      const name = `result_runs_${day.replace(/-/g, '')}`
      out.compact[name] = (out.compact[name] ?? 0) + 1
    } else {
      out.full++
      out.templates++
      templates.set(r.runLocation, { day, details })
    }
  }
  return out
}

describe('results kept compact', () => {
  it('passing runs with their template\'s answer are compact rows of their day, answered as full rows; failures and changed answers stay in full', async () => {
    const dbPath = join(dir, 'compact.db')
    const clock = { now: T0 }
    const server = await start(dbPath, clock)
    const call = caller(server)
    dns.set('compact.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    const created = await call('POST', '/v1/checks/dns', {
      name: 'compact', frequency: 1, locations: LOCATIONS, runParallel: true, doubleCheck: false,
      request: { query: 'compact.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
    })
    expect(created.status).toBe(201)
    const id = created.json.id as string
    await firstRuns(server)
    // 23:57, 23:58, 23:59: one template per location, then compact rows
    for (let m = 0; m < 3; m++) await minute(server, clock)
    let rows = await stored(dbPath)
    expect(rows).toMatchObject({ full: 2, templates: 2 })
    expect(Object.keys(rows.compact)).toEqual(['result_runs_20260510'])
    expect(rows.compact.result_runs_20260510).toBeGreaterThanOrEqual(4)
    // 00:00 (a new day: new templates), 00:01 compact, then the answer changes at 00:02 (full)
    await minute(server, clock)
    await minute(server, clock)
    dns.set('compact.test', 'A', { records: [{ type: 'A', data: '192.0.2.7' }] })
    await minute(server, clock)
    await minute(server, clock)
    // 00:04: failing (full), 00:05 passing again with the answer of 00:02 (compact)
    dns.set('compact.test', 'A', { rcode: 'SERVFAIL' })
    await minute(server, clock)
    dns.set('compact.test', 'A', { records: [{ type: 'A', data: '192.0.2.7' }] })
    await minute(server, clock)
    // every run answered, newest first, each with its own answer; paging cuts across both kinds
    const { total, items } = await results(call, id)
    expect(total).toBe(items.length)
    expect(total).toBeGreaterThanOrEqual(18)
    expect(items.map((r) => r.startedAt)).toEqual([...items.map((r) => r.startedAt)].sort().reverse())
    expect(new Set(items.map((r) => r.id)).size).toBe(total)
    // kept as the rule says: templates at the start of each day and at the changed answer, failures in full, the rest compact
    rows = await stored(dbPath)
    expect(rows).toEqual(model(items))
    expect(rows).toMatchObject({ full: 2 + 2 + 2 + 2, templates: 6 })
    // each run answers what the name server said when it ran (a run may start a little after its
    // minute on a loaded machine, so runs are checked in order rather than by their minute): the
    // first answer, then the changed one, the failure among the changed ones
    const oldestFirst = [...items].reverse()
    const failed = oldestFirst.filter((r) => r.status === 'FAILED')
    expect(failed.length).toBeGreaterThanOrEqual(1)
    for (const r of failed) expect(r).toMatchObject({ hasFailures: true })
    const answers = oldestFirst.filter((r) => r.status !== 'FAILED').map((r) => answerOf(r)[0])
    const changedAt = answers.indexOf('192.0.2.7')
    expect(changedAt).toBeGreaterThan(0)
    expect(answers.slice(0, changedAt).every((a) => a === '192.0.2.1')).toBe(true)
    expect(answers.slice(changedAt).every((a) => a === '192.0.2.7')).toBe(true)
    expect(oldestFirst.indexOf(failed[0])).toBeGreaterThan(oldestFirst.findIndex((r) => r.status !== 'FAILED' && answerOf(r)[0] === '192.0.2.7'))
    const page2 = await call('GET', `/v1/check-results/${id}?limit=5&page=2`)
    expect(page2.json.map((r: Result) => r.id)).toEqual(items.slice(5, 10).map((r) => r.id))

    // the reference's filters run in the store, over full and compact rows of both days alike: each
    // answers what the whole list holds that matches, newest first, counted in content-range
    const ids = (list: Result[]) => list.map((r) => r.id)
    const seconds = (iso: string) => String(Date.parse(iso) / 1000)
    const midnight = '2026-05-11T00:00:00.000Z'
    const expected: Array<[string, (r: Result) => boolean]> = [
      ...LOCATIONS.map((l): [string, (r: Result) => boolean] => [`&location=${l}`, (r) => r.runLocation === l]),
      ['&hasFailures=true', (r) => r.hasFailures === true],
      ['&hasFailures=false', (r) => r.hasFailures === false],
      [`&from=${seconds(midnight)}`, (r) => r.startedAt >= midnight],
      [`&to=${seconds(midnight)}`, (r) => r.startedAt < midnight],
      ['&from=2026-05-11T00:00:00Z', (r) => r.startedAt >= midnight],
      [`&from=${seconds('2026-05-10T23:58:00Z')}&to=${seconds('2026-05-11T00:03:00Z')}`, (r) => r.startedAt >= '2026-05-10T23:58' && r.startedAt < '2026-05-11T00:03'],
      [`&location=eu-west-1&hasFailures=false&from=${seconds('2026-05-10T23:59:00Z')}`, (r) => r.runLocation === 'eu-west-1' && !r.hasFailures && r.startedAt >= '2026-05-10T23:59'],
      ['&checkType=DNS&resultType=ALL', () => true],
      ['&checkType=ICMP', () => false],
      ['&location=ap-south-1', () => false],
    ]
    for (const [query, keep] of expected) {
      const filtered = await results(call, id, query)
      const want = items.filter(keep)
      expect(ids(filtered.items), query).toEqual(ids(want))
      expect(filtered.total, query).toBe(want.length)
    }
    expect(items.some((r) => r.hasFailures) && items.some((r) => r.startedAt < midnight) && items.some((r) => r.startedAt >= midnight)).toBe(true)
    // a page of a filtered list is a page of the filtered set
    const eu = items.filter((r) => r.runLocation === 'eu-west-1')
    const euPage = await call('GET', `/v1/check-results/${id}?location=eu-west-1&limit=3&page=2`)
    expect(euPage.json.map((r: Result) => r.id)).toEqual(ids(eu.slice(3, 6)))
    expect(euPage.headers.get('content-range')).toBe(`3-5/${eu.length}`)
    // times the reference does not describe are 400s naming them
    const reversed = await call('GET', `/v1/check-results/${id}?from=${seconds(midnight)}&to=${seconds('2026-05-10T23:00:00Z')}`)
    expect(reversed.status).toBe(400)
    expect(reversed.json.attributes.keys).toEqual(['from', 'to'])
    const millis = await call('GET', `/v1/check-results/${id}?from=${Date.parse(midnight)}`)
    expect(millis.json.attributes.keys).toEqual(['from'])
    expect(millis.json.message).toMatch(/^from: must be a UNIX timestamp in seconds .*milliseconds/)
    expect((await call('GET', `/v1/check-results/${id}?hasFailures=yes`)).json.message).toBe('hasFailures: must be true or false (got "yes")')

    // a compact result answers what a full one does: its fields, its own times, its template's details
    for (const listed of items) {
      const one = await call('GET', `/v1/check-results/${id}/${listed.id}`)
      expect(one.status).toBe(200)
      expect(one.json).toEqual(listed)
      expect(Object.keys(one.json.result)).toEqual(['checkId', 'name', 'checkType', 'runLocation', 'resultType', 'attempt', 'startedAt', 'stoppedAt',
        'responseTime', 'hasFailures', 'hasErrors', 'isDegraded', 'timedOut', 'aborted', 'status', 'failureKind', 'error', 'assertions', 'details'])
      expect(one.json.result).toMatchObject({ checkId: id, runLocation: listed.runLocation, startedAt: listed.startedAt, stoppedAt: listed.stoppedAt,
        responseTime: listed.responseTime, status: listed.status })
    }
    // the status names the newest run; another account's key finds none of them
    const status = await call('GET', `/v1/check-statuses/${id}`)
    expect(items.slice(0, 2).map((r) => r.id)).toContain(status.json.lastCheckRunId)
    const other = caller(server, KEY_B)
    for (const r of items.slice(0, 4)) expect((await other('GET', `/v1/check-results/${id}/${r.id}`)).status).toBe(404)
    expect((await other('GET', `/v1/check-results/${id}`)).status).toBe(404)
    await server.close()
  }, 120_000)

  it('retention drops whole days and answers nothing that stopped before its cutoff', async () => {
    const dbPath = join(dir, 'retention.db')
    const clock = { now: T0 }
    const first = await start(dbPath, clock)
    const call = caller(first)
    dns.set('days.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    const created = await call('POST', '/v1/checks/dns', {
      name: 'days', frequency: 1, locations: LOCATIONS, runParallel: true, doubleCheck: false,
      request: { query: 'days.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
    })
    const id = created.json.id as string
    await firstRuns(first)
    for (let m = 0; m < 10; m++) await minute(first, clock)
    expect(Object.keys((await stored(dbPath)).compact)).toEqual(['result_runs_20260510', 'result_runs_20260511'])
    const before = await results(call, id)
    expect(before.total).toBeGreaterThanOrEqual(20)
    const yesterday = before.items.filter((r) => r.startedAt < '2026-05-11')
    expect(yesterday.length).toBeGreaterThanOrEqual(6)
    await first.close()
    // kept 4 minutes: the day before is past the cutoff (dropped whole), today's runs before it are no longer answered
    const second = await start(dbPath, clock, { retentionDays: 4 / 1440 })
    const call2 = caller(second)
    await minute(second, clock)
    await waitFor(async () => Object.keys((await stored(dbPath)).compact).length <= 1, { timeoutMs: 20_000, intervalMs: 50, what: 'the older partitions dropped' })
    expect(Object.keys((await stored(dbPath)).compact)).toEqual(['result_runs_20260511'])
    const { total, items } = await results(call2, id)
    expect(total).toBe(items.length)
    expect(total).toBeGreaterThanOrEqual(8)
    expect(total).toBeLessThanOrEqual(12)
    for (const r of items) expect(Date.parse(r.stoppedAt)).toBeGreaterThanOrEqual(clock.now - 5 * 60_000)
    // what is no longer answered: the day dropped (its templates with it) and today's runs before the cutoff
    const gone = before.items.filter((r) => !items.some((i) => i.id === r.id))
    for (const r of yesterday) expect(gone).toContainEqual(r)
    expect(gone.length).toBeGreaterThan(yesterday.length)
    for (const r of gone) expect((await call2('GET', `/v1/check-results/${id}/${r.id}`)).status).toBe(404)
    await second.close()
  }, 120_000)

  it('a database written before this layout upgrades and answers its results as it did, then keeps new runs compact', async () => {
    // the check as the API stores it, made on a throwaway server
    dns.set('old.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    const scratch = await startLocalServer({ apiKeys: [{ key: KEY_A, accountId: 'acc-a' }] })
    const made = await caller(scratch)('POST', '/v1/checks/dns', {
      name: 'old', frequency: 1, locations: ['eu-west-1'], doubleCheck: false,
      request: { query: 'old.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
    })
    await scratch.close()
    const check = made.json as { id: string }
    const runner = (i: number, failed: boolean) => ({
      checkId: check.id, name: 'old', checkType: 'DNS', runLocation: 'eu-west-1', resultType: 'FINAL', attempt: 1,
      startedAt: `2026-05-10T12:0${i}:00.000Z`, stoppedAt: `2026-05-10T12:0${i}:00.012Z`, responseTime: 12.5, hasFailures: failed, hasErrors: false,
      isDegraded: false, timedOut: false, aborted: false, status: failed ? 'FAILED' : 'PASSED', failureKind: failed ? 'ASSERTION' : null,
      error: failed ? 'RESPONSE_CODE EQUALS "NOERROR" failed: got "SERVFAIL"' : null, assertions: [],
      details: { kind: 'DNS', query: 'old.test', rcode: failed ? 'SERVFAIL' : 'NOERROR', answers: [] },
    })
    const old = [0, 1, 2].map((i) => ({ id: `00000000-0000-4000-8000-00000000000${i}`, result: runner(i, i === 1), created_at: `2026-05-10T12:0${i}:01.000Z` }))
    // the rows as the stores wrote them before (SQLite: details without the columns' fields; PostgreSQL: whole)
    const lean = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([k]) => !['checkId', 'runLocation', 'resultType', 'startedAt',
      'stoppedAt', 'responseTime', 'hasFailures', 'hasErrors', 'isDegraded', 'status', 'error'].includes(k)))
    const insert = `INSERT INTO check_results (id, account_id, check_id, session_id, run_id, run_location, result_type, status, has_failures,
      has_errors, is_degraded, response_time, started_at, stopped_at, error, details, created_at)
      VALUES ($1, 'acc-a', $2, NULL, $3, 'eu-west-1', 'FINAL', $4, $5, false, false, 12.5, $6, $7, $8, $9, $10)`
    const values = (o: (typeof old)[number], details: unknown) => [o.id, check.id, `${o.id}.1`, o.result.status, o.result.hasFailures,
      o.result.startedAt, o.result.stoppedAt, o.result.error, JSON.stringify(details), o.created_at]
    let dbPath = join(dir, 'old.db')
    if (onPostgres) {
      const { url } = await databaseFor(undefined, { empty: true })
      dbPath = url
      const pool = new pg.Pool({ connectionString: url })
      await migratePostgres(pool, POSTGRES_MIGRATIONS.slice(0, -1))
      await pool.query(`INSERT INTO checks (id, account_id, check_type, activated, body) VALUES ($1, 'acc-a', 'DNS', true, $2)`, [check.id, JSON.stringify(check)])
      for (const o of old) await pool.query(insert, values(o, o.result))
      await pool.end()
    } else {
      const raw = new Database(dbPath)
      migrateSqlite(raw, SQLITE_MIGRATIONS.slice(0, -1))
      raw.prepare(`INSERT INTO checks (id, account_id, check_type, body) VALUES (?, 'acc-a', 'DNS', ?)`).run(check.id, JSON.stringify(check))
      const sqlite = raw.prepare(insert.replace(/\$\d+/g, '?').replace(/false/g, '0'))
      for (const o of old) {
        const v: unknown[] = values(o, lean(o.result))
        v[4] = v[4] ? 1 : 0
        sqlite.run(...v)
      }
      raw.close()
    }
    const expected = old.reverse().map((o) => ({
      id: o.id, checkId: check.id, checkSessionId: null, runLocation: 'eu-west-1', resultType: 'FINAL', status: o.result.status,
      hasFailures: o.result.hasFailures, hasErrors: false, isDegraded: false, responseTime: 12.5, startedAt: o.result.startedAt,
      stoppedAt: o.result.stoppedAt, error: o.result.error, result: o.result, created_at: o.created_at,
    }))
    const clock = { now: Date.parse('2026-05-10T12:05:30Z') }
    const server = await start(dbPath, clock)
    const call = caller(server)
    expect(await results(call, check.id)).toEqual({ total: 3, items: expected })
    for (const e of expected) expect((await call('GET', `/v1/check-results/${check.id}/${e.id}`)).json).toEqual(e)
    // new runs: a template, then a compact row; the old results answered as before, after them
    const before = server.completedRuns()
    for (let m = 0; m < 2; m++) {
      clock.now += 60_000
      await waitFor(() => server.completedRuns() >= before + m + 1, { timeoutMs: 30_000, what: `minute ${m}'s run` })
    }
    const after = await results(call, check.id)
    expect(after.total).toBeGreaterThanOrEqual(5)
    expect(after.items.slice(-3)).toEqual(expected)
    const rows = await stored(dbPath)
    expect(rows).toMatchObject({ full: 4, templates: 1 })
    expect(rows.compact.result_runs_20260510).toBe(after.total - 4)
    await server.close()
  }, 120_000)
})
