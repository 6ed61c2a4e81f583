/**
 * `monitors agent` against the real server (`monitors server --no-runner`: only agents run
 * checks): it runs the due runs of its locations and only those, the server records their
 * results, SIGTERM mid-run loses nothing (readiness 503 meanwhile), and a run whose agent was
 * killed is run again once its lease expires.
 */
import { mkdtempSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { caller, type Call } from '../server/helpers.js'
import { STACK_LINE } from '../helpers/cli.js'
import { probe, spawnAgent, type AgentProcess } from './helpers.js'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { containment } from '../../src/runner/script/jail.js'

const KEY = 'agent-e2e-key-0123456789abcdef0123'
const ACCOUNT = 'agents'

let server: LocalServer
let url: string
let api: Call
let dns: DnsServerHandle
const agents: AgentProcess[] = []

beforeAll(async () => {
  dns = await startDnsServer()
  // the server plans due runs but runs none itself: every run is left to agents
  server = await startLocalServer({
    port: 0,
    dbPath: ':memory:',
    apiKeys: [{ key: KEY, accountId: ACCOUNT }],
    rateLimit: { max: 100_000, timeWindowMs: 60_000 },
    scheduler: true,
    runner: false,
    schedulerOptions: { tickMs: 200 },
  })
  url = server.url
  api = caller({ url }, KEY)
})

afterEach(async () => {
  for (const agent of agents.splice(0)) {
    if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL')
    await agent.exited
  }
})

afterAll(async () => {
  await server?.close()
  await dns?.close()
})

function startAgent(locations: string, extra: string[] = []): AgentProcess {
  const agent = spawnAgent(['--locations', locations, '--health-port', '0', '--poll-interval', '200ms', ...extra], {
    MONITORING_API_URL: url,
    MONITORING_API_KEY: KEY,
  })
  agents.push(agent)
  return agent
}

/**
 * A DNS check at frequency 10 whose due time is now: its offset puts the latest due time in
 * the last six seconds, so the server plans one run at once and the next only ten minutes later.
 */
async function createCheck(name: string, query: string, locations: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const offset = Math.floor((Date.now() % 600_000) / 6_000) || 100
  const answer = await api('POST', '/v1/checks/dns', {
    name,
    frequency: 10,
    frequencyOffset: offset,
    locations,
    degradedResponseTime: 5000,
    maxResponseTime: 5000,
    request: {
      query,
      recordType: 'A',
      nameServer: dns.address,
      port: dns.port,
      assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }],
    },
    ...extra,
  })
  expect(answer.status, answer.text).toBe(201)
  return answer.json.id as string
}

function queriesFor(name: string) {
  return dns.queries.filter((q) => q.name === name)
}

async function until<T>(what: string, get: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await get()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The results the server recorded for a check, newest first. */
async function resultsOf(checkId: string): Promise<Array<Record<string, any>>> {
  const answer = await api('GET', `/v1/check-results/${checkId}?limit=100`)
  expect(answer.status, answer.text).toBe(200)
  return answer.json
}

/** A session of a deactivated check: one run per location, now, and none planned after it. */
async function triggerSession(name: string, query: string, locations: string[]): Promise<{ checkId: string; sessionId: string }> {
  const checkId = await createCheck(name, query, locations, { activated: false })
  const answer = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } })
  expect(answer.status, answer.text).toBe(201)
  return { checkId, sessionId: answer.json.sessions[0].checkSessionId }
}

