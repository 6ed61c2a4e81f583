import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:net'
import type { AddressInfo } from 'node:net'
import { apiCheckSchema, type ApiCheckInput } from '../../src/schema/api-check.js'
import { daysRemaining, runCheck, type ApiDetails, type RunOptions } from '../../src/runner/index.js'
import { startHttpServer, startTlsServer, type HttpServerHandle, type TlsServerHandle } from '../helpers/http-server.js'

let http: HttpServerHandle
let tls: TlsServerHandle
const CERT_DAYS = 30

beforeAll(async () => {
  http = await startHttpServer()
  tls = await startTlsServer({ validDays: CERT_DAYS, extraHours: 12 })
  const json = {
    data: [
      { id: 7, name: 'first' },
      { id: 8, name: null },
    ],
    total: 2,
    tags: ['a', 'b'],
    empty: [],
  }
  for (const server of [http, tls]) {
    server.route('/json', { body: json, headers: { 'x-request-id': 'abc-123', 'cache-control': 'max-age=60' } })
    server.route('/text', { body: 'hello world, all systems operational', headers: { 'content-type': 'text/plain' } })
    server.route('/echo', { body: 'echo' })
    server.route('/slow-headers', { body: 'late', delayBeforeHeadersMs: 300 })
    server.route('/slow-body', { body: 'x'.repeat(2000), delayDuringBodyMs: 300 })
    server.route('/missing', { status: 404, body: 'nope' })
    server.route('/error', { status: 503, body: 'down' })
    server.route('/hang', { hang: true })
  }
  http.route('/big', { body: `${'a'.repeat(1024 * 1024 - 1)}Z${'b'.repeat(512 * 1024)}` })
  http.route('/redirect', { redirectTo: '/json' })
  http.route('/redirect-303', { status: 303, redirectTo: '/echo' })
  http.route('/loop', { redirectTo: '/loop' })
  tls.route('/to-http', { redirectTo: `${http.origin}/echo` })
})

afterAll(async () => {
  await http.close()
  await tls.close()
})

type RequestInput = ApiCheckInput['request']

function apiCheck(request: Partial<RequestInput> & { url: string }, rest: Partial<ApiCheckInput> = {}) {
  return {
    id: 'check-api',
    ...apiCheckSchema.parse({ name: 'api check', doubleCheck: false, ...rest, request: { method: 'GET', ...request } }),
  }
}

async function run(request: Partial<RequestInput> & { url: string }, rest: Partial<ApiCheckInput> = {}, options: RunOptions = {}) {
  const result = await runCheck(apiCheck(request, rest), options)
  return { result, details: result.details as ApiDetails }
}

function lastRequest(server: HttpServerHandle, path: string) {
  const found = server.requests.filter((r) => r.path.split('?')[0] === path)
  return found[found.length - 1]
}

