/**
 * The private-target policy (docs/security.md): decided at start from the accounts
 * holding keys (several: deny; one: allow) or set by `privateTargets`. Under deny, the server's
 * own runner refuses an API check at 127.0.0.1 (a FAILED result with hasErrors naming the
 * policy, nothing of the target's answer in it) and the alert sender refuses a webhook at
 * 127.0.0.1 (the attempt FAILED, not retried, the receiver never called).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer, LocalServerOptions } from '../../src/server/index.js'
import { startHttpServer, type HttpServerHandle } from '../helpers/http-server.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { prepareTestRuntime } from '../helpers/runtime.js'
import { containment } from '../../src/runner/script/jail.js'
import { caller, KEY_A, startTestServer, type Call } from './helpers.js'
import { eventually, startReceiver, type Receiver } from './alerts-helpers.js'

const SECRET_BODY = 'body-of-an-internal-service'
let http: HttpServerHandle
let dns: DnsServerHandle
let hooks: Receiver
const servers: LocalServer[] = []

beforeAll(async () => {
  http = await startHttpServer()
  http.route('/internal', { body: SECRET_BODY })
  dns = await startDnsServer()
  dns.set('down.test', 'A', { rcode: 'SERVFAIL' })
  hooks = await startReceiver()
})
afterAll(async () => {
  for (const server of servers) await server.close()
  await http.close()
  await dns.close()
  await hooks.close()
})

async function start(options: LocalServerOptions): Promise<{ server: LocalServer; call: Call }> {
  const server = await startTestServer({ runner: true, schedulerOptions: { tickMs: 50 }, alerts: { pollMs: 50, timeoutMs: 5000 }, ...options })
  servers.push(server)
  return { server, call: caller(server) }
}

/** Runs an API check on `${http.origin}/internal` once; answers the FINAL result as the API reads it. */
async function runApiCheck(call: Call): Promise<any> {
  const created = await call('POST', '/v1/checks/api', { name: 'internal', activated: false, doubleCheck: false, request: { method: 'GET', url: `${http.origin}/internal` } })
  expect(created.status).toBe(201)
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [created.json.id] } })
  expect(trigger.status).toBe(201)
  const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
  expect(done.status).toBe(200)
  const result = await call('GET', `/v1/check-results/${created.json.id}/${done.json.results[0].checkResultId}`)
  expect(result.status).toBe(200)
  return result.json
}

/** Triggers a check once and answers its FINAL result as the API reads it. */
async function runOnce(call: Call, checkId: string): Promise<any> {
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } })
  expect(trigger.status).toBe(201)
  const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
  expect(done.status).toBe(200)
  const result = await call('GET', `/v1/check-results/${checkId}/${done.json.results[0].checkResultId}`)
  expect(result.status).toBe(200)
  return result.json
}

