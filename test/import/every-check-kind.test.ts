/**
 * Every check kind (src/schema/check-types.ts: DNS, ICMP, API, TCP, URL, browser, multi-step,
 * Playwright suite, heartbeat) takes what every check takes: `group: g`, `alertChannels:
 * [channel]` and `dependsOn: [check]`, and an API check its snippets. A project holding each of
 * them type-checks, validates, plans and applies to the real local server, whose records hold the
 * group's, the channel's, the snippet's and the dependency's ids, and plans again as `No changes`.
 * `monitors import` writes them back as references to constructs, never as the ids of the
 * environment it read: the imported code applied to another account joins that account's group,
 * alerts its channel, runs its snippet and depends on its check. A reference to a construct
 * already in code is imported from the check file that exports it.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { CHECK_KINDS, CONSTRUCT_NAMES, descriptorOf } from '../../src/resources/registry.js'
import { CHECK_REFERENCES, checkKindProblems } from '../../src/resources/kinds/common.js'
import { CHECK_TYPES } from '../../src/schema/enums.js'
import { makeProject, monitors, STACK_LINE } from '../helpers/cli.js'
import { typeErrors } from '../helpers/typecheck.js'

const ACCOUNTS = ['env-a', 'env-b', 'env-c', 'env-d'] as const
type Account = (typeof ACCOUNTS)[number]

let server: LocalServer
const clients = {} as Record<Account, ApiClient>
beforeAll(async () => {
  server = await startLocalServer({ apiKeys: ACCOUNTS.map((accountId) => ({ key: `key-${accountId}`, accountId })) })
  for (const account of ACCOUNTS) clients[account] = new ApiClient({ baseUrl: server.url, apiKey: `key-${account}`, accountId: account })
})
afterAll(async () => {
  for (const client of Object.values(clients)) await client.close()
  await server?.close()
})

const envOf = (account: Account) => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: `key-${account}`, MONITORING_ACCOUNT_ID: account })
const cli = (dir: string, args: string[], account: Account) => monitors(dir, args, envOf(account))
const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8')) as { resources: Record<string, { remoteId: string }> }

/**
 * One check of each kind, in a chain of dependsOn (each depends on the one before, the first on
 * `database`), each in the group `team` and subscribed to the channel `ops`; the API check runs
 * the snippet `sign` before its request and after its response.
 */
const KINDS = [
  { kind: 'dns-check', id: 'dns', props: "request: { query: 'shop.example.test' }" },
  { kind: 'icmp-check', id: 'icmp', props: "request: { hostname: 'edge.example.test' }" },
  {
    kind: 'api-check',
    id: 'api',
    props: "setupSnippetId: sign, tearDownSnippetId: sign, request: { method: 'GET', url: 'https://shop.example.test/api/health' }",
  },
  { kind: 'tcp-check', id: 'tcp', props: "request: { hostname: 'cache.example.test', port: 6379 }" },
  { kind: 'url-check', id: 'url', props: "request: { url: 'https://shop.example.test/' }" },
  { kind: 'browser-check', id: 'browser', props: "code: { entrypoint: './home.spec.ts' }" },
  { kind: 'multistep-check', id: 'multi', props: "code: { entrypoint: './orders.spec.ts' }" },
  { kind: 'playwright-check', id: 'suite', props: "playwrightConfigPath: '../suite/playwright.config.ts'" },
  { kind: 'heartbeat-check', id: 'beat', props: "heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' }" },
] as const

const checksFile = () => {
  const constructs = [
    ...new Set(['CheckGroup', 'PrivateLocation', 'Snippet', 'TcpCheck', 'WebhookAlertChannel', ...KINDS.map((k) => CONSTRUCT_NAMES[k.kind])]),
  ].sort()
  const lines = [
    `import { ${constructs.join(', ')} } from 'monitors-as-code'`,
    '',
    "export const ops = new WebhookAlertChannel('ops', { name: 'Ops', url: 'https://hooks.example.test/ops' })",
    "export const team = new CheckGroup('team', { name: 'Team' })",
    "export const office = new PrivateLocation('office', { name: 'Office', slugName: 'office' })",
    "export const sign = new Snippet('sign', { name: 'Sign', script: \"request.headers['x-sign'] = '1'\" })",
    "export const database = new TcpCheck('database', { name: 'database', activated: false, group: team, alertChannels: [ops], request: { hostname: 'db.example.test', port: 5432 } })",
  ]
  let before = 'database'
  for (const { kind, id, props } of KINDS) {
    lines.push(
      `const ${id} = new ${CONSTRUCT_NAMES[kind]}('${id}', { name: '${id}', activated: false, group: team, alertChannels: [ops], privateLocations: [office], dependsOn: [${before}], ${props} })`,
    )
    before = id
  }
  return `${lines.join('\n')}\n`
}

