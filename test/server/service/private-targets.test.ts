/**
 * The private-target policy (docs/security.md): decided at start from the accounts
 * holding keys (several: deny; one: allow) or set by `privateTargets`. Under deny, the server's
 * own runner refuses an API check at 127.0.0.1 (a FAILED result with hasErrors naming the
 * policy, nothing of the target's answer in it) and the alert sender refuses a webhook at
 * 127.0.0.1 (the attempt FAILED, not retried, the receiver never called).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer, LocalServerOptions } from '../../../src/server/index.js'
import { startHttpServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { prepareTestRuntime } from '../../helpers/runtime.js'
import { containment, CONTAINMENT_VARIABLE, forgetContainment } from '../../../src/runner/script/jail.js'
import { caller, KEY_A, KEY_B, startTestServer, type Call } from '../helpers.js'
import { hasChromium } from '../../helpers/browser.js'
import { eventually, startReceiver, type Receiver } from '../alerts/alerts-helpers.js'

const SECRET_BODY = 'body-of-an-internal-service'
let http: HttpServerHandle
let dns: DnsServerHandle
let hooks: Receiver
const servers: LocalServer[] = []

beforeAll(async () => {
  http = await startHttpServer()
  http.route('/internal', { body: SECRET_BODY })
  dns = await startDnsServer()
  dns.set('down.test', 'A', { rcode: 'SERVFAIL' })
  hooks = await startReceiver()
})
afterAll(async () => {
  for (const server of servers) await server.close()
  await http.close()
  await dns.close()
  await hooks.close()
})

async function start(options: LocalServerOptions): Promise<{ server: LocalServer; call: Call }> {
  const server = await startTestServer({ runner: true, schedulerOptions: { tickMs: 50 }, alerts: { pollMs: 50, timeoutMs: 5000 }, ...options })
  servers.push(server)
  return { server, call: caller(server) }
}

/** Runs an API check on `${http.origin}/internal` once; answers the FINAL result as the API reads it. */
async function runApiCheck(call: Call): Promise<any> {
  const created = await call('POST', '/v1/checks/api', {
    name: 'internal',
    activated: false,
    doubleCheck: false,
    request: { method: 'GET', url: `${http.origin}/internal` },
  })
  expect(created.status).toBe(201)
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [created.json.id] } })
  expect(trigger.status).toBe(201)
  const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
  expect(done.status).toBe(200)
  const result = await call('GET', `/v1/check-results/${created.json.id}/${done.json.results[0].checkResultId}`)
  expect(result.status).toBe(200)
  return result.json
}

/** Triggers a check once and answers its FINAL result as the API reads it. */
async function runOnce(call: Call, checkId: string): Promise<any> {
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } })
  expect(trigger.status).toBe(201)
  const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
  expect(done.status).toBe(200)
  const result = await call('GET', `/v1/check-results/${checkId}/${done.json.results[0].checkResultId}`)
  expect(result.status).toBe(200)
  return result.json
}

