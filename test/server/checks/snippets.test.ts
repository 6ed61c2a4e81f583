/**
 * Snippets on the real server: /v1/snippets (list, get, create, update, delete) owned by an
 * account, API checks referring to them (setupSnippetId, tearDownSnippetId), and the scheduler
 * and an agent running them as setup and teardown scripts against a local HTTP server, with
 * scripts that throw, loop or read the server's database failing their own run only.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { runCheck } from '../../../src/runner/index.js'
import { startHttpServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { caller, expect400, KEY_B, startTestServer, type Call } from '../helpers.js'

let dir: string
let dbPath: string
let http: HttpServerHandle
let server: LocalServer
let call: Call
let callB: Call

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-snippets-'))
  dbPath = join(dir, 'snippets.db')
  http = await startHttpServer()
  http.route('/orders', { status: 200, body: { orders: [1] } })
  http.route('/gone', { status: 410, body: 'gone' })
  // two accounts: private targets are refused by default, the loopback target is allowed here;
  // a looping script is stopped after 2 s
  server = await startTestServer({
    dbPath,
    runner: true,
    privateTargets: 'allow',
    schedulerOptions: { tickMs: 50, runOptions: { scriptLimits: { timeoutMs: 2000 } } },
  })
  call = caller(server)
  callB = caller(server, KEY_B)
})
afterAll(async () => {
  await server.close()
  await http.close()
  rmSync(dir, { recursive: true, force: true })
})

const apiCheck = (extra: Record<string, unknown> = {}, path = '/orders') => ({
  name: 'Orders',
  activated: false,
  request: { method: 'GET', url: `${http.origin}${path}` },
  ...extra,
})

/** Runs the checks in one triggered session; answers each check's stored result. */
async function runNow(...ids: string[]): Promise<Array<Record<string, any>>> {
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: ids } })
  expect(trigger.status).toBe(201)
  const out: Array<Record<string, any>> = []
  for (const session of trigger.json.sessions) {
    // a loaded machine: ask again (408) until a generous deadline
    let done = await call('GET', `/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=30`)
    for (let i = 0; i < 4 && done.status === 408; i++) done = await call('GET', `/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=30`)
    expect(done.status).toBe(200)
    out.push((await call('GET', new URL(done.json.results[0].checkResultLink).pathname)).json)
  }
  return out
}

describe('/v1/snippets', () => {
  it("creates (201), gets, lists, updates and deletes a snippet, in the reference's shape", async () => {
    const created = await call('POST', '/v1/snippets', { name: 'Auth helper', script: "request.headers['x-a'] = '1'" })
    expect(created.status).toBe(201)
    expect(created.json).toEqual({
      id: expect.any(Number),
      name: 'Auth helper',
      script: "request.headers['x-a'] = '1'",
      created_at: expect.any(String),
      updated_at: null,
    })
    const id = created.json.id
    expect((await call('GET', `/v1/snippets/${id}`)).json).toEqual(created.json)
    const list = await call('GET', '/v1/snippets')
    expect(list.json.map((s: { id: number }) => s.id)).toContain(id)
    const updated = await call('PUT', `/v1/snippets/${id}`, { name: 'Auth helper 2', script: 'void 0' })
    expect(updated.status).toBe(200)
    expect(updated.json).toMatchObject({ id, name: 'Auth helper 2', script: 'void 0', updated_at: expect.any(String) })
    expect((await call('DELETE', `/v1/snippets/${id}`)).status).toBe(204)
    expect((await call('GET', `/v1/snippets/${id}`)).status).toBe(404)
    expect((await call('DELETE', `/v1/snippets/${id}`)).status).toBe(404)
  })

  it('refuses a body without name or script (400 naming them) and a path id that is not a positive integer', async () => {
    expect(expect400(await call('POST', '/v1/snippets', { name: '' }), 'payload').sort()).toEqual(['name', 'script'])
    expect(expect400(await call('GET', '/v1/snippets/abc'), 'params')).toEqual(['id'])
  })

  it("another account's snippet answers 404 as a missing one, and is not listed", async () => {
    const mine = (await call('POST', '/v1/snippets', { name: 'Mine', script: 'void 0' })).json
    expect((await callB('GET', `/v1/snippets/${mine.id}`)).status).toBe(404)
    expect((await callB('PUT', `/v1/snippets/${mine.id}`, { name: 'Theirs', script: 'void 1' })).status).toBe(404)
    expect((await callB('DELETE', `/v1/snippets/${mine.id}`)).status).toBe(404)
    expect((await callB('GET', '/v1/snippets')).json.map((s: { id: number }) => s.id)).not.toContain(mine.id)
    expect((await call('GET', `/v1/snippets/${mine.id}`)).json.name).toBe('Mine')
  })

  it("an API check naming a snippet that does not exist, or another account's, is refused (400 naming the field)", async () => {
    const mine = (await call('POST', '/v1/snippets', { name: 'Mine', script: 'void 0' })).json
    expect(expect400(await call('POST', '/v1/checks/api', apiCheck({ setupSnippetId: 999999 })), 'payload')).toEqual(['setupSnippetId'])
    expect(expect400(await callB('POST', '/v1/checks/api', apiCheck({ tearDownSnippetId: mine.id })), 'payload')).toEqual(['tearDownSnippetId'])
    expect((await call('POST', '/v1/checks/api', apiCheck({ setupSnippetId: mine.id, tearDownSnippetId: mine.id }))).status).toBe(201)
  })
})

