/**
 * `monitors agent` runs an API check of a triggered session: the claim answer gives it the
 * account's variables, so `{{KEY}}` references resolve, and the session passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startHttpServer, type HttpServerHandle } from '../helpers/http-server.js'
import { caller, type Call } from '../server/helpers.js'
import { spawnAgent } from './helpers.js'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'

const KEY = 'agent-api-key-0123456789abcdef0123'
let server: LocalServer
let http: HttpServerHandle
let api: Call

beforeAll(async () => {
  http = await startHttpServer()
  http.route('/orders', { status: 200, body: { ok: true } })
  server = await startLocalServer({
    port: 0,
    dbPath: ':memory:',
    apiKeys: [{ key: KEY, accountId: 'agent-api' }],
    scheduler: true,
    runner: false,
    schedulerOptions: { tickMs: 200 },
  })
  api = caller({ url: server.url }, KEY)
})
afterAll(async () => {
  await server?.close()
  await http?.close()
})

describe('agent and API checks', () => {
  it('runs a triggered API check with a {{KEY}} from the account variables; the secret never in its output', async () => {
    expect((await api('POST', '/v1/variables', { key: 'ORDERS_TOKEN', value: 'agent-secret-913', secret: true })).status).toBe(201)
    const check = await api('POST', '/v1/checks/api', {
      name: 'orders',
      activated: false,
      locations: ['eu-west-2'],
      request: {
        method: 'GET',
        url: `${http.origin}/orders`,
        headers: [{ key: 'Authorization', value: 'Bearer {{ORDERS_TOKEN}}' }],
        assertions: [{ source: 'JSON_BODY', property: '$.ok', comparison: 'EQUALS', target: 'true' }],
      },
    })
    expect(check.status, check.text).toBe(201)
    const agent = spawnAgent(['--locations', 'eu-west-2', '--health-port', '0', '--poll-interval', '200ms'], {
      MONITORING_API_URL: server.url,
      MONITORING_API_KEY: KEY,
    })
    try {
      await agent.healthPort()
      const trigger = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })
      const done = await api('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
      expect(done.status, done.text).toBe(200)
      expect(done.json).toMatchObject({ status: 'PASSED', checkType: 'API' })
      expect(http.requests.at(-1)!.headers.authorization).toBe('Bearer agent-secret-913')
      agent.child.kill('SIGTERM')
      expect((await agent.exited).code).toBe(0)
      expect(agent.output()).not.toContain('agent-secret-913')
    } finally {
      if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL')
    }
  })

  it('--private-targets deny refuses a check at 127.0.0.1 before any request: an error of the run naming the policy', async () => {
    const check = await api('POST', '/v1/checks/api', {
      name: 'internal',
      activated: false,
      doubleCheck: false,
      locations: ['eu-west-3'],
      request: { method: 'GET', url: `${http.origin}/orders` },
    })
    expect(check.status, check.text).toBe(201)
    const agent = spawnAgent(['--locations', 'eu-west-3', '--health-port', '0', '--poll-interval', '200ms', '--private-targets', 'deny'], {
      MONITORING_API_URL: server.url,
      MONITORING_API_KEY: KEY,
    })
    try {
      await agent.healthPort()
      const before = http.requests.length
      const trigger = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })
      const done = await api('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
      expect(done.status, done.text).toBe(200)
      expect(done.json).toMatchObject({ status: 'FAILED' })
      expect(done.json.results[0]).toMatchObject({ hasErrors: true })
      const result = await api('GET', `/v1/check-results/${check.json.id}/${done.json.results[0].checkResultId}`)
      expect(result.text).toMatch(/127\.0\.0\.1 is a loopback address .*: refused by the private-target policy/)
      expect(http.requests.length).toBe(before)
      agent.child.kill('SIGTERM')
      expect((await agent.exited).code).toBe(0)
    } finally {
      if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL')
    }
  })
})
