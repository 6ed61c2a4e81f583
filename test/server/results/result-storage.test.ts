/**
 * How results are kept: a run whose answer is its template's (the last full row of its kind,
 * passing or failing, of its check and location, that UTC day) is a compact row of its day's
 * partition; a changed answer (a failure's error too) and the first run of a day of each kind are
 * full rows. Every route answers a compact result as it answers a full one (its status, flags,
 * error and details are its template's, its times its own). Alert notifications are written per
 * change of the alert, and a failure that goes on rewrites no alert state. Retention drops whole
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
import { startLocalServer, type LocalServer, type LocalServerOptions } from '../../../src/server/index.js'
import { MIGRATIONS as SQLITE_MIGRATIONS, migrate as migrateSqlite } from '../../../src/server/store/sqlite/migrations.js'
import { MIGRATIONS as POSTGRES_MIGRATIONS, migrate as migratePostgres } from '../../../src/server/store/postgres/migrations.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { KEY_A, KEY_B, caller, type Call } from '../helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import { databaseFor, onPostgres } from '../../helpers/postgres-databases.js'

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

/**
 * Rows as the database holds them: full rows, templates, compact rows of passing runs by day table
 * (of the test's days), and compact rows of failing runs (SQLite: the day tables result_runs_*_f;
 * PostgreSQL: those whose template did not pass).
 */
