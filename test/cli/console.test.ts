/**
 * The operator's commands (checks, results, sessions, alerts, incidents, status-pages, env, api,
 * whoami) against one real server: checks, results posted as an agent posts them (a browser
 * run's screenshot, trace and log among them), alert deliveries sent to a local receiver, a
 * status page, variables. Each command in text (a terminal of 80 columns, and a pipe), JSON and
 * markdown; a read key reads everything and is refused every write before it is sent.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { makeProject, monitors, monitorsWithStreams, STACK_LINE, type CliResult } from '../helpers/cli.js'
import { eventually, startReceiver, type Receiver } from '../server/alerts/alerts-helpers.js'

const ADMIN = 'console-admin-key-0123456789abcdef'
const READ = 'console-read-key-0123456789abcdef'
const ACCOUNT = 'ops'
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4])
const TRACE = Buffer.from('PK\u0003\u0004 a trace of the checkout')
const SECRET = 's3cr3t-token-value-never-shown'
const LONG_NAME = 'Inventory service DNS of the warehouse in Rotterdam (the primary resolver)'

let server: LocalServer
let receiver: Receiver
let dir: string
const requests: string[] = []
const ids = {} as {
  shop: string
  checkout: string
  docs: string
  paused: string
  long: string
  channel: number
  service: string
  page: string
  shopSession: string
  checkoutResult: string
}

async function call(method: string, path: string, body?: unknown, key = ADMIN): Promise<{ status: number; json: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, json: text ? JSON.parse(text) : undefined }
}

async function created(path: string, body: unknown): Promise<any> {
  const answer = await call('POST', path, body)
  if (answer.status !== 201) throw new Error(`POST ${path}: ${answer.status} ${JSON.stringify(answer.json)}`)
  return answer.json
}

const env = (key = ADMIN, url?: string) => ({ MONITORING_API_URL: url ?? server.url, MONITORING_API_KEY: key, MONITORING_ACCOUNT_ID: ACCOUNT })
const run = (args: string[], key = ADMIN, cwd = dir) => monitors(cwd, args, env(key))
const terminal = (args: string[], columns = 80) => monitorsWithStreams(dir, args, env(), { stdoutTTY: true, columns })
const json = (result: CliResult) => JSON.parse(result.stdout)
const ok = (result: CliResult) => {
  expect(result.code, result.output).toBe(0)
  expect(result.output).not.toMatch(STACK_LINE)
  return result
}

/** A run's FINAL result as an agent posts it. */
function result(failed: boolean, error: string | null, details: Record<string, unknown>) {
  const now = new Date().toISOString()
  return {
    status: failed ? 'FAILED' : 'PASSED',
    hasFailures: failed,
    hasErrors: false,
    isDegraded: false,
    responseTime: failed ? 31 : 12,
    startedAt: now,
    stoppedAt: now,
    error,
    failureKind: failed ? 'ASSERTION' : null,
    attempt: 1,
    resultType: 'FINAL',
    attempts: [],
    details,
    assertions:
      details.kind === 'DNS'
        ? [
            {
              source: 'RESPONSE_CODE',
              property: null,
              comparison: 'EQUALS',
              target: 'NOERROR',
              actual: failed ? 'SERVFAIL' : 'NOERROR',
              passed: !failed,
              message: `RESPONSE_CODE EQUALS "NOERROR"${failed ? ' failed: got "SERVFAIL"' : ''}`,
            },
          ]
        : [],
  }
}

/** Claims every due run as an agent would, and posts each run's result (`outcome` decides it), passing ones first. */
async function runAsAgent(
  outcome: (run: { location: string; check: { id: string; checkType: string } }) => {
    failed: boolean
    error: string | null
    details: Record<string, unknown>
    artifacts?: Array<[string, Buffer]>
  },
): Promise<void> {
  const claim = await call('POST', '/v1/agent/claim', { agentId: 'console-test', locations: ['eu-west-1', 'us-east-1'], max: 50 })
  const runs = (claim.json.runs as Array<{ runId: string; location: string; check: { id: string; checkType: string } }>).map((r) => ({ run: r, ...outcome(r) }))
  runs.sort((a, b) => Number(a.failed) - Number(b.failed))
  for (const { run, failed, error, details, artifacts } of runs) {
    for (const [name, content] of artifacts ?? [])
      expect((await call('POST', `/v1/agent/runs/${run.runId}/artifacts`, { index: 0, name, contentBase64: content.toString('base64') })).status).toBe(204)
    expect((await call('POST', `/v1/agent/runs/${run.runId}/result`, { result: result(failed, error, details) })).status).toBe(204)
  }
}