const PROJECT_FILES = {
  'checks/home.spec.ts': "import { test } from '@playwright/test'\ntest('home', async ({ page }) => {\n  await page.goto('https://shop.example.test/')\n})\n",
  'checks/orders.spec.ts':
    "import { test, expect } from '@playwright/test'\ntest('orders', async ({ request }) => {\n  expect((await request.get('https://shop.example.test/api/orders')).status()).toBe(200)\n})\n",
  'suite/playwright.config.ts':
    "import { defineConfig } from '@playwright/test'\nexport default defineConfig({ testDir: './tests', projects: [{ name: 'desktop' }] })\n",
  'suite/tests/smoke.spec.ts': "import { test } from '@playwright/test'\ntest('smoke', async () => {})\n",
}

/** What the account's service holds: its checks by name, and the ids of the group, the channel and the snippet. */
async function stored(account: Account) {
  const client = clients[account]
  const checks = (await client.get<Array<Record<string, any>>>('/v1/checks?limit=100')).body
  const groups = (await client.get<Array<{ id: number; name: string }>>('/v1/check-groups')).body
  const channels = (await client.get<Array<{ id: number; config: { name?: string } }>>('/v1/alert-channels')).body
  const snippets = (await client.get<Array<{ id: number; name: string }>>('/v1/snippets')).body
  return {
    byName: new Map(checks.map((c) => [c.name as string, c])),
    group: groups.find((g) => g.name === 'Team')!.id,
    channel: channels.find((c) => c.config.name === 'Ops')!.id,
    snippet: snippets.find((s) => s.name === 'Sign')!.id,
  }
}

/** Each check of the account is in its group, subscribed to its channel, depends on its check before; the API check runs its snippet. */
async function expectReferencesOf(account: Account) {
  const { byName, group, channel, snippet } = await stored(account)
  expect(byName.size).toBe(KINDS.length + 1)
  let before = byName.get('database')!
  expect(before).toMatchObject({ groupId: group, alertChannelSubscriptions: [expect.objectContaining({ alertChannelId: channel })] })
  for (const { kind, id } of KINDS) {
    const check = byName.get(id)!
    expect(check.checkType, kind).toBe(descriptorOf(kind).list.where?.equals)
    expect(check, kind).toMatchObject({ groupId: group, dependsOn: [before.id], privateLocations: ['office'] })
    expect(check.alertChannelSubscriptions, kind).toEqual([expect.objectContaining({ alertChannelId: channel, activated: true })])
    before = check
  }
  expect(byName.get('api')).toMatchObject({ setupSnippetId: snippet, tearDownSnippetId: snippet })
  return { group, channel, snippet }
}

