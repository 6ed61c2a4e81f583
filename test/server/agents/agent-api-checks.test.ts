/**
 * An agent runs API checks: the claim answer carries the check (with its secrets, which the run
 * needs) and the account's variables, and the result posted completes the session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { runCheck } from '../../../src/runner/index.js'
import { startHttpServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { caller, startTestServer, type Call } from '../helpers.js'

let http: HttpServerHandle
let server: LocalServer
let call: Call

beforeAll(async () => {
  http = await startHttpServer()
  http.route('/ping', { status: 200, body: 'pong' })
  // no runner here: the runs wait for an agent
  server = await startTestServer({})
  call = caller(server)
})
afterAll(async () => {
  await server.close()
  await http.close()
})

describe('agent and API checks', () => {
  it('the claim answer has the variables of an API check; the run resolves them and the session passes', async () => {
    expect((await call('POST', '/v1/variables', { key: 'AGENT_PATH', value: 'ping' })).status).toBe(201)
    expect((await call('POST', '/v1/variables', { key: 'AGENT_TOKEN', value: 'tok-secret-42', secret: true })).status).toBe(201)
    const check = (
      await call('POST', '/v1/checks/api', {
        name: 'agent api',
        locations: ['eu-west-1'],
        request: {
          method: 'GET',
          url: `${http.origin}/{{AGENT_PATH}}`,
          headers: [{ key: 'X-Token', value: '{{AGENT_TOKEN}}', secret: true }],
          assertions: [{ source: 'TEXT_BODY', comparison: 'EQUALS', target: 'pong' }],
        },
      })
    ).json
    const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.id] } })
    const sessionId = trigger.json.sessions[0].checkSessionId
    const claim = await call('POST', '/v1/agent/claim', { agentId: 'agent-api', locations: ['eu-west-1'] })
    expect(claim.status).toBe(200)
    const run = claim.json.runs[0]
    expect(run.check).toMatchObject({ id: check.id, checkType: 'API' })
    expect(run.variables).toMatchObject({ AGENT_PATH: { value: 'ping', secret: false }, AGENT_TOKEN: { value: 'tok-secret-42', secret: true } })
    const result = await runCheck(run.check, { location: run.location, variables: run.variables })
    expect(result.status).toBe('PASSED')
    expect(http.requests.at(-1)).toMatchObject({ path: '/ping' })
    expect(http.requests.at(-1)!.headers['x-token']).toBe('tok-secret-42')
    expect(JSON.stringify(result)).not.toContain('tok-secret-42')
    const posted = await call('POST', `/v1/agent/runs/${run.runId}/result`, { result: { ...result, resultType: 'FINAL' } })
    expect(posted.status).toBe(204)
    const done = await call('GET', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=2`)
    expect(done.json).toMatchObject({ status: 'PASSED', checkType: 'API' })
  })
})
