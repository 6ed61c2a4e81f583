/**
 * Projects written for the hosted service's CLI (test/fixtures/checkly/, one per construct
 * family and a mixed one of several files, in the style of that CLI's documentation), run
 * unchanged against the real local server: each validates, applies, plans `No changes.`, and is
 * imported back (a lost lock recovered with `import --adopt`; the mixed one also written anew by
 * `import --all` into an empty project). What the server holds is checked where the hosted
 * meaning differs from monitors' own defaults.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { monitors, repo, STACK_LINE } from '../helpers/cli.js'

const FIXTURES = join(repo, 'test', 'fixtures', 'checkly')
const ACCOUNTS = ['api', 'monitors', 'browser', 'groups', 'alerts', 'mixed', 'api-groups', 'tested']

let server: LocalServer
let work: string
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'monitors-checkly-'))
  server = await startLocalServer({ apiKeys: ACCOUNTS.map((name) => ({ key: `key-${name}`, accountId: name })) })
})
afterAll(async () => {
  await server?.close()
  rmSync(work, { recursive: true, force: true })
})

const env = (account: string) => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: `key-${account}`, MONITORING_ACCOUNT_ID: account })
const cli = (dir: string, account: string, args: string[]) => monitors(dir, args, env(account))

/** A copy of a fixture with monitors-as-code installed, as a team's checkout has it (`checkly` itself is not installed). */
function copyOf(name: string): string {
  const dir = mkdtempSync(join(work, `${name}-`))
  cpSync(join(FIXTURES, name), dir, { recursive: true })
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(repo, join(dir, 'node_modules', 'monitors-as-code'), 'dir')
  return dir
}

