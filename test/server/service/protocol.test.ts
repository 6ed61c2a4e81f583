import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../../src/server/index.js'
import { onPostgres } from '../../helpers/postgres-databases.js'
import { KEY_A, KEY_B, caller, dnsBody, expect400, icmpBody, startTestServer, type Call } from '../helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

let server: LocalServer
let api: Call

beforeAll(async () => {
  server = await startTestServer()
  api = caller(server)
})
afterAll(() => server.close())

describe('authentication and accounts', () => {
  const unauthorized = { statusCode: 401, error: 'Unauthorized', message: 'Bad token', attributes: { error: 'Bad token' } }

  it.each([
    ['no header', {}],
    ['an unknown key', { authorization: 'Bearer not-a-key' }],
    ['another scheme', { authorization: `Basic ${KEY_A}` }],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ])('answers 401 for %s, with WWW-Authenticate', async (_name, headers) => {
    const answer = await caller(server, null)('GET', '/v1/checks', undefined, headers)
    expect(answer.status).toBe(401)
    expect(answer.json).toEqual(unauthorized)
    expect(answer.headers.get('www-authenticate')).toBe('Bearer error="Bad token"')
  })

  it('answers 401 on writes too, and stores nothing', async () => {
    const before = (await api('GET', '/v1/checks')).headers.get('content-range')
    expect((await caller(server, 'nope')('POST', '/v1/checks/dns', dnsBody())).status).toBe(401)
    expect((await api('GET', '/v1/checks')).headers.get('content-range')).toBe(before)
  })

  it("answers 403 when x-service-account is not the key's account", async () => {
    const answer = await api('GET', '/v1/checks', undefined, { 'x-service-account': 'acc-b' })
    expect(answer.status).toBe(403)
    expect(answer.json).toEqual({ statusCode: 403, error: 'Forbidden', message: 'Forbidden' })
    expect((await api('GET', '/v1/checks', undefined, { 'x-service-account': 'acc-a' })).status).toBe(200)
  })

  it("keeps accounts apart: another account's ids answer 404", async () => {
    const other = caller(server, KEY_B)
    const check = (await api('POST', '/v1/checks/dns', dnsBody({ name: 'private' }))).json
    const variable = (await api('POST', '/v1/variables', { key: 'ONLY_A', value: 'a' })).json
    const service = (await api('POST', '/v1/status-pages/services', { name: 'A service' })).json
    const page = (await api('POST', '/v1/status-pages', { name: 'A page', url: 'a-page', cards: [] })).json
    const window = (await api('POST', '/v1/maintenance-windows', { name: 'w', startsAt: '2026-01-01T00:00:00Z', endsAt: '2026-01-01T01:00:00Z' })).json
    const incident = (await api('POST', '/v1/incidents', { name: 'i', severity: 'MINOR' })).json
    const update = (await api('POST', `/v1/incidents/${incident.id}/updates`, { status: 'MONITORING', description: 'd' })).json

    for (const path of [
      `/v1/checks/${check.id}`,
      '/v1/variables/ONLY_A',
      `/v1/status-pages/services/${service.id}`,
      `/v1/status-pages/${page.id}`,
      `/v1/maintenance-windows/${window.id}`,
      `/v1/incidents/${incident.id}`,
      `/v1/incidents/${incident.id}/updates/${update.id}`,
    ]) {
      expect((await other('GET', path)).status, path).toBe(404)
      expect((await other('DELETE', path)).status, path).toBe(404)
    }
    expect((await other('PUT', `/v1/checks/dns/${check.id}`, dnsBody())).status).toBe(404)
    expect((await other('PUT', '/v1/variables/ONLY_A', { value: 'b' })).status).toBe(404)
    expect((await other('PUT', `/v1/status-pages/${page.id}`, { name: 'x', url: 'a-page', cards: [] })).status).toBe(404)
    // a card may not name another account's service
    expect(
      expect400(await other('POST', '/v1/status-pages', { name: 'b', url: 'b-page', cards: [{ name: 'c', services: [{ id: service.id }] }] }), 'payload'),
    ).toEqual(['cards.0.services.0.id'])
    // the same variable key is free in another account
    expect((await other('POST', '/v1/variables', { key: 'ONLY_A', value: 'b' })).status).toBe(201)
    const lists = await Promise.all(
      ['/v1/checks?limit=100', '/v1/status-pages/services', '/v1/maintenance-windows', '/v1/incidents'].map((p) => other('GET', p)),
    )
    for (const list of lists) expect(list.json).toEqual([])
    expect((await other('GET', '/v1/status-pages')).json.entries).toEqual([])
    // and everything is still there for its owner
    expect((await api('GET', `/v1/checks/${check.id}`)).json).toEqual(check)
    expect((await api('GET', '/v1/variables/ONLY_A')).json).toEqual(variable)
  })
})

