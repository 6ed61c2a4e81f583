/**
 * What a new team trips on in its first hour with monitors, through the built CLI against the
 * real local server: destroy, refusals, saved plans, duplicates, what a plan shows, and the
 * identity of a target reached through two servers of one cluster.
 */
import { mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { config, makeProject, monitors, STACK_LINE, writeFiles } from '../helpers/cli.js'

const ACCOUNTS = ['targeted', 'protect', 'inCode', 'saved', 'dupvar', 'broken', 'shown', 'tags', 'cluster', 'twoProjects']
let dir: string
let server: LocalServer
/** A second server on the same database: another URL of the same service. */
let sibling: LocalServer
const clients: Record<string, ApiClient> = {}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-first-hour-'))
  const options = {
    dbPath: join(dir, 'shared.db'),
    apiKeys: ACCOUNTS.map((a) => ({ key: `key-${a}`, accountId: a })),
    rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
  }
  server = await startLocalServer(options)
  sibling = await startLocalServer(options)
  for (const a of ACCOUNTS) clients[a] = new ApiClient({ baseUrl: server.url, apiKey: `key-${a}`, accountId: a })
})
afterAll(async () => {
  for (const c of Object.values(clients)) await c.close()
  await server?.close()
  await sibling?.close()
  rmSync(dir, { recursive: true, force: true })
})

const env = (account: string, url = server.url) => ({ MONITORING_API_URL: url, MONITORING_API_KEY: `key-${account}`, MONITORING_ACCOUNT_ID: account })
const list = async (account: string, path: string) => {
  const body = (await clients[account].get<unknown>(path, { limit: 100 })).body
  return (Array.isArray(body) ? body : (body as { entries: unknown[] }).entries) as Array<Record<string, unknown>>
}
const lockOf = (project: string) => JSON.parse(readFileSync(join(project, 'monitoring.lock.json'), 'utf8'))

describe('destroy', () => {
  it('--target of a service a page still uses is refused up front, before any DELETE, naming what to add to --target', async () => {
    const project = makeProject({
      'status.check.ts': `import { StatusPage, StatusPageService } from 'monitors-as-code'
const checkout = new StatusPageService('checkout', { name: 'Checkout' })
new StatusPage('shop', { name: 'Shop', url: 'first-hour-shop', cards: [{ name: 'Main', services: [checkout] }] })
`,
    })
    expect((await monitors(project, ['apply', '--yes'], env('targeted'))).code).toBe(0)
    const refused = await monitors(project, ['destroy', '--yes', '--target', 'status-page-service:checkout'], env('targeted'))
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('the service refuses to delete while it is in use; nothing was changed')
    expect(refused.stderr).toMatch(
      /status-page-service checkout \(id [^)]+\) is still used by status-page shop "Shop" \(url first-hour-shop\) \(not in the --target selection: it stays\)/,
    )
    expect(refused.stderr).toContain('Add what uses it to the --target list')
    // no DELETE was sent: no operation line, no 409, and the plan was shown first
    expect(refused.output).not.toMatch(/\b409\b|Conflict/)
    expect(refused.output).not.toContain('Destroy failed')
    expect(refused.stdout).toContain('- status-page-service checkout')
    expect(await list('targeted', '/v1/status-pages/services')).toHaveLength(1)

    const both = await monitors(project, ['destroy', '--yes', '--target', 'status-page-service:checkout', '--target', 'status-page:shop'], env('targeted'))
    expect(both.code, both.output).toBe(0)
    expect(await list('targeted', '/v1/status-pages/services')).toHaveLength(0)
    expect(await list('targeted', '/v1/status-pages')).toHaveLength(0)
  })

  it('a protected resource still in the code is named with its file, never "no longer in the code", and the plan is printed', async () => {
    const project = makeProject({
      'checks/keep.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('keep-dns', { name: 'Keep', request: { query: 'keep.example.com' }, protect: true })\n`,
    })
    expect((await monitors(project, ['apply', '--yes'], env('inCode'))).code).toBe(0)
    const refused = await monitors(project, ['destroy', '--yes'], env('inCode'))
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('dns-check keep-dns (checks/keep.check.ts): it would be deleted')
    expect(refused.stderr).not.toContain('no longer in the code')
    expect(refused.stdout).toContain('- dns-check keep-dns')
    expect(await list('inCode', '/v1/checks')).toHaveLength(1)
  })

  it('needs only the config, the target and the lock: a check file that no longer loads or validates is a warning', async () => {
    const project = makeProject({
      'checks/a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a-dns', { name: 'A', request: { query: 'a.example.com' } })\n`,
      'checks/b.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('b-dns', { name: 'B', request: { query: 'b.example.com' } })\n`,
    })
    expect((await monitors(project, ['apply', '--yes'], env('broken'))).code).toBe(0)
    expect(await list('broken', '/v1/checks')).toHaveLength(2)
    writeFiles(project, {
      'checks/a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a-dns', { name: 'A', request: { query: 'a.example.com' },,\n`,
      'checks/b.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('b-dns', { name: 'B', request: { query: 'b.example.com' }, frequency: 3 })\n`,
    })
    const destroyed = await monitors(project, ['destroy', '--yes'], env('broken'))
    expect(destroyed.code, destroyed.output).toBe(0)
    expect(destroyed.stderr).toMatch(/⚠ checks\/a\.check\.ts:\d+:\d+ › syntax error/)
    expect(destroyed.stderr).toContain('⚠ checks/b.check.ts › DnsCheck "b-dns" › frequency: must be one of')
    expect(destroyed.stderr).toContain('2 problems in the check files: destroy goes on, by the lock file')
    expect(destroyed.stdout).toContain('Destroy complete: 2 deleted.')
    expect(destroyed.output).not.toMatch(STACK_LINE)
    expect(await list('broken', '/v1/checks')).toHaveLength(0)

    // and with every check file gone
    expect((await monitors(project, ['plan'], env('broken'))).code).toBe(1)
    unlinkSync(join(project, 'checks/a.check.ts'))
    unlinkSync(join(project, 'checks/b.check.ts'))
    const empty = await monitors(project, ['destroy', '--yes'], env('broken'))
    expect(empty.code, empty.output).toBe(0)
    expect(empty.stdout).toContain('The lock file records nothing to destroy.')
  })
})