const dnsDetails = (rcode: string) => ({ kind: 'DNS', query: 'shop.example.com', recordType: 'A', rcode, answers: [], textAnswer: '' })
const browserDetails = {
  kind: 'BROWSER',
  logs: 'opening https://shop.example.com\nclicking #pay\n',
  artifacts: {
    dir: null,
    totalBytes: 0,
    limitBytes: 150_000_000,
    dropped: [],
    files: [
      { name: 'screenshots/1-failure.png', kind: 'screenshot', bytes: PNG.length, contentType: 'image/png' },
      { name: 'traces/checkout.zip', kind: 'trace', bytes: TRACE.length, contentType: 'application/zip' },
      { name: 'console.log', kind: 'console', bytes: 24, contentType: 'text/plain' },
    ],
  },
}

beforeAll(async () => {
  receiver = await startReceiver()
  receiver.answer('/broken', 500)
  server = await startLocalServer({
    apiKeys: [
      { key: ADMIN, accountId: ACCOUNT },
      { key: READ, accountId: ACCOUNT, role: 'read' },
    ],
    alerts: { maxAttempts: 1, pollMs: 50 },
    privateTargets: 'allow',
    log: (line) => requests.push(line),
  })
  ids.channel = (await created('/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'ops hook', url: `${receiver.url}/ok`, method: 'POST' } })).id
  const dns = (name: string, extra: Record<string, unknown>) =>
    created('/v1/checks/dns', { name, request: { query: 'shop.example.com' }, doubleCheck: false, ...extra })
  ids.shop = (
    await dns('Shop DNS', {
      locations: ['eu-west-1', 'us-east-1'],
      tags: ['prod'],
      alertChannelSubscriptions: [{ alertChannelId: ids.channel, activated: true }],
      alertChannels: { webhook: [{ name: 'broken hook', url: `${receiver.url}/broken` }] },
    })
  ).id
  ids.checkout = (
    await created('/v1/checks/browser', {
      name: 'Checkout',
      script: "const { test } = require('@playwright/test')\ntest('pay', async ({ page }) => { await page.goto('https://shop.example.com') })\n",
      locations: ['eu-west-1'],
      tags: ['prod', 'web'],
    })
  ).id
  ids.docs = (await dns('Docs DNS', { locations: ['eu-west-1'], tags: ['docs'] })).id
  ids.paused = (
    await created('/v1/checks/icmp', {
      name: 'Paused ping',
      request: { hostname: 'shop.example.com' },
      heartbeat: {},
      script: '',
      activated: false,
      tags: ['prod'],
    })
  ).id
  ids.long = (await dns(LONG_NAME, { locations: ['eu-west-1'], activated: false })).id
  const trigger = await created('/v1/check-sessions/trigger', { target: { checkId: [ids.shop, ids.checkout, ids.docs] } })
  ids.shopSession = trigger.sessions.find((s: { checkId: string }) => s.checkId === ids.shop).checkSessionId
  await runAsAgent(({ location, check }) => {
    if (check.id === ids.checkout) {
      return {
        failed: true,
        error: 'page.click: Timeout 5000ms exceeded waiting for locator("#pay")',
        details: browserDetails,
        artifacts: [
          ['screenshots/1-failure.png', PNG],
          ['traces/checkout.zip', TRACE],
          ['console.log', Buffer.from('[error] payment failed\n')],
        ],
      }
    }
    const failed = check.id === ids.shop && location === 'eu-west-1'
    return {
      failed,
      error: failed ? 'Assertion failed: RESPONSE_CODE EQUALS NOERROR (got SERVFAIL)' : null,
      details: dnsDetails(failed ? 'SERVFAIL' : 'NOERROR'),
    }
  })
  ids.checkoutResult = (await call('GET', `/v1/check-results/${ids.checkout}`)).json[0].id
  // the deliveries of the shop's failure: the account's channel takes it, the check's own broken hook refuses it
  await eventually(
    () => call('GET', `/v1/alert-deliveries?checkId=${ids.shop}`),
    (a) => a.json.length === 2 && a.json.every((d: { status: string }) => d.status !== 'PENDING'),
  )
  ids.service = (await created('/v1/status-pages/services', { name: 'Checkout' })).id
  ids.page = (await created('/v1/status-pages', { name: 'Shop status', url: 'shop-status', cards: [{ name: 'Shop', services: [{ id: ids.service }] }] })).id
  await created('/v1/variables', { key: 'PUBLIC_URL', value: 'https://shop.example.com/?a=1 b' })
  await created('/v1/variables', { key: 'API_TOKEN', value: SECRET, secret: true })
  dir = makeProject({})
  // the lock an apply of the project wrote: two of the checks are the project's
  writeFileSync(
    join(dir, 'monitoring.lock.json'),
    JSON.stringify({
      version: 1,
      target: { id: server.url, baseUrl: server.url, accountId: ACCOUNT },
      resources: {
        'dns-check:shop-dns': { kind: 'dns-check', logicalId: 'shop-dns', remoteId: ids.shop, appliedHash: 'sha256:0' },
        'browser-check:checkout': { kind: 'browser-check', logicalId: 'checkout', remoteId: ids.checkout, appliedHash: 'sha256:0' },
      },
    }),
  )
}, 60_000)

afterAll(async () => {
  await server?.close()
  await receiver?.close()
})

/** The requests the server got while `work` ran. */
async function requestsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const before = requests.length
  await work()
  return requests.slice(before)
}

/** Every line of a terminal's output within `columns`. */
function fits(text: string, columns = 80): void {
  for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(columns)
}

describe('monitors checks', () => {
  it('lists the checks with their status, filtered by --status, --tag, --type and --search, on a pipe as tab-separated rows', async () => {
    const all = ok(await run(['checks', 'list']))
    const rows = all.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'))
    expect(rows.map((r) => r.length)).toEqual([6, 6, 6, 6, 6])
    const byName = Object.fromEntries(rows.map((r) => [r[1], r]))
    expect(byName['Shop DNS']).toEqual(['failing', 'Shop DNS', 'DNS', ids.shop, 'dns-check:shop-dns', 'prod'])
    expect(byName.Checkout.slice(0, 5)).toEqual(['failing', 'Checkout', 'BROWSER', ids.checkout, 'browser-check:checkout'])
    expect(byName['Docs DNS'][0]).toBe('passing')
    expect(byName['Paused ping'][0]).toBe('paused')
    // the whole name on a pipe, and no colour
    expect(byName[LONG_NAME]).toEqual(['paused', LONG_NAME, 'DNS', ids.long, '-', '-'])
    expect(all.stdout).not.toMatch(/\x1b\[/)

    const names = async (...args: string[]) => (await run(['checks', 'list', ...args, '--format', 'json'], READ)).stdout
    expect(
      JSON.parse(await names('--status', 'failing'))
        .checks.map((c: { name: string }) => c.name)
        .sort(),
    ).toEqual(['Checkout', 'Shop DNS'])
    expect(JSON.parse(await names('--tag', 'web')).checks.map((c: { name: string }) => c.name)).toEqual(['Checkout'])
    expect(JSON.parse(await names('--type', 'DNS', '--status', 'passing')).checks.map((c: { name: string }) => c.name)).toEqual(['Docs DNS'])
    expect(JSON.parse(await names('--search', 'DOCS')).checks.map((c: { name: string }) => c.name)).toEqual(['Docs DNS'])
    const doc = JSON.parse(await names('--tag', 'prod', '--tag', 'docs', '--limit', '2'))
    expect(doc).toMatchObject({ formatVersion: 1, ok: true, more: true })
    expect(doc.checks).toHaveLength(2)
    const shop = JSON.parse(await names('--search', 'shop')).checks[0]
    expect(shop).toMatchObject({ id: ids.shop, logicalId: 'dns-check:shop-dns', status: 'failing', lastRunLocation: 'eu-west-1', tags: ['prod'] })

    const markdown = ok(await run(['checks', 'list', '--status', 'failing', '--format', 'markdown']))
    expect(markdown.stdout).toContain('| STATUS | NAME | TYPE | ID | LOGICAL ID | TAGS |')
    expect(markdown.stdout).toContain(`| failing | Shop DNS | DNS | ${ids.shop} | dns-check:shop-dns | prod |`)
    const more = ok(await run(['checks', 'list', '--limit', '2']))
    expect(more.stdout.trimEnd().split('\n')).toHaveLength(2)
    expect(more.stderr).toContain('2 checks shown of 5: --limit 10 or --all for more.')
  })

  it('fits a table into 80 columns on a terminal: long names cut, ids short, optional columns left out', async () => {
    const list = ok(await terminal(['checks', 'list']))
    fits(list.stdout)
    const lines = list.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^STATUS\s+NAME\s+TYPE\s+ID/)
    expect(lines.find((l) => l.includes('Inventory'))).toMatch(/^paused +Inventory service… {2}DNS /)
    expect(list.stdout).toContain(` ${ids.shop.slice(0, 8)} `)
    expect(list.stdout).not.toContain(ids.shop)
    // wider, nothing is cut
    const wide = ok(await terminal(['checks', 'list'], 200))
    expect(wide.stdout).toContain(LONG_NAME)
    expect(wide.stdout.split('\n')[0]).toMatch(/LOGICAL ID\s+TAGS$/)
    for (const args of [
      ['checks', 'get', 'shop-dns'],
      ['results', 'checkout', 'latest'],
      ['alerts', 'log'],
      ['status-pages', 'list'],
      ['env', 'list'],
      ['whoami'],
    ])
      fits(ok(await terminal(args)).stdout)
  })

  it('shows one check by its logical id, its id or the start of it: status, last results with their errors, error groups, analytics', async () => {
    const text = ok(await run(['checks', 'get', 'shop-dns'])).stdout
    expect(text).toContain('Check "Shop DNS" (dns-check:shop-dns)')
    expect(text).toMatch(/Status: failing: newest run .* in eu-west-1/)
    expect(text).toContain('Availability: 50%')
    expect(text).toMatch(/FAILED\t\S+ \S+\teu-west-1\t31 ms\t[0-9a-f-]{36}\tAssertion failed: RESPONSE_CODE EQUALS NOERROR \(got SERVFAIL\)/)
    expect(text).toMatch(/PASSED\t.*\tus-east-1\t12 ms/)
    expect(text).toMatch(/Error groups\n.*Assertion failed: RESPONSE_CODE EQUALS NOERROR \(got SERVFAIL\)/)
    const byId = json(ok(await run(['checks', 'get', ids.shop.slice(0, 8), '--format', 'json', '--range', '7d'], READ)))
    expect(byId).toMatchObject({
      ok: true,
      state: 'failing',
      check: { id: ids.shop, logicalId: 'dns-check:shop-dns' },
      analytics: { range: 'last7Days', availability: 50 },
    })
    expect(byId.results.map((r: { status: string }) => r.status).sort()).toEqual(['FAILED', 'PASSED'])
    expect(byId.errorGroups).toHaveLength(1)
    expect(json(ok(await run(['checks', 'get', 'DnsCheck:shop-dns', '--format', 'json']))).check.id).toBe(ids.shop)
    const missing = await run(['checks', 'get', 'no-such-check', '--format', 'json'])
    expect(missing.code).toBe(1)
    expect(json(missing)).toEqual({ formatVersion: 1, ok: false, error: 'No check has an id starting or ending with "no-such-check".' })
    expect((await run(['checks', 'get'])).stderr).toContain('monitors checks get needs a check')
    expect(ok(await run(['checks', '--help'])).stdout).toContain('checks list --status failing')
  })
})

describe('monitors results', () => {
  it("lists a check's results, filtered as the reference filters them", async () => {
    const failed = json(ok(await run(['results', 'shop-dns', '--failed', '--format', 'json'])))
    expect(failed.results.map((r: { runLocation: string }) => r.runLocation)).toEqual(['eu-west-1'])
    const east = json(ok(await run(['results', 'shop-dns', '--location', 'us-east-1', '--from', '1h', '--format', 'json'])))
    expect(east.results.map((r: { status: string }) => r.status)).toEqual(['PASSED'])
    expect(json(ok(await run(['results', 'shop-dns', '--to', '2020-01-01', '--format', 'json']))).results).toEqual([])
    expect((await run(['results', 'shop-dns', '--from', 'yesterday'])).stderr).toContain('--from must be a time')
  })

  it("shows a result's error, logs and assets, and --download writes them with the trace's command", async () => {
    const short = ids.checkoutResult.slice(-8)
    const shown = ok(await terminal(['results', 'checkout', short])).stdout
    expect(shown).toContain(`Result ${ids.checkoutResult} of "Checkout"`)
    expect(shown).toMatch(/Error\n {2}page\.click: Timeout 5000ms exceeded/)
    expect(shown).toMatch(/Logs\n {2}opening https:\/\/shop\.example\.com\n {2}clicking #pay/)
    expect(shown).toMatch(/screenshot\s+screenshots\/1-failure\.png\s+12 B/)
    expect(shown).toMatch(/trace\s+traces\/checkout\.zip/)

    const out = mkdtempSync(join(tmpdir(), 'monitors-download-'))
    const downloaded = ok(await run(['results', 'checkout', 'latest', '--failed', '--download', out]))
    expect(readFileSync(join(out, 'screenshots/1-failure.png'))).toEqual(PNG)
    expect(readFileSync(join(out, 'traces/checkout.zip'))).toEqual(TRACE)
    expect(readFileSync(join(out, 'console.log'), 'utf8')).toBe('[error] payment failed\n')
    expect(readFileSync(join(out, 'logs.txt'), 'utf8')).toBe('opening https://shop.example.com\nclicking #pay\n')
    expect(JSON.parse(readFileSync(join(out, 'result.json'), 'utf8'))).toMatchObject({ id: ids.checkoutResult, status: 'FAILED' })
    expect((statSync(join(out, 'screenshots/1-failure.png')).mode & 0o777).toString(8)).toBe('600')
    expect(downloaded.output).toContain(`npx playwright show-trace ${join(out, 'traces/checkout.zip')}`)
    const doc = json(ok(await run(['results', 'checkout', ids.checkoutResult, '--format', 'json'])))
    expect(doc.assets.map((a: { type: string }) => a.type)).toEqual(['screenshot', 'trace', 'log'])
    expect(doc.result.error).toContain('page.click')
    expect((await run(['results', 'checkout', '--download', out])).stderr).toContain('--download needs a result')
  })
})

describe('monitors sessions and alerts', () => {
  it('shows a session and its results', async () => {
    const session = ok(await run(['sessions', 'get', ids.shopSession])).stdout
    expect(session).toContain('Status: FAILED')
    expect(session).toContain('Locations: eu-west-1, us-east-1 (2 of 2 done)')
    expect(session).toMatch(/eu-west-1\tFINAL\tFAILED\t31 ms\t[0-9a-f-]{36}\tAssertion failed/)
    expect(json(ok(await run(['sessions', 'get', ids.shopSession, '--format', 'json'], READ))).session).toMatchObject({
      checkSessionId: ids.shopSession,
      checkId: ids.shop,
      status: 'FAILED',
    })
    expect((await run(['sessions', 'get', ids.shopSession.slice(0, 8)])).stderr).toContain('is not a whole session id')
  })

  it('lists the deliveries, by --channel, --status and time; a check without a channel says so', async () => {
    const all = json(ok(await run(['alerts', 'log', '--format', 'json'], READ))).deliveries
    const line = (d: { checkName: string; channelType: string; state: string; alertChannelId: number | null }) =>
      `${d.checkName} ${d.channelType} ${d.alertChannelId ?? '-'} ${d.state}`
    expect(all.map(line).sort()).toEqual(['Checkout NONE - not-delivered', 'Shop DNS WEBHOOK - failed', `Shop DNS WEBHOOK ${ids.channel} delivered`].sort())
    const failed = json(ok(await run(['alerts', 'log', '--status', 'failed', '--format', 'json']))).deliveries
    expect(failed).toHaveLength(1)
    expect(failed[0]).toMatchObject({ detail: 'HTTP 500: receiver says 500', logicalId: 'dns-check:shop-dns', alertType: 'ALERT_FAILURE' })
    expect(json(ok(await run(['alerts', 'log', '--channel', String(ids.channel), '--format', 'json']))).deliveries.map(line)).toEqual([
      `Shop DNS WEBHOOK ${ids.channel} delivered`,
    ])
    expect(json(ok(await run(['alerts', 'log', '--channel', 'webhook', '--check', 'shop-dns', '--from', '1h', '--format', 'json']))).deliveries).toHaveLength(2)
    expect(ok(await run(['alerts', 'log', '--to', '2020-01-01'])).stdout).toBe('')
    const text = ok(await run(['alerts', 'log', '--status', 'failed'])).stdout
    expect(text).toMatch(/^\S+ \S+\tShop DNS\tALERT_FAILURE\twebhook\tfailed\t1\tHTTP 500: receiver says 500\n$/)
  })
})

describe('monitors incidents and status-pages', () => {
  it('refuses a write with a read key before sending it, naming the role', async () => {
    let refused: CliResult | undefined
    const sent = await requestsDuring(async () => {
      refused = await run(['incidents', 'create', '--name', 'Checkout is failing', '--message', 'Looking into it'], READ)
    })
    expect(refused!.code).toBe(1)
    expect(refused!.stderr).toMatch(
      /monitors incidents create changes the account, but the API key key_[0-9a-f]+ has the role read: it may only read, so nothing was sent\. Use a key of role write or admin\./,
    )
    expect(sent.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['GET /v1/accounts/me'])
    const api = await requestsDuring(async () => expect((await run(['api', 'POST', '/v1/variables', '-F', 'key=X', '-F', 'value=y'], READ)).code).toBe(1))
    expect(api.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['GET /v1/accounts/me'])
    expect((await call('GET', '/v1/incidents')).json).toEqual([])
  })

  it('opens an incident with --notify-subscribers, posts an update, resolves it; bad input sends nothing', async () => {
    const bad = await run(['incidents', 'create', '--name', 'No message'])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('Nothing was sent: --message:')
    expect((await call('GET', '/v1/incidents')).json).toEqual([])

    const opened = json(
      ok(
        await run([
          'incidents',
          'create',
          '--name',
          'Checkout is failing',
          '--severity',
          'MAJOR',
          '--service',
          'Checkout',
          '--message',
          'Payments fail; looking into it',
          '--notify-subscribers',
          '--format',
          'json',
        ]),
      ),
    )
    const id = opened.incident.id
    expect(opened.incident).toMatchObject({
      name: 'Checkout is failing',
      severity: 'MAJOR',
      services: [{ id: ids.service, name: 'Checkout' }],
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'Payments fail; looking into it', notifySubscribers: true }],
    })
    expect(ok(await run(['incidents', 'list', '--open'])).stdout).toMatch(
      new RegExp(`^INVESTIGATING\\tMAJOR\\tCheckout is failing\\tCheckout\\t\\S+ \\S+\\t${id}\\n$`),
    )

    ok(await run(['incidents', 'update', id.slice(0, 8), '--status', 'IDENTIFIED', '--message', 'A bad deploy; rolling back']))
    const page = ok(await run(['status-pages', 'get', 'shop-status'])).stdout
    expect(page).toContain('Status page "Shop status"')
    expect(page).toContain(`Address: ${server.url}/status/shop-status`)
    expect(page).toMatch(/Cards\nShop\tCheckout/)
    expect(page).toMatch(new RegExp(`Open incidents on its services\\nIDENTIFIED\\tMAJOR\\tCheckout is failing\\t\\S+ \\S+\\t${id}`))

    const resolved = ok(await run(['incidents', 'resolve', id.slice(0, 8), '--message', 'Rolled back; payments work again', '--notify-subscribers']))
    expect(resolved.stdout).toContain('Incident "Checkout is failing" resolved')
    const updates = (await call('GET', `/v1/incidents/${id}`)).json.incidentUpdates
    expect(updates.map((u: { status: string; notifySubscribers: boolean }) => `${u.status} ${u.notifySubscribers}`)).toEqual([
      'RESOLVED true',
      'IDENTIFIED false',
      'INVESTIGATING true',
    ])
    const again = ok(await run(['incidents', 'resolve', id]))
    expect(again.stderr).toContain('is resolved already: nothing was sent')
    expect((await call('GET', `/v1/incidents/${id}`)).json.incidentUpdates).toHaveLength(3)
    expect(ok(await run(['incidents', 'list', '--open'])).stdout).toBe('')
    expect(ok(await run(['incidents', 'list'], READ)).stdout).toMatch(/^RESOLVED\tMAJOR\tCheckout is failing/)
  })

  it('lists the status pages and shows one by its id', async () => {
    expect(ok(await run(['status-pages', 'list'], READ)).stdout).toBe(`Shop status\tshop-status\t-\t1\t${ids.page}\n`)
    const doc = json(ok(await run(['status-pages', 'get', ids.page.slice(0, 8), '--format', 'json'])))
    expect(doc).toMatchObject({ statusPage: { id: ids.page, url: 'shop-status' }, address: `${server.url}/status/shop-status`, openIncidents: [] })
  })
})

