/**
 * Two servers on one PostgreSQL database, in processes of their own, under load while the
 * database is restarted (`pg_ctl stop -m fast`, then start): neither process exits; while the
 * database is away they answer 503 with Retry-After and their readiness says so; once it is
 * back they serve, run and deliver again by themselves. Every write that answered 2xx is there
 * afterwards and every run acknowledged is recorded exactly once.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresBinDir, startPostgresCluster, type PostgresCluster } from '../../helpers/postgres-cluster.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { startReceiver, type Receiver } from '../alerts/alerts-helpers.js'
import { KEY_A, caller, type Answer, type Call } from '../helpers.js'

const CHILD = fileURLToPath(new URL('../../helpers/server-child.mjs', import.meta.url))
const available = postgresBinDir() !== undefined || Boolean(process.env.MONITORS_REQUIRE_POSTGRES)

interface Child {
  process: ChildProcess
  url: string
  output: () => string
  exitCode: () => number | null | undefined
}

async function startChild(options: Record<string, unknown>): Promise<Child> {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  let exit: number | null | undefined
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  child.on('exit', (code) => (exit = code))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const found = /listening on (http:\/\/\S+)/.exec(output)?.[1]
      if (found) {
        clearInterval(timer)
        resolve(found)
      } else if (exit !== undefined) {
        clearInterval(timer)
        reject(new Error(`the server exited with ${exit}: ${output}`))
      }
    }, 20)
  })
  return { process: child, url, output: () => output, exitCode: () => exit }
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`still waiting for ${what} after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** A request that never throws: a refused or reset connection is status 0. */
async function attempt(call: Call, method: string, path: string, body?: unknown): Promise<Answer> {
  try {
    return await call(method, path, body)
  } catch {
    return { status: 0, headers: new Headers(), text: '', json: undefined }
  }
}

