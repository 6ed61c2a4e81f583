/**
 * Account-level alert channels (/v1/alert-channels): written and read with their secrets masked,
 * another account's answering 404, and checks subscribed by `alertChannelSubscriptions` getting
 * their notifications delivered through the outbox to a local receiver, as each channel's
 * settings (sendFailure, sendRecovery, sendDegraded) ask.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { CHANNEL_SAMPLES, eventually, startAlertsBench, startReceiver, type AlertsBench, type Receiver } from './alerts-helpers.js'
import { caller, KEY_B } from '../helpers.js'

let dns: DnsServerHandle
let hooks: Receiver
let bench: AlertsBench

const ok = (query: string) => dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
const fail = (query: string) => dns.set(query, 'A', { rcode: 'SERVFAIL' })

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

async function createChannel(body: Record<string, unknown>): Promise<any> {
  const answer = await bench.call('POST', '/v1/alert-channels', body)
  expect(answer.status, answer.text).toBe(201)
  return answer.json
}

describe('/v1/alert-channels', () => {
  it("creates a channel with the reference's defaults, answers it with its secrets masked, updates, lists, and deletes it", async () => {
    const created = await createChannel({ type: 'PAGERDUTY', config: { serviceKey: 'PD-SECRET-KEY', serviceName: 'shop' } })
    expect(created).toMatchObject({
      id: expect.any(Number),
      type: 'PAGERDUTY',
      config: { serviceKey: '', serviceName: 'shop' },
      subscriptions: [],
      sendRecovery: true,
      sendFailure: true,
      sendDegraded: false,
      sslExpiry: false,
      sslExpiryThreshold: 30,
      autoSubscribe: false,
      updated_at: null,
    })
    const slack = await createChannel({ type: 'SLACK', config: { url: 'https://hooks.slack.test/services/T0/B0/SLACK-TOKEN' }, sendRecovery: false })
    expect(slack.config.url).toBe('https://hooks.slack.test/********')

    const read = await bench.call('GET', `/v1/alert-channels/${created.id}`)
    expect(read.status).toBe(200)
    expect(read.text).not.toContain('PD-SECRET-KEY')
    const list = await bench.call('GET', '/v1/alert-channels')
    expect(list.status).toBe(200)
    expect(list.text).not.toContain('SLACK-TOKEN')
    expect(list.json.map((c: any) => c.id)).toEqual(expect.arrayContaining([created.id, slack.id]))

    const updated = await bench.call('PUT', `/v1/alert-channels/${created.id}`, {
      type: 'PAGERDUTY',
      config: { serviceKey: 'PD-OTHER', serviceName: 'shop eu' },
      sendDegraded: true,
    })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.json).toMatchObject({ id: created.id, config: { serviceName: 'shop eu' }, sendDegraded: true, updated_at: expect.any(String) })

    expect((await bench.call('DELETE', `/v1/alert-channels/${created.id}`)).status).toBe(204)
    expect((await bench.call('GET', `/v1/alert-channels/${created.id}`)).status).toBe(404)
  })

  it('every channel type answers its sample with each secret its type declares masked, in the create, the read and the list', async () => {
    const ids: number[] = []
    for (const [type, config] of Object.entries(CHANNEL_SAMPLES)) {
      const created = await bench.call('POST', '/v1/alert-channels', { type, config })
      expect(created.status, created.text).toBe(201)
      expect(created.text, type).not.toContain('SECRET')
      const read = await bench.call('GET', `/v1/alert-channels/${created.json.id}`)
      expect(read.text, type).not.toContain('SECRET')
      ids.push(created.json.id)
    }
    const list = await bench.call('GET', '/v1/alert-channels?limit=100')
    expect(list.json.map((c: any) => c.id)).toEqual(expect.arrayContaining(ids))
    expect(list.text).not.toContain('SECRET')
    for (const id of ids) expect((await bench.call('DELETE', `/v1/alert-channels/${id}`)).status).toBe(204)
  })

  it('a configuration its type refuses is a 400 naming config.<field>; an unknown type names type', async () => {
    const noKey = await bench.call('POST', '/v1/alert-channels', { type: 'PAGERDUTY', config: { serviceName: 'x' } })
    expect(noKey.status).toBe(400)
    expect(noKey.json.attributes.keys).toEqual(['config.serviceKey'])
    const badUrl = await bench.call('POST', '/v1/alert-channels', { type: 'MSTEAMS', config: { name: 't', url: 'file:///etc/passwd' } })
    expect(badUrl.status).toBe(400)
    expect(badUrl.json.attributes.keys).toEqual(['config.url'])
    const badType = await bench.call('POST', '/v1/alert-channels', { type: 'CARRIER_PIGEON', config: {} })
    expect(badType.status).toBe(400)
    expect(badType.json.attributes.keys).toEqual(['type'])
    const badId = await bench.call('GET', '/v1/alert-channels/abc')
    expect(badId.status).toBe(400)
  })

  it("another account's channel answers 404 to read, update, delete and subscribe, exactly like a missing one", async () => {
    const channel = await createChannel({ type: 'EMAIL', config: { address: 'ops@example.test' } })
    const other = caller(bench.server, KEY_B)
    for (const id of [channel.id, 999_999]) {
      const answers = [
        await other('GET', `/v1/alert-channels/${id}`),
        await other('PUT', `/v1/alert-channels/${id}`, { type: 'EMAIL', config: { address: 'x@example.test' } }),
        await other('PUT', `/v1/alert-channels/${id}/subscriptions`, { checkId: 'nope', activated: true }),
        await other('DELETE', `/v1/alert-channels/${id}`),
      ]
      expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 404])
      expect(answers[0].json.message).toBe('Alert channel not found')
    }
    expect((await other('GET', '/v1/alert-channels')).json).toEqual([])
    expect((await bench.call('GET', `/v1/alert-channels/${channel.id}`)).json.config.address).toBe('ops@example.test')
  })
})

describe('checks subscribed to account-level channels', () => {
  it('a failure goes to every subscribed channel through the outbox; the recovery only to those with sendRecovery; an inactive subscription gets nothing', async () => {
    const pd = await createChannel({ type: 'PAGERDUTY', config: { serviceKey: 'ROUTING', url: `${hooks.url}/sub-pd` } })
    const teams = await createChannel({ type: 'MSTEAMS', config: { name: 'ops', url: `${hooks.url}/sub-teams` }, sendRecovery: false })
    const muted = await createChannel({ type: 'WEBHOOK', config: { name: 'off', url: `${hooks.url}/sub-off` } })
    const query = 'subscribed.test'
    const id = await bench.createCheck(query, {
      name: 'Subscribed',
      alertChannels: { webhook: [{ name: 'inline', url: `${hooks.url}/sub-inline` }] },
      alertChannelSubscriptions: [
        { alertChannelId: pd.id, activated: true },
        { alertChannelId: teams.id, activated: true },
        { alertChannelId: muted.id, activated: false },
        // named twice: delivered once
        { alertChannelId: pd.id, activated: true },
      ],
    })
    fail(query)
    expect((await bench.runOnce(id)).status).toBe('FAILED')
    const [trigger] = await hooks.waitFor('/sub-pd', 1)
    expect(trigger.json).toMatchObject({ routing_key: 'ROUTING', event_action: 'trigger', dedup_key: `monitors-check-${id}` })
    await hooks.waitFor('/sub-teams', 1)
    await hooks.waitFor('/sub-inline', 1)

    ok(query)
    await bench.runOnce(id)
    const [, resolve] = await hooks.waitFor('/sub-pd', 2)
    expect(resolve.json).toMatchObject({ event_action: 'resolve', dedup_key: `monitors-check-${id}` })
    await hooks.waitFor('/sub-inline', 2)

    const deliveries = await eventually(
      () => bench.deliveries(id),
      (l) => l.length === 5 && l.every((d: any) => d.status !== 'PENDING'),
    )
    expect(deliveries.every((d: any) => d.status === 'DELIVERED')).toBe(true)
    const summary = deliveries.map((d: any) => `${d.alertType} ${d.channelType} ${d.channel.alertChannelId ?? 'inline'}`).sort()
    expect(summary).toEqual([
      `ALERT_FAILURE MSTEAMS ${teams.id}`,
      `ALERT_FAILURE PAGERDUTY ${pd.id}`,
      'ALERT_FAILURE WEBHOOK inline',
      `ALERT_RECOVERY PAGERDUTY ${pd.id}`,
      'ALERT_RECOVERY WEBHOOK inline',
    ])
    expect(JSON.stringify(deliveries)).not.toContain('ROUTING')
    expect(hooks.received('/sub-teams')).toHaveLength(1)
    expect(hooks.received('/sub-off')).toHaveLength(0)

    // the channel lists the checks subscribed to it
    const read = await bench.call('GET', `/v1/alert-channels/${pd.id}`)
    expect(read.json.subscriptions).toEqual([{ checkId: id, groupId: null, activated: true }])
    expect((await bench.call('GET', `/v1/alert-channels/${muted.id}`)).json.subscriptions).toEqual([{ checkId: id, groupId: null, activated: false }])
  })

  it('PUT …/subscriptions subscribes a check (written to its alertChannelSubscriptions) and its next failure is delivered; an unknown check is a 400 naming checkId', async () => {
    const hook = await createChannel({ type: 'WEBHOOK', config: { name: 'late', url: `${hooks.url}/late` } })
    const query = 'late.test'
    const id = await bench.createCheck(query, { name: 'Late' })
    const put = await bench.call('PUT', `/v1/alert-channels/${hook.id}/subscriptions`, { checkId: id, activated: true })
    expect(put.status, put.text).toBe(200)
    expect(put.json).toEqual({ checkId: id, groupId: null, activated: true })
    const check = await bench.call('GET', `/v1/checks/${id}`)
    expect(check.json.alertChannelSubscriptions).toEqual([{ alertChannelId: hook.id, activated: true }])
    expect(check.json.name).toBe('Late')

    fail(query)
    await bench.runOnce(id)
    await hooks.waitFor('/late', 1)

    const unknown = await bench.call('PUT', `/v1/alert-channels/${hook.id}/subscriptions`, { checkId: 'no-such-check', activated: true })
    expect(unknown.status).toBe(400)
    expect(unknown.json.attributes.keys).toEqual(['checkId'])
  })

  it("a subscription to a deleted channel, or to another account's, delivers nothing", async () => {
    const other = caller(bench.server, KEY_B)
    const theirs = await other('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'theirs', url: `${hooks.url}/theirs` } })
    expect(theirs.status).toBe(201)
    const gone = await createChannel({ type: 'WEBHOOK', config: { name: 'gone', url: `${hooks.url}/gone` } })
    expect((await bench.call('DELETE', `/v1/alert-channels/${gone.id}`)).status).toBe(204)
    const query = 'foreign.test'
    const id = await bench.createCheck(query, {
      name: 'Foreign',
      alertChannels: { webhook: [{ name: 'inline', url: `${hooks.url}/foreign-inline` }] },
      alertChannelSubscriptions: [
        { alertChannelId: theirs.json.id, activated: true },
        { alertChannelId: gone.id, activated: true },
      ],
    })
    fail(query)
    await bench.runOnce(id)
    await hooks.waitFor('/foreign-inline', 1)
    const deliveries = await eventually(
      () => bench.deliveries(id),
      (l) => l.length >= 1 && l.every((d: any) => d.status !== 'PENDING'),
    )
    expect(deliveries).toHaveLength(1)
    expect(hooks.received('/theirs')).toHaveLength(0)
    expect(hooks.received('/gone')).toHaveLength(0)
  })

  it("a webhook channel's body template gets the event's variables, escaped inside a JSON body, as they are in a text one; an unknown variable is a 400 naming config.template", async () => {
    const json = await createChannel({
      type: 'WEBHOOK',
      config: {
        name: 'templated',
        url: `${hooks.url}/tpl-json`,
        template: '{"text": "{{ALERT_TITLE}} in {{RUN_LOCATION}}: {{ERROR_MESSAGE}}", "check": "{{CHECK_ID}}", "kind": "{{ALERT_TYPE}}"}',
      },
    })
    const text = await createChannel({
      type: 'WEBHOOK',
      config: {
        name: 'plain',
        url: `${hooks.url}/tpl-text`,
        template: '{{CHECK_NAME}} says {{ERROR_MESSAGE}}',
        headers: [{ key: 'Content-Type', value: 'text/plain' }],
      },
    })
    const query = 'template.test'
    const id = await bench.createCheck(query, {
      name: 'Say "hi"',
      alertChannelSubscriptions: [
        { alertChannelId: json.id, activated: true },
        { alertChannelId: text.id, activated: true },
      ],
    })
    fail(query)
    await bench.runOnce(id)
    const [got] = await hooks.waitFor('/tpl-json', 1)
    expect(got.headers['content-type']).toBe('application/json')
    // the check's name holds quotes: still one valid JSON document
    expect(got.json).toMatchObject({ text: expect.stringMatching(/^Say "hi" is failing in local: .+/), check: id, kind: 'ALERT_FAILURE' })
    const [plain] = await hooks.waitFor('/tpl-text', 1)
    expect(plain.headers['content-type']).toBe('text/plain')
    expect(plain.body).toMatch(/^Say "hi" says .+/)

    const unknown = await bench.call('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'x', url: `${hooks.url}/x`, template: '{{CHECK_NAME}} {{NOPE}}' },
    })
    expect(unknown.status).toBe(400)
    expect(unknown.json.attributes.keys).toEqual(['config.template'])
    expect(unknown.json.message).toMatch(/\{\{NOPE\}\}/)
  })
})