describe("monitors agent with the server's runner off", () => {
  it('runs the due runs of its locations, only those, and the server records their results', async () => {
    dns.set('served.agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.10' }] })
    dns.set('other.agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.11' }] })
    const served = await createCheck('served by the agent', 'served.agent.test', ['eu-west-1'])
    const other = await createCheck('another location', 'other.agent.test', ['us-east-1'])

    const agent = startAgent('eu-west-1')
    const line = await agent.waitFor(/"served by the agent" eu-west-1 PASSED \d+(\.\d)? ms \(run (\S+)\)/)
    expect(queriesFor('served.agent.test')).toHaveLength(1)

    const results = await until('the result on the server', async () => {
      const list = await resultsOf(served)
      return list.length > 0 ? list : undefined
    })
    expect(results).toHaveLength(1)
    expect(results[0]).toMatchObject({ checkId: served, runLocation: 'eu-west-1', resultType: 'FINAL', status: 'PASSED', hasFailures: false, hasErrors: false })
    expect(results[0].result.details).toMatchObject({ kind: 'DNS', query: 'served.agent.test', rcode: 'NOERROR' })
    expect(results[0].responseTime).toBeGreaterThan(0)

    // us-east-1 has no agent and the server runs nothing itself: that run waits
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(queriesFor('other.agent.test')).toHaveLength(0)
    expect(await resultsOf(other)).toHaveLength(0)

    agent.child.kill('SIGTERM')
    expect((await agent.exited).code).toBe(0)
    expect(agent.stdout()).toMatch(/Agent stopped: 1 claimed, 1 results posted, 0 dropped \(lease lost\), 0 not delivered\./)
    // it says at start how it holds the scripts it runs
    expect(agent.stdout()).toMatch(
      containment().available
        ? /Scripts run contained by bubblewrap \S+: each run in a sandbox of its own/
        : /Scripts are not contained here \(.+\): held only by the walls in their own process/,
    )
    expect(agent.output()).not.toMatch(STACK_LINE)
    expect(line[2]).toBeTruthy()
  })

  it('completes a check session triggered for its location', async () => {
    dns.set('session.agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.12' }] })
    const agent = startAgent('eu-west-2,eu-west-3')
    await agent.healthPort()
    const { sessionId } = await triggerSession('session check', 'session.agent.test', ['eu-west-2', 'eu-west-3'])
    const done = await api('GET', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=20`)
    expect(done.status, done.text).toBe(200)
    expect(done.json.status).toBe('PASSED')
    expect(done.json.results.map((r: { runLocation: string }) => r.runLocation).sort()).toEqual(['eu-west-2', 'eu-west-3'])
    expect(queriesFor('session.agent.test')).toHaveLength(2)
    agent.child.kill('SIGTERM')
    expect((await agent.exited).code).toBe(0)
  })

  it('--concurrency: no more runs at once than it has slots', async () => {
    dns.set('busy.agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.13' }], delayMs: 1500 })
    const agent = startAgent('eu-north-1,eu-south-1,ap-southeast-1,ap-southeast-2', ['--concurrency', '2'])
    await agent.healthPort()
    const { sessionId } = await triggerSession('busy', 'busy.agent.test', ['eu-north-1', 'eu-south-1', 'ap-southeast-1', 'ap-southeast-2'])
    const seen: number[] = []
    const watch = setInterval(() => seen.push(queriesFor('busy.agent.test').length), 100)
    try {
      const done = await api('GET', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=20`)
      expect(done.status, done.text).toBe(200)
      expect(done.json.results).toHaveLength(4)
    } finally {
      clearInterval(watch)
    }
    // two queries out, then (1.5 s later, when two slots free) the other two
    expect(seen).toContain(2)
    expect(seen.filter((n) => n === 2).length).toBeGreaterThanOrEqual(10)
    expect(queriesFor('busy.agent.test')).toHaveLength(4)
    agent.child.kill('SIGTERM')
    expect((await agent.exited).code).toBe(0)
    expect(agent.stdout()).toMatch(/Agent stopped: 4 claimed, 4 results posted/)
  })

  it('SIGTERM mid-run: readiness 503 while the run finishes, the result arrives, exit 0', async () => {
    dns.set('slow.agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.20' }], delayMs: 2500 })
    const agent = startAgent('eu-central-1')
    const port = await agent.healthPort()
    expect((await probe(port, '/-/readiness')).status).toBe(200)
    const { checkId, sessionId } = await triggerSession('slow answer', 'slow.agent.test', ['eu-central-1'])

    // the query is out and its answer is 2.5 s away: the run is in flight
    await until('the run to start', () => queriesFor('slow.agent.test').length === 1)
    const signalled = Date.now()
    agent.child.kill('SIGTERM')
    const notReady = await until(
      'readiness 503',
      async () => {
        const answer = await probe(port, '/-/readiness')
        return answer.status === 503 ? answer : undefined
      },
      2000,
    )
    expect(notReady.text).toBe('Service Unavailable\n')
    // still alive, still finishing the run
    expect(await probe(port, '/-/liveness')).toMatchObject({ status: 200, text: 'OK\n' })
    expect((await probe(port, '/health')).status).toBe(200)
    expect(agent.child.exitCode).toBeNull()
    expect(await resultsOf(checkId)).toHaveLength(0)

    const { code } = await agent.exited
    expect(code).toBe(0)
    expect(Date.now() - signalled).toBeGreaterThan(1500)
    expect(agent.stdout()).toMatch(/SIGTERM: shutting down: no more claims, readiness 503; finishing 1 run in flight\./)
    expect(agent.stdout()).toMatch(/"slow answer" eu-central-1 PASSED \d+ ms/)
    expect(agent.stdout()).toMatch(/Agent stopped: 1 claimed, 1 results posted/)
    // the result was on the server before the agent exited
    const results = await resultsOf(checkId)
    expect(results).toHaveLength(1)
    expect(results[0]).toMatchObject({ runLocation: 'eu-central-1', status: 'PASSED', checkSessionId: sessionId })
    expect(results[0].responseTime).toBeGreaterThanOrEqual(2400)
    const session = await api('GET', `/v1/check-sessions/${sessionId}`)
    expect(session.json.status).toBe('PASSED')
  })

  it('a second SIGTERM stops at once: the run in flight is not posted, exit 1, and nothing made up is recorded', async () => {
    dns.set('abandoned.agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.25' }], delayMs: 4000 })
    const agent = startAgent('ap-northeast-1', ['--lease', '10s'])
    await agent.healthPort()
    const { checkId } = await triggerSession('abandoned', 'abandoned.agent.test', ['ap-northeast-1'])
    await until('the run to start', () => queriesFor('abandoned.agent.test').length === 1)
    const signalled = Date.now()
    agent.child.kill('SIGTERM')
    await agent.waitFor(/SIGTERM: shutting down/)
    agent.child.kill('SIGTERM')
    const { code } = await agent.exited
    expect(code).toBe(1)
    expect(Date.now() - signalled).toBeLessThan(3000)
    expect(agent.stderr()).toContain('SIGTERM again: stopping now without waiting for 1 run(s) in flight.')
    expect(agent.stderr()).toMatch(
      /The result of run \S+ \("abandoned" ap-northeast-1\) was not posted: stopped before it could be delivered; the server runs it again when its lease expires\./,
    )
    expect(agent.stdout()).toMatch(/Agent stopped: 1 claimed, 0 results posted, 0 dropped \(lease lost\), 1 not delivered\./)
    expect(await resultsOf(checkId)).toHaveLength(0)
  })

  it('kill -9 mid-run: once the lease expires, another agent runs it again and the result arrives', { timeout: 60_000 }, async () => {
    dns.set('killed.agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.30' }], delayMs: 4000 })
    const first = startAgent('ap-south-1', ['--lease', '10s'])
    await first.healthPort()
    const { checkId, sessionId } = await triggerSession('killed mid-run', 'killed.agent.test', ['ap-south-1'])
    await until('the first run to start', () => queriesFor('killed.agent.test').length === 1)
    const claimedBefore = Date.now()
    first.child.kill('SIGKILL')
    expect((await first.exited).signal).toBe('SIGKILL')
    dns.set('killed.agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.30' }] })

    const second = startAgent('ap-south-1', ['--lease', '10s'])
    await second.waitFor(/"killed mid-run" ap-south-1 PASSED/, 30_000)
    // not before the first lease (10 s from the claim) ran out
    expect(Date.now() - claimedBefore).toBeGreaterThan(8_000)
    expect(queriesFor('killed.agent.test')).toHaveLength(2)
    const done = await api('GET', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=10`)
    expect(done.status, done.text).toBe(200)
    expect(done.json.status).toBe('PASSED')
    const results = await resultsOf(checkId)
    expect(results).toHaveLength(1)
    expect(results[0].runLocation).toBe('ap-south-1')

    second.child.kill('SIGTERM')
    expect((await second.exited).code).toBe(0)
    expect(second.stdout()).toMatch(/Agent stopped: 1 claimed, 1 results posted/)
  })

  it('a run longer than its lease keeps it: a second agent does not run it again; retries arrive as attempts', { timeout: 60_000 }, async () => {
    // never answered: each attempt times out after 4 s; two retries 1 s apart make a 14 s run
    dns.set('long.agent.test', 'A', { drop: true })
    const one = startAgent('sa-east-1', ['--lease', '10s'])
    await one.healthPort()
    const checkId = await createCheck('long run', 'long.agent.test', ['sa-east-1'], {
      activated: false,
      maxResponseTime: 4000,
      degradedResponseTime: 4000,
      retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 2, sameRegion: true },
    })
    const trigger = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } })
    expect(trigger.status, trigger.text).toBe(201)
    await until('the run to start', () => queriesFor('long.agent.test').length === 1)
    const two = startAgent('sa-east-1', ['--lease', '10s'])
    await one.waitFor(/"long run" sa-east-1 TIMED_OUT .* after 2 retries/, 30_000)
    const results = await until('the results on the server', async () => {
      const list = await resultsOf(checkId)
      return list.length === 3 ? list : undefined
    })
    expect(results.map((r) => r.resultType).sort()).toEqual(['ATTEMPT', 'ATTEMPT', 'FINAL'])
    // one run, three queries: nobody else ran it while its lease was renewed
    expect(queriesFor('long.agent.test')).toHaveLength(3)
    for (const agent of [one, two]) agent.child.kill('SIGTERM')
    expect((await one.exited).code).toBe(0)
    expect((await two.exited).code).toBe(0)
    expect(one.stdout()).toMatch(/Agent stopped: 1 claimed, 1 results posted, 0 dropped/)
    expect(two.stdout()).toMatch(/Agent stopped: 0 claimed/)
    expect(one.output()).not.toMatch(/Lost the lease/)
  })

  it('a lease extension that reaches the server after the run\'s own result: no "Lost the lease", nothing counted as dropped', {
    timeout: 30_000,
  }, async () => {
    // between the agent and the server, a proxy on loopback holds each extension until the
    // result of its run has been answered: the order a slow network makes of the two requests
    const answered = new Set<string>()
    const held: Array<() => void> = []
    let heldExtensions = 0
    const hop = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive'])
    const forwarded = (headers: http.IncomingHttpHeaders) =>
      Object.fromEntries(Object.entries(headers).filter(([name, value]) => !hop.has(name) && typeof value === 'string')) as Record<string, string>
    const proxy = http.createServer(async (req, res) => {
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      const extension = /^\/v1\/agent\/runs\/([^/]+)\/extend$/.exec(req.url ?? '')
      if (extension && !answered.has(extension[1])) {
        heldExtensions++
        await new Promise<void>((resolve) => held.push(resolve))
      }
      const upstream = await fetch(`${url}${req.url}`, {
        method: req.method,
        headers: forwarded(req.headers),
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      })
      const body = Buffer.from(await upstream.arrayBuffer())
      const result = /^\/v1\/agent\/runs\/([^/]+)\/result$/.exec(req.url ?? '')
      if (result && upstream.ok) {
        answered.add(result[1])
        for (const release of held.splice(0)) release()
      }
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(body)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    try {
      // a 4 s answer: the extension every third of the 10 s lease falls inside the run
      dns.set('late-extension.agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.21' }], delayMs: 4000 })
      const agent = spawnAgent(['--locations', 'ap-south-1', '--health-port', '0', '--poll-interval', '200ms', '--lease', '10s'], {
        MONITORING_API_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        MONITORING_API_KEY: KEY,
      })
      agents.push(agent)
      await agent.healthPort()
      const { checkId } = await triggerSession('late extension', 'late-extension.agent.test', ['ap-south-1'])
      await agent.waitFor(/"late extension" ap-south-1 PASSED/)
      await until('the result on the server', async () => ((await resultsOf(checkId)).length === 1 ? true : undefined))
      // the held extension went on after the result, and its answer reached the agent
      await until('the held extension to be answered', () => (heldExtensions > 0 && held.length === 0 ? true : undefined))
      await new Promise((resolve) => setTimeout(resolve, 300))
      agent.child.kill('SIGTERM')
      expect((await agent.exited).code).toBe(0)
      expect(heldExtensions).toBeGreaterThan(0)
      expect(agent.output()).not.toMatch(/Lost the lease/)
      expect(agent.stdout()).toMatch(/Agent stopped: 1 claimed, 1 results posted, 0 dropped \(lease lost\), 0 not delivered\./)
    } finally {
      for (const release of held.splice(0)) release()
      await new Promise((resolve) => proxy.close(resolve))
    }
  })
})

describe("monitors agent beside the server's own runner", () => {
  it('the agent runs its locations, the server the others', { timeout: 60_000 }, async () => {
    const both = await startLocalServer({
      port: 0,
      dbPath: ':memory:',
      apiKeys: [{ key: KEY, accountId: ACCOUNT }],
      rateLimit: { max: 100_000, timeWindowMs: 60_000 },
      runner: true,
      schedulerOptions: { tickMs: 200 },
    })
    try {
      const call = caller({ url: both.url }, KEY)
      dns.set('mixed.agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.50' }] })
      const agent = spawnAgent(['--locations', 'eu-west-1', '--health-port', '0', '--poll-interval', '200ms'], {
        MONITORING_API_URL: both.url,
        MONITORING_API_KEY: KEY,
      })
      agents.push(agent)
      await agent.healthPort()
      // its first claim is its first heartbeat: from then on the server leaves eu-west-1 to it
      await new Promise((resolve) => setTimeout(resolve, 1000))
      const created = await call('POST', '/v1/checks/dns', {
        name: 'mixed',
        activated: false,
        locations: ['eu-west-1', 'us-east-1'],
        degradedResponseTime: 5000,
        maxResponseTime: 5000,
        request: { query: 'mixed.agent.test', nameServer: dns.address, port: dns.port },
      })
      expect(created.status, created.text).toBe(201)
      const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [created.json.id] } })
      const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
      expect(done.status, done.text).toBe(200)
      expect(done.json.results.map((r: { runLocation: string }) => r.runLocation).sort()).toEqual(['eu-west-1', 'us-east-1'])
      // eu-west-1 by the agent, us-east-1 by the server
      await agent.waitFor(/"mixed" eu-west-1 PASSED/)
      expect(agent.stdout()).not.toMatch(/"mixed" us-east-1/)
      expect(both.completedRuns()).toBe(1)
      agent.child.kill('SIGTERM')
      expect((await agent.exited).code).toBe(0)
      expect(agent.stdout()).toMatch(/Agent stopped: 1 claimed, 1 results posted/)
    } finally {
      await both.close()
    }
  })
})

describe('monitors agent against a server that fails', () => {
  it('sends results again after 500s and lost answers: every run is recorded once', { timeout: 90_000 }, async () => {
    // two servers on one database: a clean one for the test's own requests, and the one the
    // agent talks to, which answers 500 or handles a request and drops its answer (reset)
    const db = join(mkdtempSync(join(tmpdir(), 'monitors-agent-faults-')), 'server.db')
    const common = { port: 0, dbPath: db, apiKeys: [{ key: KEY, accountId: ACCOUNT }], rateLimit: { max: 100_000, timeWindowMs: 60_000 } }
    const clean = await startLocalServer({ ...common, scheduler: true, runner: false, schedulerOptions: { tickMs: 200 } })
    const flaky = await startLocalServer({ ...common, faults: '500:0.4,reset:0.15', seed: 3 })
    try {
      const call = caller({ url: clean.url }, KEY)
      dns.set('flaky.agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.40' }] })
      const locations = ['us-west-1', 'us-west-2', 'ca-central-1', 'me-south-1', 'af-south-1', 'ap-east-1']
      const created = await call('POST', '/v1/checks/dns', {
        name: 'flaky server',
        activated: false,
        locations,
        degradedResponseTime: 5000,
        maxResponseTime: 5000,
        request: { query: 'flaky.agent.test', nameServer: dns.address, port: dns.port },
      })
      expect(created.status, created.text).toBe(201)
      const checkId = created.json.id as string
      const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } })
      expect(trigger.status, trigger.text).toBe(201)
      const sessionId = trigger.json.sessions[0].checkSessionId as string

      const agent = spawnAgent(['--locations', locations.join(','), '--health-port', '0', '--poll-interval', '200ms', '--lease', '10s'], {
        MONITORING_API_URL: flaky.url,
        MONITORING_API_KEY: KEY,
      })
      agents.push(agent)
      const session = await until(
        'the session to complete',
        async () => {
          const answer = await call('GET', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=5`)
          return answer.status === 200 ? answer.json : undefined
        },
        70_000,
      )
      expect(session.status).toBe('PASSED')
      // one result per location, none twice
      const results = await call('GET', `/v1/check-results/${checkId}?limit=100`)
      expect(results.json.map((r: { runLocation: string }) => r.runLocation).sort()).toEqual([...locations].sort())
      agent.child.kill('SIGTERM')
      expect((await agent.exited).code).toBe(0)
      expect(agent.stdout()).toMatch(/Agent stopped: \d+ claimed, \d+ results posted, \d+ dropped \(lease lost\), 0 not delivered\./)
      const faults = flaky.faultCounts()!
      expect(faults['500'] + faults.reset).toBeGreaterThan(0)
    } finally {
      await flaky.close()
      await clean.close()
    }
  })
})