describe('API runner: the exchange', () => {
  it('passes a 200 and records status, headers, body and the phases of an http request', async () => {
    const { result, details } = await run({ url: `${http.origin}/json` })
    expect(result.status).toBe('PASSED')
    expect(result.checkType).toBe('API')
    expect(details.statusCode).toBe(200)
    expect(details.headers['x-request-id']).toBe('abc-123')
    expect(JSON.parse(details.body).total).toBe(2)
    expect(details.sslDaysRemaining).toBeNull()
    const t = details.timings!
    expect(t.tls).toBe(0)
    expect(t.dns).toBe(0) // an IP address: no lookup
    for (const phase of [t.tcp, t.firstByte, t.download]) expect(phase).toBeGreaterThanOrEqual(0)
    expect(result.responseTime).toBe(t.total)
    const sum = t.dns + t.tcp + t.tls + t.firstByte + t.download
    expect(sum).toBeLessThanOrEqual(t.total + 0.05)
    // the phases cover the request: what falls between them is a few ms, more only on a loaded machine
    // whose event loop stamps late, and never a quarter of the whole
    expect(t.total - sum).toBeLessThan(Math.max(30, t.total / 4))
  })

  it('measures a name lookup when the URL names a host, in the ipFamily asked for', async () => {
    const { result, details } = await run({ url: `http://localhost:${http.port}/echo` })
    expect(result.status).toBe('PASSED')
    expect(details.timings!.dns).toBeGreaterThan(0)
    expect(details.remoteAddress).toBe('127.0.0.1')
    // the server listens on 127.0.0.1 only: asked for IPv6, localhost is ::1 (or nothing) and is not reached
    const v6 = await run({ url: `http://localhost:${http.port}/echo`, ipFamily: 'IPv6' })
    expect(v6.result.status).toBe('FAILED')
    expect(v6.result.failureKind).toBe('NETWORK_ERROR')
  })

  it('puts the delay before the headers in firstByte and the delay inside the body in download', async () => {
    const slowHeaders = await run({ url: `${http.origin}/slow-headers` })
    // the server's 300 ms timer starts when it has the request, a little after the client's "sent"
    // event is stamped, and a loaded machine stamps late: the delay is in firstByte, not download
    expect(slowHeaders.details.timings!.firstByte).toBeGreaterThanOrEqual(250)
    expect(slowHeaders.details.timings!.download).toBeLessThan(100)
    const slowBody = await run({ url: `${http.origin}/slow-body` })
    expect(slowBody.details.timings!.download).toBeGreaterThanOrEqual(250)
    expect(slowBody.details.timings!.firstByte).toBeLessThan(100)
    expect(slowBody.details.body).toBe('x'.repeat(2000))
    for (const { result, details } of [slowHeaders, slowBody]) {
      const t = details.timings!
      expect(t.total).toBeGreaterThanOrEqual(250)
      expect(Math.abs(t.total - (t.dns + t.tcp + t.tls + t.firstByte + t.download))).toBeLessThan(30)
      expect(result.responseTime).toBe(t.total)
    }
  })

  it('measures TLS over https, and reports the certificate days remaining', async () => {
    const { result, details } = await run({ url: `${tls.origin}/slow-headers`, skipSSL: true })
    expect(result.status).toBe('PASSED')
    const t = details.timings!
    expect(t.tls).toBeGreaterThan(0)
    expect(t.firstByte).toBeGreaterThanOrEqual(295)
    expect(Math.abs(t.total - (t.dns + t.tcp + t.tls + t.firstByte + t.download))).toBeLessThan(30)
    expect(details.sslDaysRemaining).toBe(CERT_DAYS)
  })

  it('measures the lookup of an https host too', async () => {
    const { result, details } = await run({ url: `https://localhost:${tls.port}/echo`, skipSSL: true })
    expect(result.status).toBe('PASSED')
    expect(details.timings!.dns).toBeGreaterThan(0)
    expect(details.timings!.tls).toBeGreaterThan(0)
    expect(details.sslDaysRemaining).toBe(CERT_DAYS)
  })

  it('reads a large body to its end but keeps 1 MiB for assertions and 64 KiB in the result', async () => {
    const { result, details } = await run({
      url: `${http.origin}/big`,
      assertions: [
        { source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'aZ' },
        { source: 'TEXT_BODY', comparison: 'NOT_CONTAINS', target: 'Zb' },
      ],
    })
    expect(result.assertions.map((a) => a.passed)).toEqual([true, true])
    expect(details.bodySize).toBe(1.5 * 1024 * 1024)
    expect(details.bodyTruncated).toBe(true)
    expect(details.body).toHaveLength(64 * 1024)
  })

  it('counts certificate days in whole days, negative once expired', () => {
    const now = Date.parse('2026-11-22T12:00:00Z')
    expect(daysRemaining('Dec 22 11:59:59 2026 GMT', now)).toBe(29)
    expect(daysRemaining('Dec 22 12:00:00 2026 GMT', now)).toBe(30)
    expect(daysRemaining('Nov 21 12:00:00 2026 GMT', now)).toBe(-1)
    expect(daysRemaining('not a date', now)).toBeNull()
  })

  it('measures connect and TLS again on every run (no pooled connection)', async () => {
    const first = await run({ url: `${tls.origin}/echo`, skipSSL: true })
    const second = await run({ url: `${tls.origin}/echo`, skipSSL: true })
    expect(first.details.timings!.tls).toBeGreaterThan(0)
    expect(second.details.timings!.tls).toBeGreaterThan(0)
    expect(second.details.timings!.tcp).toBeGreaterThan(0)
  })

  it('refuses the self-signed certificate unless skipSSL is set', async () => {
    const before = tls.requests.length
    const { result, details } = await run({ url: `${tls.origin}/echo` })
    expect(result.status).toBe('FAILED')
    expect(result.hasErrors).toBe(false)
    expect(result.error).toContain('TLS certificate of 127.0.0.1:')
    expect(result.error).toContain('self-signed certificate')
    expect(result.error).toContain('set request.skipSSL to accept it')
    expect(details.statusCode).toBeNull()
    expect(tls.requests.length).toBe(before)
    const skipped = await run({ url: `${tls.origin}/echo`, skipSSL: true })
    expect(skipped.result.status).toBe('PASSED')
    expect(tls.requests.length).toBe(before + 1)
  })

  it('follows redirects by default and records them; followRedirects false stops at the first answer', async () => {
    const followed = await run({ url: `${http.origin}/redirect` })
    expect(followed.result.status).toBe('PASSED')
    expect(followed.details.statusCode).toBe(200)
    expect(followed.details.redirects).toEqual([{ statusCode: 302, location: `${http.origin}/json` }])
    expect(followed.details.url).toBe(`${http.origin}/json`)
    expect(JSON.parse(followed.details.body).total).toBe(2)

    const stopped = await run({
      url: `${http.origin}/redirect`,
      followRedirects: false,
      assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '302' }],
    })
    expect(stopped.result.status).toBe('PASSED')
    expect(stopped.details.statusCode).toBe(302)
    expect(stopped.details.headers.location).toBe('/json')
    expect(stopped.details.redirects).toEqual([])
  })

  it('turns a POST into a GET on 303, follows https to http and stops redirect loops', async () => {
    const seeOther = await run({ method: 'POST', url: `${http.origin}/redirect-303`, body: '{"a":1}', bodyType: 'JSON' })
    expect(seeOther.result.status).toBe('PASSED')
    expect(lastRequest(http, '/echo')).toMatchObject({ method: 'GET', body: '' })
    const crossing = await run({ url: `${tls.origin}/to-http`, skipSSL: true })
    expect(crossing.details.statusCode).toBe(200)
    expect(crossing.details.sslDaysRemaining).toBe(CERT_DAYS)
    expect(crossing.details.timings!.tls).toBeGreaterThan(0)
    const loop = await run({ url: `${http.origin}/loop` })
    expect(loop.result.status).toBe('FAILED')
    expect(loop.result.error).toContain('more than 10 redirects')
  })

  it('sends the method, headers, query parameters, basic auth and the body by its type', async () => {
    await run({
      method: 'PUT',
      url: `${http.origin}/echo?fixed=1`,
      headers: [{ key: 'X-Trace', value: 't-1' }],
      queryParameters: [
        { key: 'page', value: '2' },
        { key: 'q', value: 'a b&c' },
      ],
      basicAuth: { username: 'alice', password: 'wonder' },
      body: '{"name":"x"}',
      bodyType: 'JSON',
    })
    const sent = lastRequest(http, '/echo')
    expect(sent.method).toBe('PUT')
    expect(sent.path).toBe('/echo?fixed=1&page=2&q=a+b%26c')
    expect(sent.headers['x-trace']).toBe('t-1')
    expect(sent.headers.authorization).toBe(`Basic ${Buffer.from('alice:wonder').toString('base64')}`)
    expect(sent.headers['content-type']).toBe('application/json')
    expect(sent.body).toBe('{"name":"x"}')

    await run({ method: 'POST', url: `${http.origin}/echo`, body: 'a=1&b=2', bodyType: 'FORM' })
    expect(lastRequest(http, '/echo')).toMatchObject({ method: 'POST', body: 'a=1&b=2' })
    expect(lastRequest(http, '/echo').headers['content-type']).toBe('application/x-www-form-urlencoded')

    await run({ method: 'POST', url: `${http.origin}/echo`, body: '{ health }', bodyType: 'GRAPHQL' })
    expect(JSON.parse(lastRequest(http, '/echo').body)).toEqual({ query: '{ health }' })
    expect(lastRequest(http, '/echo').headers['content-type']).toBe('application/json')
    const envelope = '{"query":"query Q($id: ID!) { order(id: $id) { id } }","variables":{"id":"1"}}'
    await run({ method: 'POST', url: `${http.origin}/echo`, body: envelope, bodyType: 'GRAPHQL' })
    expect(lastRequest(http, '/echo').body).toBe(envelope)

    await run({ method: 'POST', url: `${http.origin}/echo`, body: 'raw text', bodyType: 'RAW', headers: [{ key: 'content-type', value: 'text/csv' }] })
    expect(lastRequest(http, '/echo')).toMatchObject({ body: 'raw text' })
    expect(lastRequest(http, '/echo').headers['content-type']).toBe('text/csv')

    await run({ method: 'POST', url: `${http.origin}/echo`, body: 'ignored', bodyType: 'NONE' })
    expect(lastRequest(http, '/echo')).toMatchObject({ method: 'POST', body: '' })

    const head = await run({ method: 'HEAD', url: `${http.origin}/json` })
    expect(head.result.status).toBe('PASSED')
    expect(lastRequest(http, '/json').method).toBe('HEAD')
    expect(head.details.body).toBe('')
  })
})