describe('errors never leak and never answer 500', () => {
  it('malformed JSON is a 400 with the error body', async () => {
    const answer = await api('POST', '/v1/checks/dns', '{"name": "x",')
    expect(answer.status).toBe(400)
    expect(answer.json).toMatchObject({ statusCode: 400, error: 'Bad Request', attributes: { source: 'payload' } })
    expect(answer.text).not.toMatch(/at .*\.js/)
  })

  it('a JSON body that is not an object is a 400', async () => {
    for (const body of ['[]', '"text"', '42', 'null']) {
      const answer = await api('POST', '/v1/checks/icmp', body)
      expect(answer.status, body).toBe(400)
      expect(answer.json.error).toBe('Bad Request')
    }
  })

  it('a POST without a body is a 400 naming the required fields', async () => {
    const answer = await api('POST', '/v1/variables', undefined)
    expect(answer.status).toBe(400)
    expect(answer.json.message).toBe('body is required, with the fields key, value')
    const array = await api('POST', '/v1/variables', [])
    expect(array.json.message).toBe('body must be an object (got array)')
  })

  it('prototype pollution attempts are refused', async () => {
    const answer = await api('POST', '/v1/checks/dns', '{"name":"x","request":{"query":"q"},"__proto__":{"admin":true}}')
    expect(answer.status).toBe(400)
  })

  it('wrong types in every place are 400s', async () => {
    const answer = await api('POST', '/v1/checks/dns', { name: 1, request: 'r', tags: 'a', locations: 'eu-west-1', alertSettings: [], frequency: null })
    expect(expect400(answer, 'payload').sort()).toEqual(['frequency', 'locations', 'name', 'request', 'tags'].concat(['alertSettings']).sort())
  })

  it('a body of more than 1 MiB is a 413', async () => {
    const answer = await api('POST', '/v1/checks/dns', JSON.stringify(dnsBody({ name: 'x'.repeat(1024 * 1024) })))
    expect(answer.status).toBe(413)
    expect(answer.json).toEqual({ statusCode: 413, error: 'Payload Too Large', message: 'Request body is larger than 1 MiB' })
  })

  it('an unsupported content type is a 415 with the error body; text is read as a non-object body', async () => {
    const xml = await api('POST', '/v1/checks/dns', '<check/>', { 'content-type': 'application/xml' })
    expect(xml.status).toBe(415)
    expect(xml.json).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type' })
    const text = await api('POST', '/v1/checks/dns', JSON.stringify(dnsBody()), { 'content-type': 'text/plain' })
    expect(text.status).toBe(400)
  })

  it('unknown routes and methods answer 404 JSON', async () => {
    // GET / is the dashboard (test/web); any other path outside the API is still unknown
    for (const [method, path] of [
      ['GET', '/v1/nothing'],
      ['GET', '/nothing'],
      ['PATCH', '/v1/checks/abc'],
      ['POST', '/v1/checks/traceroute'],
    ]) {
      const answer = await api(method, path, method === 'GET' ? undefined : {})
      expect(answer.status, `${method} ${path}`).toBe(404)
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
      expect(answer.json).toMatchObject({ statusCode: 404, error: 'Not Found' })
    }
  })

  it('a DELETE with a JSON content type and no body works', async () => {
    const check = (await api('POST', '/v1/checks/dns', dnsBody())).json
    expect((await api('DELETE', `/v1/checks/${check.id}`, undefined, { 'content-type': 'application/json' })).status).toBe(204)
  })

  it('odd paths and queries are client errors', async () => {
    const badUrl = await api('GET', '/v1/checks/%E0%A4%A')
    expect(badUrl.status).toBe(400)
    expect(badUrl.json).toMatchObject({ statusCode: 400, error: 'Bad Request' })
    expect('code' in badUrl.json).toBe(false)
    expect((await api('GET', `/v1/variables/${'A'.repeat(128)}`)).status).toBe(404)
    expect((await api('GET', '/v1/checks?limit=1&limit=2')).status).toBe(400)
    const long = await api('GET', `/v1/checks/${'x'.repeat(5000)}`)
    expect(long.status).toBe(414)
    expect(long.json).toEqual({ statusCode: 414, error: 'URI Too Long', message: 'A path parameter is too long' })
  })

  it('random bodies never cause a 500', async () => {
    const fc = await import('fast-check')
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue(),
        fc.constantFrom(
          '/v1/checks/dns',
          '/v1/checks/icmp',
          '/v1/variables',
          '/v1/status-pages',
          '/v1/maintenance-windows',
          '/v1/incidents',
          '/v1/status-pages/services',
        ),
        async (body, path) => {
          const answer = await api('POST', path, JSON.stringify(body))
          return answer.status < 500
        },
      ),
      { numRuns: 150 },
    )
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            name: fc.anything(),
            request: fc.anything(),
            frequency: fc.anything(),
            frequencyOffset: fc.anything(),
            heartbeat: fc.anything(),
            script: fc.anything(),
          },
          { requiredKeys: [] },
        ),
        async (body) => {
          const answer = await api('POST', '/v1/checks/icmp', JSON.stringify(body))
          return answer.status === 201 || answer.status === 400
        },
      ),
      { numRuns: 150 },
    )
  })
})

