/**
 * Alert channels as code, end to end with the built CLI against the real server (runner and
 * alert sender on): two account-level channels and a check subscribing to both by passing the
 * constructs. Apply creates them (channels first), a failing check is delivered to both real
 * local receivers, the next plan is empty, secrets never appear, removing a channel updates
 * the check before deleting it, and import writes the channels as code that the check refers
 * to by variable.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeProject, monitors, STACK_LINE, writeFiles } from '../helpers/cli.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { startAlertsBench, startReceiver, type AlertsBench, type Receiver } from '../server/alerts/alerts-helpers.js'
import { KEY_A } from '../server/helpers.js'

let dns: DnsServerHandle
let hooks: Receiver
let bench: AlertsBench

beforeAll(async () => {
  dns = await startDnsServer()
  hooks = await startReceiver()
  bench = await startAlertsBench(dns, { alerts: { pollMs: 50, backoffMs: 50, timeoutMs: 5000 } })
})
afterAll(async () => {
  await bench?.close()
  await hooks?.close()
  await dns?.close()
})

const HOOK_TOKEN = 'HOOK-SECRET-TOKEN-1'
const PD_KEY = 'PD-ROUTING-SECRET-1'
const env = (extra: Record<string, string> = {}) => ({
  MONITORING_API_URL: bench.server.url,
  MONITORING_API_KEY: KEY_A,
  MONITORING_ACCOUNT_ID: 'acc-a',
  HOOK_TOKEN,
  PD_KEY,
  ...extra,
})
const cli = (dir: string, args: string[], extra: Record<string, string> = {}) => monitors(dir, args, env(extra))
const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8'))

const hookChannel = () => `export const hook = new WebhookAlertChannel('ops-hook', {
  name: 'Ops hook',
  url: '${hooks.url}/hook',
  method: 'PUT',
  headers: [{ key: 'Authorization', value: process.env.HOOK_TOKEN ?? '', secret: true }],
  queryParameters: [{ key: 'team', value: 'shop' }],
  template: '{"check":"{{CHECK_NAME}}","type":"{{ALERT_TYPE}}"}',
  sendDegraded: true,
})
`
const pdChannel =
  () => `export const pager = new PagerDutyAlertChannel('pager', { serviceKey: process.env.PD_KEY ?? '', serviceName: 'Shop', url: '${hooks.url}/pd' })
`
const check = (channels: string) => `new DnsCheck('shop-dns', {
  name: 'Shop DNS',
  activated: false,
  doubleCheck: false,
  request: { query: 'channels.test', nameServer: '127.0.0.1', port: ${dns.port} },
  alertChannels: [${channels}],
})
`
const imports = `import { DnsCheck, PagerDutyAlertChannel, WebhookAlertChannel } from 'monitors-as-code'\n`

describe('alert channels as code', () => {
  let dir: string
  let hookId: number
  let pagerId: number
  let checkId: string

  it('apply creates both channels before the check that subscribes to them; the lock maps them to the numeric ids', async () => {
    dir = makeProject({
      'channels.check.ts': imports + hookChannel() + pdChannel(),
      'shop.check.ts': `${imports}import { hook, pager } from './channels.check'\n${check(`hook, pager, { webhook: [{ name: 'inline', url: '${hooks.url}/inline' }] }`)}`,
    })
    const plan = await cli(dir, ['plan'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('+ webhook-alert-channel ops-hook')
    expect(plan.stdout).toContain('+ pagerduty-alert-channel pager')
    expect(plan.stdout).toContain('webhook-alert-channel:ops-hook')
    expect(plan.output).not.toContain(HOOK_TOKEN)
    expect(plan.output).not.toContain(PD_KEY)

    const apply = await cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    expect(apply.output).not.toContain(HOOK_TOKEN)
    expect(apply.output).not.toContain(PD_KEY)
    const out = apply.stdout
    expect(out.indexOf('webhook-alert-channel ops-hook')).toBeLessThan(out.indexOf('dns-check shop-dns'))
    expect(out.indexOf('pagerduty-alert-channel pager')).toBeLessThan(out.indexOf('dns-check shop-dns'))

    const lock = lockOf(dir).resources
    hookId = Number(lock['webhook-alert-channel:ops-hook'].remoteId)
    pagerId = Number(lock['pagerduty-alert-channel:pager'].remoteId)
    checkId = lock['dns-check:shop-dns'].remoteId
    expect(Number.isInteger(hookId) && Number.isInteger(pagerId)).toBe(true)
    expect(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8')).not.toContain(HOOK_TOKEN)

    const channels = await bench.call('GET', '/v1/alert-channels')
    expect(channels.text).not.toContain(HOOK_TOKEN)
    expect(channels.json).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: hookId, type: 'WEBHOOK', sendDegraded: true, config: expect.objectContaining({ name: 'Ops hook', method: 'PUT' }) }),
        expect.objectContaining({ id: pagerId, type: 'PAGERDUTY', config: expect.objectContaining({ serviceKey: '', serviceName: 'Shop' }) }),
      ]),
    )
    const remote = await bench.call('GET', `/v1/checks/${checkId}`)
    expect(remote.json.alertChannelSubscriptions).toEqual([
      { alertChannelId: hookId, activated: true },
      { alertChannelId: pagerId, activated: true },
    ])
    expect(remote.json.alertChannels.webhook).toEqual([expect.objectContaining({ name: 'inline' })])
  })

  it('a failing check is delivered to both subscribed channels (and its inline one) with their secrets', async () => {
    dns.set('channels.test', 'A', { rcode: 'SERVFAIL' })
    expect((await bench.runOnce(checkId)).status).toBe('FAILED')
    const [put] = await hooks.waitFor('/hook', 1)
    expect(put.method).toBe('PUT')
    expect(put.headers.authorization).toBe(HOOK_TOKEN)
    expect(put.url).toBe('/hook?team=shop')
    expect(JSON.parse(put.body)).toEqual({ check: 'Shop DNS', type: 'ALERT_FAILURE' })
    const [pd] = await hooks.waitFor('/pd', 1)
    expect(pd.json).toMatchObject({ routing_key: PD_KEY, event_action: 'trigger' })
    await hooks.waitFor('/inline', 1)
  })

  it('the next plan is empty: masked secrets compare equal, and a changed secret alone is planned, masked', async () => {
    const plan = await cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\./)

    const changed = await cli(dir, ['plan', '--detailed-exitcode'], { PD_KEY: 'PD-ROUTING-SECRET-2' })
    expect(changed.code, changed.output).toBe(2)
    expect(changed.stdout).toContain('~ pagerduty-alert-channel pager')
    expect(changed.stdout).toContain('config.serviceKey')
    expect(changed.stdout).toContain('(secret changed)')
    expect(changed.output).not.toContain('PD-ROUTING-SECRET')
    expect(changed.stdout).not.toContain('webhook-alert-channel ops-hook')
  })

  it('removing a channel from the code updates the check first, then deletes the channel', async () => {
    writeFiles(dir, {
      'channels.check.ts': imports + hookChannel(),
      'shop.check.ts': `${imports}import { hook } from './channels.check'\n${check(`hook, { webhook: [{ name: 'inline', url: '${hooks.url}/inline' }] }`)}`,
    })
    const plan = await cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(2)
    expect(plan.stdout).toContain('~ dns-check shop-dns')
    expect(plan.stdout).toContain('- pagerduty-alert-channel pager')
    // the subscription that goes is named by the channel's construct, not by its number
    expect(plan.stdout).toContain('- alertChannelSubscriptions[pagerduty-alert-channel:pager]')
    const apply = await cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    const out = apply.stdout
    expect(out.indexOf('dns-check shop-dns')).toBeGreaterThanOrEqual(0)
    expect(out.indexOf('dns-check shop-dns')).toBeLessThan(out.indexOf('pagerduty-alert-channel pager'))
    expect((await bench.call('GET', `/v1/alert-channels/${pagerId}`)).status).toBe(404)
    expect((await bench.call('GET', `/v1/checks/${checkId}`)).json.alertChannelSubscriptions).toEqual([{ alertChannelId: hookId, activated: true }])
    expect((await cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })

  it('a check naming something that is not a channel is refused, naming the file, the construct and alertChannels.N', async () => {
    const bad = makeProject({
      'bad.check.ts': `${imports}import { DnsCheck as D } from 'monitors-as-code'\nconst other = new D('other', { name: 'x', request: { query: 'x.test' } })\n${check('other')}`,
    })
    const plan = await cli(bad, ['plan'])
    expect(plan.code).toBe(1)
    expect(plan.stderr).toMatch(/bad\.check\.ts.*DnsCheck "shop-dns".*alertChannels\.0/s)
    expect(plan.stderr).toContain('must be a channel construct (EmailAlertChannel, SlackAlertChannel, WebhookAlertChannel')
    expect(plan.stderr).toContain('(got DnsCheck "other")')
    expect(plan.output).not.toMatch(STACK_LINE)
  })

  it("a channel's bad props are named as the code writes them (url, not config.url), with every problem at once", async () => {
    const bad = makeProject({
      'bad.check.ts':
        `${imports}new WebhookAlertChannel('hook', { name: 'x', url: 'ftp://example.test', adress: 'y', sendFailure: 'yes' })\n` +
        `new PagerDutyAlertChannel('pd', { serviceKey: process.env.NOT_SET_ANYWHERE ?? '' })\n` +
        `${check("'oncall'")}`,
    })
    const plan = await cli(bad, ['plan'])
    expect(plan.code).toBe(1)
    expect(plan.stderr).toMatch(/WebhookAlertChannel "hook" › url: must be an http:\/\/ or https:\/\/ URL/)
    expect(plan.stderr).toMatch(/WebhookAlertChannel "hook" › adress: is not a known field/)
    expect(plan.stderr).toMatch(/WebhookAlertChannel "hook" › sendFailure:/)
    expect(plan.stderr).toMatch(/PagerDutyAlertChannel "pd" › serviceKey:/)
    expect(plan.stderr).toMatch(/DnsCheck "shop-dns" › alertChannels\.0: must be an alert channel construct of this project/)
    expect(plan.stderr).not.toContain('config.')
    expect(plan.output).not.toMatch(STACK_LINE)
  })

  it('import writes the channels as code and the check refers to them by variable; the next plan is empty', async () => {
    const fresh = makeProject({ 'empty.check.ts': 'export {}\n' })
    // the service never returns the header's value: import reads it from the environment, taking the value set now as the service's
    const imported = await cli(fresh, ['import', '--all', '--out', 'imported.check.ts'], { OPS_HOOK_AUTHORIZATION: HOOK_TOKEN })
    expect(imported.code, imported.output).toBe(0)
    expect(imported.output).not.toContain(HOOK_TOKEN)
    const code = readFileSync(join(fresh, 'imported.check.ts'), 'utf8')
    expect(code).toContain("import { DnsCheck, WebhookAlertChannel } from 'monitors-as-code'")
    expect(code).toMatch(/const opsHook = new WebhookAlertChannel\('ops-hook', \{/)
    expect(code).toContain("name: 'Ops hook'")
    expect(code).toContain("method: 'PUT'")
    expect(code).toContain('sendDegraded: true')
    expect(code).toContain("value: process.env.OPS_HOOK_AUTHORIZATION ?? ''")
    expect(code).not.toContain('config')
    expect(code).toMatch(/alertChannels: \[\s*opsHook,\s*\{/)
    expect(code).not.toContain('alertChannelSubscriptions')
    expect(code).not.toContain(HOOK_TOKEN)
    expect(Object.keys(lockOf(fresh).resources).sort()).toEqual(['dns-check:shop-dns', 'webhook-alert-channel:ops-hook'])
    const plan = await cli(fresh, ['plan', '--detailed-exitcode'], { OPS_HOOK_AUTHORIZATION: HOOK_TOKEN })
    expect(plan.stdout).toMatch(/^No changes\./)

    // destroy deletes the check before the channel it subscribes to
    const destroy = await cli(fresh, ['destroy', '--yes'], { OPS_HOOK_AUTHORIZATION: HOOK_TOKEN })
    expect(destroy.code, destroy.output).toBe(0)
    expect(destroy.stdout.indexOf('dns-check shop-dns deleted')).toBeGreaterThanOrEqual(0)
    expect(destroy.stdout.indexOf('dns-check shop-dns deleted')).toBeLessThan(destroy.stdout.indexOf('webhook-alert-channel ops-hook deleted'))
    expect((await bench.call('GET', '/v1/alert-channels')).json).toEqual([])
    expect(plan.code, plan.output).toBe(0)
  })

  it('every channel type applies, plans empty again (secrets compared by fingerprint), and imports back to code that plans empty', async () => {
    const all = makeProject({
      'all.check.ts': `import { EmailAlertChannel, SlackAlertChannel, SmsAlertChannel, OpsgenieAlertChannel, MSTeamsAlertChannel, PagerDutyAlertChannel } from 'monitors-as-code'
new EmailAlertChannel('mail', { address: 'oncall@example.test', sslExpiry: true, sslExpiryThreshold: 14 })
new SlackAlertChannel('slack', { url: process.env.SLACK_URL ?? '', sendRecovery: false })
new SmsAlertChannel('sms', { name: 'Pager', number: '+15550100' })
new OpsgenieAlertChannel('genie', { name: 'Ops', apiKey: process.env.GENIE_KEY ?? '', region: 'EU', priority: 'P2' })
new MSTeamsAlertChannel('teams', { name: 'Ops room', url: process.env.TEAMS_URL ?? '' })
new PagerDutyAlertChannel('pd2', { serviceKey: process.env.PD_KEY ?? '', serviceName: 'Shop EU' })
`,
    })
    const secrets = {
      SLACK_URL: 'https://hooks.slack.test/services/T0/B0/SLACK-SECRET',
      GENIE_KEY: 'GENIE-SECRET',
      TEAMS_URL: 'https://teams.test/webhook/TEAMS-SECRET',
    }
    const apply = await cli(all, ['apply', '--yes'], secrets)
    expect(apply.code, apply.output).toBe(0)
    for (const secret of ['SLACK-SECRET', 'GENIE-SECRET', 'TEAMS-SECRET', PD_KEY]) expect(apply.output).not.toContain(secret)
    const again = await cli(all, ['plan', '--detailed-exitcode'], secrets)
    expect(again.code, again.output).toBe(0)
    const changed = await cli(all, ['plan', '--detailed-exitcode'], { ...secrets, TEAMS_URL: 'https://teams.test/webhook/TEAMS-OTHER' })
    expect(changed.code, changed.output).toBe(2)
    expect(changed.stdout).toContain('~ msteams-alert-channel teams')
    expect(changed.stdout).toContain('Plan: 0 to create, 1 to update, 0 to delete.')
    expect(changed.output).not.toContain('TEAMS-OTHER')

    const fresh = makeProject({ 'empty.check.ts': 'export {}\n' })
    const listed = await cli(fresh, ['import'])
    expect(listed.stdout).toContain('email-alert-channel:oncall-example-test  "oncall@example.test"')
    // the variables the file reads the secrets from, set to the service's values when importing: recorded, nothing to change
    const envs = { SLACK_URL: secrets.SLACK_URL, SHOP_EU_SERVICEKEY: PD_KEY, OPS_APIKEY: secrets.GENIE_KEY, OPS_ROOM_URL: secrets.TEAMS_URL }
    const imported = await cli(fresh, ['import', '--all', '--out', 'imported.check.ts'], envs)
    expect(imported.code, imported.output).toBe(0)
    const code = readFileSync(join(fresh, 'imported.check.ts'), 'utf8')
    for (const construct of [
      'EmailAlertChannel',
      'SlackAlertChannel',
      'SmsAlertChannel',
      'OpsgenieAlertChannel',
      'MSTeamsAlertChannel',
      'PagerDutyAlertChannel',
    ]) {
      expect(code).toContain(`new ${construct}(`)
    }
    expect(code).toContain("new EmailAlertChannel('oncall-example-test', { address: 'oncall@example.test', sslExpiry: true, sslExpiryThreshold: 14 })")
    expect(code).toContain("new PagerDutyAlertChannel('shop-eu', { serviceKey: process.env.SHOP_EU_SERVICEKEY ?? '', serviceName: 'Shop EU' })")
    expect(code).toContain("apiKey: process.env.OPS_APIKEY ?? ''")
    expect(code).not.toContain('sendFailure')
    expect(code).not.toContain('config')
    for (const secret of ['SLACK-SECRET', 'GENIE-SECRET', 'TEAMS-SECRET', PD_KEY]) expect(code).not.toContain(secret)
    expect([...code.matchAll(/process\.env\.([A-Z0-9_]+)/g)].map((m) => m[1]).sort()).toEqual(Object.keys(envs).sort())
    const plan = await cli(fresh, ['plan', '--detailed-exitcode'], envs)
    expect(plan.code, plan.output).toBe(0)
    const destroyAll = await cli(all, ['destroy', '--yes'], secrets)
    expect(destroyAll.code, destroyAll.output).toBe(0)
    expect(destroyAll.stdout).toContain('6 deleted')
  })
})
