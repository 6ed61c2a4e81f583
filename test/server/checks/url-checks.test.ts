/**
 * URL checks (the reference's URL monitors) on the real server: /v1/checks/url with its rules,
 * accounts kept apart, a triggered session run by the server's runner against HTTP and HTTPS
 * servers on 127.0.0.1 (a redirect followed, the certificate's days in the status), analytics at
 * /v1/analytics/url-monitors/{id} and the dashboard.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { startHttpServer, startTlsServer, type HttpServerHandle, type TlsServerHandle } from '../../helpers/http-server.js'
import { KEY_A, KEY_B, caller, expect400, startTestServer, type Call } from '../helpers.js'

let dir: string
let http: HttpServerHandle
let tls: TlsServerHandle
let server: LocalServer
let call: Call
let callB: Call

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-url-checks-'))
  http = await startHttpServer()
  http.route('/home', { status: 200, body: 'welcome' })
  http.route('/old', { redirectTo: '/home' })
  http.route('/down', { status: 503, body: 'down' })
  tls = await startTlsServer({ validDays: 40, extraHours: 3 })
  tls.route('/secure', { status: 200, body: 'ok' })
  server = await startTestServer({ dbPath: join(dir, 'url.db'), runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
  call = caller(server)
  callB = caller(server, KEY_B)
})
afterAll(async () => {
  await server?.close()
  await http?.close()
  await tls?.close()
  rmSync(dir, { recursive: true, force: true })
})

const urlCheck = (url: string, extra: Record<string, unknown> = {}) => ({
  name: 'Home',
  activated: false,
  doubleCheck: false,
  request: { url, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
  ...extra,
})

async function triggerAndWait(id: string) {
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
  expect(trigger.status, trigger.text).toBe(201)
  const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
  expect(done.status, done.text).toBe(200)
  return done
}

describe('URL checks on the server', () => {
  it('POST creates (201) with the reference defaults; PUT replaces; another account or type is 404', async () => {
    const created = await call('POST', '/v1/checks/url', urlCheck(`${http.origin}/home`))
    expect(created.status, created.text).toBe(201)
    expect(created.json).toMatchObject({
      checkType: 'URL',
      frequency: 10,
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
      request: { method: 'GET', url: `${http.origin}/home`, followRedirects: true, skipSSL: false, ipFamily: 'IPv4' },
    })
    const replaced = await call('PUT', `/v1/checks/url/${created.json.id}`, urlCheck(`${http.origin}/home`, { name: 'Home page' }))
    expect(replaced.json).toMatchObject({ id: created.json.id, name: 'Home page', checkType: 'URL' })
    expect((await call('PUT', `/v1/checks/api/${created.json.id}`, { name: 'x', request: { method: 'GET', url: 'https://a.example' } })).status).toBe(404)
    expect((await callB('GET', `/v1/checks/${created.json.id}`)).status).toBe(404)
    expect((await callB('PUT', `/v1/checks/url/${created.json.id}`, urlCheck(`${http.origin}/home`))).status).toBe(404)
    const list = await call('GET', '/v1/checks?checkType=URL')
    expect(list.json.map((c: { id: string }) => c.id)).toEqual([created.json.id])
  })

  it('its rules are 400s naming the field: GET only, status-code assertions, no sub-minute frequency, no variables', async () => {
    expect(expect400(await call('POST', '/v1/checks/url', urlCheck('ftp://example.com')), 'payload')).toEqual(['request.url'])
    expect(expect400(await call('POST', '/v1/checks/url', urlCheck('https://example.com/{{PATH}}')), 'payload')).toEqual(['request.url'])
    expect(expect400(await call('POST', '/v1/checks/url', { name: 'x', request: { url: 'https://example.com', method: 'POST' } }), 'payload')).toEqual([
      'request.method',
    ])
    expect(
      expect400(
        await call('POST', '/v1/checks/url', {
          name: 'x',
          request: { url: 'https://example.com', assertions: [{ source: 'TEXT_BODY', comparison: 'EQUALS', target: '200' }] },
        }),
        'payload',
      ),
    ).toEqual(['request.assertions.0.source'])
    expect(
      expect400(
        await call('POST', '/v1/checks/url', {
          name: 'x',
          request: { url: 'https://example.com', assertions: [{ source: 'STATUS_CODE', comparison: 'CONTAINS', target: '200' }] },
        }),
        'payload',
      ),
    ).toEqual(['request.assertions.0.comparison'])
    expect(
      expect400(
        await call('POST', '/v1/checks/url', {
          name: 'x',
          request: { url: 'https://example.com', assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: 'ok' }] },
        }),
        'payload',
      ),
    ).toEqual(['request.assertions.0.target'])
    expect(expect400(await call('POST', '/v1/checks/url', urlCheck('https://example.com', { frequency: 0, frequencyOffset: 10 })), 'payload')).toEqual([
      'frequency',
    ])
  })

  it('a triggered session follows a redirect and passes; the status, analytics at url-monitors and the dashboard show it', async () => {
    const created = await call('POST', '/v1/checks/url', urlCheck(`${http.origin}/old`, { name: 'Moved home' }))
    const done = await triggerAndWait(created.json.id)
    expect(done.json).toMatchObject({ checkType: 'URL', status: 'PASSED' })
    const stored = await call('GET', new URL(done.json.results[0].checkResultLink).pathname)
    expect(stored.json.result.details).toMatchObject({
      kind: 'URL',
      method: 'GET',
      statusCode: 200,
      redirects: [{ statusCode: 302, location: `${http.origin}/home` }],
    })
    const analytics = await call('GET', `/v1/analytics/url-monitors/${created.json.id}?metrics=responseTime,tcp,availability&groupBy=statusCode`)
    expect(analytics.status, analytics.text).toBe(200)
    expect(analytics.json).toMatchObject({ checkId: created.json.id, checkType: 'URL' })
    const [entry] = analytics.json.series.map((s: unknown) => (typeof s === 'string' ? JSON.parse(s) : s))
    expect(entry).toMatchObject({ statusCode: 200, availability: 100 })
    expect(typeof entry.responseTime).toBe('number')
    expect((await call('GET', `/v1/analytics/api-checks/${created.json.id}?metrics=availability`)).status).toBe(404)
    const login = await fetch(`${server.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ apiKey: KEY_A }).toString(),
    })
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]
    const page = await (await fetch(`${server.url}/dashboard/checks/${created.json.id}`, { headers: { cookie } })).text()
    expect(page).toMatch(/data-metric="availability">100 ?%/)
  })

  it('a 503 fails without an assertion; https records the days the certificate has left in the status', async () => {
    const down = await call('POST', '/v1/checks/url', { name: 'Down', activated: false, doubleCheck: false, request: { url: `${http.origin}/down` } })
    expect((await triggerAndWait(down.json.id)).json.status).toBe('FAILED')
    const secure = await call(
      'POST',
      '/v1/checks/url',
      urlCheck(`${tls.origin}/secure`, { name: 'Secure', request: { url: `${tls.origin}/secure`, skipSSL: true } }),
    )
    expect((await triggerAndWait(secure.json.id)).json.status).toBe('PASSED')
    const status = await call('GET', `/v1/check-statuses/${secure.json.id}`)
    expect(status.json.sslDaysRemaining).toBe(40)
  })
})
