/**
 * A project with a check group of three checks (group-level locations, one check failing):
 * `apply` creates all of them, `monitors trigger --group` runs them in groupOrder on a real server
 * (its runner on, checks against the test DNS server on 127.0.0.1) and exits 1, the JSON names
 * each run; `import` in a fresh project brings the group back as code (the checks joining with
 * `group:`) and the next plan says No changes.; bad selections are refused with exit 2.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../src/server/index.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { startHttpServer, type HttpServerHandle } from '../helpers/http-server.js'
import { caller, KEY_A, startTestServer } from '../server/helpers.js'
import { makeProject, monitors, monitorsWithStreams, STACK_LINE } from '../helpers/cli.js'
import { renderTable, type TriggerRow } from '../../src/cli/commands/trigger.js'

let dir: string
let dns: DnsServerHandle
let site: HttpServerHandle
let server: LocalServer

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-trigger-'))
  dns = await startDnsServer()
  for (const name of ['first.smoke.test', 'third.smoke.test', 'loose.smoke.test']) dns.set(name, 'A', { records: [{ type: 'A', data: '192.0.2.10' }] })
  dns.set('second.smoke.test', 'A', { rcode: 'SERVFAIL' })
  site = await startHttpServer()
  server = await startTestServer({ dbPath: join(dir, 'trigger.db'), runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
})
afterAll(async () => {
  await server?.close()
  await dns?.close()
  await site?.close()
  rmSync(dir, { recursive: true, force: true })
})

const check = (id: string, name: string, query: string, extra: string) => `new DnsCheck('${id}', {
  name: '${name}',
  activated: false,
  frequency: 1440,
  ${extra}
  request: { query: '${query}', nameServer: '127.0.0.1', port: ${dns.port}, assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
})\n`

const projectFiles = () => ({
  'checks/smoke.check.ts':
    `import { CheckGroup, DnsCheck } from 'monitors-as-code'
const smoke = new CheckGroup('smoke', { name: 'Smoke', locations: ['ap-south-1', 'us-west-1'], concurrency: 2, tags: ['smoke'] })
` +
    // declared out of order: groupOrder decides
    check('third', 'Third', 'third.smoke.test', 'group: smoke, groupOrder: 3,') +
    check('first', 'First', 'first.smoke.test', 'group: smoke, groupOrder: 1,') +
    check('second', 'Second', 'second.smoke.test', 'group: smoke, groupOrder: 2,') +
    check('loose', 'Loose', 'loose.smoke.test', "tags: ['edge'], locations: ['eu-west-1'],"),
})

interface TriggerDoc {
  ok: boolean
  results: Array<{
    order: number
    logicalId: string | null
    name: string
    group: string | null
    groupOrder: number | null
    status: string
    runLocations: string[]
    error: string | null
  }>
}

describe('monitors trigger', () => {
  it("apply creates the group and its checks; trigger --group runs them in groupOrder, in the group's locations, and exits 1 on the failure; import brings the group back as code", async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A }
    const project = makeProject(projectFiles())
    // the plan says where a value comes from when the group gives it
    const planned = await monitors(project, ['plan'], env)
    expect(planned.code, planned.output).toBe(0)
    expect(planned.stdout).toContain('# from group check-group:smoke "Smoke": locations ap-south-1, us-west-1')
    const looseBlock = planned.stdout.slice(planned.stdout.indexOf('dns-check loose'))
    expect(looseBlock.split('\n+ ')[0]).not.toContain('from group')
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    const lock = JSON.parse(readFileSync(join(project, 'monitoring.lock.json'), 'utf8')) as { resources: Record<string, { remoteId: string }> }
    const groupId = Number(lock.resources['check-group:smoke'].remoteId)
    const call = caller(server)
    const group = await call('GET', `/v1/check-groups/${groupId}`)
    expect(group.json).toMatchObject({ name: 'Smoke', locations: ['ap-south-1', 'us-west-1'], concurrency: 2 })
    expect(group.json.checks).toHaveLength(3)
    const second = await call('GET', `/v1/checks/${lock.resources['dns-check:second'].remoteId}`)
    expect(second.json).toMatchObject({ groupId, groupOrder: 2 })
    // the group's locations, not a default of the check's own
    expect(second.json.locations ?? null).toBeNull()
    const replan = await monitors(project, ['plan'], env)
    expect(replan.stdout, replan.output).toMatch(/^No changes\./m)

    const before = dns.queries.length
    const triggered = await monitors(project, ['trigger', '--group', 'smoke', '--format', 'json'], env)
    expect(triggered.code, triggered.output).toBe(1)
    expect(triggered.output).not.toMatch(STACK_LINE)
    const doc = JSON.parse(triggered.stdout) as TriggerDoc
    expect(doc.ok).toBe(false)
    expect(doc.results.map((r) => [r.logicalId, r.groupOrder, r.order, r.status])).toEqual([
      ['first', 1, 1, 'PASSED'],
      ['second', 2, 2, 'FAILED'],
      ['third', 3, 3, 'PASSED'],
    ])
    for (const r of doc.results) expect([...r.runLocations].sort()).toEqual(['ap-south-1', 'us-west-1'])
    expect(doc.results[1].error).toBeTruthy()
    // run one after another: every query of a check comes before any of the next
    const order = dns.queries
      .slice(before)
      .map((q) => q.name)
      .filter((n) => n.endsWith('.smoke.test'))
    const last = (name: string) => order.lastIndexOf(name)
    const first = (name: string) => order.indexOf(name)
    expect(last('first.smoke.test')).toBeLessThan(first('second.smoke.test'))
    expect(last('second.smoke.test')).toBeLessThan(first('third.smoke.test'))
    expect(order).not.toContain('loose.smoke.test')
    // the table on stderr with --format json
    expect(triggered.stderr).toMatch(/Second \(second\)\s+DNS\s+FAILED/)

    // by logical id and by tag: the loose check passes, exit 0
    const byId = await monitors(project, ['trigger', 'loose'], env)
    expect(byId.code, byId.output).toBe(0)
    expect(byId.stdout).toMatch(/Loose \(loose\)\s+DNS\s+PASSED\s+eu-west-1/)
    expect(byId.stdout).toContain('1 of 1 passed')
    const byTag = await monitors(project, ['trigger', '--tag', 'edge'], env)
    expect(byTag.code, byTag.output).toBe(0)

    // bad selections: exit 2, a message naming what is wrong, nothing run
    const quiet = dns.queries.length
    const unknownGroup = await monitors(project, ['trigger', '--group', 'nope'], env)
    expect(unknownGroup.code).toBe(2)
    expect(unknownGroup.stderr).toContain('--group "nope" names no CheckGroup of the project (its groups: smoke)')
    const unknownCheck = await monitors(project, ['trigger', 'missing'], env)
    expect(unknownCheck.code).toBe(2)
    expect(unknownCheck.stderr).toContain('"missing" names no check of the project')
    const nothing = await monitors(project, ['trigger'], env)
    expect(nothing.code).toBe(2)
    expect(nothing.stderr).toContain('Name what to run')
    const badWait = await monitors(project, ['trigger', '--group', 'smoke', '--max-wait', 'soon'], env)
    expect(badWait.code).toBe(1)
    expect(badWait.stderr).toContain('--max-wait must be')
    expect(dns.queries.length).toBe(quiet)

    // monitors status shows the group with its checks' worst state
    const status = await monitors(project, ['status', '--format', 'json'], env)
    expect(status.code, status.output).toBe(0)
    expect(JSON.parse(status.stdout).groups).toEqual([
      {
        logicalId: 'smoke',
        name: 'Smoke',
        groupId: String(groupId),
        state: 'failing',
        checks: 3,
        badgeUrl: `${server.url}/v1/badges/groups/${groupId}`,
        publicBadgeUrl: null,
      },
    ])
    expect(status.stderr).toContain('Group smoke "Smoke": failing (3 checks)')

    // the group badge answers for the group, failing
    const badge = await call('GET', `/v1/badges/groups/${groupId}`)
    expect(badge.status).toBe(200)
    expect(badge.text).toContain('Smoke')
    expect(badge.text).toContain('failing')

    // a fresh project on the same target: import writes the group and its checks as code
    const fresh = makeProject({ 'checks/other.check.ts': 'export {}\n' })
    const imported = await monitors(fresh, ['import', '--all', '--out', 'checks/back.check.ts'], env)
    expect(imported.code, imported.output).toBe(0)
    const code = readFileSync(join(fresh, 'checks', 'back.check.ts'), 'utf8')
    expect(code).toMatch(/const (\w+) = new CheckGroup\('[^']+', \{[\s\S]*name: 'Smoke'/)
    const variable = /const (\w+) = new CheckGroup/.exec(code)![1]
    expect(code.match(new RegExp(`group: ${variable}\\b`, 'g'))).toHaveLength(3)
    expect(code).not.toMatch(/groupId/)
    const plan = await monitors(fresh, ['plan'], env)
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout, plan.output).toMatch(/^No changes\./m)
  }, 120_000)

  it('waits for a session that outlasts a request timeout, shows its progress on a terminal, and prints errors whole', async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A }
    // a target that answers after 4.5 s (longer than the client's 4 s idle-connection timeout too),
    // and one whose assertion fails with a message of over 80 characters
    site.route('/slow', { status: 200, body: 'ready', delayBeforeHeadersMs: 4500 })
    site.route('/wordy', { status: 200, body: 'ok' })
    const expected = 'the basket, the delivery options and the total price with taxes included'
    const api = (id: string, name: string, path: string, assertion: string) => `new ApiCheck('${id}', {
  name: '${name}', activated: false, frequency: 1440, locations: ['eu-west-1'], degradedResponseTime: 10000, maxResponseTime: 20000,
  request: { method: 'GET', url: '${site.origin}${path}', assertions: [${assertion}] },
})\n`
    const project = makeProject({
      'checks/api.check.ts':
        `import { ApiCheck } from 'monitors-as-code'\n` +
        api('slow', 'Slow API', '/slow', "{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }") +
        api('wordy', 'Wordy API', '/wordy', `{ source: 'TEXT_BODY', comparison: 'CONTAINS', target: '${expected}' }`),
    })
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)

    // every request may wait 1 s for its answer and is not sent again: the completion, which the
    // server holds open until the session ends, is waited for that long and the 1 s beyond it (as
    // the default 30 s must outlast the server's 30 s hold)
    const started = Date.now()
    const triggered = await monitorsWithStreams(project, ['trigger', 'slow', 'wordy', '--timeout', '1', '--retries', '0'], env, {
      stderrTTY: true,
      columns: 200,
    })
    expect(Date.now() - started).toBeGreaterThanOrEqual(4500)
    expect(triggered.code, triggered.output).toBe(1)
    expect(triggered.output).not.toContain('timed out')
    expect(triggered.stdout).toMatch(/Slow API \(slow\)\s+API\s+PASSED\s+eu-west-1/)
    // the error whole, not cut at 80 characters
    const wordy = triggered.stdout.split('\n').find((line) => line.includes('Wordy API (wordy)')) ?? ''
    expect(wordy).toContain(`TEXT_BODY CONTAINS "${expected}" failed: got "ok"`)
    expect(triggered.stdout).toContain('1 of 2 passed; failing: wordy.')
    // the progress line on the terminal (stderr): the counts per type, and what it waits for, for how long
    expect(triggered.stderr).toContain('\rTriggering: 0/2 done (API 0/2); waiting for Slow API, Wordy API (0 s)\x1b[K')
    expect(triggered.stderr).toMatch(/\rTriggering: 1\/2 done \(API 1\/2\), 1 failed; waiting for Slow API \([1-4] s\)\x1b\[K/)
    expect(triggered.stderr).toContain('Running Slow API, Wordy API (checks)\n')
    // the terminal line is cleared before the table
    expect(triggered.stderr.endsWith('\r\x1b[K')).toBe(true)

    // the command's own limit still holds: a session longer than --max-wait counts as not finished
    const short = await monitors(project, ['trigger', 'slow', '--max-wait', '1', '--format', 'json'], env)
    expect(short.code, short.output).toBe(1)
    const doc = JSON.parse(short.stdout) as TriggerDoc
    expect(doc.results.map((r) => [r.logicalId, r.status, r.error])).toEqual([['slow', 'NOT_FINISHED', 'did not finish within --max-wait']])
  }, 60_000)

  it('prints an error of several lines whole under the table, and a long first line whole in it', () => {
    const row = (name: string, error: string | null): TriggerRow => ({
      target: { id: name, name, checkType: 'BROWSER', logicalId: name.toLowerCase() },
      sessionId: 's',
      status: error ? 'FAILED' : 'PASSED',
      runLocations: ['eu-west-1'],
      timeElapsed: 1200,
      error,
      stage: 1,
    })
    const first = `page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:9/checkout/basket?with=delivery-options&and=taxes`
    const table = renderTable([row('Login', null), row('Checkout', `${first}\nCall log:\n  - navigating to "http://127.0.0.1:9/checkout/basket"\n`)], false)
    const lines = table.split('\n')
    expect(lines[0]).toMatch(/^#\s+Check\s+Type\s+Status\s+Locations\s+Time\s+Error$/)
    expect(lines[2]).toMatch(new RegExp(`^1  Checkout \\(checkout\\)\\s+BROWSER  FAILED  eu-west-1  1200 ms  ${first.replace(/[.?*+()[\]\\/]/g, '\\$&')}$`))
    expect(table.endsWith(`\nCheckout (checkout):\n  ${first}\n  Call log:\n    - navigating to "http://127.0.0.1:9/checkout/basket"\n`)).toBe(true)
    // the passing row's columns are as wide as the failing one's: the error does not widen them
    expect(lines[1].indexOf('PASSED')).toBe(lines[2].indexOf('FAILED'))
  })
})
