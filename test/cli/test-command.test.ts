/**
 * `monitors test`: the built CLI runs a project's checks once from this machine against a real
 * DNS server on 127.0.0.1 (and ping to 127.0.0.1), with no API and nothing deployed.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { makeProject, monitors, repo, STACK_LINE } from '../helpers/cli.js'
import { resolverNotes } from '../../src/cli/commands/test.js'

const pingWorks = spawnSync('ping', ['-n', '-4', '-c', '1', '-W', '1', '127.0.0.1']).status === 0
if (!pingWorks) console.warn('monitors test: the ICMP case is skipped: this machine cannot ping 127.0.0.1 (apt-get install iputils-ping)')

let dns: DnsServerHandle

beforeAll(async () => {
  dns = await startDnsServer()
  dns.set('www.shop.test', 'A', { records: [{ type: 'A', data: '192.0.2.10' }] })
  dns.set('gone.shop.test', 'A', { rcode: 'NXDOMAIN' })
  dns.set('slow.shop.test', 'A', { records: [{ type: 'A', data: '192.0.2.20' }], delayMs: 250 })
  dns.set('silent.shop.test', 'A', { drop: true })
})

afterAll(async () => {
  await dns?.close()
})

/** A DNS check asking the test server. */
function dnsCheck(id: string, query: string, extra = ''): string {
  return `new DnsCheck('${id}', {
  name: '${id} name',
  request: { query: '${query}', nameServer: '127.0.0.1', port: ${dns.port}, assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
  ${extra}
})\n`
}

function project(body: string): string {
  return makeProject({ 'checks/shop.check.ts': `import { DnsCheck, IcmpCheck } from 'monitors-as-code'\n${body}` })
}

interface JsonResult {
  kind: string
  logicalId: string
  activated: boolean
  name: string
  runLocation: string
  status: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  responseTime: number | null
  error: string | null
  resultType: string
  attempts: unknown[]
  assertions: Array<{ source: string; passed: boolean; actual: string | null }>
  details: { kind: string; rcode?: string; answers?: Array<{ data: string }> }
}
interface JsonDoc {
  formatVersion: number
  ok: boolean
  summary: { total: number; passed: number; degraded: number; failed: number; errors: number; timedOut: number }
  results: JsonResult[]
}

/** The table row of a check (`kind:logicalId` starts it). */
function row(output: string, key: string): string {
  const line = output.split('\n').find((l) => l.startsWith(`${key} `))
  expect(line, `a row for ${key} in:\n${output}`).toBeDefined()
  return line!
}