describe('a refused plan', () => {
  it('prints the plan in text before the protect refusal (plan, apply)', async () => {
    const project = makeProject({
      'checks/p.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('p-dns', { name: 'P', request: { query: 'p.example.com' }, protect: true })\nnew DnsCheck('q-dns', { name: 'Q', request: { query: 'q.example.com' } })\n`,
    })
    expect((await monitors(project, ['apply', '--yes'], env('protect'))).code).toBe(0)
    writeFiles(project, {
      'checks/p.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('q-dns', { name: 'Q2', request: { query: 'q.example.com' } })\n`,
    })
    for (const args of [['plan'], ['apply', '--yes']]) {
      const refused = await monitors(project, args, env('protect'))
      expect(refused.code, args.join(' ')).toBe(1)
      expect(refused.stdout).toContain('~ dns-check q-dns')
      expect(refused.stdout).toContain('- dns-check p-dns')
      expect(refused.stdout).toContain('Plan: 0 to create, 1 to update, 1 to delete.')
      expect(refused.stderr).toContain('This plan would delete a protected resource')
      expect(refused.stderr).toContain('dns-check p-dns: it would be deleted (it is no longer in the code)')
    }
    expect((await list('protect', '/v1/checks')).map((c) => c.name).sort()).toEqual(['P', 'Q'])
  })
})

