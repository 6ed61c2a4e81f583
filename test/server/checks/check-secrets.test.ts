/**
 * A check's secrets never leave the server in clear (docs/security.md): its environment
 * variables marked secret, its webhooks' headers and query parameters marked secret and its
 * Slack URLs are stored (alerts need them) but every answer masks them: POST, PUT, GET one,
 * GET list, and an agent's claim. A webhook or Slack URL that is not http(s) is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { caller, expect400, icmpBody, KEY_B, startTestServer, type Call } from '../helpers.js'

const SECRETS = ['env-secret-1111', 'hook-header-2222', 'hook-query-3333', 'T0SLACK/B0SLACK/slack-token-4444', 'api-header-5555']
let server: LocalServer
let call: Call

beforeAll(async () => {
  server = await startTestServer()
  call = caller(server)
})
afterAll(() => server.close())

const channels = {
  webhook: [
    {
      name: 'ops',
      url: 'https://hooks.example.com/ops',
      headers: [
        { key: 'X-Hook-Token', value: 'hook-header-2222', secret: true },
        { key: 'X-Team', value: 'shop' },
      ],
      queryParameters: [{ key: 'sig', value: 'hook-query-3333', secret: true }],
    },
  ],
  slack: [{ url: 'https://hooks.slack.com/services/T0SLACK/B0SLACK/slack-token-4444' }],
}

const icmp = (extra: Record<string, unknown> = {}) =>
  icmpBody({
    environmentVariables: [
      { key: 'PING_TOKEN', value: 'env-secret-1111', secret: true },
      { key: 'PLAIN', value: 'visible-value' },
    ],
    alertChannels: channels,
    ...extra,
  })

function noSecret(text: string) {
  for (const secret of SECRETS) expect(text).not.toContain(secret)
}

function expectMasked(check: any) {
  expect(check.environmentVariables).toEqual([
    { key: 'PING_TOKEN', value: '', locked: false, secret: true },
    { key: 'PLAIN', value: 'visible-value', locked: false, secret: false },
  ])
  expect(check.alertChannels.webhook[0].headers).toEqual([
    { key: 'X-Hook-Token', value: '', locked: false, secret: true },
    { key: 'X-Team', value: 'shop', locked: false, secret: false },
  ])
  expect(check.alertChannels.webhook[0].queryParameters).toEqual([{ key: 'sig', value: '', locked: false, secret: true }])
  expect(check.alertChannels.slack).toEqual([{ url: 'https://hooks.slack.com/********' }])
}

describe('secrets of a check in the API answers', () => {
  it('POST, GET one, GET list and PUT answer every secret masked; the rest as stored', async () => {
    const created = await call('POST', '/v1/checks/icmp', icmp())
    expect(created.status, created.text).toBe(201)
    noSecret(created.text)
    expectMasked(created.json)

    const one = await call('GET', `/v1/checks/${created.json.id}`)
    noSecret(one.text)
    expectMasked(one.json)

    const list = await call('GET', '/v1/checks?limit=100')
    noSecret(list.text)
    expectMasked(list.json.find((c: any) => c.id === created.json.id))

    const replaced = await call('PUT', `/v1/checks/icmp/${created.json.id}`, icmp({ name: 'ping renamed' }))
    expect(replaced.status, replaced.text).toBe(200)
    noSecret(replaced.text)
    expectMasked(replaced.json)

    // an API check: its own request secrets and the check's secrets alike
    const api = await call('POST', '/v1/checks/api', {
      name: 'api',
      activated: false,
      request: { method: 'GET', url: 'https://shop.example.com/', headers: [{ key: 'X-Key', value: 'api-header-5555', secret: true }] },
      alertChannels: channels,
    })
    expect(api.status, api.text).toBe(201)
    noSecret(api.text)
    expect(api.json.request.headers).toEqual([{ key: 'X-Key', value: '', locked: false, secret: true }])
    expect(api.json.alertChannels.webhook[0].headers[0]).toEqual({ key: 'X-Hook-Token', value: '', locked: false, secret: true })
    expect(api.json.alertChannels.slack).toEqual([{ url: 'https://hooks.slack.com/********' }])
    noSecret((await call('GET', `/v1/checks/${api.json.id}`)).text)
    noSecret((await call('GET', '/v1/checks?checkType=API')).text)
  })

  it("an agent's claim carries an API check's request secrets (its run sends them), and no other secret", async () => {
    const api = await call('POST', '/v1/checks/api', {
      name: 'claimed',
      activated: false,
      locations: ['ap-south-1'],
      request: { method: 'GET', url: 'https://shop.example.com/', headers: [{ key: 'X-Key', value: 'api-header-5555', secret: true }] },
      alertChannels: channels,
    })
    expect(api.status, api.text).toBe(201)
    const ping = await call('POST', '/v1/checks/icmp', icmp({ name: 'claimed ping', activated: false, locations: ['ap-south-1'] }))
    expect(ping.status, ping.text).toBe(201)
    expect((await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [api.json.id, ping.json.id] } })).status).toBe(201)
    const claim = await call('POST', '/v1/agent/claim', { agentId: 'probe', locations: ['ap-south-1'] })
    expect(claim.status, claim.text).toBe(200)
    const run = claim.json.runs.find((r: any) => r.check.id === api.json.id)
    expect(run.check.request.headers).toEqual([{ key: 'X-Key', value: 'api-header-5555', locked: false, secret: true }])
    expectMasked(claim.json.runs.find((r: any) => r.check.id === ping.json.id).check)
    for (const secret of SECRETS.filter((s) => s !== 'api-header-5555')) expect(claim.text).not.toContain(secret)
  })

  it('another account reads none of it (404)', async () => {
    const created = await call('POST', '/v1/checks/icmp', icmp())
    const other = caller(server, KEY_B)
    expect((await other('GET', `/v1/checks/${created.json.id}`)).status).toBe(404)
  })
})

describe('alert channel URLs', () => {
  it.each([
    ['a file: webhook URL', { webhook: [{ name: 'x', url: 'file:///etc/passwd' }] }, 'alertChannels.webhook.0.url'],
    ['a gopher: webhook URL', { webhook: [{ name: 'x', url: 'gopher://127.0.0.1:25/x' }] }, 'alertChannels.webhook.0.url'],
    ['a webhook URL without a scheme', { webhook: [{ name: 'x', url: 'hooks.example.com/x' }] }, 'alertChannels.webhook.0.url'],
    ['a file: Slack URL', { slack: [{ url: 'file:///etc/passwd' }] }, 'alertChannels.slack.0.url'],
  ])('%s is a 400 naming the field; nothing is stored', async (_name, alertChannels, key) => {
    const before = (await call('GET', '/v1/checks?limit=100')).json.length
    const answer = await call('POST', '/v1/checks/dns', { name: 'bad channel', request: { query: 'example.com' }, alertChannels })
    expect(expect400(answer, 'payload')).toEqual([key])
    expect(answer.json.message).toMatch(/must be an http:\/\/ or https:\/\/ URL/)
    expect((await call('GET', '/v1/checks?limit=100')).json.length).toBe(before)
  })
})
