import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseApiKey, parseRateLimit } from '../../../src/cli/commands/server.js'
import { containment } from '../../../src/runner/script/jail.js'
import { caller, dnsBody } from '../helpers.js'
import { serverBuilt, startServerProcess } from '../../helpers/server-process.js'

/** Starts `monitors server` and resolves once it printed its URL (and, on a first start, its key). */
const startCli = (args: string[], env: Record<string, string> = {}) => startServerProcess(args, { env })

describe.skipIf(!serverBuilt)('monitors server (built CLI)', () => {
  it('prints its URL and a generated key once, logs requests, keeps data across a restart, and stops on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-cli-server-'))
    try {
      const db = join(dir, 'data', 'server.db')
      const first = startCli(['--db', db])
      const url = await first.ready
      const key = /API key.*: (mon_\S+)/.exec(first.output())?.[1]
      expect(key).toBeDefined()
      const api = caller({ url }, key as string)
      const check = (await api('POST', '/v1/checks/dns', dnsBody())).json
      first.child.kill('SIGTERM')
      expect(await first.exited).toBe(0)
      expect(first.output()).toMatch(/POST \/v1\/checks\/dns 201 \d/)
      expect(first.output()).not.toContain(`Bearer`)
      // every line, the start-up lines, each request and the stop, begins with its time
      const lines = first.output().trimEnd().split('\n')
      expect(lines.length).toBeGreaterThan(5)
      for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (WARN )?\S/)

      // --log-format json: one object a line
      const second = startCli(['--db', db, '--quiet', '--log-format', 'json'])
      const url2 = await second.ready
      expect(second.output()).not.toMatch(/API key/)
      expect((await caller({ url: url2 }, key as string)('GET', `/v1/checks/${check.id}`)).json).toEqual(check)
      second.child.kill('SIGINT')
      expect(await second.exited).toBe(0)
      expect(second.output()).not.toMatch(/GET \/v1\/checks/)
      const objects = second
        .output()
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { time: string; level: string; msg: string })
      for (const entry of objects) {
        expect(Object.keys(entry)).toEqual(['time', 'level', 'msg'])
        expect(new Date(entry.time).toISOString()).toBe(entry.time)
        expect(['info', 'warn']).toContain(entry.level)
      }
      expect(objects.map((o) => o.msg)).toContain('SIGINT: finishing requests in flight, closing the database')

      const bad = startCli(['--db', ':memory:', '--log-format', 'xml'])
      await expect(bad.ready).rejects.toThrow(/--log-format must be one of text, json, got "xml"/)
      expect(await bad.exited).toBe(1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('takes keys from --api-key or MONITORING_SERVER_API_KEYS, and a rate limit and IPv6 list from flags', async () => {
    const fromFlags = startCli(['--db', ':memory:', '--api-key', 'flag-key-0123456789:team', '--rate-limit', '2/60s', '--ipv6', '2001:db8::7'])
    const url = await fromFlags.ready
    expect(fromFlags.output()).toContain('account team')
    expect(fromFlags.output()).toMatch(/WARN --api-key puts a secret in this process's arguments/)
    expect(fromFlags.output()).not.toContain('Warning:')
    const api = caller({ url }, 'flag-key-0123456789')
    const ips = await api('GET', '/v1/static-ipv6s.txt')
    expect(ips.text).toBe('2001:db8::7\n')
    expect((await api('GET', '/v1/runtimes')).status).toBe(200)
    expect((await api('GET', '/v1/runtimes')).status).toBe(429)
    fromFlags.child.kill('SIGTERM')
    await fromFlags.exited

    const fromEnv = startCli(['--db', ':memory:'], { MONITORING_SERVER_API_KEYS: 'env-key-one-0123456:ops, env-key-two-0123456' })
    const url2 = await fromEnv.ready
    expect(fromEnv.output()).not.toMatch(/API key/)
    expect((await caller({ url: url2 }, 'env-key-two-0123456')('GET', '/v1/checks')).status).toBe(200)
    expect((await caller({ url: url2 }, 'env-key-one-0123456')('GET', '/v1/checks', undefined, { 'x-service-account': 'ops' })).status).toBe(200)
    fromEnv.child.kill('SIGTERM')
    await fromEnv.exited
  })

  it('takes a role with a key, warns of a short key without printing it, and trusts the balancer it is told of', async () => {
    const server = startServerProcess(['--db', ':memory:', '--trust-proxy', '127.0.0.1,10.0.0.0/8'], {
      env: { MONITORING_SERVER_API_KEYS: 'tiny-key:team:read long-enough-key-0123456789:team' },
      until: (output) => output.includes('WARN ') && output.includes('Trusting'),
    })
    const url = await server.ready
    const output = server.output()
    expect(output).toContain('WARN an API key given for account team is 8 characters long')
    expect(output.match(/WARN /g)).toHaveLength(1)
    expect(output).not.toContain('Warning:')
    expect(output).not.toContain('tiny-key')
    expect(output).toContain('Trusting X-Forwarded-For from 127.0.0.1,10.0.0.0/8')
    const read = caller({ url }, 'tiny-key')
    expect((await read('GET', '/v1/checks')).status).toBe(200)
    expect((await read('POST', '/v1/checks/dns', dnsBody())).status).toBe(403)
    expect((await caller({ url }, 'long-enough-key-0123456789')('POST', '/v1/checks/dns', dnsBody())).status).toBe(201)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  })

  it('keeps the host names of --public-url (or MONITORING_SERVER_PUBLIC_URL) for itself: no status page takes one as its customDomain', async () => {
    for (const [args, env] of [
      [['--public-url', 'https://monitors.example.test']],
      [[], { MONITORING_SERVER_PUBLIC_URL: 'http://other.example.test, https://monitors.example.test:8443' }],
    ] as const) {
      const server = startCli(['--db', ':memory:', ...args], { MONITORING_SERVER_API_KEYS: 'flag-key-0123456789:team', ...env })
      const api = caller({ url: await server.ready }, 'flag-key-0123456789')
      const taken = await api('POST', '/v1/status-pages', { name: 'p', url: 'p', cards: [], customDomain: 'Monitors.Example.Test' })
      expect(taken.status).toBe(409)
      expect(taken.json.message).toMatch(/is a name of this server/)
      expect((await api('POST', '/v1/status-pages', { name: 'p', url: 'p', cards: [], customDomain: 'status.example.test' })).status).toBe(201)
      server.child.kill('SIGTERM')
      await server.exited
    }
    const bad = startCli(['--db', ':memory:', '--public-url', 'monitors.example.test'])
    await expect(bad.ready).rejects.toThrow(/--public-url must be a URL such as https:\/\/monitors.example.com, got "monitors.example.test"/)
    expect(await bad.exited).toBe(1)
  })

  it('says exactly how it holds scripts and which it runs; under deny a machine that cannot contain them runs none without --uncontained-scripts; --script-uid-range is checked', async () => {
    const root = process.getuid?.() === 0
    const held = containment()
    const started = async (args: string[], env: Record<string, string> = {}) => {
      const server = startCli(['--db', ':memory:', '--quiet', ...args], env)
      await server.ready
      await expect.poll(() => server.output()).toMatch(/^[\dT:.-]+Z Playwright check suites /m)
      server.child.kill('SIGTERM')
      await server.exited
      return server.output()
    }
    // this machine, as it is (CI installs bubblewrap; root there)
    const plain = await started([])
    expect(plain).toMatch(
      held.available
        ? new RegExp(
            `^[\\dT:.-]+Z Scripts run contained by bubblewrap [^:]*: each run of a browser, multi-step or Playwright check and each API check's setup and teardown scripts in a sandbox of its own: ${root ? 'a uid of its own \\(uids 200000-200999\\)' : "this server's uid"}, its own PID, mount, network, IPC and UTS namespaces, no new user namespaces, a read-only view of the system without the server's files or other runs', its own /tmp and /dev/shm \\(memory of a fixed size\\), a network whose one way out is the egress proxy \\(private targets allowed\\), processes and file sizes bounded by rlimits \\(docs/scripts.md\\)$`,
            'm',
          )
        : /^[\dT:.-]+Z Scripts are not contained here \(.+\): browser, multi-step and API checks' scripts run held only by/m,
    )
    if (held.available)
      expect(plain).toMatch(/^[\dT:.-]+Z Playwright check suites run contained as the other scripts, their browsers and workers in the run's sandbox$/m)
    // a machine that cannot contain them (as a container without the namespaces would be)
    const off = { MONITORS_CONTAINMENT: 'off' }
    const denied = await started(['--private-targets', 'deny', '--script-uid-range', '300000-300009'], off)
    expect(denied).toMatch(
      /^[\dT:.-]+Z Scripts are not contained here \(MONITORS_CONTAINMENT=off turns it off\): under --private-targets deny, browser, multi-step and API checks' scripts are not run \(their runs fail with hasErrors; --uncontained-scripts runs them, held only by Node's permission model and the network guard in their process: they share this machine's network, processes and temporary folders\): agents run them$/m,
    )
    expect(denied).toMatch(
      root
        ? /^[\dT:.-]+Z Playwright check suites are not run here \(not contained, and under --private-targets deny a user of its own does not hold a suite to the policy; --playwright-suites runs them anyway\): agents run them$/m
        : /^[\dT:.-]+Z Playwright check suites are not run here \(not contained, and not root, so no user of their own for their runs; --playwright-suites runs them anyway\): agents run them$/m,
    )
    const allowed = await started(['--private-targets', 'deny', '--uncontained-scripts'], off)
    expect(allowed).toMatch(
      /^[\dT:.-]+Z Scripts are not contained here \(MONITORS_CONTAINMENT=off turns it off\): browser, multi-step and API checks' scripts run held only by Node's permission model and the network guard in their process: they share this machine's network, processes and temporary folders \(--uncontained-scripts\)$/m,
    )
    expect(allowed).toMatch(
      /^[\dT:.-]+Z Playwright check suites run (each as a user of its own \(uids 200000-200999\): held to their run's files, not to the private-target policy \(not contained\)|as this server's user \(--uncontained-scripts; not contained, not root\))/m,
    )
    expect(await started(['--no-playwright-suites'])).toMatch(
      /^[\dT:.-]+Z Playwright check suites are not run here \(--no-playwright-suites\): agents run them$/m,
    )
    const bad = startCli(['--db', ':memory:', '--script-uid-range', '5-1'])
    await expect(bad.ready).rejects.toThrow(/--script-uid-range must be a range of uids from 1000 up to 4294967294, its first below its last, got "5-1"/)
    expect(await bad.exited).toBe(1)
    const badEnv = startCli(['--db', ':memory:'], { MONITORS_SCRIPT_UID_RANGE: 'many' })
    await expect(badEnv.ready).rejects.toThrow(/MONITORS_SCRIPT_UID_RANGE must be FIRST-LAST \(e\.g\. 200000-200999\) or off, got "many"/)
    expect(await badEnv.exited).toBe(1)
  })

  it("keeps its database, its -wal and -shm, their folder and the artifacts folder closed to the machine's other users", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-cli-modes-'))
    try {
      const db = join(dir, 'data', 'server.db')
      const server = startCli(['--db', db, '--quiet'])
      await server.ready
      const modes = Object.fromEntries(
        ['data', 'data/server.db', 'data/server.db-wal', 'data/server.db-shm', 'data/server.db.artifacts'].map((f) => [
          f,
          (statSync(join(dir, f)).mode & 0o777).toString(8),
        ]),
      )
      expect(modes).toEqual({
        data: '700',
        'data/server.db': '600',
        'data/server.db-wal': '600',
        'data/server.db-shm': '600',
        'data/server.db.artifacts': '700',
      })
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
      // a database another version left open to others is closed at the next start
      chmodSync(db, 0o644)
      const again = startCli(['--db', db, '--quiet'])
      await again.ready
      expect((statSync(db).mode & 0o777).toString(8)).toBe('640')
      again.child.kill('SIGTERM')
      expect(await again.exited).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('says its private-target policy: deny for keys of two accounts, allow for one, and --private-targets sets it', async () => {
    const twoKeys = { MONITORING_SERVER_API_KEYS: 'key-one-0123456789:one,key-two-0123456789:two' }
    const two = startCli(['--db', ':memory:', '--quiet'], twoKeys)
    await two.ready
    await expect.poll(() => two.output()).toMatch(/Private targets refused: .*keys of 2 accounts are stored; --private-targets allow to change it/)
    // and, without --public-url, that a status page's customDomain may take a name the server is reached under
    await expect
      .poll(() => two.output())
      .toContain(
        'WARN keys of 2 accounts are stored and no --public-url is given: this server knows only its own host names, so a status page of any account may take another name the server is reached under (behind a balancer, a proxy or DNS) as its customDomain and be served there in place of the dashboard. Give every URL the server is reached under with --public-url (or MONITORING_SERVER_PUBLIC_URL) (docs/server.md, "Status pages on a shared server")',
      )
    two.child.kill('SIGTERM')
    await two.exited
    const one = startCli(['--db', ':memory:', '--quiet'], { MONITORING_SERVER_API_KEYS: 'key-one-0123456789:one' })
    await one.ready
    await expect.poll(() => one.output()).toMatch(/Private targets allowed: .*keys of one account; --private-targets deny to refuse them/)
    expect(one.output()).not.toContain('customDomain')
    one.child.kill('SIGTERM')
    await one.exited
    const chosen = startCli(
      ['--db', ':memory:', '--private-targets', 'deny', '--allow-target', '10.0.0.0/8', '--public-url', 'https://monitors.example.test', '--quiet'],
      twoKeys,
    )
    await chosen.ready
    await expect.poll(() => chosen.output()).toMatch(/Private targets refused: .*\(--private-targets deny\)/)
    expect(chosen.output()).not.toMatch(/Warning/)
    chosen.child.kill('SIGTERM')
    await chosen.exited
    const bad = startCli(['--db', ':memory:', '--private-targets', 'maybe'])
    await expect(bad.ready).rejects.toThrow(/private-targets/)
    expect(await bad.exited).toBe(1)
    const badTarget = startCli(['--db', ':memory:', '--allow-target', 'intranet'])
    await expect(badTarget.ready).rejects.toThrow(/--allow-target "intranet" is not an address, a CIDR range or an address:port/)
    expect(await badTarget.exited).toBe(1)
  })

  it('refuses bad flags with one clear line and exit code 1', async () => {
    const proxy = startCli(['--db', ':memory:', '--trust-proxy', 'the-balancer'])
    await expect(proxy.ready).rejects.toThrow(/"the-balancer" is not an address, a subnet or one of loopback/)
    expect(await proxy.exited).toBe(1)
    expect(proxy.output()).not.toMatch(/\n\s+at /)

    const bad = startCli(['--db', ':memory:', '--rate-limit', 'lots'])
    await expect(bad.ready).rejects.toThrow(/--rate-limit must look like 600\/60s/)
    expect(await bad.exited).toBe(1)
    expect(bad.output()).not.toMatch(/\n\s+at /)
  })
})

describe('server flag parsing', () => {
  it('parses KEY[:ACCOUNT[:ROLE]]', () => {
    expect(parseApiKey('abc')).toEqual({ key: 'abc' })
    expect(parseApiKey('abc:team')).toEqual({ key: 'abc', accountId: 'team' })
    expect(() => parseApiKey(':team')).toThrow(/cannot be empty/)
    expect(() => parseApiKey('abc:')).toThrow(/cannot be empty/)
    expect(parseApiKey('abc:team:read')).toEqual({ key: 'abc', accountId: 'team', role: 'read' })
    expect(parseApiKey('abc:team:admin')).toEqual({ key: 'abc', accountId: 'team', role: 'admin' })
    expect(() => parseApiKey('abc:team:owner')).toThrow(/role of an API key must be one of read, write, agent, admin/)
    expect(() => parseApiKey('abc::read')).toThrow(/cannot be empty/)
  })

  it('parses N/W rate limits', () => {
    expect(parseRateLimit('600/60s')).toEqual({ max: 600, timeWindowMs: 60_000 })
    expect(parseRateLimit('100/1m')).toEqual({ max: 100, timeWindowMs: 60_000 })
    expect(parseRateLimit('10/500ms')).toEqual({ max: 10, timeWindowMs: 500 })
    expect(parseRateLimit('5/2')).toEqual({ max: 5, timeWindowMs: 2000 })
    expect(() => parseRateLimit('0/60s')).toThrow(/at least 1/)
    expect(() => parseRateLimit('fast')).toThrow(/must look like/)
  })
})
