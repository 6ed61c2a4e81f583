/**
 * API checks on the real server: created and replaced through /v1/checks/api with the checks'
 * validation, secrets answered as "", and run by a triggered session against a local HTTP server
 * with a `{{VARIABLE}}` resolved from the account's variables.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { startHttpServer, startTlsServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { caller, startTestServer, type Call } from '../helpers.js'

let dir: string
let http: HttpServerHandle
let server: LocalServer
let call: Call

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-api-checks-'))
  http = await startHttpServer()
  http.route('/health', { status: 200, body: { status: 'ok' } })
  server = await startTestServer({ dbPath: join(dir, 'api.db'), runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
  call = caller(server)
})
afterAll(async () => {
  await server.close()
  await http.close()
  rmSync(dir, { recursive: true, force: true })
})

const apiCheck = (extra: Record<string, unknown> = {}) => ({
  name: 'Health',
  activated: false,
  request: {
    method: 'GET',
    url: `${http.origin}/health`,
    headers: [
      { key: 'X-Plain', value: 'visible' },
      { key: 'X-Token', value: 'hunter2-token', secret: true },
    ],
    queryParameters: [{ key: 'region', value: '{{REGION}}' }],
    basicAuth: { username: 'monitor', password: 'pa55word-secret' },
    assertions: [
      { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
      { source: 'JSON_BODY', property: '$.status', comparison: 'EQUALS', target: 'ok' },
    ],
  },
  ...extra,
})

describe('API checks on the server', () => {
  it('POST creates (201), secrets answered as "" by every read, the list filters by checkType API', async () => {
    const created = await call('POST', '/v1/checks/api', apiCheck({ frequency: 0, frequencyOffset: 10 }))
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ checkType: 'API', frequency: 0, frequencyOffset: 10, degradedResponseTime: 5000, maxResponseTime: 20000 })
    expect(created.json.request.basicAuth).toEqual({ username: 'monitor', password: '' })
    expect(created.json.request.headers).toEqual([
      { key: 'X-Plain', value: 'visible', locked: false, secret: false },
      { key: 'X-Token', value: '', locked: false, secret: true },
    ])
    const one = await call('GET', `/v1/checks/${created.json.id}`)
    expect(one.text).not.toContain('hunter2-token')
    expect(one.text).not.toContain('pa55word-secret')
    const list = await call('GET', '/v1/checks?checkType=API')
    expect(list.status).toBe(200)
    expect(list.json.map((c: { id: string }) => c.id)).toContain(created.json.id)
    expect(list.json.every((c: { checkType: string }) => c.checkType === 'API')).toBe(true)
    expect(list.text).not.toContain('hunter2-token')
  })

  it('PUT replaces (200); a DNS check id through /v1/checks/api is 404', async () => {
    const created = await call('POST', '/v1/checks/api', apiCheck({ name: 'To replace' }))
    const replaced = await call('PUT', `/v1/checks/api/${created.json.id}`, apiCheck({ name: 'Replaced', maxResponseTime: 10000 }))
    expect(replaced.status).toBe(200)
    expect(replaced.json).toMatchObject({ id: created.json.id, name: 'Replaced', maxResponseTime: 10000, checkType: 'API' })
    const dns = await call('POST', '/v1/checks/dns', { name: 'A DNS check', request: { query: 'example.com' } })
    expect(dns.status).toBe(201)
    const wrong = await call('PUT', `/v1/checks/api/${dns.json.id}`, apiCheck())
    expect(wrong.status).toBe(404)
  })

  it('invalid bodies are 400s naming the field', async () => {
    const badUrl = await call('POST', '/v1/checks/api', apiCheck({ request: { method: 'GET', url: 'ftp://example.com' } }))
    expect(badUrl.status).toBe(400)
    expect(badUrl.text).toContain('request.url')
    const badMethod = await call('POST', '/v1/checks/api', apiCheck({ request: { method: 'FETCH', url: 'https://example.com' } }))
    expect(badMethod.status).toBe(400)
    expect(badMethod.text).toContain('request.method')
    const noOffset = await call('POST', '/v1/checks/api', apiCheck({ frequency: 0 }))
    expect(noOffset.status).toBe(400)
    expect(noOffset.text).toContain('frequencyOffset')
    const tooSlow = await call('POST', '/v1/checks/api', apiCheck({ maxResponseTime: 50000 }))
    expect(tooSlow.status).toBe(400)
    expect(tooSlow.text).toContain('maxResponseTime')
  })

  it('a triggered session runs the check: PASSED, phases in the result, {{REGION}} resolved from the account variables, secrets not in the result', async () => {
    expect((await call('POST', '/v1/variables', { key: 'REGION', value: 'eu-central' })).status).toBe(201)
    const created = await call('POST', '/v1/checks/api', apiCheck({ name: 'Session run' }))
    const before = http.requests.length
    const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [created.json.id] } })
    expect(trigger.status).toBe(201)
    const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=10`)
    expect(done.status).toBe(200)
    expect(done.json).toMatchObject({ checkType: 'API', status: 'PASSED' })
    const request = http.requests.slice(before).find((r) => r.path.startsWith('/health'))!
    expect(request.path).toBe('/health?region=eu-central')
    expect(request.headers['x-token']).toBe('hunter2-token')
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('monitor:pa55word-secret').toString('base64')}`)
    const stored = await call('GET', new URL(done.json.results[0].checkResultLink).pathname)
    expect(stored.status).toBe(200)
    const details = stored.json.result.details
    expect(details).toMatchObject({ kind: 'API', statusCode: 200, method: 'GET' })
    for (const phase of ['dns', 'tcp', 'tls', 'firstByte', 'download', 'total']) expect(typeof details.timings[phase]).toBe('number')
    expect(details.url).toContain('region=eu-central')
    expect(stored.text).not.toContain('hunter2-token')
    expect(stored.text).not.toContain('pa55word-secret')
  })

  it("an https check's certificate days remaining reach the check's status", async () => {
    const tls = await startTlsServer({ validDays: 12, extraHours: 3 })
    try {
      tls.route('/secure', { status: 200, body: 'ok' })
      const created = await call('POST', '/v1/checks/api', {
        name: 'TLS days',
        activated: false,
        request: { method: 'GET', url: `${tls.origin}/secure`, skipSSL: true, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
      })
      expect(created.status).toBe(201)
      const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [created.json.id] } })
      const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=10`)
      expect(done.json.status).toBe('PASSED')
      const status = await call('GET', `/v1/check-statuses/${created.json.id}`)
      expect(status.status).toBe(200)
      expect(status.json.sslDaysRemaining).toBe(12)
    } finally {
      await tls.close()
    }
  })
})