describe('a saved plan', () => {
  it('applied a second time says it was already applied (exit 0), not that something changed outside monitors', async () => {
    const project = makeProject({
      'checks/s.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('s-dns', { name: 'S', request: { query: 's.example.com' } })\n`,
    })
    expect((await monitors(project, ['apply', '--yes'], env('saved'))).code).toBe(0)
    writeFiles(project, {
      'checks/s.check.ts': `import { DnsCheck, EnvVar } from 'monitors-as-code'\nnew DnsCheck('s-dns', { name: 'S', request: { query: 's.example.com' }, frequency: 5 })\nnew EnvVar('S_KEY', { value: 'v' })\n`,
    })
    expect((await monitors(project, ['plan', '--out', 'plan.json'], env('saved'))).code).toBe(0)
    const first = await monitors(project, ['apply', 'plan.json'], env('saved'))
    expect(first.code, first.output).toBe(0)
    const lockAfter = readFileSync(join(project, 'monitoring.lock.json'), 'utf8')

    const again = await monitors(project, ['apply', 'plan.json'], env('saved'))
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toContain('The saved plan plan.json has already been applied')
    expect(again.output).not.toContain('outside monitors')
    expect(readFileSync(join(project, 'monitoring.lock.json'), 'utf8')).toBe(lockAfter)

    // changed by an apply since (the code too): still stale, but an apply is named, not "outside monitors"
    expect((await monitors(project, ['plan', '--out', 'plan2.json'], env('saved'))).code).toBe(0)
    writeFiles(project, {
      'checks/s.check.ts': `import { DnsCheck, EnvVar } from 'monitors-as-code'\nnew DnsCheck('s-dns', { name: 'S', request: { query: 's.example.com' }, frequency: 15 })\nnew EnvVar('S_KEY', { value: 'v' })\n`,
    })
    expect((await monitors(project, ['plan', '--out', 'plan2.json'], env('saved'))).code).toBe(0)
    writeFiles(project, {
      'checks/s.check.ts': `import { DnsCheck, EnvVar } from 'monitors-as-code'\nnew DnsCheck('s-dns', { name: 'S', request: { query: 's.example.com' }, frequency: 30 })\nnew EnvVar('S_KEY', { value: 'v' })\n`,
    })
    expect((await monitors(project, ['apply', '--yes'], env('saved'))).code).toBe(0)
    const stale = await monitors(project, ['apply', 'plan2.json'], env('saved'))
    expect(stale.code).toBe(1)
    expect(stale.stderr).toContain('is stale')
    expect(stale.stderr).toMatch(/remote dns-check:s-dns \(id [^)]+\) was changed by an apply since \(the lock records it\)/)
    expect(stale.stderr).not.toContain('outside monitors')
  })
})