describe('API runner: assertions', () => {
  it('reads every source', async () => {
    const { result } = await run({
      url: `${http.origin}/json`,
      assertions: [
        { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
        { source: 'STATUS_CODE', comparison: 'LESS_THAN', target: '300' },
        { source: 'JSON_BODY', property: '$.data[0].id', comparison: 'EQUALS', target: '7' },
        { source: 'JSON_BODY', property: '$.data[1].name', comparison: 'IS_NULL' },
        { source: 'JSON_BODY', property: '$.data[0]', comparison: 'HAS_KEY', target: 'name' },
        { source: 'JSON_BODY', property: '$.tags', comparison: 'HAS_VALUE', target: 'b' },
        { source: 'JSON_BODY', property: '$.empty', comparison: 'IS_EMPTY' },
        { source: 'JSON_BODY', property: '$.total', comparison: 'GREATER_THAN', target: '1' },
        { source: 'HEADERS', property: 'X-Request-Id', comparison: 'EQUALS', target: 'abc-123' },
        { source: 'HEADERS', property: 'cache-control', regex: 'max-age=(\\d+)', comparison: 'EQUALS', target: '60' },
        { source: 'HEADERS', comparison: 'HAS_KEY', target: 'x-request-id' },
        { source: 'HEADERS', property: 'x-absent', comparison: 'IS_NULL' },
        { source: 'TEXT_BODY', comparison: 'CONTAINS', target: '"name":"first"' },
        { source: 'TEXT_BODY', comparison: 'NOT_CONTAINS', target: 'error' },
        { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '5000' },
      ],
    })
    expect(result.assertions.filter((a) => !a.passed).map((a) => a.message)).toEqual([])
    expect(result.assertions).toHaveLength(15)
    expect(result.status).toBe('PASSED')
  })

  it('fails with a readable message per failed assertion', async () => {
    const { result } = await run({
      url: `${http.origin}/text`,
      assertions: [
        { source: 'STATUS_CODE', comparison: 'EQUALS', target: '201' },
        { source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'degraded' },
        { source: 'TEXT_BODY', regex: 'all (\\w+) operational', comparison: 'EQUALS', target: 'systems' },
        { source: 'HEADERS', property: 'content-type', comparison: 'EQUALS', target: 'application/json' },
        { source: 'JSON_BODY', property: '$.status', comparison: 'EQUALS', target: 'ok' },
        { source: 'RESPONSE_TIME', comparison: 'GREATER_THAN', target: '10000' },
      ],
    })
    expect(result.status).toBe('FAILED')
    expect(result.failureKind).toBe('ASSERTION')
    const byIndex = result.assertions.map((a) => [a.passed, a.message])
    expect(byIndex[0]).toEqual([false, 'STATUS_CODE EQUALS "201" failed: got 200'])
    expect(byIndex[1]).toEqual([false, 'TEXT_BODY CONTAINS "degraded" failed: got "hello world, all systems operational"'])
    expect(byIndex[2]).toEqual([true, 'TEXT_BODY EQUALS "systems" passed'])
    expect(byIndex[3]).toEqual([false, 'HEADERS content-type EQUALS "application/json" failed: got "text/plain"'])
    expect(byIndex[4]).toEqual([false, 'JSON_BODY $.status EQUALS "ok" failed: the body is not JSON'])
    expect(byIndex[5][0]).toBe(false)
    expect(byIndex[5][1]).toMatch(/^RESPONSE_TIME GREATER_THAN "10000" ms failed: got [\d.]+ ms$/)
    expect(result.error).toContain('STATUS_CODE EQUALS "201" failed: got 200')
  })

  it('fails an error status when no STATUS_CODE assertion says otherwise', async () => {
    const plain = await run({ url: `${http.origin}/error` })
    expect(plain.result.status).toBe('FAILED')
    expect(plain.result.error).toContain('status code 503')
    const expected = await run({ url: `${http.origin}/missing`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '404' }] })
    expect(expected.result.status).toBe('PASSED')
  })

  it('degrades over degradedResponseTime and fails over maxResponseTime', async () => {
    const degraded = await run({ url: `${http.origin}/slow-headers` }, { degradedResponseTime: 100, maxResponseTime: 5000 })
    expect(degraded.result.status).toBe('DEGRADED')
    expect(degraded.result.isDegraded).toBe(true)
    const timedOut = await run({ url: `${http.origin}/slow-headers` }, { degradedResponseTime: 50, maxResponseTime: 100 })
    expect(timedOut.result.status).toBe('TIMED_OUT')
  })

  it('shouldFail turns a failing run into a pass and a passing one into a failure', async () => {
    const failing = await run({ url: `${http.origin}/error` }, { shouldFail: true })
    expect(failing.result.status).toBe('PASSED')
    const passing = await run({ url: `${http.origin}/echo` }, { shouldFail: true })
    expect(passing.result.status).toBe('FAILED')
    expect(passing.result.error).toBe('shouldFail is set, but the run passed')
  })
})

