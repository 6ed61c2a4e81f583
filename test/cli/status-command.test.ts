/**
 * `monitors status`: the built CLI reads a real server's check statuses (its runner on, checks
 * run against the test DNS server on 127.0.0.1) for the project's checks, with badge URLs.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../src/server/index.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { caller, KEY_A, startTestServer, type Call } from '../server/helpers.js'
import { makeProject, monitors, STACK_LINE, writeFiles } from '../helpers/cli.js'

let dir: string
let dns: DnsServerHandle
let server: LocalServer
let call: Call

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-status-'))
  dns = await startDnsServer()
  dns.set('www.shop.test', 'A', { records: [{ type: 'A', data: '192.0.2.10' }] })
  dns.set('broken.shop.test', 'A', { rcode: 'SERVFAIL' })
  server = await startTestServer({ dbPath: join(dir, 'status.db'), runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
  call = caller(server)
})
afterAll(async () => {
  await server?.close()
  await dns?.close()
  rmSync(dir, { recursive: true, force: true })
})

function dnsCheck(id: string, name: string, query: string, extra = ''): string {
  return `new DnsCheck('${id}', {
  name: '${name}',
  frequency: 1440,
  locations: ['eu-west-1'],
  request: { query: '${query}', nameServer: '127.0.0.1', port: ${dns.port}, assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
  ${extra}
})\n`
}

interface StatusDoc {
  formatVersion: number
  ok: boolean
  target: { id: string; baseUrl: string; embedded: boolean }
  summary: Record<string, number>
  checks: Array<{
    kind: string
    logicalId: string
    name: string
    checkId: string | null
    state: string
    reason?: string
    hasFailures: boolean | null
    hasErrors: boolean | null
    isDegraded: boolean | null
    lastRunLocation: string | null
    shortestRun: number | null
    longestRun: number | null
    badgeUrl: string | null
  }>
}

async function runToCompletion(ids: string[]): Promise<void> {
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: ids } })
  expect(trigger.status).toBe(201)
  for (const session of trigger.json.sessions as Array<{ checkSessionId: string }>) {
    const done = await call('GET', `/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=20`)
    expect(done.status).toBe(200)
  }
}

describe('monitors status', () => {
  it('shows passing, failing, paused and not deployed checks of a server with runs, with badge URLs', async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A }
    const project = makeProject({
      'checks/shop.check.ts':
        `import { DnsCheck } from 'monitors-as-code'\n` +
        dnsCheck('shop-dns', 'Shop DNS', 'www.shop.test') +
        dnsCheck('broken-dns', 'Broken DNS', 'broken.shop.test') +
        dnsCheck('paused-dns', 'Paused DNS', 'www.shop.test', 'activated: false,'),
    })
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    const lock = JSON.parse(readFileSync(join(project, 'monitoring.lock.json'), 'utf8')) as { resources: Record<string, { remoteId: string }> }
    const idOf = (logicalId: string) => lock.resources[`dns-check:${logicalId}`].remoteId

    // a check written after the apply: not deployed
    writeFiles(project, { 'checks/later.check.ts': `import { DnsCheck } from 'monitors-as-code'\n${dnsCheck('later-dns', 'Later DNS', 'www.shop.test')}` })

    // before any run: never ran (the paused one is paused whatever)
    const before = await monitors(project, ['status', '--format', 'json'], env)
    expect(before.code, before.output).toBe(0)
    const beforeDoc = JSON.parse(before.stdout) as StatusDoc
    expect(Object.fromEntries(beforeDoc.checks.map((c) => [c.logicalId, c.state]))).toMatchObject({ 'paused-dns': 'paused', 'later-dns': 'not-deployed' })

    await runToCompletion([idOf('shop-dns'), idOf('broken-dns')])
    expect(dns.queries.filter((q) => q.name === 'broken.shop.test').length).toBeGreaterThan(0)

    const text = await monitors(project, ['status'], env)
    expect(text.code, text.output).toBe(0)
    expect(text.output).not.toMatch(STACK_LINE)
    const lineOf = (logicalId: string) => text.stdout.split('\n').find((l) => l.includes(`dns-check:${logicalId} `)) ?? ''
    expect(lineOf('shop-dns')).toMatch(/dns-check:shop-dns "Shop DNS"\s+passing\s+eu-west-1\s+[\d.–]+ ms\s+/)
    expect(lineOf('shop-dns')).toContain(`${server.url}/v1/badges/checks/${idOf('shop-dns')}`)
    expect(lineOf('broken-dns')).toMatch(/failing\s+eu-west-1/)
    expect(lineOf('broken-dns')).toContain(`${server.url}/v1/badges/checks/${idOf('broken-dns')}`)
    expect(lineOf('paused-dns')).toMatch(/paused\s+-\s+-\s+/)
    expect(lineOf('later-dns')).toMatch(/not deployed(\s+-){4}\s+- \(not in the lock file/)
    expect(text.stdout).toContain('Status: 1 passing, 0 degraded, 1 failing, 1 paused, 0 never ran, 1 not deployed.')
    expect(text.stdout).toContain('Badges are served with authentication')

    const json = await monitors(project, ['status', '--format', 'json'], env)
    expect(json.code, json.output).toBe(0)
    const doc = JSON.parse(json.stdout) as StatusDoc
    // the table goes to stderr with a document on stdout
    expect(json.stderr).toContain('CHECK')
    expect(doc).toMatchObject({
      formatVersion: 1,
      ok: true,
      target: { embedded: false },
      summary: { total: 4, passing: 1, failing: 1, paused: 1, neverRan: 0, notDeployed: 1, degraded: 0 },
    })
    const byId = Object.fromEntries(doc.checks.map((c) => [c.logicalId, c]))
    expect(byId['shop-dns']).toMatchObject({
      kind: 'dns-check',
      name: 'Shop DNS',
      checkId: idOf('shop-dns'),
      state: 'passing',
      hasFailures: false,
      hasErrors: false,
      lastRunLocation: 'eu-west-1',
      badgeUrl: `${server.url}/v1/badges/checks/${idOf('shop-dns')}`,
    })
    expect(byId['shop-dns'].shortestRun).toBeGreaterThanOrEqual(0)
    expect(byId['shop-dns'].longestRun).toBeGreaterThanOrEqual(byId['shop-dns'].shortestRun!)
    expect(byId['broken-dns']).toMatchObject({ state: 'failing', hasFailures: true, lastRunLocation: 'eu-west-1' })
    expect(byId['paused-dns']).toMatchObject({ state: 'paused', checkId: idOf('paused-dns'), lastRunLocation: null, shortestRun: null })
    expect(byId['later-dns']).toMatchObject({ state: 'not-deployed', checkId: null, badgeUrl: null, reason: expect.stringContaining('not in the lock file') })

    // the badge URL answers the badge of that state, with the API key
    const badge = await call('GET', new URL(byId['broken-dns'].badgeUrl!).pathname)
    expect(badge.status).toBe(200)
    expect(badge.text).toContain('failing')

    // --target limits the table; --fail-on-failing turns a failing check into exit 1
    const one = await monitors(project, ['status', '--target', 'DnsCheck:shop-dns', '--fail-on-failing', '--format', 'json'], env)
    expect(one.code, one.output).toBe(0)
    expect((JSON.parse(one.stdout) as StatusDoc).checks.map((c) => c.logicalId)).toEqual(['shop-dns'])
    const gate = await monitors(project, ['status', '--fail-on-failing'], env)
    expect(gate.code).toBe(1)
    expect(gate.stdout).toContain('1 failing')

    // a check deleted on the target: not deployed, gone remotely
    expect((await call('DELETE', `/v1/checks/${idOf('shop-dns')}`)).status).toBeLessThan(300)
    const gone = await monitors(project, ['status', '--target', 'dns-check:shop-dns', '--format', 'json'], env)
    expect(JSON.parse(gone.stdout).checks[0]).toMatchObject({
      state: 'not-deployed',
      checkId: idOf('shop-dns'),
      reason: expect.stringContaining('gone from the target'),
    })
  })

  it('shows the public badge URL of each check that has a token, in the table and in JSON; a revoked one is gone', async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A }
    const project = makeProject({
      'checks/readme.check.ts':
        `import { DnsCheck } from 'monitors-as-code'\n` +
        dnsCheck('readme-dns', 'Readme DNS', 'www.shop.test', 'activated: false,') +
        dnsCheck('private-dns', 'Private DNS', 'www.shop.test', 'activated: false,'),
    })
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    const lock = JSON.parse(readFileSync(join(project, 'monitoring.lock.json'), 'utf8')) as { resources: Record<string, { remoteId: string }> }
    const id = lock.resources['dns-check:readme-dns'].remoteId
    const token = await call('POST', `/v1/badges/checks/${id}/token`)
    expect(token.status).toBe(201)
    const url = `${server.url}/badges/${token.json.token}.svg`

    const text = await monitors(project, ['status'], env)
    expect(text.code, text.output).toBe(0)
    expect(text.stdout).toContain(`Public badges (no key, for a README):\n  dns-check:readme-dns "Readme DNS"  ${url}\n`)
    expect(text.stdout).not.toMatch(/Public badges[\s\S]*private-dns/)
    const doc = JSON.parse((await monitors(project, ['status', '--format', 'json'], env)).stdout)
    const byId = Object.fromEntries(doc.checks.map((c: any) => [c.logicalId, c]))
    expect(byId['readme-dns'].publicBadgeUrl).toBe(url)
    expect(byId['private-dns'].publicBadgeUrl).toBeNull()
    // the URL answers without a key
    expect((await fetch(url)).status).toBe(200)

    expect((await call('DELETE', `/v1/badges/checks/${id}/token`)).status).toBe(204)
    const after = JSON.parse((await monitors(project, ['status', '--format', 'json'], env)).stdout)
    expect(after.checks.find((c: any) => c.logicalId === 'readme-dns').publicBadgeUrl).toBeNull()
  })

  it("shows a check group's public badge URL under its line and in JSON", async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A }
    const project = makeProject({
      'checks/grouped.check.ts':
        `import { CheckGroup, DnsCheck } from 'monitors-as-code'\nconst team = new CheckGroup('team', { name: 'Team', locations: ['eu-west-1'] })\n` +
        dnsCheck('grouped-dns', 'Grouped DNS', 'www.shop.test', 'activated: false, group: team,'),
    })
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    const lock = JSON.parse(readFileSync(join(project, 'monitoring.lock.json'), 'utf8')) as { resources: Record<string, { remoteId: string }> }
    const groupId = lock.resources['check-group:team'].remoteId
    const before = JSON.parse((await monitors(project, ['status', '--format', 'json'], env)).stdout)
    expect(before.groups).toEqual([expect.objectContaining({ logicalId: 'team', publicBadgeUrl: null })])
    const token = await call('POST', `/v1/badges/groups/${groupId}/token`)
    expect(token.status, token.text).toBe(201)
    const url = `${server.url}/badges/${token.json.token}.svg`

    const text = await monitors(project, ['status'], env)
    expect(text.code, text.output).toBe(0)
    expect(text.stdout).toMatch(new RegExp(`Group team "Team": [^\\n]*\\n  public badge \\(no key, for a README\\): ${url.replace(/[.?]/g, '\\$&')}\\n`))
    const doc = JSON.parse((await monitors(project, ['status', '--format', 'json'], env)).stdout)
    expect(doc.groups).toEqual([expect.objectContaining({ logicalId: 'team', groupId, publicBadgeUrl: url })])
    expect((await fetch(url)).status).toBe(200)
  })

  it('a check in an active maintenance window reads maintenance, with the window and its end, and --fail-on-failing lets it pass', async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A }
    const check =
      dnsCheck('maint-dns', 'Maintained DNS', 'broken.shop.test', "tags: ['maint-db'],") +
      dnsCheck('other-dns', 'Other DNS', 'broken.shop.test', "tags: ['maint-other'],")
    const project = makeProject({ 'checks/maint.check.ts': `import { DnsCheck, MaintenanceWindow } from 'monitors-as-code'\n${check}` })
    expect((await monitors(project, ['apply', '--yes'], env)).code).toBe(0)
    const lock = JSON.parse(readFileSync(join(project, 'monitoring.lock.json'), 'utf8')) as { resources: Record<string, { remoteId: string }> }
    await runToCompletion([lock.resources['dns-check:maint-dns'].remoteId, lock.resources['dns-check:other-dns'].remoteId])
    const failing = JSON.parse((await monitors(project, ['status', '--format', 'json'], env)).stdout) as StatusDoc
    expect(failing.checks.map((c) => c.state)).toEqual(['failing', 'failing'])

    // a window sharing the tag of one check, active now (started an hour ago, ends in an hour)
    const startsAt = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z')
    const endsAt = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z')
    writeFiles(project, {
      'checks/maint.check.ts':
        `import { DnsCheck, MaintenanceWindow } from 'monitors-as-code'\n${check}` +
        `new MaintenanceWindow('db-upgrade', { name: 'DB upgrade', tags: ['maint-db'], startsAt: '${startsAt}', endsAt: '${endsAt}' })\n`,
    })
    expect((await monitors(project, ['apply', '--yes'], env)).code).toBe(0)
    const windowId = String(
      (JSON.parse(readFileSync(join(project, 'monitoring.lock.json'), 'utf8')) as { resources: Record<string, { remoteId: string }> }).resources[
        'maintenance-window:db-upgrade'
      ].remoteId,
    )

    const text = await monitors(project, ['status'], env)
    expect(text.code, text.output).toBe(0)
    expect(text.stdout.split('\n').find((l) => l.includes('dns-check:maint-dns '))).toMatch(/"Maintained DNS"\s+maintenance\s+eu-west-1/)
    expect(text.stdout.split('\n').find((l) => l.includes('dns-check:other-dns '))).toMatch(/\s+failing\s+/)
    expect(text.stdout).toContain(`dns-check:maint-dns "Maintained DNS"  window "DB upgrade" (id ${windowId}) until ${endsAt.replace('Z', '.000Z')}`)
    expect(text.stdout).toContain('Status: 0 passing, 0 degraded, 1 failing, 0 paused, 1 in maintenance, 0 never ran, 0 not deployed.')

    const json = await monitors(project, ['status', '--format', 'json', '--target', 'dns-check:maint-dns', '--fail-on-failing'], env)
    expect(json.code, json.output).toBe(0)
    const doc = JSON.parse(json.stdout) as StatusDoc & { checks: Array<{ maintenanceWindow: unknown }> }
    expect(doc.summary).toMatchObject({ failing: 0, maintenance: 1 })
    expect(doc.checks[0]).toMatchObject({
      state: 'maintenance',
      hasFailures: true,
      maintenanceWindow: { id: windowId, name: 'DB upgrade', until: endsAt.replace('Z', '.000Z') },
    })
  })

  it('says which failing checks have their alerts held back by a failing check they depend on (dependsOn), until it recovers', async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A }
    dns.set('db.held.test', 'A', { rcode: 'SERVFAIL' })
    const project = makeProject({
      'checks/held.check.ts':
        `import { DnsCheck } from 'monitors-as-code'\nconst db = ${dnsCheck('db-dns', 'Database', 'db.held.test')}` +
        dnsCheck('app-dns', 'Shop app', 'broken.shop.test', 'dependsOn: [db],') +
        dnsCheck('lone-dns', 'Lone', 'broken.shop.test'),
    })
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    const lock = JSON.parse(readFileSync(join(project, 'monitoring.lock.json'), 'utf8')) as { resources: Record<string, { remoteId: string }> }
    const idOf = (logicalId: string) => lock.resources[`dns-check:${logicalId}`].remoteId
    await runToCompletion([idOf('db-dns'), idOf('app-dns'), idOf('lone-dns')])

    const text = await monitors(project, ['status'], env)
    expect(text.code, text.output).toBe(0)
    expect(text.stdout).toContain(
      'Alerts held back (dependsOn: a check it depends on is failing; its runs are recorded, not alerted):\n' +
        '  dns-check:app-dns "Shop app"  depends on dns-check:db-dns "Database", which is failing\n',
    )
    expect(text.stdout).not.toMatch(/dns-check:(db|lone)-dns "[^"]+" {2}depends on/)
    expect(text.stdout).toContain('Status: 0 passing, 0 degraded, 3 failing, 1 with alerts held back (dependsOn), 0 paused, 0 never ran, 0 not deployed.')

    const json = await monitors(project, ['status', '--format', 'json'], env)
    const doc = JSON.parse(json.stdout) as { summary: { alertsHeldBack: number }; checks: Array<{ logicalId: string; alertsSuppressedBy: unknown }> }
    expect(doc.summary.alertsHeldBack).toBe(1)
    expect(Object.fromEntries(doc.checks.map((c) => [c.logicalId, c.alertsSuppressedBy]))).toEqual({
      'db-dns': [],
      'app-dns': [{ checkId: idOf('db-dns'), name: 'Database', resource: 'dns-check:db-dns' }],
      'lone-dns': [],
    })
    // --target one check: its dependency is still named as the project's
    const one = await monitors(project, ['status', '--target', 'dns-check:app-dns'], env)
    expect(one.stdout).toContain('  dns-check:app-dns "Shop app"  depends on dns-check:db-dns "Database", which is failing\n')

    // the dependency recovers: the dependent fails on its own, and alerts again
    dns.set('db.held.test', 'A', { records: [{ type: 'A', data: '192.0.2.10' }] })
    await runToCompletion([idOf('db-dns')])
    const after = await monitors(project, ['status'], env)
    expect(after.stdout).not.toContain('Alerts held back')
    expect(after.stdout).toContain('Status: 1 passing, 0 degraded, 2 failing, 0 paused, 0 never ran, 0 not deployed.')
  })

  it('a bad --target, or CI without a URL, is one clear line and exit 1', async () => {
    const project = makeProject({ 'checks/a.check.ts': `import { DnsCheck } from 'monitors-as-code'\n${dnsCheck('a-dns', 'A', 'www.shop.test')}` })
    const bad = await monitors(project, ['status', '--target', 'dns-check:nope'], { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('"dns-check:nope" names no check in the project')
    expect(bad.output).not.toMatch(STACK_LINE)
    const ci = await monitors(project, ['status', '--format', 'json'], { CI: 'true' })
    expect(ci.code).toBe(1)
    expect(ci.stderr).toContain('No target: CI is set but MONITORING_API_URL is not')
    expect(JSON.parse(ci.stdout)).toMatchObject({ formatVersion: 1, ok: false })
  })

  it('with the embedded server every check never ran, and the output says why', async () => {
    const project = makeProject({ 'checks/a.check.ts': `import { DnsCheck } from 'monitors-as-code'\n${dnsCheck('a-dns', 'A', 'www.shop.test')}` })
    const applied = await monitors(project, ['apply', '--yes', '--local'])
    expect(applied.code, applied.output).toBe(0)
    const status = await monitors(project, ['status', '--local'])
    expect(status.code, status.output).toBe(0)
    expect(status.stdout).toMatch(/dns-check:a-dns "A"\s+never ran/)
    expect(status.stdout).toContain('The embedded server never runs checks')
    const json = await monitors(project, ['status', '--local', '--format', 'json'])
    const doc = JSON.parse(json.stdout) as StatusDoc
    expect(doc.target.embedded).toBe(true)
    expect(doc.checks[0]).toMatchObject({ state: 'never-ran', badgeUrl: null })
  })
})