describe('private targets on the server', () => {
  it('deny: a multi-step check\'s own request to 127.0.0.1 is refused (at the egress proxy, its one way out, where contained; else in its process); the target never sees it', async () => {
    const { call } = await start({ runtimeCache: await prepareTestRuntime() })
    const created = await call('POST', '/v1/checks/multistep', {
      name: 'internal steps', activated: false, doubleCheck: false,
      script: `import { test, expect } from '@playwright/test'\ntest('reads', async ({ request }) => {\n  const answer = await request.get('${http.origin}/internal')\n  console.log(await answer.text())\n})\n`,
    })
    expect(created.status).toBe(201)
    const before = http.requests.length
    const result = await runOnce(call, created.json.id)
    expect(result).toMatchObject({ status: 'FAILED' })
    expect(result.error).toContain(containment().available
      ? 'the sandbox refused: 127.0.0.1 is a loopback address (127.0.0.0/8): refused by the private-target policy (--private-targets deny)'
      : `connection to 127.0.0.1:${http.port} refused by the private-target policy (--private-targets deny): loopback address (127.0.0.0/8)`)
    expect(JSON.stringify(result)).not.toContain(SECRET_BODY)
    expect(http.requests.length).toBe(before)
  }, 90_000)

  it('two accounts hold keys: deny by default; an API check at 127.0.0.1 is a FAILED result with hasErrors naming the policy', async () => {
    const { server, call } = await start({})
    expect(server.privateTargets).toEqual({ policy: 'deny', accounts: 2, chosen: false })
    const before = http.requests.length
    const result = await runApiCheck(call)
    expect(result).toMatchObject({ hasErrors: true, hasFailures: false })
    expect(JSON.stringify(result)).toMatch(/127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\): refused by the private-target policy \(--private-targets deny\)/)
    expect(JSON.stringify(result)).not.toContain(SECRET_BODY)
    expect(http.requests.length).toBe(before)
    const status = await call('GET', `/v1/check-statuses/${result.checkId}`)
    expect(status.json).toMatchObject({ hasErrors: true })
  })

  it('deny: a webhook at 127.0.0.1 is refused on the first attempt, not retried, and never reached', async () => {
    const { call } = await start({})
    const created = await call('POST', '/v1/checks/dns', {
      name: 'resolver', activated: false, doubleCheck: false,
      request: { query: 'down.test', nameServer: '127.0.0.1', port: dns.port },
      alertChannels: {
        webhook: [{ name: 'ops', url: `${hooks.url}/refused-hook` }],
        // a name that resolves to loopback, for the Slack sender
        slack: [{ url: `${hooks.url.replace('127.0.0.1', 'localhost')}/refused-slack` }],
      },
    })
    expect(created.status).toBe(201)
    const id = created.json.id
    // the DNS check itself is refused (its name server is on loopback): it fails, and alerts
    await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
    const deliveries = await eventually(async () => (await call('GET', `/v1/alert-deliveries?checkId=${id}`)).json, (list: any[]) => list.length === 2 && list.every((d) => d.status !== 'PENDING'))
    const byType = Object.fromEntries(deliveries.map((d: any) => [d.channelType, d]))
    for (const delivery of deliveries) {
      expect(delivery.status).toBe('FAILED')
      expect(delivery.attempts).toHaveLength(1)
      expect(delivery.attempts[0]).toMatchObject({ statusCode: null, outcome: 'FAILED' })
    }
    expect(byType.WEBHOOK.attempts[0].error).toMatch(/127\.0\.0\.1 is a loopback address .*refused by the private-target policy/)
    expect(byType.SLACK.attempts[0].error).toMatch(/localhost resolves to a loopback address .*refused by the private-target policy/)
    expect(hooks.received('/refused-hook')).toHaveLength(0)
    expect(hooks.received('/refused-slack')).toHaveLength(0)
  })

  it('one account holds keys: allow by default; the same API check reads 127.0.0.1', async () => {
    const { server, call } = await start({ apiKeys: [{ key: KEY_A, accountId: 'acc-a' }] })
    expect(server.privateTargets).toEqual({ policy: 'allow', accounts: 1, chosen: false })
    const result = await runApiCheck(call)
    expect(result).toMatchObject({ hasErrors: false, hasFailures: false })
  })

  it('privateTargets: "allow" on a server of two accounts lets runs and webhooks reach 127.0.0.1', async () => {
    const { server, call } = await start({ privateTargets: 'allow' })
    expect(server.privateTargets).toEqual({ policy: 'allow', accounts: 2, chosen: true })
    const result = await runApiCheck(call)
    expect(result).toMatchObject({ hasErrors: false, hasFailures: false })
  })

  it('privateTargets: "deny" on a server of one account refuses; an allowedTargets entry lets its address and port through', async () => {
    const one = [{ key: KEY_A, accountId: 'acc-a' }]
    const { call } = await start({ apiKeys: one, privateTargets: 'deny' })
    expect((await runApiCheck(call)).hasErrors).toBe(true)
    const excepted = await start({ apiKeys: one, privateTargets: 'deny', allowedTargets: [`127.0.0.1:${http.port}`] })
    expect((await runApiCheck(excepted.call)).hasErrors).toBe(false)
    await expect(startTestServer({ allowedTargets: ['not-an-address'] })).rejects.toThrow(/--allow-target "not-an-address" is not an address, a CIDR range or an address:port/)
  })
})
