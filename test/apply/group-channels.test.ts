/**
 * Issue scenario of alert channels and check groups together, end to end with the built CLI
 * against the real server (runner and alert sender on): two channels as constructs, a group of
 * three checks with group-level locations and channels, one check failing (and naming one of
 * the group's channels itself). `apply` creates all (channels, then the group, then the checks),
 * `monitors trigger --group` runs them and exits 1, the failure reaches each channel once, and
 * `import` brings the channels and the group back as code that plans empty.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeProject, monitors } from '../helpers/cli.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { startAlertsBench, startReceiver, type AlertsBench, type Receiver } from '../server/alerts/alerts-helpers.js'
import { KEY_A } from '../server/helpers.js'

let dns: DnsServerHandle
let hooks: Receiver
let bench: AlertsBench

beforeAll(async () => {
  dns = await startDnsServer()
  for (const name of ['first.group.test', 'third.group.test']) dns.set(name, 'A', { records: [{ type: 'A', data: '192.0.2.10' }] })
  dns.set('second.group.test', 'A', { rcode: 'SERVFAIL' })
  hooks = await startReceiver()
  bench = await startAlertsBench(dns, { alerts: { pollMs: 50, backoffMs: 50, timeoutMs: 5000 } })
})
afterAll(async () => {
  await bench?.close()
  await hooks?.close()
  await dns?.close()
})

const env = () => ({ MONITORING_API_URL: bench.server.url, MONITORING_API_KEY: KEY_A, MONITORING_ACCOUNT_ID: 'acc-a' })
const cli = (dir: string, args: string[]) => monitors(dir, args, env())

const check = (id: string, name: string, query: string, extra: string) => `new DnsCheck('${id}', {
  name: '${name}',
  activated: false,
  doubleCheck: false,
  group: smoke,
  ${extra}
  request: { query: '${query}', nameServer: '127.0.0.1', port: ${dns.port}, assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
})\n`

describe('alert channels and check groups', () => {
  let dir: string

  it('apply creates the channels, the group that names them and its checks; a failure reaches each channel once; trigger --group exits 1', async () => {
    dir = makeProject({
      'checks/smoke.check.ts':
        `import { CheckGroup, DnsCheck, WebhookAlertChannel } from 'monitors-as-code'
const ops = new WebhookAlertChannel('ops', { name: 'Ops', url: '${hooks.url}/ops' })
const dev = new WebhookAlertChannel('dev', { name: 'Dev', url: '${hooks.url}/dev' })
const smoke = new CheckGroup('smoke', { name: 'Smoke', locations: ['us-west-1'], alertChannels: [ops, dev] })
` +
        check('first', 'First', 'first.group.test', 'groupOrder: 1,') +
        // names the group's ops channel itself too: alerted once
        check('second', 'Second', 'second.group.test', 'groupOrder: 2, alertChannels: [ops],') +
        check('third', 'Third', 'third.group.test', 'groupOrder: 3,'),
    })
    const plan = await cli(dir, ['plan'])
    expect(plan.code, plan.output).toBe(0)
    // channels, then the group, then the checks
    const order = ['+ webhook-alert-channel dev', '+ webhook-alert-channel ops', '+ check-group smoke', '+ dns-check first'].map((line) =>
      plan.stdout.indexOf(line),
    )
    expect(
      order.every((at) => at >= 0),
      plan.stdout,
    ).toBe(true)
    expect([...order].sort((a, b) => a - b)).toEqual(order)
    const apply = await cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    expect((await cli(dir, ['plan'])).stdout).toContain('No changes.')

    const lock = JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8'))
    const groupId = Number(lock.resources['check-group:smoke'].remoteId)
    const group = await bench.call('GET', `/v1/check-groups/${groupId}`)
    expect(group.json.alertChannelSubscriptions.map((s: { alertChannelId: number }) => s.alertChannelId).sort()).toEqual(
      [Number(lock.resources['webhook-alert-channel:ops'].remoteId), Number(lock.resources['webhook-alert-channel:dev'].remoteId)].sort(),
    )

    const trigger = await cli(dir, ['trigger', '--group', 'smoke', '--format', 'json'])
    expect(trigger.code, trigger.output).toBe(1)
    const doc = JSON.parse(trigger.stdout) as { results: Array<{ name: string; status: string; runLocations: string[] }> }
    expect(doc.results.map((r) => [r.name, r.status])).toEqual([
      ['First', 'PASSED'],
      ['Second', 'FAILED'],
      ['Third', 'PASSED'],
    ])
    expect(doc.results.every((r) => r.runLocations.join() === 'us-west-1')).toBe(true)

    const [toOps] = await hooks.waitFor('/ops', 1)
    const [toDev] = await hooks.waitFor('/dev', 1)
    for (const got of [toOps, toDev]) expect(got.json).toMatchObject({ alertType: 'ALERT_FAILURE', checkName: 'Second' })
    // a while for a second delivery to ops to show up, were there one
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(hooks.received('/ops').filter((r) => (r.json as { checkName?: string })?.checkName === 'Second')).toHaveLength(1)
  })

  it('import brings the channels and the group back as code, the group naming its channels by variable', async () => {
    const fresh = makeProject({ 'checks/other.check.ts': 'export {}\n' })
    const imported = await cli(fresh, ['import', '--all', '--out', 'checks/back.check.ts'])
    expect(imported.code, imported.output).toBe(0)
    const files = readdirSync(join(fresh, 'checks')).filter((f) => f.endsWith('.check.ts'))
    const text = files.map((f) => readFileSync(join(fresh, 'checks', f), 'utf8')).join('\n')
    expect(text).toMatch(/const (\w+) = new WebhookAlertChannel\('ops'/)
    const ops = /const (\w+) = new WebhookAlertChannel\('ops'/.exec(text)![1]
    const dev = /const (\w+) = new WebhookAlertChannel\('dev'/.exec(text)![1]
    expect(text).toMatch(new RegExp(`new CheckGroup\\('smoke', \\{[\\s\\S]*alertChannels: \\[\\s*(${ops},\\s*${dev}|${dev},\\s*${ops})\\s*\\]`))
    expect((await cli(fresh, ['plan'])).stdout).toContain('No changes.')
  })
})