describe('the scheduler runs them', () => {
  it('a setup snippet adds a header the target sees; a teardown snippet sees the status and may change it', async () => {
    const setup = (await call('POST', '/v1/snippets', { name: 'Sign', script: "request.headers['X-Signed'] = 'sig-' + process.env.TENANT" })).json
    const tearDown = (
      await call('POST', '/v1/snippets', {
        name: 'Accept 410',
        script: "console.log('status was', response.statusCode); if (response.statusCode === 410) response.statusCode = 200",
      })
    ).json
    expect((await call('POST', '/v1/variables', { key: 'TENANT', value: 'acme' })).status).toBe(201)
    const check = (await call('POST', '/v1/checks/api', apiCheck({ setupSnippetId: setup.id, tearDownSnippetId: tearDown.id }, '/gone'))).json
    const before = http.requests.length
    const [result] = await runNow(check.id)
    expect(result.hasErrors).toBe(false)
    expect(result.hasFailures).toBe(false)
    expect(http.requests.slice(before).map((r) => r.headers['x-signed'])).toEqual(['sig-acme'])
    const scripts = result.apiCheckResult?.scripts ?? result.details?.scripts ?? findScripts(result)
    expect(scripts.map((s: { script: string }) => s.script)).toEqual([`snippet ${setup.id} "Sign"`, `snippet ${tearDown.id} "Accept 410"`])
    expect(scripts[1].logs).toContain('status was 410')
  })

  it("a throwing script, a looping script and a script reading the server's database each fail their own run; the others pass", async () => {
    const throwing = (await call('POST', '/v1/checks/api', apiCheck({ name: 'throws', localSetupScript: "throw new Error('setup broke')" }))).json
    const looping = (await call('POST', '/v1/checks/api', apiCheck({ name: 'loops', localSetupScript: 'for (;;) {}' }))).json
    const reading = (
      await call(
        'POST',
        '/v1/checks/api',
        apiCheck({ name: 'reads', localSetupScript: `request.body = require('node:fs').readFileSync(${JSON.stringify(dbPath)}, 'latin1')` }),
      )
    ).json
    const passwd = (
      await call('POST', '/v1/checks/api', apiCheck({ name: 'passwd', localSetupScript: "request.body = require('fs').readFileSync('/etc/passwd', 'utf8')" }))
    ).json
    const fine = (await call('POST', '/v1/checks/api', apiCheck({ name: 'fine', localSetupScript: "request.headers['x-fine'] = 'yes'" }))).json
    const before = http.requests.length
    const results = await runNow(throwing.id, looping.id, reading.id, passwd.id, fine.id)
    const names = new Map([
      [throwing.id, 'throws'],
      [looping.id, 'loops'],
      [reading.id, 'reads'],
      [passwd.id, 'passwd'],
      [fine.id, 'fine'],
    ])
    const byName = Object.fromEntries(results.map((r) => [names.get(r.checkId), r]))
    expect(byName.throws).toMatchObject({ hasErrors: true })
    expect(errorOf(byName.throws)).toContain('setup script (localSetupScript) failed: setup broke')
    expect(byName.loops).toMatchObject({ hasErrors: true })
    expect(errorOf(byName.loops)).toContain('did not finish within its limit of 2 s')
    for (const name of ['reads', 'passwd']) {
      expect(byName[name]).toMatchObject({ hasErrors: true })
      expect(errorOf(byName[name])).toContain('the sandbox refused: FileSystemRead')
    }
    expect(byName.fine).toMatchObject({ hasErrors: false, hasFailures: false })
    // only the fine check's request was sent, and the server still answers from its database
    expect(http.requests.slice(before).map((r) => r.headers['x-fine'])).toEqual(['yes'])
    expect(JSON.stringify(results)).not.toContain('SQLite format')
    expect((await call('GET', `/v1/checks/${fine.id}`)).status).toBe(200)
  })

  it('an agent gets the snippets of an API check with its claim, and runs them', async () => {
    const agentServer = await startTestServer({ privateTargets: 'allow' })
    try {
      const agentCall = caller(agentServer)
      const snippet = (await agentCall('POST', '/v1/snippets', { name: 'Agent header', script: "request.headers['x-agent'] = 'ran'" })).json
      const check = (await agentCall('POST', '/v1/checks/api', { ...apiCheck({ setupSnippetId: snippet.id }), locations: ['eu-west-1'] })).json
      const trigger = await agentCall('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.id] } })
      const claim = await agentCall('POST', '/v1/agent/claim', { agentId: 'agent-snippets', locations: ['eu-west-1'] })
      const run = claim.json.runs[0]
      expect(run.snippets).toEqual({ [String(snippet.id)]: { name: 'Agent header', script: "request.headers['x-agent'] = 'ran'" } })
      const before = http.requests.length
      const result = await runCheck(run.check, { location: run.location, variables: run.variables, snippets: run.snippets })
      expect(result.status).toBe('PASSED')
      expect(http.requests.slice(before).map((r) => r.headers['x-agent'])).toEqual(['ran'])
      expect((await agentCall('POST', `/v1/agent/runs/${run.runId}/result`, { result: { ...result, resultType: 'FINAL' } })).status).toBe(204)
      const done = await agentCall('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=5`)
      expect(done.json).toMatchObject({ status: 'PASSED' })
    } finally {
      await agentServer.close()
    }
  })
})

function errorOf(result: Record<string, any>): string {
  return String(result.error ?? result.apiCheckResult?.error ?? JSON.stringify(result))
}

function findScripts(result: Record<string, any>): Array<{ script: string; logs: string }> {
  const text = JSON.stringify(result)
  const at = text.indexOf('"scripts":')
  if (at < 0) throw new Error(`no scripts in ${text.slice(0, 2000)}`)
  let depth = 0
  let i = text.indexOf('[', at)
  const start = i
  for (; i < text.length; i++) {
    if (text[i] === '[') depth++
    else if (text[i] === ']' && --depth === 0) break
  }
  return JSON.parse(text.slice(start, i + 1))
}