describe.skipIf(!available)('a PostgreSQL restart under load, two servers', () => {
  let cluster: PostgresCluster
  let url: string
  let dns: DnsServerHandle
  let hooks: Receiver
  const servers: Child[] = []

  beforeAll(async () => {
    cluster = await startPostgresCluster()
    const admin = new pg.Client({ connectionString: cluster.url('postgres') })
    await admin.connect()
    await admin.query('CREATE DATABASE restart')
    await admin.end()
    url = cluster.url('restart')
    dns = await startDnsServer()
    hooks = await startReceiver()
    const options = {
      dbPath: url,
      apiKeys: [{ key: KEY_A, accountId: 'acc-a' }],
      rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
      runner: true,
      // a claim whose answer was lost with the connection comes back after a short lease
      schedulerOptions: { tickMs: 200, leaseMs: 4000 },
      alerts: { pollMs: 200 },
    }
    servers.push(await startChild(options))
    servers.push(await startChild(options))
  }, 120_000)

  afterAll(async () => {
    for (const server of servers) {
      if (server.exitCode() === undefined) {
        server.process.kill('SIGTERM')
        await new Promise((resolve) => server.process.once('exit', resolve))
      }
    }
    await hooks?.close()
    await dns?.close()
    await cluster?.stop()
  }, 60_000)

  it('neither server exits; 503 with Retry-After while it is away; afterwards every acknowledged write is there and every run recorded once', async () => {
    const [one, two] = servers.map((s) => caller(s))
    dns.set('up.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    dns.set('alert.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    const dnsCheck = (name: string, query: string, extra: Record<string, unknown> = {}) =>
      one('POST', '/v1/checks/dns', {
        name,
        activated: false,
        doubleCheck: false,
        locations: ['eu-west-1', 'us-east-1'],
        ...extra,
        request: { query, recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
      })
    const check = await dnsCheck('runs under load', 'up.test')
    expect(check.status, check.text).toBe(201)
    const alerting = await dnsCheck('alerts after the restart', 'alert.test', {
      alertChannels: { webhook: [{ name: 'ops', url: `${hooks.url}/hook`, method: 'POST' }] },
    })
    expect(alerting.status, alerting.text).toBe(201)
    const service = await one('POST', '/v1/status-pages/services', { name: 'service' })
    expect(service.status).toBe(201)

    // load on both servers: variables created, sessions triggered (each runs in two locations),
    // a service renamed in a transaction; what answered 2xx is remembered
    const created: string[] = []
    const sessions: string[] = []
    const statuses = new Map<number, number>()
    const unavailable: Answer[] = []
    let failed = 0
    let stop = false
    let n = 0
    const worker = async (call: Call) => {
      while (!stop) {
        const i = n++
        const answers = await Promise.all([
          attempt(call, 'POST', '/v1/variables', { key: `V_${i}`, value: 'v' }).then((a) => {
            if (a.status === 201) created.push(`V_${i}`)
            return a
          }),
          attempt(call, 'POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } }).then((a) => {
            if (a.status === 201) sessions.push(a.json.sessions[0].checkSessionId)
            return a
          }),
          attempt(call, 'PUT', `/v1/status-pages/services/${service.json.id}`, { name: `service ${i}` }),
        ])
        for (const a of answers) {
          statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
          if (a.status === 503) unavailable.push(a)
          if (a.status !== 200 && a.status !== 201) failed++
        }
        if (answers.some((a) => a.status !== 200 && a.status !== 201)) await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    const load = [one, two, one, two].map(worker)
    await eventually('sessions before the restart', async () => (sessions.length >= 10 ? true : undefined))

    cluster.stopServer('fast')
    await eventually('answers while the database is away', async () => (failed >= 20 ? true : undefined))
    for (const server of servers) {
      expect(server.exitCode(), server.output()).toBeUndefined()
      const ready = await fetch(`${server.url}/-/readiness`)
      expect(ready.status).toBe(503)
      expect(ready.headers.get('retry-after')).toBe('5')
      expect(await ready.text()).toBe('Service Unavailable: the database is unavailable')
      expect((await fetch(`${server.url}/-/liveness`)).status).toBe(200)
      // a status page a browser asks for: a page that says so, same status
      const page = await fetch(`${server.url}/status/some-page`)
      expect(page.status).toBe(503)
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(page.headers.get('retry-after')).toBe('5')
      expect(await page.text()).toContain('The database is unavailable; retry in 5 seconds')
    }
    cluster.startServer()
    const acknowledgedBefore = sessions.length
    await eventually('sessions after the restart', async () => (sessions.length >= acknowledgedBefore + 10 ? true : undefined))
    stop = true
    await Promise.all(load)

    // both processes lived through it
    for (const server of servers) expect(server.exitCode(), server.output()).toBeUndefined()
    // a 503 is API.md's error body, with Retry-After
    const sample = unavailable[0]
    expect(sample.headers.get('content-type')).toMatch(/^application\/json/)
    expect(sample.headers.get('retry-after')).toBe('5')
    expect(sample.json).toEqual({ statusCode: 503, error: 'Service Unavailable', message: 'The database is unavailable; retry in 5 seconds' })
    // nothing but 2xx and 503 (no 500, no reset connection)
    expect([...statuses.keys()].sort()).toEqual([200, 201, 503])

    for (const server of servers) await eventually('readiness', async () => ((await fetch(`${server.url}/-/readiness`)).status === 200 ? true : undefined))

    // every variable that answered 201 is there
    const db = new pg.Client({ connectionString: url })
    await db.connect()
    try {
      const keys = new Set((await db.query<{ key: string }>('SELECT key FROM variables')).rows.map((r) => r.key))
      expect(created.filter((key) => !keys.has(key))).toEqual([])

      // every session acknowledged completes: its two runs recorded exactly once each
      for (const id of sessions) {
        await eventually(`session ${id}`, async () => {
          const done = await attempt(two, 'GET', `/v1/check-sessions/${id}/completion?maxWaitSeconds=5`)
          return done.status === 200 ? true : undefined
        })
      }
      const finals = (
        await db.query<{ session_id: string; run_location: string; n: number }>(
          `SELECT session_id, run_location, count(*)::int AS n FROM check_results WHERE result_type = 'FINAL' AND session_id = ANY($1) GROUP BY 1, 2`,
          [sessions],
        )
      ).rows
      expect(finals.filter((r) => r.n !== 1)).toEqual([])
      expect(finals).toHaveLength(sessions.length * 2)
    } finally {
      await db.end()
    }

    // the delivery worker resumed: a failure after the restart reaches the webhook, once
    dns.set('alert.test', 'A', { rcode: 'SERVFAIL' })
    const failing = await one('POST', '/v1/check-sessions/trigger', { target: { checkId: [alerting.json.id] } })
    expect(failing.status).toBe(201)
    const [delivery] = await hooks.waitFor('/hook', 1, 30_000)
    expect(delivery.json).toMatchObject({ alertType: 'ALERT_FAILURE', checkId: alerting.json.id })
    for (const server of servers) expect(server.output()).toMatch(/scheduler: the database is back after [\d.]+ s; resumed/)
  }, 180_000)
})
