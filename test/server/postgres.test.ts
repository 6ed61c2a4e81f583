/**
 * What only the PostgreSQL store has to prove (the rest of the server's suite runs on it too,
 * see vitest.config.ts): migrations applied once when servers start together, keys kept as
 * hashes, one rate limit per key across servers, a session long-polled on a server that did
 * not run it, and `monitors server --db postgres://…` never printing the password.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { MIGRATIONS } from '../../src/server/store/postgres/migrations.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { databaseFor, onPostgres } from '../helpers/postgres-databases.js'
import { KEY_A, KEY_B, caller } from './helpers.js'

const bin = join(import.meta.dirname, '..', '..', 'bin', 'monitors.cjs')

async function rows<R>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, values)).rows as R[]
  } finally {
    await client.end()
  }
}

const keys = [{ key: KEY_A, accountId: 'acc-a' }, { key: KEY_B, accountId: 'acc-b' }]

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
    await expect(startLocalServer({ dbPath: url, apiKeys: keys })).rejects.toMatchObject({ userError: true, message: expect.stringMatching(/newer version of monitors \(schema 999/) })
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
        name: 'shared', activated: false, locations: ['eu-west-1', 'us-east-1'],
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
        for (let i = 0; i < 300 && !/listening on/.test(output); i++) await new Promise((r) => setTimeout(r, 50))
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
})