describe('rate limit', () => {
  it('carries the headers of API.md and answers 429 after the limit, per key', async () => {
    const limited = await startTestServer({ rateLimit: { max: 3, timeWindowMs: 60_000 } })
    try {
      const a = caller(limited, KEY_A)
      const first = await a('GET', '/v1/runtimes')
      expect(first.headers.get('x-ratelimit-limit')).toBe('3')
      expect(first.headers.get('x-ratelimit-remaining')).toBe('2')
      expect(Number(first.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0)
      expect(Number(first.headers.get('x-ratelimit-reset'))).toBeLessThanOrEqual(60)
      await a('GET', '/v1/runtimes')
      const third = await a('GET', '/v1/checks/nope')
      expect(third.status).toBe(404)
      expect(third.headers.get('x-ratelimit-remaining')).toBe('0')
      const fourth = await a('GET', '/v1/runtimes')
      expect(fourth.status).toBe(429)
      const seconds = Number(fourth.headers.get('retry-after'))
      expect(seconds).toBeGreaterThan(0)
      expect(fourth.json).toMatchObject({ statusCode: 429, error: 'Too Many Requests', attributes: { limit: 3, remaining: 0 } })
      expect(fourth.json.message).toMatch(/^Rate limit exceeded, retry in \d+ seconds?$/)
      const reset = fourth.json.attributes.reset
      expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000))
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 61)
      // a write over the limit stores nothing
      expect((await a('POST', '/v1/variables', { key: 'LATE', value: 'x' })).status).toBe(429)
      // another key has its own window
      const b = caller(limited, KEY_B)
      expect((await b('GET', '/v1/runtimes')).status).toBe(200)
      expect((await b('GET', '/v1/variables/LATE')).status).toBe(404)
    } finally {
      await limited.close()
    }
  })

  it("the window resets, on the server's clock", async () => {
    let now = Date.parse('2026-03-01T10:00:00Z')
    const limited = await startTestServer({ rateLimit: { max: 1, timeWindowMs: 60_000 }, clock: () => now })
    try {
      const a = caller(limited)
      expect((await a('GET', '/v1/runtimes')).status).toBe(200)
      const refused = await a('GET', '/v1/runtimes')
      expect(refused.status).toBe(429)
      expect(refused.json.attributes.reset).toBe(Math.ceil(now / 1000) + 60)
      now += 59_000
      expect((await a('GET', '/v1/runtimes')).status).toBe(429)
      now += 1_000
      expect((await a('GET', '/v1/runtimes')).status).toBe(200)
    } finally {
      await limited.close()
    }
  })
})