describe('monitors env, api and whoami', () => {
  it('lists, shows and pulls the variables: a secret one as secret, never its value', async () => {
    const list = ok(await run(['env', 'list'], READ))
    expect(list.stdout).toBe('PUBLIC_URL\thttps://shop.example.com/?a=1 b\tno\nAPI_TOKEN\t(secret)\tno\n')
    expect(json(ok(await run(['env', 'get', 'API_TOKEN', '--format', 'json']))).variable).toEqual({
      key: 'API_TOKEN',
      secret: true,
      locked: false,
      value: null,
    })
    const file = join(dir, '.env.monitoring')
    const pulled = ok(await run(['env', 'pull', '.env.monitoring']))
    expect(pulled.stderr).toContain('Wrote 1 variable (1 secret left out: their values are never readable) to .env.monitoring.')
    const text = readFileSync(file, 'utf8')
    expect(text).toContain('PUBLIC_URL="https://shop.example.com/?a=1 b"\n')
    expect(text).toContain('# API_TOKEN: secret, its value is never readable through the API\n')
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600')
    expect((await run(['env', 'pull', '.env.monitoring'])).stderr).toContain('.env.monitoring exists: pass --force')
    expect(ok(await run(['env', 'pull', '-'])).stdout).toContain('PUBLIC_URL=')
    for (const args of [
      ['env', 'list', '--format', 'json'],
      ['env', 'get', 'API_TOKEN'],
      ['env', 'pull', '-'],
    ])
      expect((await run(args)).output).not.toContain(SECRET)
  })

  it('sends one request as gh api does: fields, --input, --include; exit 1 for an error answer', async () => {
    const listed = JSON.parse(ok(await run(['api', 'GET', '/v1/checks', '-F', 'limit=2', '-F', 'checkType=DNS'], READ)).stdout)
    expect(listed.map((c: { checkType: string }) => c.checkType)).toEqual(['DNS', 'DNS'])
    const missing = await run(['api', 'get', '/v1/checks/00000000-0000-4000-8000-000000000000', '--include'])
    expect(missing.code).toBe(1)
    expect(missing.stdout).toMatch(/^HTTP\/1\.1 404\n(.+\n)*content-type: application\/json.*\n(.+\n)*\n\{\n {2}"statusCode": 404,/)
    writeFileSync(join(dir, 'variable.json'), JSON.stringify({ key: 'FROM_API', value: 'yes' }))
    expect(JSON.parse(ok(await run(['api', 'POST', '/v1/variables', '--input', 'variable.json'])).stdout)).toMatchObject({ key: 'FROM_API', value: 'yes' })
    expect(ok(await run(['api', 'DELETE', '/v1/variables/FROM_API'])).stdout).toBe('')
    expect((await run(['api', 'GET', 'https://elsewhere.example.com/v1/checks'])).stderr).toContain('takes a path of the target')
    expect(ok(await run(['api', 'GET', `/v1/badges/checks/${ids.docs}`])).stdout).toMatch(/^<svg/)
  })

  it('says who the key is: target, account, role and the server version', async () => {
    const admin = ok(await run(['whoami'])).stdout
    expect(admin).toContain(`URL: ${server.url}`)
    // named by its URL: no Target line saying it twice
    expect(admin).not.toContain('Target:')
    expect(admin).toContain('Account: ops')
    expect(admin).toContain('Role: admin (may read and write)')
    expect(admin).toMatch(/Server: monitors \d+\.\d+\.\d+/)
    const read = json(ok(await run(['whoami', '--format', 'json'], READ)))
    expect(read).toMatchObject({
      ok: true,
      role: 'read',
      account: { id: 'ops' },
      server: { name: 'monitors' },
      target: { baseUrl: server.url, embedded: false },
    })
    expect(read.key.id).toMatch(/^key_/)
  })
})

describe('the target of the console', () => {
  it('runs outside a project with MONITORING_API_URL, and without one says how to name a target', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'monitors-no-project-'))
    expect(ok(await run(['checks', 'list', '--search', 'Docs'], ADMIN, empty)).stdout).toMatch(/^passing\tDocs DNS\tDNS\t\S+\t-\tdocs\n$/)
    const none = await monitors(empty, ['checks', 'list', '--format', 'json'], {})
    expect(none.code).toBe(1)
    expect(json(none).error).toMatch(
      /^No target: the embedded local server needs a project, and there is no monitoring.config.ts in .* Set MONITORING_API_URL and MONITORING_API_KEY/,
    )
    expect(existsSync(join(empty, '.monitors'))).toBe(false)
  })

  it('against a target that does not say the role, sends the write and lets its 403 speak', async () => {
    // the server behind a proxy that hides GET /v1/accounts/me, as a server without the route answers
    const upstream = new URL(server.url)
    const proxy: Server = createServer((req, res) => {
      if (req.url === '/v1/accounts/me') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ statusCode: 404, error: 'Not Found', message: 'Route GET:/v1/accounts/me not found' }))
        return
      }
      const forward = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      req.pipe(forward)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
      const refused = await monitors(
        dir,
        ['incidents', 'create', '--name', 'Down', '--message', 'Looking', '--lock', join(dir, 'other.lock.json')],
        env(READ, url),
      )
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('POST /v1/incidents was refused (403 Forbidden)')
      const who = ok(await monitors(dir, ['whoami', '--lock', join(dir, 'other.lock.json')], env(READ, url))).stdout
      expect(who).toContain('Role: unknown (the target does not say: a refused write answers 403)')
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()))
    }
  })

  it('waits for a session with --watch, saying each result, and exits 1 when it failed', async () => {
    const session = (await created('/v1/check-sessions/trigger', { target: { checkId: [ids.docs] } })).sessions[0].checkSessionId
    const watching = run(['sessions', 'get', session, '--watch', '--max-wait', '30'])
    // once the command has read the session, the run comes in
    await eventually(
      async () => requests.some((l) => l.startsWith(`GET /v1/check-sessions/${session} `)),
      (seen) => seen,
    )
    await runAsAgent(() => ({ failed: true, error: 'Assertion failed: RESPONSE_CODE EQUALS NOERROR (got NXDOMAIN)', details: dnsDetails('NXDOMAIN') }))
    const watched = await watching
    expect(watched.code, watched.output).toBe(1)
    expect(watched.stderr).toContain(`Waiting for session ${session} (eu-west-1)`)
    expect(watched.stderr).toMatch(/eu-west-1: FAILED 31 ms: Assertion failed: RESPONSE_CODE EQUALS NOERROR \(got NXDOMAIN\)/)
    expect(watched.stdout).toContain('Status: FAILED')
  })
})