async function stored(dbPath: string): Promise<{ full: number; templates: number; compact: Record<string, number>; failing: number }> {
  const full = `SELECT count(*) AS n, coalesce(sum(CASE WHEN is_template THEN 1 ELSE 0 END), 0) AS t FROM check_results`
  if (onPostgres) {
    const client = new pg.Client({ connectionString: (await databaseFor(dbPath)).url })
    await client.connect()
    try {
      const row = (await client.query(full)).rows[0] as { n: string; t: string }
      // compact rows by UTC day and kind, as they are answered: those of hours not packed yet and those packed into blocks
      const days = (
        await client.query(`SELECT 'result_runs_' || to_char(to_timestamp(created / 1000.0) AT TIME ZONE 'UTC', 'YYYYMMDD') AS name,
          coalesce(t.status = 'PASSED' AND NOT t.has_failures AND NOT t.has_errors AND NOT t.is_degraded AND t.error IS NULL, true) AS passing, count(*) AS n
        FROM (SELECT created, tpl FROM result_runs WHERE created >= (SELECT packed_ms FROM result_retention)
          UNION ALL SELECT b.hour + b.v[2][i], b.tpl FROM result_blocks b CROSS JOIN LATERAL generate_series(1, array_length(b.v, 2)) AS i) x
        LEFT JOIN check_results t ON t.seq = x.tpl
        GROUP BY 1, 2 ORDER BY 1`)
      ).rows as Array<{ name: string; passing: boolean; n: string }>
      const compact: Record<string, number> = {}
      let failing = 0
      for (const { name, passing, n } of days.filter((d) => d.name.startsWith('result_runs_202605'))) {
        if (passing) compact[name] = Number(n)
        else failing += Number(n)
      }
      return { full: Number(row.n), templates: Number(row.t), compact, failing }
    } finally {
      await client.end()
    }
  }
  const raw = new Database(dbPath, { readonly: true })
  try {
    const row = raw.prepare(full).get() as { n: number; t: number }
    const names = raw.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'result_runs_*' ORDER BY 1`).pluck().all() as string[]
    const count = (name: string) => raw.prepare(`SELECT count(*) FROM ${name}`).pluck().get() as number
    const compact = Object.fromEntries(names.filter((name) => !name.endsWith('_f')).map((name) => [name, count(name)]))
    const failing = names.filter((name) => name.endsWith('_f')).reduce((sum, name) => sum + count(name), 0)
    return { full: row.n, templates: row.t, compact, failing }
  } finally {
    raw.close()
  }
}

/** The alert state's row of a check as the database holds it: when it was last written. */
async function alertStateWritten(dbPath: string, checkId: string): Promise<string | undefined> {
  const sql = `SELECT updated_at FROM alert_states WHERE check_id = `
  if (onPostgres) return onDatabase(dbPath, async (client) => (await client.query(`${sql}$1`, [checkId])).rows[0]?.updated_at as string | undefined)
  const raw = new Database(dbPath, { readonly: true })
  try {
    return raw.prepare(`${sql}?`).pluck().get(checkId) as string | undefined
  } finally {
    raw.close()
  }
}

/** PostgreSQL: the partitions of a partitioned table, by name, and what a statement answers. */
async function onDatabase<T>(dbPath: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: (await databaseFor(dbPath)).url })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

const partitions = (dbPath: string, parent: string) =>
  onDatabase(dbPath, async (client) =>
    (
      await client.query(
        `SELECT c.relname AS name
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = $1 ORDER BY 1`,
        [parent],
      )
    ).rows.map((r: { name: string }) => r.name),
  )

/** Waits (on the real clock, a few seconds at most) until the partitions of `parent` are `want`. */
async function partitionsBecome(dbPath: string, parent: string, want: string[]): Promise<void> {
  await waitFor(async () => JSON.stringify(await partitions(dbPath, parent)) === JSON.stringify(want), {
    timeoutMs: 20_000,
    intervalMs: 50,
    what: `the partitions of ${parent}`,
  }).catch(() => undefined)
  expect(await partitions(dbPath, parent)).toEqual(want)
}

async function start(dbPath: string, clock: { now: number }, options: LocalServerOptions = {}): Promise<LocalServer> {
  return startLocalServer({
    dbPath,
    apiKeys: [
      { key: KEY_A, accountId: 'acc-a' },
      { key: KEY_B, accountId: 'acc-b' },
    ],
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

type Result = { id: string; checkId: string; runLocation: string; status: string; startedAt: string; stoppedAt: string; result: Record<string, any> } & Record<
  string,
  any
>

async function results(call: Call, checkId: string, query = ''): Promise<{ total: number; items: Result[] }> {
  const answer = await call('GET', `/v1/check-results/${checkId}?limit=100${query}`)
  expect(answer.status).toBe(200)
  return { total: Number(/\/(\d+)$/.exec(answer.headers.get('content-range') ?? '')?.[1]), items: answer.json }
}

const answerOf = (r: Result) => r.result.details.answers.map((a: { data: string }) => a.data)

/**
 * How the results answered should be kept, by the rule: per location and kind (passing, or not),
 * oldest first, a run is compact when the last template of its location and kind is of the same
 * UTC day with the same shape (a passing run's details; a failing run's status, flags, error and
 * details), else it is a full row and the template. `templateOf`: each compact result's template.
 */
function model(items: Result[]): {
  rows: { full: number; templates: number; compact: Record<string, number>; failing: number }
  templateOf: Map<string, Result>
} {
  const rows = { full: 0, templates: 0, compact: {} as Record<string, number>, failing: 0 }
  const templateOf = new Map<string, Result>()
  const templates = new Map<string, { day: string; shape: string; result: Result }>()
  for (const r of [...items].sort((a, b) => a.startedAt.localeCompare(b.startedAt))) {
    const day = r.created_at.slice(0, 10)
    const passing = r.status === 'PASSED' && !r.hasFailures && !r.hasErrors && !r.isDegraded && r.error === null
    const shape = JSON.stringify(passing ? r.result.details : [r.status, r.hasFailures, r.hasErrors, r.isDegraded, r.error, r.result]).replace(
      /"(startedAt|stoppedAt|responseTime)":("[^"]*"|[\d.]+)/g,
      '',
    )
    const kind = `${r.runLocation} ${passing}`
    const template = templates.get(kind)
    if (template && template.day === day && template.shape === shape) {
      templateOf.set(r.id, template.result)
      const name = `result_runs_${day.replace(/-/g, '')}`
      if (passing) rows.compact[name] = (rows.compact[name] ?? 0) + 1
      else rows.failing++
    } else {
      rows.full++
      rows.templates++
      templates.set(kind, { day, shape, result: r })
    }
  }
  return { rows, templateOf }
}

/** A result without what is a run's own (its id and times): what a compact result takes from its template. */
function shared(r: Result): Record<string, unknown> {
  const { id: _id, startedAt: _s, stoppedAt: _t, responseTime: _rt, created_at: _c, result, ...rest } = r
  const { startedAt: _rs, stoppedAt: _rt2, responseTime: _rrt, ...inner } = result
  return { ...rest, result: inner }
}

describe('results kept compact', () => {
  it("runs with their template's answer (passes, failures repeating the last failure's error) are compact rows of their day, answered as full rows; changed answers stay in full; notifications per change of the alert", async () => {
    const dbPath = join(dir, 'compact.db')
    const clock = { now: T0 }
    const server = await start(dbPath, clock)
    const call = caller(server)
    dns.set('compact.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    const created = await call('POST', '/v1/checks/dns', {
      name: 'compact',
      frequency: 1,
      locations: LOCATIONS,
      runParallel: true,
      doubleCheck: false,
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
    // 00:04: failing (full: the day's first failure, a template), 00:05 and 00:06 failing the same way (compact)
    dns.set('compact.test', 'A', { rcode: 'SERVFAIL' })
    await minute(server, clock)
    // the alert state: written by the failures that raised the alert (each location's first), then left alone
    const alertWritten = await alertStateWritten(dbPath, id)
    expect(alertWritten).toBe(new Date(clock.now).toISOString())
    await minute(server, clock)
    await minute(server, clock)
    // 00:07: another error (full: a new template), 00:08 that error again (compact)
    dns.set('compact.test', 'A', { rcode: 'NXDOMAIN' })
    await minute(server, clock)
    await minute(server, clock)
    expect(await alertStateWritten(dbPath, id)).toBe(alertWritten)
    // 00:09 passing again with the answer of 00:02 (compact: its template is the passing one, not the failures')
    dns.set('compact.test', 'A', { records: [{ type: 'A', data: '192.0.2.7' }] })
    await minute(server, clock)
    // every run answered, newest first, each with its own answer; paging cuts across both kinds
    const { total, items } = await results(call, id)
    expect(total).toBe(items.length)
    expect(total).toBeGreaterThanOrEqual(18)
    expect(items.map((r) => r.startedAt)).toEqual([...items.map((r) => r.startedAt)].sort().reverse())
    expect(new Set(items.map((r) => r.id)).size).toBe(total)
    // kept as the rule says: templates at the start of each day, at the changed answer and at each
    // new error, the rest compact (the repeated failures too)
    rows = await stored(dbPath)
    const kept = model(items)
    expect(rows).toEqual(kept.rows)
    expect(rows).toMatchObject({ full: 2 + 2 + 2 + 2 + 2, templates: 10, failing: 2 * 2 + 2 })
    expect(kept.rows.compact.result_runs_20260511).toBeGreaterThanOrEqual(2 + 2)
    // a compact failure answers what its template (the full row it repeats) answers, but for its own id and times
    const compactFailures = items.filter((r) => r.hasFailures && kept.templateOf.has(r.id))
    // newest first: the second error's repeat, then the first error's two repeats (each in both locations)
    expect(compactFailures.map((r) => r.error)).toEqual([
      ...Array(2).fill(expect.stringMatching(/NXDOMAIN/)),
      ...Array(4).fill(expect.stringMatching(/SERVFAIL/)),
    ])
    for (const r of compactFailures) {
      const template = kept.templateOf.get(r.id) as Result
      expect(r.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7c0d-/)
      expect(shared(r)).toEqual(shared(template))
      expect(r).toMatchObject({ status: 'FAILED', hasFailures: true, checkSessionId: null, resultType: 'FINAL' })
      expect(r.result).toMatchObject({ startedAt: r.startedAt, stoppedAt: r.stoppedAt, responseTime: r.responseTime, status: 'FAILED', error: r.error })
      expect(Date.parse(r.startedAt)).toBeGreaterThan(Date.parse(template.startedAt))
    }
    // the pass after the failures is compact, its template a passing row with the changed answer
    const last = [...LOCATIONS].map((l) => items.find((r) => r.runLocation === l) as Result)
    for (const r of last) {
      expect(r.status).toBe('PASSED')
      expect(kept.templateOf.get(r.id)).toMatchObject({ status: 'PASSED', result: { details: { answers: [expect.objectContaining({ data: '192.0.2.7' })] } } })
    }
    // notifications: one when the alert started (the first failure), one at the recovery; none per failing run or for the new error
    const notifications = await call('GET', `/v1/alert-notifications?checkId=${id}`)
    expect(notifications.json.map((n: { alertType: string }) => n.alertType)).toEqual(['ALERT_RECOVERY', 'ALERT_FAILURE'])
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
      [
        `&from=${seconds('2026-05-10T23:58:00Z')}&to=${seconds('2026-05-11T00:03:00Z')}`,
        (r) => r.startedAt >= '2026-05-10T23:58' && r.startedAt < '2026-05-11T00:03',
      ],
      [
        `&location=eu-west-1&hasFailures=false&from=${seconds('2026-05-10T23:59:00Z')}`,
        (r) => r.runLocation === 'eu-west-1' && !r.hasFailures && r.startedAt >= '2026-05-10T23:59',
      ],
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
      expect(Object.keys(one.json.result)).toEqual([
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
      expect(one.json.result).toMatchObject({
        checkId: id,
        runLocation: listed.runLocation,
        startedAt: listed.startedAt,
        stoppedAt: listed.stoppedAt,
        responseTime: listed.responseTime,
        status: listed.status,
      })
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
      name: 'days',
      frequency: 1,
      locations: LOCATIONS,
      runParallel: true,
      doubleCheck: false,
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
    await waitFor(async () => Object.keys((await stored(dbPath)).compact).length <= 1, {
      timeoutMs: 20_000,
      intervalMs: 50,
      what: 'the older partitions dropped',
    })
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

  it.runIf(onPostgres)(
    'PostgreSQL: partitions are made ahead, an ended hour is packed into blocks and answered the same, and retention drops them whole, all on the clock',
    async () => {
      const dbPath = join(dir, 'packed.db')
      const clock = { now: Date.parse('2026-05-10T22:57:30Z') }
      const server = await start(dbPath, clock)
      const call = caller(server)
      dns.set('packed.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
      const created = await call('POST', '/v1/checks/dns', {
        name: 'packed',
        frequency: 1,
        locations: LOCATIONS,
        runParallel: true,
        doubleCheck: false,
        request: { query: 'packed.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
      })
      const id = created.json.id as string
      await firstRuns(server)
      // the first prune made ahead this hour's and the next hour's staging partitions, today's and tomorrow's blocks
      await partitionsBecome(dbPath, 'result_runs', ['result_runs_2026051022', 'result_runs_2026051023'])
      await partitionsBecome(dbPath, 'result_blocks', ['result_blocks_20260510', 'result_blocks_20260511'])
      await partitionsBecome(dbPath, 'analytics_deltas', ['analytics_deltas_2026051022', 'analytics_deltas_2026051023'])
      await partitionsBecome(dbPath, 'analytics_rollups', ['analytics_rollups_20260510', 'analytics_rollups_20260511'])
      // 22:58 … 23:01: the hour of 22 has ended, but not its grace (2 minutes): nothing packed yet
      for (let m = 0; m < 4; m++) await minute(server, clock)
      expect(await partitions(dbPath, 'result_runs')).toContain('result_runs_2026051022')
      const before = await results(call, id)
      const compactOf22 = (await stored(dbPath)).compact.result_runs_20260510
      expect(compactOf22).toBeGreaterThanOrEqual(4)
      const one = async (r: Result) => (await call('GET', `/v1/check-results/${id}/${r.id}`)).json as Result
      const each = await Promise.all(before.items.map(one))
      const eu = await results(call, id, `&location=eu-west-1&from=${Date.parse('2026-05-10T22:58:00Z') / 1000}`)
      // analytics of the hour from its deltas (not merged yet), per run and per bucket
      const window = `from=${Date.parse('2026-05-10T22:00:00Z') / 1000}&to=${Date.parse('2026-05-10T23:00:00Z') / 1000}`
      const analytics = async () =>
        Promise.all(
          ['&metrics=total_sum,total_p50,total_max,retries,availability&groupBy=runLocation', '&metrics=total_avg,total_p99&aggregationInterval=5'].map(
            async (q) => (await call('GET', `/v1/analytics/dns/${id}?${window}${q}`)).json,
          ),
        )
      const figures = await analytics()
      expect(figures[0].series).toHaveLength(LOCATIONS.length)
      expect(figures[1].series.length).toBeGreaterThanOrEqual(1)
      // 23:02 and 23:03: the hour of 22 packed (one block per location and template), its partition dropped, 00 made ahead
      await minute(server, clock)
      await minute(server, clock)
      await partitionsBecome(dbPath, 'result_runs', ['result_runs_2026051023', 'result_runs_2026051100'])
      await partitionsBecome(dbPath, 'analytics_deltas', ['analytics_deltas_2026051023', 'analytics_deltas_2026051100'])
      // the hour's deltas merged into its rollup rows (one per location and status), which answer the same figures
      expect(
        await onDatabase(
          dbPath,
          async (client) =>
            (
              await client.query(
                `SELECT run_location, runs FROM analytics_rollups WHERE hour_start = $1
      ORDER BY 1`,
                [Date.parse('2026-05-10T22:00:00Z')],
              )
            ).rows.length,
        ),
      ).toBe(LOCATIONS.length)
      expect(await analytics()).toEqual(figures)
      const blocks = await onDatabase(
        dbPath,
        async (client) =>
          (
            await client.query(
              `SELECT count(*)::int AS blocks, sum(array_length(v, 2))::int AS runs
      FROM result_blocks WHERE hour = $1`,
              [Date.parse('2026-05-10T22:00:00Z')],
            )
          ).rows[0] as { blocks: number; runs: number },
      )
      expect(blocks.blocks).toBe(LOCATIONS.length)
      expect(blocks.runs).toBeGreaterThanOrEqual(4)
      // every result reads as it did before, in the list (with its filters) and by id
      const after = await results(call, id)
      expect(after.total).toBeGreaterThan(before.total)
      expect(after.items.slice(after.items.length - before.items.length)).toEqual(before.items)
      expect(await Promise.all(before.items.map(one))).toEqual(each)
      const euAfter = await results(call, id, `&location=eu-west-1&from=${Date.parse('2026-05-10T22:58:00Z') / 1000}`)
      expect(euAfter.items.slice(euAfter.items.length - eu.items.length)).toEqual(eu.items)
      expect((await stored(dbPath)).compact.result_runs_20260510).toBeGreaterThan(compactOf22)
      await server.close()
      // kept 5 minutes, the clock at 00:10: the hour of 23 is packed, then the whole day of the 10th (blocks and staging) is
      // past the cutoff and dropped; the partitions ahead are those of now
      clock.now = Date.parse('2026-05-11T00:10:30Z')
      const later = await start(dbPath, clock, { retentionDays: 5 / 1440 })
      await partitionsBecome(dbPath, 'result_blocks', ['result_blocks_20260511', 'result_blocks_20260512'])
      await partitionsBecome(dbPath, 'result_runs', ['result_runs_2026051100', 'result_runs_2026051101'])
      const kept = await results(caller(later), id)
      for (const r of kept.items) expect(Date.parse(r.stoppedAt)).toBeGreaterThanOrEqual(clock.now - 6 * 60_000)
      // the rollups of the 10th went with their day's partition, not row by row: none deleted, none answered
      await partitionsBecome(dbPath, 'analytics_rollups', ['analytics_rollups_20260511', 'analytics_rollups_20260512'])
      expect(
        await onDatabase(
          dbPath,
          async (client) =>
            (await client.query(`SELECT count(*)::int AS n FROM analytics_rollups WHERE hour_start < $1`, [Date.parse('2026-05-11T00:00:00Z')])).rows[0].n,
        ),
      ).toBe(0)
      const old = (await caller(later)('GET', `/v1/analytics/dns/${id}?${window}&metrics=total_sum&groupBy=runLocation`)).json
      expect(old.series ?? []).toEqual([])
      for (const r of before.items.slice(0, 4)) expect((await caller(later)('GET', `/v1/check-results/${id}/${r.id}`)).status).toBe(404)
      await later.close()
    },
    120_000,
  )

  it.runIf(onPostgres)(
    'PostgreSQL: compact rows of a database written before packing are answered as they were, then packed once their day has ended',
    async () => {
      dns.set('unpacked.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
      const scratch = await startLocalServer({ apiKeys: [{ key: KEY_A, accountId: 'acc-a' }] })
      const made = await caller(scratch)('POST', '/v1/checks/dns', {
        name: 'unpacked',
        frequency: 1,
        locations: ['eu-west-1'],
        doubleCheck: false,
        request: { query: 'unpacked.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
      })
      await scratch.close()
      const check = made.json as { id: string }
      const { url } = await databaseFor(undefined, { empty: true })
      const pool = new pg.Pool({ connectionString: url })
      // the schema before packing, with what its code wrote: a template and compact rows in the day's partition
      await migratePostgres(pool, POSTGRES_MIGRATIONS.slice(0, 22))
      const day = Date.parse('2026-05-10T00:00:00Z')
      await pool.query(`INSERT INTO checks (id, account_id, check_type, activated, body) VALUES ($1, 'acc-a', 'DNS', false, $2)`, [
        check.id,
        JSON.stringify(check),
      ])
      const details = {
        name: 'unpacked',
        checkType: 'DNS',
        attempt: 1,
        timedOut: false,
        aborted: false,
        failureKind: null,
        assertions: [],
        details: { kind: 'DNS', query: 'unpacked.test', rcode: 'NOERROR', answers: [{ type: 'A', data: '192.0.2.1' }] },
      }
      const [tpl] = (
        await pool.query(
          `INSERT INTO check_results (id, account_id, check_id, session_id, run_id, run_location, result_type, status,
      has_failures, has_errors, is_degraded, response_time, started_at, stopped_at, error, details, created_at, is_template)
      VALUES ('00000000-0000-4000-8000-000000000001', 'acc-a', $1, NULL, 'r', 'eu-west-1', 'FINAL', 'PASSED', false, false, false, 4.5,
        '2026-05-10T12:00:00.000Z', '2026-05-10T12:00:00.004Z', NULL, $2, '2026-05-10T12:00:00.010Z', true) RETURNING seq`,
          [check.id, JSON.stringify(details)],
        )
      ).rows
      await pool.query(`INSERT INTO result_locations (name) VALUES ('eu-west-1')`)
      // a rollup row of the table before it was partitioned
      await pool.query(
        `INSERT INTO analytics_rollups (check_id, account_id, hour_start, run_location, status_code, status, runs, retries, totals, samples)
      VALUES ($1, 'acc-a', $2, 'eu-west-1', -1, 'success', 1, 0, '{}', '{"seconds":[60],"retries":[0],"values":{}}')`,
        [check.id, Date.parse('2026-05-10T12:00:00Z')],
      )
      await pool.query(`CREATE TABLE result_runs_20260510 PARTITION OF result_runs FOR VALUES FROM (${day}) TO (${day + 86_400_000})`)
      // runs at 12:01 … 12:04 and 13:30, each 3 ms long, created 6 ms after it stopped, 3.25 ms to answer
      const starts = ['12:01', '12:02', '12:03', '12:04', '13:30'].map((t) => Date.parse(`2026-05-10T${t}:00Z`))
      for (const started of starts) {
        await pool.query(
          `INSERT INTO result_runs (seq, chk, loc, tpl, created, made, dur, rt) SELECT nextval(pg_get_serial_sequence('check_results', 'seq')),
        c.seq, 1, $2, $3, 6, 3, 3250 FROM checks c WHERE c.id = $1`,
          [check.id, tpl.seq, started + 9],
        )
      }
      await pool.end()
      const clock = { now: Date.parse('2026-05-10T14:00:30Z') }
      const server = await start(url, clock)
      const call = caller(server)
      // the upgrade moved it into its day's partition
      expect(
        await onDatabase(
          url,
          async (client) =>
            (
              await client.query(
                `SELECT tableoid::regclass::text AS p, runs FROM analytics_rollups
      WHERE hour_start = $1`,
                [Date.parse('2026-05-10T12:00:00Z')],
              )
            ).rows,
        ),
      ).toEqual([{ p: 'analytics_rollups_20260510', runs: 1 }])
      const before = await results(call, check.id)
      expect(before.total).toBe(6)
      expect(before.items.slice(0, 5).map((r) => r.startedAt)).toEqual(starts.reverse().map((ms) => new Date(ms).toISOString()))
      for (const r of before.items.slice(0, 5)) {
        expect(r).toMatchObject({
          status: 'PASSED',
          responseTime: 3.25,
          runLocation: 'eu-west-1',
          created_at: new Date(Date.parse(r.startedAt) + 9).toISOString(),
        })
        expect(r.result.details).toEqual(details.details)
      }
      const each = await Promise.all(before.items.map(async (r) => (await call('GET', `/v1/check-results/${check.id}/${r.id}`)).json))
      expect(each).toEqual(before.items)
      // the day partition is packed once its day has ended (and the grace after it), its runs answered the same from blocks
      expect(await partitions(url, 'result_runs')).toContain('result_runs_20260510')
      await server.close()
      clock.now = Date.parse('2026-05-11T00:02:30Z')
      const next = await start(url, clock)
      await partitionsBecome(url, 'result_runs', ['result_runs_2026051100', 'result_runs_2026051101'])
      const blocks = await onDatabase(url, async (client) => (await client.query(`SELECT hour, array_length(v, 2) AS n FROM result_blocks ORDER BY hour`)).rows)
      expect(blocks).toEqual([
        { hour: String(Date.parse('2026-05-10T12:00:00Z')), n: 4 },
        { hour: String(Date.parse('2026-05-10T13:00:00Z')), n: 1 },
      ])
      const call2 = caller(next)
      expect(await results(call2, check.id)).toEqual(before)
      expect(await Promise.all(before.items.map(async (r) => (await call2('GET', `/v1/check-results/${check.id}/${r.id}`)).json))).toEqual(each)
      await next.close()
    },
    120_000,
  )

  it('a database written before this layout upgrades and answers its results as it did, then keeps new runs compact', async () => {
    // the check as the API stores it, made on a throwaway server
    dns.set('old.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    const scratch = await startLocalServer({ apiKeys: [{ key: KEY_A, accountId: 'acc-a' }] })
    const made = await caller(scratch)('POST', '/v1/checks/dns', {
      name: 'old',
      frequency: 1,
      locations: ['eu-west-1'],
      doubleCheck: false,
      request: { query: 'old.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
    })
    await scratch.close()
    const check = made.json as { id: string }
    const runner = (i: number, failed: boolean) => ({
      checkId: check.id,
      name: 'old',
      checkType: 'DNS',
      runLocation: 'eu-west-1',
      resultType: 'FINAL',
      attempt: 1,
      startedAt: `2026-05-10T12:0${i}:00.000Z`,
      stoppedAt: `2026-05-10T12:0${i}:00.012Z`,
      responseTime: 12.5,
      hasFailures: failed,
      hasErrors: false,
      isDegraded: false,
      timedOut: false,
      aborted: false,
      status: failed ? 'FAILED' : 'PASSED',
      failureKind: failed ? 'ASSERTION' : null,
      error: failed ? 'RESPONSE_CODE EQUALS "NOERROR" failed: got "SERVFAIL"' : null,
      assertions: [],
      details: { kind: 'DNS', query: 'old.test', rcode: failed ? 'SERVFAIL' : 'NOERROR', answers: [] },
    })
    const old = [0, 1, 2].map((i) => ({ id: `00000000-0000-4000-8000-00000000000${i}`, result: runner(i, i === 1), created_at: `2026-05-10T12:0${i}:01.000Z` }))
    // the rows as the stores wrote them before (SQLite: details without the columns' fields; PostgreSQL: whole)
    const lean = (r: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(r).filter(
          ([k]) =>
            ![
              'checkId',
              'runLocation',
              'resultType',
              'startedAt',
              'stoppedAt',
              'responseTime',
              'hasFailures',
              'hasErrors',
              'isDegraded',
              'status',
              'error',
            ].includes(k),
        ),
      )
    const insert = `INSERT INTO check_results (id, account_id, check_id, session_id, run_id, run_location, result_type, status, has_failures,
      has_errors, is_degraded, response_time, started_at, stopped_at, error, details, created_at)
      VALUES ($1, 'acc-a', $2, NULL, $3, 'eu-west-1', 'FINAL', $4, $5, false, false, 12.5, $6, $7, $8, $9, $10)`
    const values = (o: (typeof old)[number], details: unknown) => [
      o.id,
      check.id,
      `${o.id}.1`,
      o.result.status,
      o.result.hasFailures,
      o.result.startedAt,
      o.result.stoppedAt,
      o.result.error,
      JSON.stringify(details),
      o.created_at,
    ]
    let dbPath = join(dir, 'old.db')
    if (onPostgres) {
      const { url } = await databaseFor(undefined, { empty: true })
      dbPath = url
      const pool = new pg.Pool({ connectionString: url })
      await migratePostgres(pool, POSTGRES_MIGRATIONS.slice(0, -1))
      await pool.query(`INSERT INTO checks (id, account_id, check_type, activated, body) VALUES ($1, 'acc-a', 'DNS', true, $2)`, [
        check.id,
        JSON.stringify(check),
      ])
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
      id: o.id,
      checkId: check.id,
      checkSessionId: null,
      runLocation: 'eu-west-1',
      resultType: 'FINAL',
      status: o.result.status,
      hasFailures: o.result.hasFailures,
      hasErrors: false,
      isDegraded: false,
      responseTime: 12.5,
      startedAt: o.result.startedAt,
      stoppedAt: o.result.stoppedAt,
      error: o.result.error,
      result: o.result,
      created_at: o.created_at,
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