describe('API runner: failures of the connection', () => {
  it('times out at maxResponseTime (or the runner limit) as TIMED_OUT, a network error', async () => {
    const started = Date.now()
    const { result, details } = await run({ url: `${http.origin}/hang` }, { maxResponseTime: 200 })
    expect(Date.now() - started).toBeLessThan(2000)
    expect(result.status).toBe('TIMED_OUT')
    expect(result.timedOut).toBe(true)
    expect(result.failureKind).toBe('NETWORK_ERROR')
    expect(result.error).toBe(`no complete response from 127.0.0.1:${http.port} within 200 ms`)
    expect(details.statusCode).toBeNull()
    const capped = await run({ url: `${http.origin}/slow-body` }, { maxResponseTime: 20000 }, { timeoutMs: 150 })
    expect(capped.result.status).toBe('TIMED_OUT')
    expect(capped.result.error).toContain('within 150 ms')
  })

  it('reports a refused connection as a NETWORK_ERROR failure, retried by onlyOn NETWORK_ERROR', async () => {
    const closed = await freePort()
    const waits: number[] = []
    const { result } = await run(
      { url: `http://127.0.0.1:${closed}/` },
      { retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 1, onlyOn: ['NETWORK_ERROR'] } },
      {
        sleep: async (ms) => {
          waits.push(ms)
        },
      },
    )
    expect(result.status).toBe('FAILED')
    expect(result.hasErrors).toBe(false)
    expect(result.failureKind).toBe('NETWORK_ERROR')
    expect(result.error).toBe(`http request to 127.0.0.1:${closed} failed: connection refused (ECONNREFUSED)`)
    expect(result.attempts).toHaveLength(1)
    expect(waits).toEqual([1000])
  })

  it('reports an unknown host as a NETWORK_ERROR failure', async () => {
    const { result } = await run({ url: 'http://no-such-host.invalid/' }, { maxResponseTime: 5000 })
    // FAILED when the resolver says so at once; TIMED_OUT when it does not answer in time
    expect(['FAILED', 'TIMED_OUT']).toContain(result.status)
    expect(result.failureKind).toBe('NETWORK_ERROR')
    expect(result.error).toContain('no-such-host.invalid')
  })

  it('an aborted run is an error of the run, not a failure of the check', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    const { result } = await run({ url: `${http.origin}/hang` }, {}, { signal: controller.signal })
    expect(result.hasErrors).toBe(true)
    expect(result.aborted).toBe(true)
    expect(result.error).toBe('run aborted before the response was complete')
  })
})