describe('every check kind with a group, alert channels, dependsOn and snippets', () => {
  let source: string
  let imported: string

  it('the test covers every check type of the service and every reference every check has', () => {
    expect(new Set(KINDS.map((k) => descriptorOf(k.kind).list.where?.equals))).toEqual(new Set(CHECK_TYPES))
    expect(new Set(KINDS.map((k) => k.kind))).toEqual(CHECK_KINDS)
    // every check kind's descriptor holds the references every check has: none replaces them (an API check's did)
    for (const kind of CHECK_KINDS) {
      for (const shared of CHECK_REFERENCES) expect(descriptorOf(kind).references, `${kind} ${shared.path}`).toContainEqual(shared)
      expect(checkKindProblems(descriptorOf(kind)), kind).toEqual([])
    }
    // the registry refuses a check descriptor whose own lists replace the shared ones, as the API check's references did
    const api = descriptorOf('api-check')
    expect(checkKindProblems({ ...api, references: api.references.filter((r) => r.kind === 'snippet' || r.path === 'triggerIncident.serviceId') })).toEqual([
      'api-check lacks the reference every check has at groupId',
      'api-check lacks the reference every check has at alertChannelSubscriptions[].alertChannelId',
      'api-check lacks the reference every check has at privateLocations[]',
    ])
    expect(checkKindProblems({ ...api, keyedArrays: { 'request.headers': 'key' }, secrets: { self: false, arrays: ['request.headers'] } })).toContain(
      'api-check lacks the secret path alertChannels.slack[].url',
    )
    expect(checkKindProblems(descriptorOf('check-group'))).toEqual([])
  })

  it('type-checks, validates, plans and applies; the stored checks hold the group, channel, snippet and dependency ids; then plans as No changes', async () => {
    source = makeProject({ 'checks/all.check.ts': checksFile(), ...PROJECT_FILES })
    expect(typeErrors(source, [join(source, 'monitoring.config.ts'), join(source, 'checks/all.check.ts')])).toEqual([])
    const valid = await monitors(source, ['validate'])
    expect(valid.code, valid.output).toBe(0)
    expect(valid.stdout).toContain(`Valid: ${KINDS.length + 5} resources`)
    const plan = await cli(source, ['plan'], 'env-a')
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('groupId: check-group:team "Team" (known after apply)')
    const apply = await cli(source, ['apply', '--yes'], 'env-a')
    expect(apply.code, apply.output).toBe(0)
    const ids = await expectReferencesOf('env-a')
    const lock = lockOf(source)
    expect(ids).toEqual({
      group: Number(lock.resources['check-group:team'].remoteId),
      channel: Number(lock.resources['webhook-alert-channel:ops'].remoteId),
      snippet: Number(lock.resources['snippet:sign'].remoteId),
    })
    const again = await cli(source, ['plan', '--detailed-exitcode'], 'env-a')
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toContain('No changes.')
  })

  it('import writes every kind with references to the constructs it writes, never the ids it read; the code type-checks and plans as No changes', async () => {
    imported = makeProject({ 'checks/other.check.ts': 'export {}\n' })
    const result = await cli(imported, ['import', '--all', '--out', 'checks/imported.check.ts'], 'env-a')
    expect(result.code, result.output).toBe(0)
    const code = readFileSync(join(imported, 'checks/imported.check.ts'), 'utf8')
    expect(code).toMatch(/const team = new CheckGroup\('team'/)
    expect(code).toMatch(/const ops = new WebhookAlertChannel\('ops'/)
    expect(code).toMatch(/const sign = new Snippet\('sign'/)
    expect(code).toMatch(/const office = new PrivateLocation\('office'/)
    for (const { kind, id } of KINDS) {
      const construct = new RegExp(`new ${CONSTRUCT_NAMES[kind]}\\('${id}', \\{[\\s\\S]*?\\n\\}\\)`).exec(code)?.[0]
      expect(construct, `${kind} in\n${code}`).toBeDefined()
      expect(construct, kind).toContain('group: team')
      expect(construct, kind).toMatch(/alertChannels: \[ops\]/)
      expect(construct, kind).toMatch(/dependsOn: \[\w+\]/)
      expect(construct, kind).toMatch(/privateLocations: \[office\]/)
    }
    expect(code).toMatch(/setupSnippetId: sign,[\s\S]*tearDownSnippetId: sign/)
    // no id of the service read: another environment has other ones
    expect(code).not.toMatch(/groupId|alertChannelSubscriptions|alertChannelId|SnippetId: \d/)
    expect(typeErrors(imported, [join(imported, 'checks/imported.check.ts')])).toEqual([])
    const plan = await cli(imported, ['plan', '--detailed-exitcode'], 'env-a')
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('No changes.')
  })

  it("the imported code applied to another account joins that account's group, alerts its channel, runs its snippet and depends on its checks; then plans as No changes", async () => {
    const other = mkdtempSync(join(tmpdir(), 'monitors-other-env-'))
    cpSync(imported, other, { recursive: true, verbatimSymlinks: true })
    rmSync(join(other, 'monitoring.lock.json'))
    rmSync(join(other, '.monitors'), { recursive: true, force: true })
    const apply = await cli(other, ['apply', '--yes'], 'env-b')
    expect(apply.code, apply.output).toBe(0)
    expect(apply.output).toMatch(/Apply complete: 14 created, 0 updated, 0 deleted\./)
    const there = await expectReferencesOf('env-b')
    const here = await stored('env-a')
    // other ids than the account read: the imported code named none of those
    expect(there.group).not.toBe(here.group)
    expect(there.channel).not.toBe(here.channel)
    expect(there.snippet).not.toBe(here.snippet)
    const plan = await cli(other, ['plan', '--detailed-exitcode'], 'env-b')
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('No changes.')
    // and the first account is as it was
    expect((await cli(imported, ['plan', '--detailed-exitcode'], 'env-a')).code).toBe(0)
  })

  it('a reference to a construct already in code is imported from the check file that exports it; one not exported stops the import, naming what to do', async () => {
    const dir = makeProject({
      'checks/shared.check.ts': `import { CheckGroup, EmailAlertChannel, Snippet, TcpCheck, WebhookAlertChannel } from 'monitors-as-code'
export const platform = new CheckGroup('platform', { name: 'Platform' })
export const oncall = new EmailAlertChannel('oncall', { address: 'oncall@example.test' })
export default new Snippet('auth', { name: 'Auth', script: "request.headers['x-auth'] = '1'" })
export const pagerHook = new WebhookAlertChannel('pager-hook', { name: 'Pager hook', url: 'https://hooks.example.test/pager' })
export const db = new TcpCheck('db', { name: 'DB', activated: false, request: { hostname: 'db.example.test', port: 5432 } })
const hidden = new CheckGroup('hidden', { name: 'Hidden' })
`,
    })
    expect((await cli(dir, ['apply', '--yes'], 'env-c')).code).toBe(0)
    const lock = lockOf(dir)
    const id = (key: string) => Number(lock.resources[key].remoteId)
    const client = clients['env-c']
    const created = await client.post<{ id: string }>('/v1/checks/api', {
      name: 'Orders',
      activated: false,
      groupId: id('check-group:platform'),
      setupSnippetId: id('snippet:auth'),
      // a subscription that is not active: written by construct, in alertChannelSubscriptions
      alertChannelSubscriptions: [
        { alertChannelId: id('email-alert-channel:oncall'), activated: true },
        { alertChannelId: id('webhook-alert-channel:pager-hook'), activated: false },
      ],
      dependsOn: [lock.resources['tcp-check:db'].remoteId],
      request: { method: 'GET', url: 'https://shop.example.test/api/orders' },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    // a check in a group that checks/shared.check.ts makes but does not export
    await client.post('/v1/checks/dns', { name: 'Hidden DNS', activated: false, groupId: id('check-group:hidden'), request: { query: 'hidden.example.test' } })

    const refused = await cli(dir, ['import', '--all', '--out', 'checks/imported.check.ts'], 'env-c')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('dns-check "Hidden DNS" refers to CheckGroup "hidden" (id ')
    expect(refused.stderr).toContain('as its group, which checks/shared.check.ts declares without exporting it; nothing was imported. Export it')
    expect(refused.output).not.toMatch(STACK_LINE)
    expect(existsSync(join(dir, 'checks/imported.check.ts'))).toBe(false)
    expect(Object.keys(lockOf(dir).resources)).toHaveLength(6)

    const one = await cli(dir, ['import', `api-check:${created.body.id}`, '--out', 'checks/imported.check.ts'], 'env-c')
    expect(one.code, one.output).toBe(0)
    const code = readFileSync(join(dir, 'checks/imported.check.ts'), 'utf8')
    expect(code).toContain("import auth, { db, oncall, pagerHook, platform } from './shared.check.js'")
    expect(code).toContain('group: platform')
    expect(code).toContain('alertChannels: [oncall]')
    expect(code).toContain('alertChannelSubscriptions: [{ alertChannelId: pagerHook, activated: false }]')
    expect(code).toContain('dependsOn: [db]')
    expect(code).toContain('setupSnippetId: auth')
    expect(code).not.toMatch(/groupId|alertChannelId: \d|SnippetId: \d/)
    expect(code).not.toContain('new CheckGroup')
    expect(typeErrors(dir, [join(dir, 'checks/imported.check.ts')])).toEqual([])
    const plan = await cli(dir, ['plan', '--detailed-exitcode'], 'env-c')
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('No changes.')
  })

  it('a reference to nothing the service lists (a channel deleted, an id made up) stops the import, naming the check and the id', async () => {
    const dir = makeProject({ 'checks/other.check.ts': 'export {}\n' })
    // (the service refuses a groupId naming no group of the account, and a group with checks cannot be deleted)
    const refusedGroup = await clients['env-d']
      .post('/v1/checks/dns', { name: 'Dangling', groupId: 987654, request: { query: 'dangling.example.test' } })
      .catch((e: Error) => e)
    expect(String(refusedGroup)).toContain('groupId: refers to a check group that does not exist')
    const created = await clients['env-d'].post('/v1/checks/dns', {
      name: 'Dangling',
      activated: false,
      alertChannelSubscriptions: [{ alertChannelId: 987654, activated: true }],
      request: { query: 'dangling.example.test' },
    })
    expect(created.status).toBe(201)
    const refused = await cli(dir, ['import', '--all'], 'env-d')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(
      'dns-check "Dangling" refers to the alert channel 987654 in its alertChannels, which the service does not list and the lock does not know',
    )
    expect(refused.stderr).toContain('nothing was imported')
    expect(refused.output).not.toMatch(STACK_LINE)
    expect(existsSync(join(dir, 'imported.check.ts'))).toBe(false)
  })
})