describe('storage, keys and lifecycle', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'monitors-server-'))
    return () => rmSync(dir, { recursive: true, force: true })
  })

  it('data survives a restart; a generated key is kept as a hash and works after the restart', async () => {
    const dbPath = join(dir, 'nested', 'server.db')
    const first = await startLocalServer({ dbPath })
    expect(first.keyGenerated).toBe(true)
    expect(first.apiKey).toMatch(/^mon_/)
    expect(first.accountId).toBe('local')
    const key = first.apiKey as string
    const call = caller(first, key)
    const check = (await call('POST', '/v1/checks/icmp', icmpBody({ tags: ['kept'] }))).json
    await call('POST', '/v1/variables', { key: 'KEPT', value: 'v', secret: true })
    const service = (await call('POST', '/v1/status-pages/services', { name: 's' })).json
    await call('POST', '/v1/status-pages', { name: 'p', url: 'kept-page', cards: [{ name: 'c', services: [{ id: service.id }] }] })
    await first.close()

    // the key is stored hashed, never in plain text (the PostgreSQL store's rows: test/server/store/postgres.test.ts)
    if (!onPostgres) {
      const raw = new Database(dbPath, { readonly: true })
      const rows = raw.prepare('SELECT * FROM api_keys').all()
      raw.close()
      expect(JSON.stringify(rows)).not.toContain(key)
      expect(rows).toHaveLength(1)
    }

    const second = await startLocalServer({ dbPath })
    try {
      expect(second.apiKey).toBeUndefined()
      expect(second.keyGenerated).toBe(false)
      expect(second.accountId).toBe('local')
      const again = caller(second, key)
      expect((await again('GET', `/v1/checks/${check.id}`)).json).toEqual(check)
      expect((await again('GET', '/v1/checks?tag=kept')).json).toEqual([check])
      expect((await again('GET', '/v1/variables/KEPT')).json).toMatchObject({ value: '', secret: true })
      expect((await again('GET', '/v1/status-pages')).json.entries[0].cards[0].services[0].id).toBe(service.id)
      expect((await again('DELETE', `/v1/status-pages/services/${service.id}`)).status).toBe(409)
    } finally {
      await second.close()
    }
  })

  it('keys given on start are added to the stored ones: none is revoked by a start (monitors keys revoke does that)', async () => {
    const dbPath = join(dir, 'keys.db')
    const first = await startLocalServer({ dbPath, apiKeys: [{ key: 'old-key-0123456789abcdef' }] })
    expect(first.apiKey).toBe('old-key-0123456789abcdef')
    expect(first.accountId).toMatch(/^acc_[0-9a-f]{12}$/)
    await first.close()
    const second = await startLocalServer({ dbPath, apiKeys: [{ key: 'new-key-0123456789abcdef', accountId: 'team' }] })
    try {
      expect(second.accountId).toBe('team')
      expect((await caller(second, 'old-key-0123456789abcdef')('GET', '/v1/checks', undefined, { 'x-service-account': first.accountId })).status).toBe(200)
      expect((await caller(second, 'new-key-0123456789abcdef')('GET', '/v1/checks', undefined, { 'x-service-account': 'team' })).status).toBe(200)
    } finally {
      await second.close()
    }
  })

  it('a port in use is a clear error', async () => {
    const port = Number(new URL(server.url).port)
    await expect(startLocalServer({ port })).rejects.toMatchObject({ userError: true, message: expect.stringMatching(/EADDRINUSE/) })
  })

  // a SQLite file's user_version; the PostgreSQL store's schema_migrations: test/server/store/postgres.test.ts
  it.skipIf(onPostgres)('a database of a newer schema is refused with a clear error', async () => {
    const dbPath = join(dir, 'future.db')
    const raw = new Database(dbPath)
    raw.pragma('user_version = 999')
    raw.close()
    await expect(startLocalServer({ dbPath })).rejects.toMatchObject({ userError: true, message: expect.stringMatching(/newer version/) })
  })

  it('counts requests, logs one line per request without keys, and closes gracefully', async () => {
    const lines: string[] = []
    const own = await startTestServer({ log: (line) => lines.push(line) })
    const call = caller(own)
    expect(own.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(own.requestCount()).toBe(0)
    await call('GET', '/v1/checks?limit=5')
    await call('POST', '/v1/checks/dns', dnsBody())
    await caller(own, 'wrong')('GET', '/v1/checks')
    expect(own.requestCount()).toBe(3)
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatch(/^GET \/v1\/checks\?limit=5 200 \d+(\.\d+)?ms$/)
    expect(lines[1]).toMatch(/^POST \/v1\/checks\/dns 201 /)
    expect(lines[2]).toMatch(/^GET \/v1\/checks 401 /)
    expect(lines.join('\n')).not.toContain(KEY_A)

    // a request in flight when close() starts still gets its answer
    const inFlight = call('POST', '/v1/checks/dns', JSON.stringify(dnsBody()))
    // close only once the server has the request (a fixed pause loses the race on a loaded machine)
    await waitFor(() => own.requestCount() >= 4, { intervalMs: 1, what: 'the server to have the request' })
    await own.close()
    expect((await inFlight).status).toBe(201)
    await expect(fetch(`${own.url}/v1/checks`)).rejects.toThrow()
  })
})