describe('private targets on the server', () => {
  it("deny: a multi-step check's own request to 127.0.0.1 is refused (at the egress proxy, its one way out, where contained; else in its process); the target never sees it", async () => {
    const { call } = await start({ runtimeCache: await prepareTestRuntime() })
    const created = await call('POST', '/v1/checks/multistep', {
      name: 'internal steps',
      activated: false,
      doubleCheck: false,
      script: `import { test, expect } from '@playwright/test'\ntest('reads', async ({ request }) => {\n  const answer = await request.get('${http.origin}/internal')\n  console.log(await answer.text())\n})\n`,
    })
    expect(created.status).toBe(201)
    const before = http.requests.length
    const result = await runOnce(call, created.json.id)
    expect(result).toMatchObject({ status: 'FAILED' })
    expect(result.error).toContain(
      containment().available
        ? 'the sandbox refused: 127.0.0.1 is a loopback address (127.0.0.0/8): refused by the private-target policy (--private-targets deny)'
        : `connection to 127.0.0.1:${http.port} refused by the private-target policy (--private-targets deny): loopback address (127.0.0.0/8)`,
    )
    expect(JSON.stringify(result)).not.toContain(SECRET_BODY)
    expect(http.requests.length).toBe(before)
  }, 90_000)

  it('two accounts hold keys: deny by default; an API check at 127.0.0.1 is a FAILED result with hasErrors naming the policy', async () => {
    const { server, call } = await start({})
    expect(server.privateTargets).toEqual({ policy: 'deny', accounts: 2, chosen: false })
    const before = http.requests.length
    const result = await runApiCheck(call)
    expect(result).toMatchObject({ hasErrors: true, hasFailures: false })
    expect(JSON.stringify(result)).toMatch(
      /127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\): refused by the private-target policy \(--private-targets deny\)/,
    )
    expect(JSON.stringify(result)).not.toContain(SECRET_BODY)
    expect(http.requests.length).toBe(before)
    const status = await call('GET', `/v1/check-statuses/${result.checkId}`)
    expect(status.json).toMatchObject({ hasErrors: true })
  })

  it('deny: a webhook at 127.0.0.1 is refused on the first attempt, not retried, and never reached', async () => {
    const { call } = await start({})
    const created = await call('POST', '/v1/checks/dns', {
      name: 'resolver',
      activated: false,
      doubleCheck: false,
      request: { query: 'down.test', nameServer: '127.0.0.1', port: dns.port },
      alertChannels: {
        webhook: [{ name: 'ops', url: `${hooks.url}/refused-hook` }],
        // a name that resolves to loopback, for the Slack sender
        slack: [{ url: `${hooks.url.replace('127.0.0.1', 'localhost')}/refused-slack` }],
      },
    })
    expect(created.status).toBe(201)
    const id = created.json.id
    // the DNS check itself is refused (its name server is on loopback): it fails, and alerts
    await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
    const deliveries = await eventually(
      async () => (await call('GET', `/v1/alert-deliveries?checkId=${id}`)).json,
      (list: any[]) => list.length === 2 && list.every((d) => d.status !== 'PENDING'),
    )
    const byType = Object.fromEntries(deliveries.map((d: any) => [d.channelType, d]))
    for (const delivery of deliveries) {
      expect(delivery.status).toBe('FAILED')
      expect(delivery.attempts).toHaveLength(1)
      expect(delivery.attempts[0]).toMatchObject({ statusCode: null, outcome: 'FAILED' })
    }
    expect(byType.WEBHOOK.attempts[0].error).toMatch(/127\.0\.0\.1 is a loopback address .*refused by the private-target policy/)
    expect(byType.SLACK.attempts[0].error).toMatch(/localhost resolves to a loopback address .*refused by the private-target policy/)
    expect(hooks.received('/refused-hook')).toHaveLength(0)
    expect(hooks.received('/refused-slack')).toHaveLength(0)
  })

  it('one account holds keys: allow by default; the same API check reads 127.0.0.1', async () => {
    const { server, call } = await start({ apiKeys: [{ key: KEY_A, accountId: 'acc-a' }] })
    expect(server.privateTargets).toEqual({ policy: 'allow', accounts: 1, chosen: false })
    const result = await runApiCheck(call)
    expect(result).toMatchObject({ hasErrors: false, hasFailures: false })
  })

  it('privateTargets: "allow" on a server of two accounts lets runs and webhooks reach 127.0.0.1', async () => {
    const { server, call } = await start({ privateTargets: 'allow' })
    expect(server.privateTargets).toEqual({ policy: 'allow', accounts: 2, chosen: true })
    const result = await runApiCheck(call)
    expect(result).toMatchObject({ hasErrors: false, hasFailures: false })
  })

  it('privateTargets: "deny" on a server of one account refuses; an allowedTargets entry lets its address and port through', async () => {
    const one = [{ key: KEY_A, accountId: 'acc-a' }]
    const { call } = await start({ apiKeys: one, privateTargets: 'deny' })
    expect((await runApiCheck(call)).hasErrors).toBe(true)
    const excepted = await start({ apiKeys: one, privateTargets: 'deny', allowedTargets: [`127.0.0.1:${http.port}`] })
    expect((await runApiCheck(excepted.call)).hasErrors).toBe(false)
    await expect(startTestServer({ allowedTargets: ['not-an-address'] })).rejects.toThrow(
      /--allow-target "not-an-address" is not an address, a CIDR range or an address:port/,
    )
  })
})

