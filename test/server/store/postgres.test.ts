/**
 * What only the PostgreSQL store has to prove (the rest of the server's suite runs on it too,
 * see vitest.config.ts): migrations applied once when servers start together, keys kept as
 * hashes, one rate limit per key across servers, a session long-polled on a server that did
 * not run it, and `monitors server --db postgres://…` never printing the password.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore, startLocalServer, type LocalServer } from '../../../src/server/index.js'
import { completeRuns, type RunServices } from '../../../src/server/scheduler/index.js'
import { recordResult, type RecordableCheck } from '../../../src/server/results/index.js'
import { StorePoolSaturated, type ClaimedRun, type Store } from '../../../src/server/store/index.js'
import { runCheck, type RunnableCheck } from '../../../src/runner/index.js'
import { MIGRATIONS } from '../../../src/server/store/postgres/migrations.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { databaseFor, onPostgres } from '../../helpers/postgres-databases.js'
import { KEY_A, KEY_B, caller } from '../helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'monitors.cjs')

async function rows<R>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, values)).rows as R[]
  } finally {
    await client.end()
  }
}

const keys = [
  { key: KEY_A, accountId: 'acc-a' },
  { key: KEY_B, accountId: 'acc-b' },
]
const AGENT_KEY = 'postgres-agent-key-0123456789abcdef'

describe.skipIf(!onPostgres)('the PostgreSQL store', () => {
  const open: LocalServer[] = []
  const start = async (options: Parameters<typeof startLocalServer>[0]) => {
    const server = await startLocalServer(options)
    open.push(server)
    return server
  }
  afterAll(async () => {
    await Promise.all(open.map((s) => s.close()))
  })

  it('two servers starting together on an empty database apply each migration once, and the schema is refused when newer', async () => {
    const { url } = await databaseFor(undefined, { empty: true })
    const [one, two] = await Promise.all([start({ dbPath: url, apiKeys: keys }), start({ dbPath: url, apiKeys: keys })])
    const versions = await rows<{ version: number }>(url, 'SELECT version FROM schema_migrations ORDER BY version')
    expect(versions.map((v) => v.version)).toEqual(MIGRATIONS.map((_, i) => i + 1))
    expect(MIGRATIONS.length).toBeGreaterThanOrEqual(7)
    // both serve the same data
    const created = await caller(one)('POST', '/v1/variables', { key: 'BOTH', value: 'v' })
    expect(created.status).toBe(201)
    expect((await caller(two)('GET', '/v1/variables/BOTH')).json).toMatchObject({ key: 'BOTH', value: 'v' })

    await rows(url, `INSERT INTO schema_migrations (version, applied_at) VALUES (999, 'later')`)
    await expect(startLocalServer({ dbPath: url, apiKeys: keys })).rejects.toMatchObject({
      userError: true,
      message: expect.stringMatching(/newer version of monitors \(schema 999/),
    })
  })

  it('keeps keys as hashes only: a generated key works after a restart and is nowhere in the database', async () => {
    const { url } = await databaseFor(undefined)
    const first = await startLocalServer({ dbPath: url })
    const key = first.apiKey as string
    expect(first.keyGenerated).toBe(true)
    await first.close()
    const stored = await rows(url, 'SELECT * FROM api_keys')
    expect(stored).toHaveLength(1)
    expect(JSON.stringify(stored)).not.toContain(key)
    const second = await start({ dbPath: url })
    expect(second.keyGenerated).toBe(false)
    expect((await caller(second, key)('GET', '/v1/checks')).status).toBe(200)
  })

  it('the rate limit holds per key across servers: 5 requests in all, whichever server answers', async () => {
    const { url } = await databaseFor(undefined)
    const options = { dbPath: url, apiKeys: keys, rateLimit: { max: 5, timeWindowMs: 60_000 } }
    const servers = [await start(options), await start(options)]
    const statuses: number[] = []
    const remaining: string[] = []
    for (let i = 0; i < 8; i++) {
      const answer = await caller(servers[i % 2])('GET', '/v1/runtimes')
      statuses.push(answer.status)
      remaining.push(answer.headers.get('x-ratelimit-remaining') ?? '')
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429])
    expect(remaining.slice(0, 5)).toEqual(['4', '3', '2', '1', '0'])
    // another key has its own window on both servers
    expect((await caller(servers[1], KEY_B)('GET', '/v1/runtimes')).status).toBe(200)
  })

  describe('a session run by one server', () => {
    let dns: DnsServerHandle
    beforeAll(async () => {
      dns = await startDnsServer()
      dns.set('shared.test', 'A', { records: [{ type: 'A', data: '192.0.2.7' }] })
    })
    afterAll(() => dns.close())

    it('is long-polled to completion through another server that runs nothing', async () => {
      const { url } = await databaseFor(undefined)
      const runner = await start({ dbPath: url, apiKeys: keys, runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
      const front = await start({ dbPath: url, apiKeys: keys })
      const call = caller(front)
      const check = await call('POST', '/v1/checks/dns', {
        name: 'shared',
        activated: false,
        locations: ['eu-west-1', 'us-east-1'],
        request: { query: 'shared.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
      })
      expect(check.status).toBe(201)
      const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })
      expect(trigger.status).toBe(201)
      const id = trigger.json.sessions[0].checkSessionId
      const done = await call('GET', `/v1/check-sessions/${id}/completion?maxWaitSeconds=20`)
      expect(done.status).toBe(200)
      expect(done.json).toMatchObject({ checkSessionId: id, status: 'PASSED', runLocations: ['eu-west-1', 'us-east-1'] })
      expect(done.json.results.filter((r: { resultType: string }) => r.resultType === 'FINAL')).toHaveLength(2)
      expect(runner.completedRuns()).toBe(2)
      expect(front.completedRuns()).toBe(0)
    })
  })

  it('monitors server --db postgres://… (or MONITORING_SERVER_DB) serves the database and never prints the password', async () => {
    const { url } = await databaseFor(undefined)
    const withPassword = new URL(url)
    withPassword.username = 'monitors'
    withPassword.password = 's3cret-pass'
    for (const how of ['option', 'env'] as const) {
      const args = ['server', '--port', '0', '--api-key', `${KEY_A}:acc-a`, ...(how === 'option' ? ['--db', withPassword.toString()] : [])]
      const child = spawn(process.execPath, [bin, ...args], {
        env: { ...process.env, NO_COLOR: '1', ...(how === 'env' ? { MONITORING_SERVER_DB: withPassword.toString() } : {}) },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout.on('data', (chunk) => (output += chunk))
      child.stderr.on('data', (chunk) => (output += chunk))
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
      try {
        await waitFor(() => /listening on/.test(output), { timeoutMs: 15_000, intervalMs: 50, what: 'the server to listen' }).catch(() => undefined)
        const listening = /listening on (http:\/\/\S+) \(database (\S+), account acc-a\)/.exec(output)
        expect(listening, output).not.toBeNull()
        expect(listening![2]).toBe(`postgres://monitors:***@${withPassword.host}${withPassword.pathname}`)
        const answer = await caller({ url: listening![1] })('POST', '/v1/variables', { key: `FROM_${how.toUpperCase()}`, value: 'v' })
        expect(answer.status).toBe(201)
      } finally {
        child.kill('SIGTERM')
        expect(await exited).toBe(0)
      }
      expect(output).not.toContain('s3cret-pass')
    }
    expect((await rows<{ key: string }>(url, 'SELECT key FROM variables ORDER BY seq')).map((r) => r.key)).toEqual(['FROM_OPTION', 'FROM_ENV'])
  })

  it('a database that cannot be reached is one clear line, without the password', async () => {
    const child = spawn(process.execPath, [bin, 'server', '--port', '0'], {
      env: { ...process.env, NO_COLOR: '1', MONITORING_SERVER_DB: 'postgres://someone:s3cret-pass@127.0.0.1:1/nowhere' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    let stdout = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
    expect(code).toBe(1)
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toMatch(/Cannot open the PostgreSQL database postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/nowhere: ECONNREFUSED/)
    expect(stderr + stdout).not.toContain('s3cret-pass')
    expect(stderr).not.toMatch(/\n\s+at /)
  })

  describe('under load', () => {
    let dns: DnsServerHandle
    beforeAll(async () => {
      dns = await startDnsServer()
      dns.set('load.test', 'A', { records: [{ type: 'A', data: '192.0.2.8' }] })
    })
    afterAll(() => dns.close())

    /** Two DNS checks in two locations on a fresh database, their four runs planned and claimed. */
    async function claimedRuns(options: { poolSize?: number; poolWaitMs?: number } = {}): Promise<{ url: string; store: Store; runs: ClaimedRun[] }> {
      const { url } = await databaseFor(undefined)
      const front = await start({ dbPath: url, apiKeys: keys })
      for (const name of ['a', 'b']) {
        const created = await caller(front)('POST', '/v1/checks/dns', {
          name,
          locations: ['eu-west-1', 'us-east-1'],
          request: { query: 'load.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
        })
        expect(created.status).toBe(201)
      }
      const store = await openStore(url, options)
      const checks = await store.schedule.allChecks()
      const now = Date.now()
      await store.runs.plan(
        checks.flatMap((c) =>
          ['eu-west-1', 'us-east-1'].map((location) => ({
            key: `test:${c.id}:${location}`,
            account: c.account,
            checkId: c.id,
            location,
            dueAt: now - 1000,
            sessionId: null,
            staleAt: null,
          })),
        ),
      )
      const runs = await store.runs.claim({ owner: 'test', max: 10, leaseMs: 60_000, now })
      expect(runs).toHaveLength(4)
      return { url, store, runs }
    }

    it('two group commits of the same two checks in opposite orders take the rows in one order: no deadlock, no transaction run twice', async () => {
      const { store, runs } = await claimedRuns()
      try {
        const [a, b] = [...new Set(runs.map((r) => r.checkId))].sort()
        const run = (checkId: string, location: string) => runs.find((r) => r.checkId === checkId && r.location === location) as ClaimedRun
        // each group waits, once its first result holds its check's rows, until the other's first
        // result does too (or 500 ms): the interleaving that deadlocked two servers
        const arrived = new Set<string>()
        let hooks = 0
        const services: RunServices = {
          now: Date.now,
          onFinalResult: async (tx, check, result, recorded) => {
            await recordResult(tx, check as unknown as RecordableCheck, { ...result, id: recorded.final.id }, { fresh: true })
            hooks++
            const group = recorded.run.location
            if (arrived.has(group)) return
            arrived.add(group)
            for (let i = 0; i < 50 && arrived.size < 2; i++) await new Promise((r) => setTimeout(r, 10))
          },
        }
        const result = async (r: ClaimedRun) => ({
          account: undefined,
          runId: r.runId,
          checkId: r.checkId,
          result: await runCheck(JSON.parse(r.checkJson) as RunnableCheck, { location: r.location }),
        })
        const first = await Promise.all([result(run(a, 'eu-west-1')), result(run(b, 'eu-west-1'))])
        const second = await Promise.all([result(run(b, 'us-east-1')), result(run(a, 'us-east-1'))])
        const outcomes = await Promise.all([completeRuns(store, services, first), completeRuns(store, services, second)])
        expect(outcomes.flat().map((o) => o.outcome)).toEqual(['completed', 'completed', 'completed', 'completed'])
        // each FINAL result handled once: a deadlock's victim would have been run again
        expect(hooks).toBe(4)
      } finally {
        await store.close()
      }
    })

    it("a lease extension answers at once while a recording transaction holds the run's row and every connection of the pool is busy", async () => {
      const { store, runs } = await claimedRuns({ poolSize: 2, poolWaitMs: 500 })
      let release: () => void = () => undefined
      const held = new Promise<void>((resolve) => (release = resolve))
      const holding: Array<Promise<unknown>> = []
      try {
        let locked: () => void = () => undefined
        const isLocked = new Promise<void>((resolve) => (locked = resolve))
        // one transaction holds two runs' rows (a group commit), another the pool's other connection
        holding.push(
          store.transaction(async (tx) => {
            await tx.runs.lock([runs[0].runId, runs[1].runId])
            locked()
            await held
          }),
        )
        await isLocked
        holding.push(
          store.transaction(async (tx) => {
            await tx.checks.list('acc-a', { limit: 1, offset: 0 })
            await held
          }),
        )
        await new Promise((r) => setTimeout(r, 50))
        const began = performance.now()
        const until = await store.runs.extend(undefined, runs[0].runId, 60_000, Date.now())
        expect(typeof until).toBe('number')
        expect(await store.runs.extend(undefined, runs[2].runId, 60_000, Date.now())).toBeGreaterThan(Date.now())
        await store.ping()
        expect(performance.now() - began).toBeLessThan(400)
        // the main pool is saturated: said so, not "the database is unavailable"
        const refused = await store.checks.list('acc-a', { limit: 1, offset: 0 }).then(
          () => undefined,
          (error: unknown) => error,
        )
        expect(refused).toBeInstanceOf(StorePoolSaturated)
        expect((refused as Error).message).toMatch(/^The database pool is saturated: all 2 connections of the main pool stayed busy for 0.5 s/)
        expect(store.poolStats?.().find((p) => p.pool === 'main')).toMatchObject({ size: 2, total: 2, idle: 0, saturated: 1 })
      } finally {
        release()
        await Promise.all(holding)
        await store.close()
      }
    })

    it('a saturated pool answers 503 with Retry-After 1 and says so; readiness stays 200; /metrics counts it', async () => {
      const { url } = await databaseFor(undefined)
      const warnings: string[] = []
      const server = await start({
        dbPath: url,
        apiKeys: keys,
        dbPoolSize: 1,
        dbPoolWaitMs: 300,
        metricsToken: 'metrics-token-0123456789abcdef',
        warn: (line) => warnings.push(line),
      })
      const call = caller(server)
      // another client holds the checks table: the server's one connection waits behind it
      const blocker = new pg.Client({ connectionString: url })
      await blocker.connect()
      try {
        await blocker.query('BEGIN')
        await blocker.query('LOCK TABLE checks IN ACCESS EXCLUSIVE MODE')
        const stuck = call('GET', '/v1/checks')
        await new Promise((r) => setTimeout(r, 100))
        const refused = await call('GET', '/v1/checks')
        expect(refused.status, refused.text).toBe(503)
        expect(refused.headers.get('retry-after')).toBe('1')
        expect(refused.json).toEqual({
          statusCode: 503,
          error: 'Service Unavailable',
          message: 'The server is overloaded: every database connection is busy; retry in 1 second',
        })
        const ready = await fetch(`${server.url}/-/readiness`)
        expect(ready.status).toBe(200)
        expect(await ready.text()).toBe('OK')
        await blocker.query('COMMIT')
        expect((await stuck).status).toBe(200)
      } finally {
        await blocker.end()
      }
      expect(
        warnings.some((w) =>
          /^The database pool is saturated: all 1 connections of the main pool stayed busy for 0.3 s .*: answering 503 with Retry-After while the pool stays saturated/.test(
            w,
          ),
        ),
        warnings.join('\n'),
      ).toBe(true)
      expect(warnings.some((w) => /database is unavailable/.test(w))).toBe(false)
      const scraped = await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789abcdef' } })
      const text = await scraped.text()
      expect(text).toMatch(/^monitors_store_pool_saturated_total\{pool="main"\} [1-9]\d*$/m)
      expect(text).toMatch(/^monitors_store_pool_size\{pool="main"\} 1$/m)
      expect(text).toMatch(/^monitors_store_pool_size\{pool="lease"\} 2$/m)
      expect(text).toMatch(/^monitors_store_pool_size\{pool="auth"\} 3$/m)
    })

    it('readiness answers within a second while its ping waits behind lease extensions held by a lock', async () => {
      const { url } = await databaseFor(undefined)
      const server = await start({ dbPath: url, apiKeys: [...keys, { key: AGENT_KEY, accountId: 'acc-a', role: 'agent' }] })
      const agent = caller(server, AGENT_KEY)
      const timed = async () => {
        const began = performance.now()
        const answer = await fetch(`${server.url}/-/readiness`)
        return { status: answer.status, text: await answer.text(), ms: performance.now() - began }
      }
      expect((await timed()).status).toBe(200)
      // another client holds the runs table: both connections of the lease pool wait in extensions
      const blocker = new pg.Client({ connectionString: url })
      await blocker.connect()
      try {
        await blocker.query('BEGIN')
        await blocker.query('LOCK TABLE check_runs IN ACCESS EXCLUSIVE MODE')
        const extensions = [1, 2, 3].map((n) => agent('POST', `/v1/agent/runs/${randomUUID()}.${n}/extend`, { leaseSeconds: 30 }))
        await new Promise((r) => setTimeout(r, 1100))
        const busy = await timed()
        expect(busy.status, busy.text).toBe(200)
        expect(busy.ms).toBeLessThan(1800)
        await blocker.query('COMMIT')
        expect((await Promise.all(extensions)).map((e) => e.status)).toEqual([404, 404, 404])
      } finally {
        await blocker.end()
      }
      expect((await timed()).status).toBe(200)
    })
  })
})