describe('monitors test', () => {
  it('runs each check once, prints a table and a summary, and exits 1 when one fails; degraded passes', async () => {
    const dir = project(
      dnsCheck('shop-dns', 'www.shop.test', "locations: ['eu-west-1', 'us-east-1'],") +
        dnsCheck('gone-dns', 'gone.shop.test') +
        dnsCheck('slow-dns', 'slow.shop.test', 'degradedResponseTime: 100, maxResponseTime: 2000,') +
        dnsCheck('silent-dns', 'silent.shop.test', 'maxResponseTime: 300,') +
        dnsCheck('paused-dns', 'www.shop.test', 'activated: false,'),
    )
    const before = dns.queries.length
    const result = await monitors(dir, ['test'])
    expect(result.output).not.toMatch(STACK_LINE)
    expect(result.code).toBe(1)
    const out = result.stdout
    expect(out).toMatch(/^CHECK\s+LOCATION\s+RESULT\s+TIME\s+DETAIL$/m)

    // first location of the check, or `local` without one
    expect(row(out, 'dns-check:shop-dns')).toMatch(/^dns-check:shop-dns "shop-dns name"\s+eu-west-1\s+PASSED\s+[\d.]+ ms$/)
    expect(row(out, 'dns-check:gone-dns')).toMatch(/"gone-dns name"\s+local\s+FAILED\s+[\d.]+ ms\s+RESPONSE_CODE EQUALS "NOERROR" failed: got "NXDOMAIN"/)
    expect(row(out, 'dns-check:slow-dns')).toMatch(/\s+DEGRADED\s+\d+ ms\s+response time [\d.]+ ms is over degradedResponseTime 100 ms$/)
    expect(row(out, 'dns-check:silent-dns')).toMatch(/\s+TIMED_OUT\s+-\s+no answer from 127\.0\.0\.1 port \d+ over UDP within 300 ms/)
    // a deactivated check is still tested, and marked
    expect(row(out, 'dns-check:paused-dns')).toMatch(/"paused-dns name" \[deactivated\]\s+local\s+PASSED/)
    expect(out).toContain('Test failed: 2 passed, 1 degraded, 2 failed (1 timed out).')
    // every check asked the server exactly once (no retries by default, although doubleCheck is on)
    const asked = dns.queries
      .slice(before)
      .map((q) => q.name)
      .sort()
    expect(asked).toEqual(['gone.shop.test', 'silent.shop.test', 'slow.shop.test', 'www.shop.test', 'www.shop.test'])
    // nothing deployed, no state written
    expect(existsSync(join(dir, '.monitors'))).toBe(false)
    expect(existsSync(join(dir, 'monitoring.lock.json'))).toBe(false)
  })

  it('exits 0 when every run passed or was degraded', async () => {
    const dir = project(dnsCheck('shop-dns', 'www.shop.test') + dnsCheck('slow-dns', 'slow.shop.test', 'degradedResponseTime: 100,'))
    const result = await monitors(dir, ['test'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('Test passed: 1 passed, 1 degraded, 0 failed.')
  })

  it('--format json: every result record on stdout as one document, the table on stderr', async () => {
    const dir = project(dnsCheck('shop-dns', 'www.shop.test', "locations: ['us-east-1'],") + dnsCheck('gone-dns', 'gone.shop.test'))
    const result = await monitors(dir, ['test', '--format', 'json'])
    expect(result.code).toBe(1)
    const doc = JSON.parse(result.stdout) as JsonDoc
    expect(doc.formatVersion).toBe(1)
    expect(doc.ok).toBe(false)
    expect(doc.summary).toEqual({ total: 2, passed: 1, degraded: 0, failed: 1, errors: 0, timedOut: 0, notRun: 0 })
    const byId = Object.fromEntries(doc.results.map((r) => [r.logicalId, r]))
    expect(byId['shop-dns']).toMatchObject({
      kind: 'dns-check',
      activated: true,
      name: 'shop-dns name',
      runLocation: 'us-east-1',
      status: 'PASSED',
      resultType: 'FINAL',
      hasFailures: false,
      hasErrors: false,
      error: null,
      attempts: [],
      details: { kind: 'DNS', rcode: 'NOERROR', answers: [expect.objectContaining({ data: '192.0.2.10' })] },
    })
    expect(byId['shop-dns'].responseTime).toBeGreaterThan(0)
    expect(byId['gone-dns']).toMatchObject({ status: 'FAILED', hasFailures: true, details: { rcode: 'NXDOMAIN' } })
    expect(byId['gone-dns'].assertions).toEqual([expect.objectContaining({ source: 'RESPONSE_CODE', passed: false, actual: 'NXDOMAIN' })])
    expect(result.stderr).toContain('dns-check:gone-dns')
    expect(result.stderr).toContain('Test failed: 1 passed, 0 degraded, 1 failed.')
  })

  it('--target picks checks by kind:logicalId or Construct:logicalId; --location labels the runs', async () => {
    const dir = project(dnsCheck('shop-dns', 'www.shop.test') + dnsCheck('gone-dns', 'gone.shop.test') + dnsCheck('slow-dns', 'slow.shop.test'))
    const one = await monitors(dir, ['test', '--target', 'DnsCheck:shop-dns', '--location', 'ap-south-1', '--format', 'json'])
    expect(one.code).toBe(0)
    const doc = JSON.parse(one.stdout) as JsonDoc
    expect(doc.results.map((r) => [r.logicalId, r.runLocation, r.status])).toEqual([['shop-dns', 'ap-south-1', 'PASSED']])

    const two = await monitors(dir, ['test', '--target', 'dns-check:shop-dns', '--target', 'dns-check:gone-dns'])
    expect(two.code).toBe(1)
    expect(two.stdout).toContain('dns-check:gone-dns')
    expect(two.stdout).not.toContain('dns-check:slow-dns')
    expect(two.stdout).toContain('1 passed, 0 degraded, 1 failed')
  })

  it('refuses a target naming no check, and an unknown location, in one line and without running anything', async () => {
    const dir = project(dnsCheck('shop-dns', 'www.shop.test'))
    const before = dns.queries.length
    const target = await monitors(dir, ['test', '--target', 'dns-check:nope'])
    expect(target.code).toBe(1)
    expect(target.stderr).toContain(
      'Error: --target "dns-check:nope" names no check in the project. Write kind:logicalId, with kind one of dns-check, icmp-check',
    )
    expect(target.output).not.toMatch(STACK_LINE)
    const location = await monitors(dir, ['test', '--location', 'mars-1'])
    expect(location.code).toBe(1)
    expect(location.stderr).toContain('Error: --location "mars-1" is not a location. Write one of local, us-east-1')
    expect(dns.queries.length).toBe(before)
  })

  it('an invalid project is reported like validate does, and nothing runs', async () => {
    const dir = project(`new DnsCheck('bad', { name: 'Bad', request: { query: '' } })\n`)
    const result = await monitors(dir, ['test'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/checks\/shop\.check\.ts.*DnsCheck "bad".*request\.query/)
    expect(result.stdout).not.toContain('CHECK')
    expect(result.output).not.toMatch(STACK_LINE)
  })

  it('--retries honours the retry strategy and shows the retried attempts', async () => {
    const dir = project(dnsCheck('gone-dns', 'gone.shop.test', "retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0, maxRetries: 2 },"))
    const before = dns.queries.length
    const plain = await monitors(dir, ['test'])
    expect(plain.code).toBe(1)
    expect(dns.queries.length - before).toBe(1)
    const retried = await monitors(dir, ['test', '--retries', '--format', 'json'])
    expect(retried.code).toBe(1)
    expect(dns.queries.length - before).toBe(4)
    const doc = JSON.parse(retried.stdout) as JsonDoc
    expect(doc.results[0].attempts).toHaveLength(2)
    expect(retried.stderr).toMatch(/FAILED .*\(after 2 retries\)/)
  })

  it.skipIf(!pingWorks)('pings 127.0.0.1 for an IcmpCheck', async () => {
    const dir = project(
      `new IcmpCheck('loopback', { name: 'Loopback', request: { hostname: '127.0.0.1', pingCount: 2 }, locations: ['eu-central-1'] })\n` +
        `new IcmpCheck('loopback-slow', { name: 'Too strict', request: { hostname: '127.0.0.1', pingCount: 2, assertions: [{ source: 'LATENCY', property: 'avg', comparison: 'LESS_THAN', target: '0' }] } })\n`,
    )
    const result = await monitors(dir, ['test'])
    expect(result.code).toBe(1)
    expect(row(result.stdout, 'icmp-check:loopback')).toMatch(/"Loopback"\s+eu-central-1\s+PASSED\s+[\d.]+ ms$/)
    expect(row(result.stdout, 'icmp-check:loopback-slow')).toMatch(/FAILED\s+[\d.]+ ms\s+LATENCY/)
    expect(result.stdout).toContain('1 passed, 0 degraded, 1 failed')
  })

  it('marks a run that could not happen as an error: no ping on this machine', async () => {
    const dir = project(`new IcmpCheck('loopback', { name: 'Loopback', request: { hostname: '127.0.0.1', pingCount: 1 } })\n`)
    const empty = mkdtempSync(join(tmpdir(), 'monitors-no-ping-'))
    const result = await monitors(dir, ['test', '--format', 'json'], { PATH: empty })
    expect(result.code).toBe(1)
    expect(result.output).not.toMatch(STACK_LINE)
    expect(row(result.stderr, 'icmp-check:loopback')).toMatch(/FAILED \(error\)\s+-\s+.*iputils-ping/)
    expect(result.stderr).toContain('0 passed, 0 degraded, 1 failed (1 error).')
    const doc = JSON.parse(result.stdout) as JsonDoc
    expect(doc.summary).toMatchObject({ failed: 1, errors: 1 })
    expect(doc.results[0]).toMatchObject({ hasErrors: true, hasFailures: false, status: 'FAILED', responseTime: null })
  })

  it('Ctrl-C stops the runs in flight and still reports them, as errors', async () => {
    const dir = project(dnsCheck('silent-dns', 'silent.shop.test', 'maxResponseTime: 5000,'))
    const child = spawn(process.execPath, [join(repo, 'bin/monitors.cjs'), 'test'], { cwd: dir, env: { ...process.env, NO_COLOR: '1' } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    const started = new Promise<void>((resolve) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
        if (stderr.includes('Testing 1 check')) resolve()
      })
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    await started
    const sentAt = Date.now()
    child.kill('SIGINT')
    const code = await exited
    expect(Date.now() - sentAt).toBeLessThan(3000)
    expect(code).toBe(1)
    expect(stderr).toContain('Interrupted: stopping the runs in flight')
    expect(row(stdout, 'dns-check:silent-dns')).toMatch(/FAILED \(error\)\s+-\s+run aborted/)
    expect(stdout).toContain('0 passed, 0 degraded, 1 failed (1 error).')
  })

  it('runs the checks in parallel, at most --concurrency at once', async () => {
    dns.set('wait.shop.test', 'A', { records: [{ type: 'A', data: '192.0.2.30' }], delayMs: 400 })
    const dir = project(['a', 'b', 'c'].map((id) => dnsCheck(`wait-${id}`, 'wait.shop.test', 'degradedResponseTime: 3000, maxResponseTime: 3000,')).join(''))
    const spans = async (args: string[]) => {
      const result = await monitors(dir, ['test', '--format', 'json', ...args])
      expect(result.code).toBe(0)
      return (JSON.parse(result.stdout) as { results: Array<{ startedAt: string; stoppedAt: string }> }).results
        .map((r) => [Date.parse(r.startedAt), Date.parse(r.stoppedAt)] as const)
        .sort((x, y) => x[0] - y[0])
    }
    // by default all three are in flight together
    const together = await spans([])
    expect(Math.max(...together.map(([start]) => start))).toBeLessThan(Math.min(...together.map(([, stop]) => stop)))
    // one at a time: each starts after the one before stopped
    const serial = await spans(['--concurrency', '1'])
    for (let i = 1; i < serial.length; i += 1) expect(serial[i][0]).toBeGreaterThanOrEqual(serial[i - 1][1])
    const refused = await monitors(dir, ['test', '--concurrency', '0'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('--concurrency must be a whole number of at least 1 (got 0).')
  })

  it('says which resolver a DNS check without request.nameServer asked; --name-server chooses it', async () => {
    const dir = project(`new DnsCheck('own-ns', { name: 'Own', request: { query: 'www.shop.test', nameServer: '127.0.0.1', port: ${dns.port} } })
new DnsCheck('no-ns-a', { name: 'A', request: { query: 'www.shop.test' } })
new DnsCheck('no-ns-b', { name: 'B', request: { query: 'www.shop.test' } })
`)
    const asked = dns.queries.length
    const result = await monitors(dir, ['test', '--name-server', `127.0.0.1:${dns.port}`])
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain(
      `Without request.nameServer, these 2 DNS checks asked 127.0.0.1 port ${dns.port} (--name-server): dns-check:no-ns-a, dns-check:no-ns-b`,
    )
    expect(result.stdout).not.toMatch(/asked[^\n]*own-ns/)
    // all three asked the test server, none the machine's resolver
    expect(dns.queries.length - asked).toBe(3)

    const json = await monitors(dir, ['test', '--name-server', `127.0.0.1:${dns.port}`, '--format', 'json'])
    const results = (JSON.parse(json.stdout) as { results: Array<{ logicalId: string; resolver?: unknown }> }).results
    expect(Object.fromEntries(results.map((r) => [r.logicalId, r.resolver ?? null]))).toEqual({
      'own-ns': null,
      'no-ns-a': { nameServer: '127.0.0.1', port: dns.port, from: '--name-server' },
      'no-ns-b': { nameServer: '127.0.0.1', port: dns.port, from: '--name-server' },
    })

    const bad = await monitors(dir, ['test', '--name-server', '127.0.0.1:99999'])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('--name-server "127.0.0.1:99999" is not a name server')
  })

  it("names this machine's resolver when the check names none and no --name-server is given", () => {
    const resource = (logicalId: string) =>
      ({ kind: 'dns-check', logicalId, construct: 'DnsCheck', file: 'a.check.ts', payload: {}, refs: [], options: {} }) as never
    const tested = (logicalId: string, nameServer: string | null) =>
      ({ resource: resource(logicalId), resolver: { nameServer, port: 53, from: 'system' as const } }) as never
    expect(resolverNotes([tested('a', '10.0.0.2')])).toEqual([
      "Without request.nameServer, this DNS check asked 10.0.0.2 port 53, this machine's resolver (/etc/resolv.conf; --name-server HOST[:PORT] asks another): dns-check:a",
    ])
    expect(resolverNotes([tested('b', null)])).toEqual([
      'Without request.nameServer, this DNS check asked no resolver: this machine has none configured (/etc/resolv.conf); pass --name-server HOST[:PORT]: dns-check:b',
    ])
  })

  it('a heartbeat check has a NOT RUN row saying why, and does not fail the test', async () => {
    const dir = makeProject({
      'checks/shop.check.ts': `import { DnsCheck, HeartbeatCheck } from 'monitors-as-code'
${dnsCheck('shop-dns', 'www.shop.test')}new HeartbeatCheck('backup', { name: 'Backup', heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' } })
`,
    })
    const text = await monitors(dir, ['test'])
    expect(text.code, text.output).toBe(0)
    expect(text.output).not.toMatch(STACK_LINE)
    expect(text.stdout).toMatch(
      /heartbeat-check:backup "Backup"\s+-\s+NOT RUN\s+-\s+a heartbeat check has nothing to run from this machine: it passes on pings to its ping URL/,
    )
    expect(text.stdout).toMatch(/dns-check:shop-dns "shop-dns name"\s+\S+\s+PASSED/)
    expect(text.stdout).toContain('Test passed: 1 passed, 0 degraded, 0 failed, 1 not run.')
    const json = await monitors(dir, ['test', '--format', 'json'])
    expect(json.code, json.output).toBe(0)
    const doc = JSON.parse(json.stdout)
    expect(doc).toMatchObject({ ok: true, summary: { total: 1, passed: 1, notRun: 1 } })
    expect(doc.notRun).toEqual([
      {
        kind: 'heartbeat-check',
        logicalId: 'backup',
        construct: 'HeartbeatCheck',
        file: 'checks/shop.check.ts',
        reason: expect.stringContaining('pings to its ping URL'),
      },
    ])
  })

  it('a project without checks has nothing to test (exit 0)', async () => {
    const dir = makeProject({ 'checks/vars.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('TOKEN', { value: 'x' })\n` })
    const result = await monitors(dir, ['test'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(
      'No checks to test: the project has no DnsCheck, IcmpCheck, ApiCheck, TcpCheck, UrlCheck, BrowserCheck, MultiStepCheck or PlaywrightCheck.',
    )
  })
})