/*
 * A hostile tenant of a server of two accounts under deny: a script of each kind (an API check's
 * setup script, a multi-step check, a browser check, a Playwright check suite) tries every
 * attack of docs/security.md's "A hostile tenant" in one run, and prints what it got as one
 * `ATTACK {…}` line. Each attack must fail, and each run must end saying it was refused (its
 * last attack, a connection to the machine's loopback caught by the script, is refused whatever
 * else). Run on SQLite only: the store plays no part in a run's containment, and a server file
 * is what the scripts try to read.
 */
const SQLITE = process.env.MONITORS_TEST_STORE !== 'postgres'
const ROOT = process.getuid?.() === 0

/** A free port of this machine (listened on, then closed). */
async function freePort(): Promise<number> {
  const { createServer } = await import('node:net')
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Tries to connect to 127.0.0.1:port every 100 ms until stopped; answers whether anything answered there. */
function probePort(port: number): { stop(): Promise<boolean> } {
  let reached = false
  let running = true
  const loop = (async () => {
    const { connect } = await import('node:net')
    while (running) {
      await new Promise<void>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => {
          reached = true
          socket.destroy()
          resolve()
        })
        socket.on('error', () => resolve())
      })
      await new Promise((r) => setTimeout(r, 100))
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      return reached
    },
  }
}

/** The `ATTACK {…}` line a run printed (in its logs, its scripts' logs), parsed. */
function attackOf(result: unknown): Record<string, string> {
  const found: string[] = []
  const walk = (v: unknown) => {
    if (typeof v === 'string') {
      const m = /ATTACK (\{.*\})/.exec(v)
      if (m) found.push(m[1])
    } else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x)
  }
  walk(result)
  expect(found.length, JSON.stringify(result).slice(0, 3000)).toBeGreaterThan(0)
  return JSON.parse(found[0])
}

/**
 * The attacks, as the body of an async function (`mod` loads a built-in module). `TAG` names the
 * files the run leaves behind in the machine's shared folders, and finds those of others.
 */
function attacks(p: {
  serverPid: number
  db: string
  tag: string
  listenPort: number
  udpPort: number
  target: string
  holdMs: number
  dnsPort: number
}): string {
  const { port } = new URL(p.target)
  return `
  const out = {}
  const fs = await mod('node:fs'), net = await mod('node:net'), dgram = await mod('node:dgram')
  const tryIt = async (name, fn) => { try { out[name] = String(await fn()).slice(0, 300) } catch (e) { out[name] = 'error ' + (e.code || e.message) } }
  await tryIt('cmdline', () => fs.readFileSync('/proc/${p.serverPid}/cmdline', 'utf8'))
  await tryIt('environ', () => fs.readFileSync('/proc/${p.serverPid}/environ', 'utf8'))
  await tryIt('serverSeen', () => fs.readdirSync('/proc').includes('${p.serverPid}'))
  await tryIt('database', () => fs.readFileSync(${JSON.stringify(p.db)}, 'utf8'))
  for (const dir of ['/tmp', '/var/tmp', '/run/lock', '/dev/shm']) {
    await tryIt('found ' + dir, () => fs.readdirSync(dir).filter((n) => n.startsWith('monitors-hostile-')).join(','))
    await tryIt('write ' + dir, () => { fs.writeFileSync(dir + '/monitors-hostile-${p.tag}', 'left by ${p.tag}'); return 'written' })
  }
  await tryIt('udp', () => new Promise((resolve, reject) => { const s = dgram.createSocket('udp4'); s.send('from ${p.tag}', ${p.udpPort}, '127.0.0.1', (e) => { s.close(); e ? reject(e) : resolve('sent') }) }))
  await tryIt('unshare', async () => (await mod('node:child_process')).execFileSync('/usr/bin/unshare', ['-U', '/bin/true']).toString() || 'made a user namespace')
  await tryIt('listen', () => new Promise((resolve, reject) => {
    const s = net.createServer((c) => c.end('hello from the run'))
    s.on('error', reject)
    s.listen(${p.listenPort}, '127.0.0.1', () => setTimeout(() => { s.close(); resolve('listened') }, ${p.holdMs}))
  }))
  // the four gaps of the old in-process guard: other spellings of an IPv4-mapped address, options that
  // answer differently when read again, a lookup that cannot be replaced, a resolver's own handle
  const raw = (options) => new Promise((resolve, reject) => {
    const s = net.connect(options)
    let text = ''
    s.on('connect', () => s.write('GET /hostile HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n'))
    s.on('data', (c) => (text += c))
    s.on('end', () => resolve(text))
    s.on('error', reject)
  })
  await tryIt('gap mapped', async () => (await fetch('http://[::ffff:7f00:1]:${port}/hostile')).text())
  await tryIt('gap spelled', () => raw({ host: '0:0:0:0:0:FFFF:127.0.0.1', port: ${port} }))
  await tryIt('gap options', () => raw({ reads: 0, get host() { return this.reads++ < 2 ? '127.0.0.2' : '127.0.0.1' }, port: ${port} }))
  await tryIt('gap lookup', () => raw(Object.defineProperty({ host: 'localhost', port: ${port} }, 'lookup', { enumerable: true, get: () => (h, o, cb) => (o.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)), set: () => {} })))
  await tryIt('gap resolver', async () => { const r = new (await mod('node:dns')).promises.Resolver(); r._handle.setServers([[4, '127.0.0.1', ${p.dnsPort}]]); return JSON.stringify(await r.resolveTxt('hostile.test')) })
  // a refusal the script catches
  await tryIt('fetch', async () => (await fetch(${JSON.stringify(p.target)})).text())
  console.log('ATTACK ' + JSON.stringify(out))
`
}