describe('a duplicate variable', () => {
  it('never suggests --allow-duplicates, which cannot create a key twice', async () => {
    const project = makeProject({ 'vars.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('DUP_TOKEN', { value: 'v1' })\n` })
    expect((await monitors(project, ['apply', '--yes'], env('dupvar'))).code).toBe(0)
    // the lock update was lost
    rmSync(join(project, 'monitoring.lock.json'))
    const plan = await monitors(project, ['plan'], env('dupvar'))
    expect(plan.code, plan.output).toBe(1)
    expect(plan.stdout).toContain('duplicate')
    expect(plan.stdout).toContain('--adopt-existing')
    expect(plan.stdout).not.toContain('--allow-duplicates')
    expect(plan.output).not.toContain('--allow-duplicates')
    expect(plan.output).not.toMatch(STACK_LINE)
    // never counted as a create, never "changes" (2) for a plan apply refuses: the error, named as a problem of the code
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update, 0 to delete. 1 refused: already exists (duplicate).')
    const named = 'vars.check.ts › EnvVar "DUP_TOKEN" › key: already exists remotely as id DUP_TOKEN'
    const detailed = await monitors(project, ['plan', '--detailed-exitcode'], env('dupvar'))
    expect(detailed.code, detailed.output).toBe(1)
    expect(detailed.stderr).toContain(named)
    const json = await monitors(project, ['plan', '--detailed-exitcode', '--format', 'json'], env('dupvar'))
    expect(json.code).toBe(1)
    const doc = JSON.parse(json.stdout)
    expect(doc).toMatchObject({ ok: false, summary: { create: 0, duplicate: 1 } })
    expect(doc.refused).toContain(named)
    const md = await monitors(project, ['plan', '--detailed-exitcode', '--format', 'markdown'], env('dupvar'))
    expect(md.code).toBe(1)
    expect(md.stdout).toContain('**This plan is refused; nothing will be applied.**')
    expect(md.stdout).toContain('| Refused (duplicate) |')
    const refused = await monitors(project, ['apply', '--yes'], env('dupvar'))
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('--adopt-existing')
    expect(refused.stderr).not.toContain('--allow-duplicates')
    expect(refused.stdout).toContain('+ variable DUP_TOKEN')
    const adopted = await monitors(project, ['apply', '--yes', '--adopt-existing'], env('dupvar'))
    expect(adopted.code, adopted.output).toBe(0)
  })
})

describe('a second project in the same account', () => {
  it("creates and owns its own email channel, even to the same address; --adopt-existing never takes the other project's", async () => {
    const channel = `import { EmailAlertChannel } from 'monitors-as-code'\nnew EmailAlertChannel('oncall', { address: 'oncall@example.com' })\n`
    const first = makeProject({ 'alerts.check.ts': channel })
    const second = makeProject({ 'monitoring.config.ts': config('second'), 'alerts.check.ts': channel })
    expect((await monitors(first, ['apply', '--yes'], env('twoProjects'))).code).toBe(0)
    const [theirs] = await list('twoProjects', '/v1/alert-channels')

    const plan = await monitors(second, ['plan', '--detailed-exitcode'], env('twoProjects'))
    expect(plan.code, plan.output).toBe(2)
    expect(plan.stdout).toContain('+ email-alert-channel oncall (EmailAlertChannel in alerts.check.ts)\n')
    expect(plan.stdout).not.toContain('(duplicate)')
    expect(plan.stdout).toContain(`an unmanaged one alike exists as id ${theirs.id} "oncall@example.com" (another project's`)
    expect(plan.stdout).toContain('Plan: 1 to create, 0 to update, 0 to delete.')
    // --adopt-existing does not take it over either: a channel of its own is created
    const applied = await monitors(second, ['apply', '--yes', '--adopt-existing'], env('twoProjects'))
    expect(applied.code, applied.output).toBe(0)
    expect(applied.stdout).toMatch(/\+ email-alert-channel oncall created/)
    const channels = await list('twoProjects', '/v1/alert-channels')
    expect(channels).toHaveLength(2)
    expect(lockOf(second).resources['email-alert-channel:oncall'].remoteId).not.toBe(String(theirs.id))
    expect(channels.find((c) => c.id === theirs.id)).toEqual(theirs)
    // each project plans no change of its own, and never the other's channel
    for (const project of [first, second]) expect((await monitors(project, ['plan', '--detailed-exitcode'], env('twoProjects'))).code).toBe(0)
  })

  it("a check named as the other project's is refused saying it may belong to another project, and adopting it says it takes it over", async () => {
    const check = `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('shop-dns', { name: 'Shop DNS', request: { query: 'shop.example.com' } })\n`
    const first = makeProject({ 'shop.check.ts': check })
    const second = makeProject({ 'monitoring.config.ts': config('second'), 'shop.check.ts': check })
    expect((await monitors(first, ['apply', '--yes'], env('twoProjects'))).code).toBe(0)
    const refused = await monitors(second, ['plan'], env('twoProjects'))
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain('or it belongs to another project')
    expect(refused.stderr).toContain('shop.check.ts › DnsCheck "shop-dns" › name: already exists remotely')
    expect(refused.stderr).toContain('If another project manages it, adopting takes it over')
    const adopting = await monitors(second, ['plan', '--adopt-existing'], env('twoProjects'))
    expect(adopting.code, adopting.output).toBe(0)
    expect(adopting.stdout).toContain('if another project manages it, this takes it over')
  })
})

describe('what a plan shows', () => {
  it('a create shows no field the user never wrote: an ICMP check\'s script, a heartbeat check\'s run settings; an added assertion no regex: ""', async () => {
    const project = makeProject({
      'monitoring.config.ts': `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'shown', defaults: { locations: ['eu-west-1', 'us-east-1'], frequency: 10 } })\n`,
      'checks/c.check.ts': `import { ApiCheck, HeartbeatCheck, IcmpCheck } from 'monitors-as-code'
new IcmpCheck('edge-ping', { name: 'Edge ping', request: { hostname: 'edge.example.com' } })
new HeartbeatCheck('nightly', { name: 'Nightly job', heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' } })
new ApiCheck('api', { name: 'API', request: { method: 'GET', url: 'https://api.example.com', assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] } })
`,
    })
    const plan = await monitors(project, ['plan'], env('shown'))
    expect(plan.code, plan.output).toBe(0)
    const section = (title: string) => {
      const at = plan.stdout.indexOf(title)
      const end = plan.stdout.indexOf('\n\n', at)
      return plan.stdout.slice(at, end)
    }
    expect(section('+ icmp-check edge-ping')).not.toContain('script')
    expect(section('+ icmp-check edge-ping')).toContain('+ locations: ["eu-west-1", "us-east-1"]')
    expect(section('+ heartbeat-check nightly')).not.toContain('locations')
    expect(section('+ heartbeat-check nightly')).not.toContain('frequency')
    expect(section('+ heartbeat-check nightly')).toContain('+ heartbeat {')
    // --verbose still shows every field
    const verbose = await monitors(project, ['plan', '--verbose'], env('shown'))
    expect(verbose.stdout).toContain('+ script: ""')

    expect((await monitors(project, ['apply', '--yes'], env('shown'))).code).toBe(0)
    writeFiles(project, {
      'checks/c.check.ts': `import { ApiCheck, HeartbeatCheck, IcmpCheck } from 'monitors-as-code'
new IcmpCheck('edge-ping', { name: 'Edge ping', request: { hostname: 'edge.example.com' } })
new HeartbeatCheck('nightly', { name: 'Nightly job', heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' } })
new ApiCheck('api', { name: 'API', request: { method: 'GET', url: 'https://api.example.com', assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }, { source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'ok' }] } })
`,
    })
    const update = await monitors(project, ['plan'], env('shown'))
    expect(update.code, update.output).toBe(0)
    expect(update.stdout).toContain('+ request.assertions[1] {')
    expect(update.stdout).toContain('+   target: "ok"')
    expect(update.stdout).not.toContain('regex')
    expect(update.stdout).not.toContain('property: ""')
  })

  it("tags read as they are sent, in the code's order, not sorted", async () => {
    const tagged = (tags: string[]) => ({
      'checks/t.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('t-dns', { name: 'T', request: { query: 't.example.com' }, tags: ${JSON.stringify(tags)} })\n`,
    })
    const project = makeProject(tagged(['zeta', 'alpha']))
    expect((await monitors(project, ['apply', '--yes'], env('tags'))).code).toBe(0)
    writeFiles(project, tagged(['zeta', 'alpha', 'beta']))
    const plan = await monitors(project, ['plan'], env('tags'))
    expect(plan.stdout).toContain('~ tags: ["zeta", "alpha"] → ["zeta", "alpha", "beta"]')
    const json = JSON.parse((await monitors(project, ['plan', '--format', 'json'], env('tags'))).stdout)
    expect(json.changes[0].fieldDiffs).toEqual([{ path: 'tags', old: ['zeta', 'alpha'], new: ['zeta', 'alpha', 'beta'] }])
    expect((await monitors(project, ['apply', '--yes'], env('tags'))).code).toBe(0)
    expect((await list('tags', '/v1/checks'))[0].tags).toEqual(['zeta', 'alpha', 'beta'])
    // another order alone is no change
    writeFiles(project, tagged(['beta', 'zeta', 'alpha']))
    expect((await monitors(project, ['plan'], env('tags'))).stdout).toContain('No changes.')
  })
})

describe('one service, two URLs (servers of a cluster sharing a database)', () => {
  const check = `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('c-dns', { name: 'C', request: { query: 'c.example.com' } })\n`

  it('a lock written through one server is refused through the other, saying how to name the service', async () => {
    const project = makeProject({ 'c.check.ts': check })
    expect((await monitors(project, ['apply', '--yes'], env('cluster'))).code).toBe(0)
    const other = await monitors(project, ['plan'], env('cluster', sibling.url))
    expect(other.code).toBe(1)
    expect(other.stderr).toContain(`belongs to ${server.url} (account cluster), but the target is ${sibling.url} (account cluster)`)
    expect(other.stderr).toContain('set MONITORING_TARGET_ID')
    rmSync(project, { recursive: true, force: true })
  })

  it('with MONITORING_TARGET_ID (or api.targetId) the lock names the service, and either server is accepted', async () => {
    const project = makeProject({ 'c.check.ts': check.replace("'c-dns'", "'n-dns'").replace("name: 'C'", "name: 'N'") })
    const named = (url: string) => ({ ...env('cluster', url), MONITORING_TARGET_ID: 'shop-production' })
    // a lock written before the name: accepted through its own URL, and named at the next write
    expect((await monitors(project, ['apply', '--yes'], env('cluster'))).code).toBe(0)
    expect(lockOf(project).target.id).toBe(server.url)
    writeFiles(project, { 'c.check.ts': check.replace("'c-dns'", "'n-dns'").replace("name: 'C'", "name: 'N2'") })
    const renamed = await monitors(project, ['apply', '--yes'], named(server.url))
    expect(renamed.code, renamed.output).toBe(0)
    expect(lockOf(project).target).toMatchObject({ id: 'shop-production', accountId: 'cluster' })

    const through = await monitors(project, ['plan'], named(sibling.url))
    expect(through.code, through.output).toBe(0)
    expect(through.stdout).toContain('No changes.')
    // the config's api.targetId does the same
    writeFiles(project, {
      'monitoring.config.ts': `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'e2e', api: { targetId: 'shop-production' } })\n`,
    })
    expect((await monitors(project, ['plan'], env('cluster', sibling.url))).stdout).toContain('No changes.')
    // another name is another service
    const wrong = await monitors(project, ['plan', '--target-id', 'staging'], env('cluster', sibling.url))
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain('belongs to target "shop-production"')
  })
})
