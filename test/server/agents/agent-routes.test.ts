/**
 * The agent's routes: claim due runs of its locations with a lease, extend it, post the
 * FINAL result; a lease lost to another claim answers 409, an unknown run 404.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { runCheck } from '../../../src/runner/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { KEY_A, KEY_B, caller, startTestServer, type Call } from '../helpers.js'

let dns: DnsServerHandle
let server: LocalServer
let call: Call
let other: Call
let clock = Date.parse('2026-03-01T10:00:00Z')
let artifacts: string

beforeAll(async () => {
  dns = await startDnsServer()
  dns.set('agent.test', 'A', { records: [{ type: 'A', data: '192.0.2.7' }] })
  // no runner here: the runs wait for an agent; the clock is the test's; the agents' staged
  // artifacts are in a folder of the test's, capped at 300 kB an account
  artifacts = mkdtempSync(join(tmpdir(), 'monitors-agent-routes-'))
  server = await startTestServer({ clock: () => clock, artifactsDir: artifacts, limits: { stagedArtifactBytesPerAccount: 300_000 } })
  call = caller(server)
  other = caller(server, KEY_B)
})
afterAll(async () => {
  await server.close()
  await dns.close()
  rmSync(artifacts, { recursive: true, force: true })
})

const dnsCheck = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  request: { query: 'agent.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
  locations: ['eu-west-1', 'us-east-1'],
  ...extra,
})

async function trigger(checkId: string): Promise<string> {
  const answer = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } })
  expect(answer.status).toBe(201)
  return answer.json.sessions[0].checkSessionId
}

describe('agent routes', () => {
  it('claims only its locations, posts the result, and the session completes from it', async () => {
    const check = (await call('POST', '/v1/checks/dns', dnsCheck('claimed by an agent'))).json
    const sessionId = await trigger(check.id)

    const claim = await call('POST', '/v1/agent/claim', { agentId: 'agent-1', locations: ['eu-west-1'], leaseSeconds: 30 })
    expect(claim.status).toBe(200)
    expect(claim.json.runs).toHaveLength(1)
    const run = claim.json.runs[0]
    expect(run).toMatchObject({ location: 'eu-west-1', sessionId, check: { id: check.id, name: 'claimed by an agent', checkType: 'DNS' } })
    expect(Date.parse(run.leaseExpiresAt) - clock).toBe(30_000)
    // another account's agent sees nothing of this account
    expect((await other('POST', '/v1/agent/claim', { agentId: 'b', locations: ['eu-west-1', 'us-east-1'] })).json.runs).toEqual([])
    // held: a second claim does not get it again
    expect((await call('POST', '/v1/agent/claim', { agentId: 'agent-2', locations: ['eu-west-1'] })).json.runs).toEqual([])

    const result = await runCheck(run.check, { location: run.location })
    expect(result.status).toBe('PASSED')
    expect((await call('POST', `/v1/agent/runs/${run.runId}/result`, { result })).status).toBe(204)
    // posted twice by the same claim (a retry of the request): nothing recorded twice
    expect((await call('POST', `/v1/agent/runs/${run.runId}/result`, { result })).status).toBe(204)

    const session = (await call('GET', `/v1/check-sessions/${sessionId}`)).json
    expect(session.status).toBe('RUNNING')
    expect(session.results).toHaveLength(1)
    expect(session.results[0]).toMatchObject({ runLocation: 'eu-west-1', resultType: 'FINAL', hasFailures: false, checkId: check.id })

    const second = (await call('POST', '/v1/agent/claim', { agentId: 'agent-2', locations: ['us-east-1'] })).json.runs
    expect(second).toHaveLength(1)
    const result2 = await runCheck(second[0].check, { location: second[0].location })
    expect((await call('POST', `/v1/agent/runs/${second[0].runId}/result`, { result: result2 })).status).toBe(204)
    const done = await call('GET', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=1`)
    expect(done.status).toBe(200)
    expect(done.json).toMatchObject({
      checkSessionId: sessionId,
      checkId: check.id,
      checkType: 'DNS',
      status: 'PASSED',
      runLocations: ['eu-west-1', 'us-east-1'],
    })
    expect(done.json.results.map((r: { runLocation: string }) => r.runLocation).sort()).toEqual(['eu-west-1', 'us-east-1'])
  })

  it("a lease that expired and was claimed again is lost: result and extend answer 409; the holder's extension after its own result answers completed", async () => {
    const check = (await call('POST', '/v1/checks/dns', dnsCheck('lease lost', { locations: ['eu-west-2'] }))).json
    await trigger(check.id)
    const first = (await call('POST', '/v1/agent/claim', { agentId: 'slow', locations: ['eu-west-2'], leaseSeconds: 10 })).json.runs[0]
    expect(first.check.id).toBe(check.id)

    const extended = await call('POST', `/v1/agent/runs/${first.runId}/extend`, { leaseSeconds: 20 })
    expect(extended.status).toBe(200)
    expect(Date.parse(extended.json.leaseExpiresAt) - clock).toBe(20_000)
    // before the lease ends nobody else gets the run
    clock += 19_000
    expect((await call('POST', '/v1/agent/claim', { agentId: 'fast', locations: ['eu-west-2'] })).json.runs).toEqual([])
    clock += 2_000
    const again = (await call('POST', '/v1/agent/claim', { agentId: 'fast', locations: ['eu-west-2'] })).json.runs
    expect(again).toHaveLength(1)
    expect(again[0].runId).not.toBe(first.runId)

    const result = await runCheck(first.check, { location: 'eu-west-2' })
    const lost = await call('POST', `/v1/agent/runs/${first.runId}/result`, { result })
    expect(lost.status).toBe(409)
    expect(lost.json.message).toMatch(/lease .* lost/)
    expect((await call('POST', `/v1/agent/runs/${first.runId}/extend`, { leaseSeconds: 30 })).status).toBe(409)
    expect((await call('POST', `/v1/agent/runs/${again[0].runId}/result`, { result })).status).toBe(204)
    // the run is complete: an extension of its holder that crossed its own result is told so,
    // not that another runner has the run (an agent logged that of runs it had finished itself)
    const crossed = await call('POST', `/v1/agent/runs/${again[0].runId}/extend`, { leaseSeconds: 30 })
    expect(crossed.status).toBe(200)
    expect(crossed.json).toEqual({ completed: true })
    // while the lost claim stays lost
    expect((await call('POST', `/v1/agent/runs/${first.runId}/extend`, { leaseSeconds: 30 })).status).toBe(409)
    const results = (await call('GET', `/v1/check-results/${check.id}`)).json
    expect(results).toHaveLength(1)
  })

  it('unknown runs answer 404; bad bodies 400 naming the field', async () => {
    const result = {
      resultType: 'FINAL',
      attempts: [],
      runLocation: 'x',
      status: 'PASSED',
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      responseTime: 1,
      startedAt: '2026-03-01T10:00:00Z',
      stoppedAt: '2026-03-01T10:00:01Z',
      error: null,
    }
    expect((await call('POST', '/v1/agent/runs/nope.1/result', { result })).status).toBe(404)
    expect((await call('POST', '/v1/agent/runs/00000000-0000-0000-0000-000000000000.1/extend', { leaseSeconds: 30 })).status).toBe(404)
    const bad = await call('POST', '/v1/agent/claim', { agentId: 'a', locations: ['eu-west-1'], max: 51 })
    expect(bad.status).toBe(400)
    expect(bad.json.attributes.keys).toEqual(['max'])
    expect((await call('POST', '/v1/agent/claim', { agentId: 'a', locations: [], leaseSeconds: 5 })).json.attributes.keys.sort()).toEqual([
      'leaseSeconds',
      'locations',
    ])
    expect((await caller(server, null)('POST', '/v1/agent/claim', { agentId: 'a', locations: ['x'] })).status).toBe(401)
  })

  it('maxOfCheckTypes: at most that many runs of those types in a claim, the other slots for other types; without it, every type', async () => {
    const dns1 = (await call('POST', '/v1/checks/dns', dnsCheck('typed dns', { locations: ['ap-south-1'] }))).json
    const script = "import { test } from '@playwright/test'\ntest('x', async () => {})\n"
    const multi: string[] = []
    for (const name of ['typed multi 1', 'typed multi 2']) {
      const created = await call('POST', '/v1/checks/multistep', { name, locations: ['ap-south-1'], script })
      expect(created.status, created.text).toBe(201)
      multi.push(created.json.id)
    }
    for (const id of [...multi, dns1.id]) await trigger(id)
    const scripts = ['BROWSER', 'MULTI_STEP', 'PLAYWRIGHT']
    const types = (answer: { json: { runs: Array<{ check: { checkType: string } }> } }) => answer.json.runs.map((r) => r.check.checkType).sort()
    const claim = (body: Record<string, unknown>) => call('POST', '/v1/agent/claim', { agentId: 'typed', locations: ['ap-south-1'], leaseSeconds: 10, ...body })
    // three due, one multi-step run allowed: the DNS run (due last) and one of them
    expect(types(await claim({ max: 10, maxOfCheckTypes: { checkTypes: scripts, max: 1 } }))).toEqual(['DNS', 'MULTI_STEP'])
    expect((await claim({ max: 10, maxOfCheckTypes: { checkTypes: scripts, max: 0 } })).json.runs).toEqual([])
    expect(types(await claim({ max: 10 }))).toEqual(['MULTI_STEP'])
    // the leases run out: a claim as older agents make it gets every type
    clock += 11_000
    expect(types(await claim({}))).toEqual(['DNS', 'MULTI_STEP', 'MULTI_STEP'])
    const bad = await claim({ maxOfCheckTypes: { checkTypes: ['BROWSR'], max: 1 } })
    expect(bad.status).toBe(400)
    expect(bad.json.attributes.keys).toEqual(['maxOfCheckTypes.checkTypes.0'])
  })

  it("artifact uploads: only for a run leased now to the caller's key, streamed to disk, capped per account, gone when the lease runs out", async () => {
    const check = (await call('POST', '/v1/checks/dns', dnsCheck('uploads', { locations: ['sa-east-1'] }))).json
    await trigger(check.id)
    const run = (await call('POST', '/v1/agent/claim', { agentId: 'uploader', locations: ['sa-east-1'], leaseSeconds: 10 })).json.runs[0]
    const put = (runId: string, name: string, body: Buffer | ReadableStream, key = KEY_A, extra: RequestInit = {}) =>
      fetch(`${server.url}/v1/agent/runs/${encodeURIComponent(runId)}/artifacts?index=0&name=${encodeURIComponent(name)}`, {
        method: 'PUT',
        body,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream' },
        ...extra,
      })
    const staged = (runId: string, name: string) => join(artifacts, '.staging', 'acc-a', encodeURIComponent(runId), '0', ...name.split('/'))
    // the bytes as they come, to the run's folder
    expect((await put(run.runId, 'screenshots/a.png', Buffer.from('first'))).status).toBe(204)
    expect(readFileSync(staged(run.runId, 'screenshots/a.png'), 'utf8')).toBe('first')
    // older agents' JSON still works, bounded per request
    expect(
      (await call('POST', `/v1/agent/runs/${run.runId}/artifacts`, { index: 0, name: 'console.json', contentBase64: Buffer.from('[]').toString('base64') }))
        .status,
    ).toBe(204)
    expect(existsSync(staged(run.runId, 'console.json'))).toBe(true)

    // no such run, another account's run: 404; a run of the account not claimed by this key: 409
    expect((await put('00000000-0000-0000-0000-000000000000.1', 'a.png', Buffer.from('x'))).status).toBe(404)
    expect((await put(run.runId, 'a.png', Buffer.from('x'), KEY_B)).status).toBe(404)
    const agentKey = (await call('POST', '/v1/keys', { role: 'agent', name: 'second agent' })).json.key
    const otherKey = await put(run.runId, 'a.png', Buffer.from('x'), agentKey)
    expect(otherKey.status).toBe(409)
    expect(((await otherKey.json()) as { message: string }).message).toContain('is leased to another key')
    expect((await call('POST', `/v1/agent/runs/nope.1/artifacts`, { index: 0, name: 'a.txt', contentBase64: '' })).status).toBe(404)

    // past the account's cap: 413, said up front (content-length) or found as the bytes come (chunked); nothing kept
    const big = await put(run.runId, 'traces/big.zip', Buffer.alloc(400_000))
    expect(big.status).toBe(413)
    expect(((await big.json()) as { message: string }).message).toContain('an account may have staged at once')
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 8; i++) controller.enqueue(new Uint8Array(50_000))
        controller.close()
      },
    })
    const streamed = await put(run.runId, 'traces/streamed.zip', chunks, KEY_A, { duplex: 'half' } as RequestInit)
    expect(streamed.status).toBe(413)
    expect(existsSync(staged(run.runId, 'traces/big.zip')) || existsSync(staged(run.runId, 'traces/streamed.zip'))).toBe(false)
    expect(readdirSync(join(artifacts, '.staging', '.incoming'))).toEqual([])
    // within it, a file is replaced
    expect((await put(run.runId, 'screenshots/a.png', Buffer.alloc(200_000, 1))).status).toBe(204)
    expect((await put(run.runId, 'screenshots/a.png', Buffer.alloc(250_000, 2))).status).toBe(204)

    // the lease runs out: the next claim of the account's agents removes what was staged, and the old claim may upload nothing more
    clock += 11_000
    const again = (await call('POST', '/v1/agent/claim', { agentId: 'uploader-2', locations: ['sa-east-1'], leaseSeconds: 10 })).json.runs[0]
    expect(again.runId).not.toBe(run.runId)
    expect(existsSync(join(artifacts, '.staging', 'acc-a', encodeURIComponent(run.runId)))).toBe(false)
    expect((await put(run.runId, 'screenshots/a.png', Buffer.from('late'))).status).toBe(409)
    expect((await put(again.runId, 'screenshots/a.png', Buffer.from('second'))).status).toBe(204)
    // the result adopts the files of its claim
    const result = await runCheck(again.check, { location: again.location })
    expect((await call('POST', `/v1/agent/runs/${again.runId}/result`, { result })).status).toBe(204)
    expect(existsSync(join(artifacts, '.staging', 'acc-a', encodeURIComponent(again.runId)))).toBe(false)
  })
})