describe('API runner: variables and secrets', () => {
  const variables = {
    ECHO_PATH: 'echo',
    TOKEN: { value: 's3cr3t-token-value', secret: true },
    PASSWORD: { value: 'hunter2-password', secret: true },
    USER: { value: 'svc-user' },
  }

  it('resolves {{VARIABLE}} in url, headers, query parameters, body and basicAuth', async () => {
    const { result } = await run(
      {
        method: 'POST',
        url: `${http.origin}/{{ECHO_PATH}}`,
        headers: [{ key: 'authorization-token', value: 'Bearer {{TOKEN}}' }],
        queryParameters: [{ key: 'user', value: '{{ USER }}' }],
        body: '{"user":"{{USER}}"}',
        bodyType: 'JSON',
        basicAuth: { username: '{{USER}}', password: '{{PASSWORD}}' },
      },
      {},
      { variables },
    )
    expect(result.status).toBe('PASSED')
    const sent = lastRequest(http, '/echo')
    expect(sent.path).toBe('/echo?user=svc-user')
    expect(sent.headers['authorization-token']).toBe('Bearer s3cr3t-token-value')
    expect(sent.headers.authorization).toBe(`Basic ${Buffer.from('svc-user:hunter2-password').toString('base64')}`)
    expect(sent.body).toBe('{"user":"svc-user"}')
  })

  it('reports a missing variable by name as an error of the run', async () => {
    const before = http.requests.length
    const { result } = await run({ url: `${http.origin}/echo`, headers: [{ key: 'x-key', value: '{{API_KEY}}' }] }, {}, { variables })
    expect(result.status).toBe('FAILED')
    expect(result.hasErrors).toBe(true)
    expect(result.error).toBe(`variable {{API_KEY}} (in request.headers[0].value) is not defined: add it to the account's environment variables`)
    expect(http.requests.length).toBe(before)
  })

  it('never shows a secret in the result: secret variables, secret headers and query parameters, the basic auth password', async () => {
    http.route('/reflect', { status: 500, body: 'token s3cr3t-token-value and header-secret-42 and qp-secret-99', headers: { 'x-echo': 's3cr3t-token-value' } })
    const { result } = await run(
      {
        url: `${http.origin}/reflect`,
        headers: [
          { key: 'x-token', value: '{{TOKEN}}' },
          { key: 'x-other', value: 'header-secret-42', secret: true },
        ],
        queryParameters: [
          { key: 'key', value: 'qp-secret-99', secret: true },
          { key: 't', value: '{{TOKEN}}' },
        ],
        basicAuth: { username: 'svc-user', password: '{{PASSWORD}}' },
        assertions: [
          { source: 'TEXT_BODY', comparison: 'EQUALS', target: 'something else' },
          { source: 'HEADERS', property: 'x-echo', comparison: 'EQUALS', target: 'no' },
        ],
      },
      {},
      { variables },
    )
    expect(result.status).toBe('FAILED')
    const sent = lastRequest(http, '/reflect')
    expect(sent.headers['x-token']).toBe('s3cr3t-token-value')
    expect(sent.path).toBe('/reflect?key=qp-secret-99&t=s3cr3t-token-value')
    const text = JSON.stringify(result)
    for (const secret of [
      's3cr3t-token-value',
      'header-secret-42',
      'qp-secret-99',
      'hunter2-password',
      Buffer.from('svc-user:hunter2-password').toString('base64'),
    ]) {
      expect(text).not.toContain(secret)
    }
    expect((result.details as ApiDetails).url).toBe(`${http.origin}/reflect?key=********&t=********`)
    expect(result.error).toContain('********')

    // the message of an unreachable host masks them too
    const refused = await run({ url: `http://127.0.0.1:${await freePort()}/x?t={{TOKEN}}` }, {}, { variables })
    expect(JSON.stringify(refused.result)).not.toContain('s3cr3t-token-value')
  })
})

async function freePort(): Promise<number> {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