describe.skipIf(!SQLITE)('a hostile tenant of a server of two accounts under deny', () => {
  let dir: string
  let server: LocalServer
  let db: string
  let udp: import('node:dgram').Socket
  const datagrams: string[] = []
  const SECRET = 'loopback-service-secret-6120'

  beforeAll(async () => {
    const { mkdtempSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { createSocket } = await import('node:dgram')
    dir = mkdtempSync(join(tmpdir(), 'monitors-hostile-'))
    db = join(dir, 'hostile.db')
    http.route('/hostile', { body: SECRET })
    dns.set('hostile.test', 'TXT', { records: [{ type: 'TXT', data: SECRET }] })
    udp = createSocket('udp4')
    udp.on('message', (m) => datagrams.push(m.toString()))
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve))
    // an API script's disk limit, small: filling it is quick
    server = await startTestServer({
      dbPath: db,
      runner: true,
      runtimeCache: await prepareTestRuntime(),
      schedulerOptions: { tickMs: 50, runOptions: { scriptLimits: { diskLimitBytes: 4 * 1024 * 1024 } } },
    })
    servers.push(server)
    expect(server.privateTargets.policy).toBe('deny')
  }, 180_000)
  afterAll(async () => {
    udp?.close()
    const { rmSync } = await import('node:fs')
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  /** Creates the check of `path` with `body` as account `key`, runs it once while the run's port is probed from outside, and answers its result, its attacks and whether the port answered. */
  async function hostile(key: string, path: string, body: (p: Parameters<typeof attacks>[0]) => Record<string, unknown>, tag: string) {
    const call = caller(server, key)
    const p = {
      serverPid: process.pid,
      db,
      tag,
      listenPort: await freePort(),
      udpPort: udp.address().port,
      target: `${http.origin}/hostile`,
      holdMs: 800,
      dnsPort: dns.port,
    }
    const created = await call('POST', path, { name: `hostile ${tag}`, activated: false, doubleCheck: false, ...body(p) })
    expect(created.status, created.text).toBe(201)
    const probe = probePort(p.listenPort)
    const before = http.requests.length
    const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [created.json.id] } })
    expect(trigger.status).toBe(201)
    for (let tries = 0; ; tries++) {
      const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=30`)
      if (done.status === 408 && tries < 6) continue
      expect(done.status, done.text).toBe(200)
      break
    }
    const reached = await probe.stop()
    const [result] = (await call('GET', `/v1/check-results/${created.json.id}?resultType=FINAL&limit=1`)).json
    expect(http.requests.slice(before).map((r) => r.path)).not.toContain('/hostile')
    return { result, attack: attackOf(result), reached, tag }
  }

  /** What every kind's attacks must have got: nothing of the server, nothing left for others, no port, no datagram, no namespace, no loopback service; the run refused. */
  function held(run: Awaited<ReturnType<typeof hostile>>, others: string[]) {
    const { result, attack, reached } = run
    const text = JSON.stringify(result)
    for (const leak of [SECRET, 'SQLite format', 'vitest', KEY_A, KEY_B]) expect(text, leak).not.toContain(leak)
    expect(attack.cmdline).toMatch(/^error /)
    expect(attack.environ).toMatch(/^error /)
    expect(attack.serverSeen).not.toBe('true')
    expect(attack.database).toMatch(/^error /)
    for (const d of ['/tmp', '/var/tmp', '/run/lock', '/dev/shm'])
      for (const tag of others) expect(attack[`found ${d}`] ?? '', `${d} ${tag}`).not.toContain(tag)
    expect(attack.unshare).toMatch(/^error /)
    expect(attack.fetch).toMatch(/^error /)
    for (const gap of ['mapped', 'spelled', 'options', 'lookup', 'resolver']) expect(attack[`gap ${gap}`], gap).toMatch(/^error /)
    expect(dns.queries.filter((q) => q.name === 'hostile.test')).toEqual([])
    expect(reached, 'a port the run listened on answered outside it').toBe(false)
    expect(datagrams.filter((d) => d.includes(run.tag))).toEqual([])
    expect(result.hasErrors, result.error).toBe(true)
    expect(result.error).toContain('the sandbox refused')
  }

  it("an API check's setup script: each attack fails, its disk is bounded, its guard holds in every spelling, and its run says it was refused", async () => {
    const run = await hostile(
      KEY_A,
      '/v1/checks/api',
      (p) => ({
        request: { method: 'GET', url: `${http.origin}/hostile` },
        localSetupScript: `const mod = async (name) => require(name)\n${attacks(p)}
        const fill = require('node:fs'); const block = Buffer.alloc(1 << 20)
        try { for (let i = 0; i < 64; i++) fill.writeFileSync(require('node:path').join(require('node:os').tmpdir(), 'fill-' + i), block); console.log('DISK filled 64 MiB') } catch (e) { console.log('DISK ' + e.code) }`,
      }),
      'api-a',
    )
    held(run, [])
    expect(JSON.stringify(run.result)).toMatch(/DISK (ENOSPC|ERR_ACCESS_DENIED)/)
    expect(run.result.error).toMatch(/^setup script \(localSetupScript\) failed: the sandbox refused: /)
  }, 120_000)

  it('a multi-step check: each attack fails and its run says it was refused', async () => {
    const run = await hostile(
      KEY_A,
      '/v1/checks/multistep',
      (p) => ({
        script: `import { test } from '@playwright/test'\ntest('hostile', async () => {\n const mod = async (name) => require(name)\n${attacks(p)}\n})\n`,
      }),
      'multi-a',
    )
    held(run, ['api-a'])
  }, 120_000)

  it.skipIf(!hasChromium)(
    "a browser check: each attack of its script fails, and its page's WebRTC sends nothing to loopback; its run says it was refused",
    async () => {
      const run = await hostile(
        KEY_A,
        '/v1/checks/browser',
        (p) => ({
          script: `import { test } from '@playwright/test'\ntest('hostile', async ({ page }) => {
  await page.setContent('<title>rtc</title>')
  const rtc = await page.evaluate(async (port) => {
    const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:' + port }] })
    pc.createDataChannel('leak')
    await pc.setLocalDescription(await pc.createOffer())
    await new Promise((r) => setTimeout(r, 1000))
    pc.close()
    return 'gathered'
  }, ${p.udpPort}).catch((e) => 'error ' + e.message)
  console.log('RTC ' + rtc)
  const mod = async (name) => require(name)\n${attacks(p)}\n})\n`,
        }),
        'browser-a',
      )
      held(run, ['api-a', 'multi-a'])
      // a STUN request is a datagram: none reached the machine's loopback
      expect(datagrams).toEqual([])
    },
    180_000,
  )

  it.skipIf(!ROOT || !hasChromium)(
    "a Playwright check suite of the other account: each attack fails, it finds nothing the first account's runs left, and its run says it was refused",
    async () => {
      const config = "import { defineConfig } from '@playwright/test'\nexport default defineConfig({ testDir: './tests' })\n"
      const run = await hostile(
        KEY_B,
        '/v1/checks/playwright',
        (p) => ({
          files: [
            { path: 'playwright.config.ts', content: config },
            {
              path: 'tests/h.spec.ts',
              content: `import { test } from '@playwright/test'\ntest('hostile', async () => {\n const mod = async (name) => require(name)\n${attacks(p)}\n})\n`,
            },
          ],
        }),
        'suite-b',
      )
      held(run, ['api-a', 'multi-a', 'browser-a'])
      // a suite's result names the egress proxy's refusal of its fetch
      expect(run.result.error).toContain('127.0.0.1 is a loopback address (127.0.0.0/8): refused by the private-target policy (--private-targets deny)')
    },
    240_000,
  )
})

describe('a server under deny on a machine that cannot contain scripts (simulated: MONITORS_CONTAINMENT=off)', () => {
  it("runs no script it cannot hold: an API check's setup script and a multi-step check fail with hasErrors saying so, nothing is sent; --uncontained-scripts runs them, held by the in-process walls", async () => {
    const before = process.env[CONTAINMENT_VARIABLE]
    process.env[CONTAINMENT_VARIABLE] = 'off'
    forgetContainment()
    try {
      const runtimeCache = await prepareTestRuntime()
      const { server, call } = await start({ runtimeCache })
      expect(server.scripts).toMatchObject({ scripts: false, containment: { available: false, problem: 'MONITORS_CONTAINMENT=off turns it off' } })
      const sent = http.requests.length
      const api = await call('POST', '/v1/checks/api', {
        name: 'scripted',
        activated: false,
        doubleCheck: false,
        request: { method: 'GET', url: `${http.origin}/internal` },
        localSetupScript: "request.headers['x-ran'] = 'yes'",
      })
      expect(api.status, api.text).toBe(201)
      const refused = await runOnce(call, api.json.id)
      expect(refused).toMatchObject({ hasErrors: true })
      expect(refused.error).toContain('this server does not run scripts it cannot contain under --private-targets deny')
      const steps = await call('POST', '/v1/checks/multistep', {
        name: 'steps',
        activated: false,
        doubleCheck: false,
        script: "import { test } from '@playwright/test'\ntest('t', async () => {})\n",
      })
      const stepsRun = await runOnce(call, steps.json.id)
      expect(stepsRun).toMatchObject({ hasErrors: true })
      expect(stepsRun.error).toContain('--uncontained-scripts')
      expect(http.requests.length).toBe(sent)
      // the operator's choice: the same setup script runs, uncontained
      const loose = await start({ runtimeCache, uncontainedScripts: true, allowedTargets: [`127.0.0.1:${http.port}`] })
      expect(loose.server.scripts).toMatchObject({ scripts: true, uncontained: true })
      const created = await loose.call('POST', '/v1/checks/api', {
        name: 'scripted',
        activated: false,
        doubleCheck: false,
        request: { method: 'GET', url: `${http.origin}/internal` },
        localSetupScript: "request.headers['x-ran'] = 'yes'",
      })
      const ran = await runOnce(loose.call, created.json.id)
      expect(ran, ran.error).toMatchObject({ hasErrors: false })
      expect(http.requests.at(-1)?.headers['x-ran']).toBe('yes')
    } finally {
      if (before === undefined) delete process.env[CONTAINMENT_VARIABLE]
      else process.env[CONTAINMENT_VARIABLE] = before
      forgetContainment()
    }
  }, 120_000)
})