async function get(account: string, path: string): Promise<any> {
  const answer = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer key-${account}`, 'x-service-account': account } })
  expect(answer.status, path).toBe(200)
  return answer.json()
}
const checksOf = async (account: string) => (await get(account, '/v1/checks?limit=100')) as Array<Record<string, any>>
const byName = (records: Array<Record<string, any>>, name: string) => {
  const found = records.find((r) => r.name === name)
  if (!found) throw new Error(`no record named ${name}: ${records.map((r) => r.name).join(', ')}`)
  return found
}

/** Validate, apply, plan (No changes), then import back: the lock lost, `import --adopt` finds every resource again. */
async function roundTrip(name: string, account: string, resources: number): Promise<string> {
  const dir = copyOf(name)
  const valid = await cli(dir, account, ['validate'])
  expect(valid.code, valid.output).toBe(0)
  expect(valid.output).toContain(`Valid: ${resources} resources`)
  const apply = await cli(dir, account, ['apply', '--yes'])
  expect(apply.code, apply.output).toBe(0)
  expect(apply.output).toContain(`Apply complete: ${resources} created, 0 updated, 0 deleted.`)
  // the lock of a checkly project: monitoring.lock.json beside checkly.config.ts
  expect(existsSync(join(dir, 'monitoring.lock.json'))).toBe(true)
  const plan = await cli(dir, account, ['plan', '--detailed-exitcode'])
  expect(plan.output).toContain('No changes.')
  expect(plan.code, plan.output).toBe(0)

  rmSync(join(dir, 'monitoring.lock.json'))
  const adopt = await cli(dir, account, ['import', '--adopt'])
  expect(adopt.code, adopt.output).toBe(0)
  expect(adopt.output).toContain(`Adopted ${resources} remote resources into the lock`)
  // an adopted secret has no fingerprint in the lock: it is sent once more; nothing is created or deleted
  const reapply = await cli(dir, account, ['apply', '--yes'])
  expect(reapply.code, reapply.output).toBe(0)
  expect(reapply.output).toMatch(/Apply complete: 0 created, \d+ updated, 0 deleted\.|No changes\./)
  const again = await cli(dir, account, ['plan', '--detailed-exitcode'])
  expect(again.output).toContain('No changes.')
  expect(again.code, again.output).toBe(0)
  for (const run of [valid, apply, plan, adopt, reapply, again]) expect(run.output).not.toMatch(STACK_LINE)
  return dir
}

describe('a project written for the hosted CLI runs unchanged', () => {
  it('API checks: the assertion builders, sub-minute frequencies, retry strategies, scripts and basic auth', async () => {
    await roundTrip('api', 'api', 5)
    const checks = await checksOf('api')
    expect(byName(checks, 'Hello API')).toMatchObject({
      checkType: 'API',
      frequency: 10,
      locations: ['us-east-1', 'eu-west-1'],
      tags: ['api'],
      runtimeId: '2024.09',
      doubleCheck: true,
    })
    expect(byName(checks, 'User API Check')).toMatchObject({
      frequency: 5,
      tags: ['users'],
      degradedResponseTime: 2000,
      maxResponseTime: 5000,
      retryStrategy: { type: 'LINEAR', maxRetries: 3, baseBackoffSeconds: 10, sameRegion: false },
      request: { method: 'POST', bodyType: 'JSON', queryParameters: [expect.objectContaining({ key: 'version', value: 'v1' })] },
    })
    expect(byName(checks, 'User API Check').request.assertions.map((a: any) => `${a.source} ${a.comparison} ${a.property} ${a.target}`)).toEqual([
      'STATUS_CODE EQUALS  201',
      'JSON_BODY NOT_NULL $.id ',
      'HEADERS CONTAINS content-type application/json',
      'TEXT_BODY NOT_CONTAINS  error',
      'RESPONSE_TIME LESS_THAN  1000',
    ])
    expect(byName(checks, 'Not Found Check')).toMatchObject({
      shouldFail: true,
      doubleCheck: false,
      retryStrategy: { type: 'NO_RETRIES' },
      request: { method: 'GET' },
    })
    expect(byName(checks, 'Health every 30 seconds')).toMatchObject({ frequency: 0, frequencyOffset: 30, retryStrategy: { onlyOn: ['NETWORK_ERROR'] } })
    expect(byName(checks, 'Orders API')).toMatchObject({
      localSetupScript: expect.stringContaining('X-Request-Id'),
      request: { basicAuth: { username: 'monitor' } },
    })
  })

  it('monitors: heartbeat, DNS, TCP, URL and ICMP, none retrying unless told', async () => {
    await roundTrip('monitors', 'monitors', 5)
    const checks = await checksOf('monitors')
    expect(checks.map((c) => c.checkType).sort()).toEqual(['DNS', 'HEARTBEAT', 'ICMP', 'TCP', 'URL'])
    for (const check of checks) expect(check.doubleCheck, check.name).toBe(false)
    expect(byName(checks, 'Nightly backup')).toMatchObject({ heartbeat: { period: 1, periodUnit: 'days', grace: 30, graceUnit: 'minutes' }, tags: ['backups'] })
    expect(byName(checks, 'acme.com A record')).toMatchObject({ degradedResponseTime: 300, request: { nameServer: '1.1.1.1', port: 53 } })
    expect(byName(checks, 'SMTP port')).toMatchObject({ frequency: 1, request: { port: 25, data: null }, retryStrategy: { type: 'EXPONENTIAL' } })
    expect(byName(checks, 'Homepage')).toMatchObject({
      useGlobalAlertSettings: false,
      alertSettings: { escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 10 }, reminders: { amount: 2, interval: 15 } },
    })
    expect(byName(checks, 'Gateway ping').request.assertions[1]).toMatchObject({ source: 'LATENCY', property: 'stddev' })
  })

  it('browser, multi-step and Playwright checks, those of testMatch picked up from their spec files', async () => {
    await roundTrip('browser', 'browser', 4)
    const checks = await checksOf('browser')
    expect(byName(checks, 'homepage.spec.ts')).toMatchObject({ checkType: 'BROWSER', frequency: 10, scriptPath: '__checks__/web/homepage.spec.ts' })
    expect(byName(checks, 'Login flow')).toMatchObject({ checkType: 'BROWSER', frequency: 5, sslCheckDomain: 'shop.example.com' })
    expect(byName(checks, 'orders.spec.ts')).toMatchObject({ checkType: 'MULTI_STEP', frequency: 30 })
    expect(byName(checks, 'Smoke suite')).toMatchObject({ checkType: 'PLAYWRIGHT', frequency: 60, pwProjects: ['chromium'], pwTags: ['@smoke'] })
  })

  it("groups V1 and V2: the group's locations replace its checks'; what each version imposes on its checks", async () => {
    await roundTrip('groups', 'groups', 9)
    const groups = (await get('groups', '/v1/check-groups?limit=100')) as Array<Record<string, any>>
    const web = byName(groups, 'Web (v2)')
    const legacy = byName(groups, 'Legacy (v1)')
    expect(web).toMatchObject({ locations: ['eu-west-1', 'eu-central-1'], concurrency: 5, retryStrategy: { type: 'FIXED' } })
    expect(legacy).toMatchObject({ useGlobalAlertSettings: false, runParallel: true, doubleCheck: false, apiCheckDefaults: { url: 'https://api.acme.com' } })
    const checks = await checksOf('groups')
    const dns = byName(checks, 'Web DNS')
    expect(dns.groupId).toBe(web.id)
    expect(dns.locations ?? []).toEqual([])
    expect(dns.retryStrategy ?? null).toBeNull()
    // as it runs: the group's locations (GET /v1/check-groups/{id}/checks answers the checks with the group applied)
    const inGroup = (await get('groups', `/v1/check-groups/${web.id}/checks`)) as Array<Record<string, any>>
    expect(byName(inGroup, 'Web DNS')).toMatchObject({ locations: ['eu-west-1', 'eu-central-1'], retryStrategy: { type: 'FIXED' } })
    expect(byName(checks, 'Legacy URL')).toMatchObject({ groupId: legacy.id, runParallel: true, useGlobalAlertSettings: true })
    expect(byName(checks, 'Legacy TCP').groupId).toBe(legacy.id)
    expect(byName(checks, 'web-specs/landing.spec.ts')).toMatchObject({ checkType: 'BROWSER', groupId: web.id, frequency: 30 })
  })

  it('alert channels of every mapped type, default channels of the config, a subscription, a maintenance window and a status page', async () => {
    await roundTrip('alerts', 'alerts', 14)
    const channels = (await get('alerts', '/v1/alert-channels?limit=100')) as Array<Record<string, any>>
    expect(channels.map((c) => c.type).sort()).toEqual(['EMAIL', 'MSTEAMS', 'OPSGENIE', 'PAGERDUTY', 'SLACK', 'SMS', 'WEBHOOK', 'WEBHOOK'])
    const idOf = (type: string, test: (c: Record<string, any>) => boolean = () => true) => channels.find((c) => c.type === type && test(c))!.id
    // Incident.io is a webhook whose key is a secret header, read back empty
    const incidentio = channels.find((c) => c.type === 'WEBHOOK' && c.config.name === 'incident.io')!
    expect(incidentio.config).toMatchObject({ method: 'POST', headers: [{ key: 'Authorization', value: '', secret: true }] })
    expect(channels.find((c) => c.type === 'SMS')!.config).toEqual({ number: '+31061234567890', name: '+31061234567890' })
    const checks = await checksOf('alerts')
    const subscribed = (name: string) => (byName(checks, name).alertChannelSubscriptions ?? []).map((s: any) => s.alertChannelId).sort()
    // its own channels replace the config's (the email channel)
    expect(subscribed('Checkout')).not.toContain(idOf('EMAIL'))
    expect(subscribed('Checkout')).toHaveLength(7)
    // the config's email channel, and Slack through AlertChannelSubscription
    expect(subscribed('Search')).toEqual([idOf('EMAIL'), idOf('SLACK')].sort())
    const [window] = (await get('alerts', '/v1/maintenance-windows')) as Array<Record<string, any>>
    expect(window).toMatchObject({ startsAt: '2030-01-06T02:00:00.000Z', repeatUnit: 'WEEK', tags: ['maintenance'] })
    // the spec's status pages answer is an object of entries (with nextId)
    const [page] = ((await get('alerts', '/v1/status-pages')) as { entries: Array<Record<string, any>> }).entries
    expect(page).toMatchObject({ url: 'acme-status', customDomain: 'status.acme.com' })
    expect(byName(checks, 'Checkout').triggerIncident).toMatchObject({ severity: 'MAJOR', name: 'Checkout is down' })
  })

  it('a mixed project of several files (a helper module of channels, groups, testMatch, a status page), and imported anew into an empty project', async () => {
    await roundTrip('mixed', 'mixed', 12)
    const empty = mkdtempSync(join(work, 'imported-'))
    mkdirSync(join(empty, 'node_modules'))
    symlinkSync(repo, join(empty, 'node_modules', 'monitors-as-code'), 'dir')
    writeFileSync(
      join(empty, 'checkly.config.ts'),
      "import { defineConfig } from 'checkly'\nexport default defineConfig({ projectName: 'Imported', logicalId: 'imported', checks: { checkMatch: '**/__checks__/**/*.check.ts' } })\n",
    )
    const imported = await cli(empty, 'mixed', ['import', '--all'])
    expect(imported.code, imported.output).toBe(0)
    expect(imported.output).toContain('Wrote 12 constructs to __checks__/imported.check.ts')
    // the browser check's script where the service has it (its scriptPath)
    expect(readdirSync(join(empty, 'src', '__checks__'))).toEqual(['homepage.spec.ts'])
    const code = readFileSync(join(empty, '__checks__', 'imported.check.ts'), 'utf8')
    expect(code).toContain("from 'monitors-as-code'")
    // the Slack URL, a secret the service never answers, is read from the environment the file names
    const names = [...code.matchAll(/process\.env\.(\w+)/g)].map((m) => m[1])
    expect(names).toHaveLength(1)
    process.env[names[0]] = 'https://hooks.slack.com/services/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'
    try {
      const apply = await cli(empty, 'mixed', ['apply', '--yes'])
      expect(apply.output).toMatch(/Apply complete: 0 created, \d+ updated, 0 deleted\.|No changes\./)
      const plan = await cli(empty, 'mixed', ['plan', '--detailed-exitcode'])
      expect(plan.output).toContain('No changes.')
      expect(plan.code, plan.output).toBe(0)
    } finally {
      delete process.env[names[0]]
    }
  })

  // ApiCheck's group and alertChannels reach the engine through the api-check descriptor's references
  it("an API check in a group, with alert channels, {{GROUP_BASE_URL}} and the group's API defaults", async () => {
    await roundTrip('api-groups', 'api-groups', 3)
    const [group] = (await get('api-groups', '/v1/check-groups')) as Array<Record<string, any>>
    const [check] = await checksOf('api-groups')
    expect(check).toMatchObject({ groupId: group.id, request: { url: '{{GROUP_BASE_URL}}/health' } })
    expect(check.locations ?? []).toEqual([])
    expect(check.alertChannelSubscriptions).toHaveLength(1)
  })

  it('what has no counterpart is a problem naming the file, the construct and what to do; nothing is sent', async () => {
    const dir = copyOf('unmapped')
    const valid = await cli(dir, 'tested', ['validate'])
    expect(valid.code).toBe(1)
    expect(valid.output).toContain('6 problems found; nothing was sent.')
    expect(valid.output).toContain('__checks__/unmapped.check.ts › SslMonitor "acme-cert" › has no counterpart in monitors yet')
    const apply = await cli(dir, 'tested', ['apply', '--yes'])
    expect(apply.code).toBe(1)
    expect(apply.output).toContain('AgenticCheck "agentic-login" › has no counterpart in monitors yet')
    expect(apply.output).not.toMatch(STACK_LINE)
    expect((await checksOf('tested')).length).toBe(0)
  })

  it('monitors init in a repository with a checkly.config.ts writes no config of its own: it says the project is read as it is', async () => {
    const dir = copyOf('monitors')
    const init = await monitors(dir, ['init'])
    expect(init.code, init.output).toBe(0)
    expect(init.output).toContain('checkly.config.ts')
    expect(existsSync(join(dir, 'monitoring.config.ts'))).toBe(false)
    const from = await monitors(dir, ['init', '--from-checkly'])
    expect(from.code, from.output).toBe(0)
    expect(from.output).toMatch(/5 resources in 1 file/)
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toContain('.monitors/')
    expect(existsSync(join(dir, 'monitoring.config.ts'))).toBe(false)
  })
})
