/**
 * Property-based tests: every route, sent malformed JSON, wrong types, huge and unicode
 * strings, negative and fractional numbers, extra and missing fields, always answers a 4xx
 * (or a 2xx where the input happens to be valid) with API.md's error body, never a 500, and
 * the server keeps serving.
 */
import fc from 'fast-check'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'

const KEY = 'fuzz-key'
let server: LocalServer
const ids: Record<string, string> = {}
let answered = 0
const statuses = new Map<number, number>()

async function call(method: string, path: string, body?: string, contentType = 'application/json') {
  const res = await request(`${server.url}${path}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${KEY}`, ...(body !== undefined ? { 'content-type': contentType } : {}) },
    body,
  })
  const text = await res.body.text()
  answered++
  statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
  return { status: res.statusCode, text, type: String(res.headers['content-type'] ?? '') }
}

/** Checks an answer to fuzzed input: no 5xx, and errors in API.md's shape. */
function expectWellFormed(answer: { status: number; text: string; type: string }, what: string) {
  expect(answer.status, `${what} → ${answer.status} ${answer.text.slice(0, 300)}`).toBeLessThan(500)
  if (answer.status >= 400) {
    expect(answer.type).toContain('application/json')
    const body = JSON.parse(answer.text) as { statusCode: number; error: string; message: string; attributes?: { keys?: unknown } }
    expect(body.statusCode).toBe(answer.status)
    expect(typeof body.error).toBe('string')
    expect(typeof body.message).toBe('string')
    if (answer.status === 400 && body.attributes) expect(Array.isArray(body.attributes.keys)).toBe(true)
  }
}

const VALID: Record<string, () => Record<string, unknown>> = {
  dns: () => ({
    name: 'DNS',
    request: { query: 'example.com', recordType: 'A', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
    frequency: 5,
    frequencyOffset: 3,
    locations: ['eu-west-1'],
    tags: ['a'],
  }),
  icmp: () => ({
    name: 'Ping',
    request: { hostname: 'example.com', pingCount: 5, assertions: [{ source: 'LATENCY', property: 'avg', comparison: 'LESS_THAN', target: '100' }] },
    heartbeat: {},
    script: '',
    degradedPacketLossThreshold: 10,
  }),
  variable: () => ({ key: 'FUZZ_VAR', value: 'v', locked: false, secret: false }),
  service: () => ({ name: 'Service' }),
  statusPage: () => ({ name: 'Page', url: 'fuzz-page', cards: [{ name: 'Card', services: [{ id: ids.service }] }], defaultTheme: 'AUTO' }),
  window: () => ({ name: 'Window', tags: ['a'], startsAt: '2026-12-01T01:00:00Z', endsAt: '2026-12-01T02:00:00Z', repeatInterval: 1, repeatUnit: 'WEEK' }),
  incident: () => ({ name: 'Incident', severity: 'MAJOR', services: [{ id: ids.service }] }),
  update: () => ({ status: 'INVESTIGATING', description: 'Looking', notifySubscribers: false }),
}

/** Write routes with a body: method, path (with real ids filled in) and the valid body they take. */
const WRITES: Array<[string, () => string, keyof typeof VALID]> = [
  ['POST', () => '/v1/checks/dns', 'dns'],
  ['PUT', () => `/v1/checks/dns/${ids.dns}`, 'dns'],
  ['POST', () => '/v1/checks/icmp', 'icmp'],
  ['PUT', () => `/v1/checks/icmp/${ids.icmp}`, 'icmp'],
  ['POST', () => '/v1/variables', 'variable'],
  ['PUT', () => '/v1/variables/FUZZ_BASE', 'variable'],
  ['POST', () => '/v1/status-pages/services', 'service'],
  ['PUT', () => `/v1/status-pages/services/${ids.service}`, 'service'],
  ['POST', () => '/v1/status-pages', 'statusPage'],
  ['PUT', () => `/v1/status-pages/${ids.statusPage}`, 'statusPage'],
  ['POST', () => '/v1/maintenance-windows', 'window'],
  ['PUT', () => `/v1/maintenance-windows/${ids.window}`, 'window'],
  ['POST', () => '/v1/incidents', 'incident'],
  ['PUT', () => `/v1/incidents/${ids.incident}`, 'incident'],
  ['POST', () => `/v1/incidents/${ids.incident}/updates`, 'update'],
  ['PUT', () => `/v1/incidents/${ids.incident}/updates/${ids.update}`, 'update'],
]

/** Routes addressed by an id or key in the path. */
const BY_ID: Array<[string, (id: string) => string]> = [
  ['GET', (id) => `/v1/checks/${id}`],
  ['DELETE', (id) => `/v1/checks/${id}`],
  ['PUT', (id) => `/v1/checks/dns/${id}`],
  ['GET', (id) => `/v1/variables/${id}`],
  ['DELETE', (id) => `/v1/variables/${id}`],
  ['GET', (id) => `/v1/status-pages/${id}`],
  ['DELETE', (id) => `/v1/status-pages/${id}`],
  ['GET', (id) => `/v1/status-pages/services/${id}`],
  ['GET', (id) => `/v1/maintenance-windows/${id}`],
  ['DELETE', (id) => `/v1/maintenance-windows/${id}`],
  ['GET', (id) => `/v1/incidents/${id}`],
  ['DELETE', (id) => `/v1/incidents/${id}/updates/${id}`],
  ['GET', (id) => `/v1/runtimes/${id}`],
]

const LISTS = ['/v1/checks', '/v1/variables', '/v1/status-pages', '/v1/status-pages/services', '/v1/maintenance-windows', '/v1/incidents']

/** Values that break types and ranges. */
const nasty = fc.oneof(
  fc.jsonValue(),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ minLength: 3000, maxLength: 20000 }),
  fc.integer({ min: -1_000_000, max: -1 }),
  fc.double({ noNaN: true }),
  fc.constantFrom(0, -0, 1.5, 1e308, -1e308, '', ' ', '\u0000', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '<script>', "'; DROP TABLE checks; --", true, null, [], {}),
)

type Mutation = { kind: 'set'; path: number[]; value: unknown } | { kind: 'drop'; path: number[] } | { kind: 'extra'; key: string; value: unknown }
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), path: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), value: nasty }),
  fc.record({ kind: fc.constant('drop' as const), path: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('extra' as const), key: fc.string({ maxLength: 20 }), value: nasty }),
)

/** Applies a mutation at a path chosen by indexes into each level's keys. */
function mutate(body: Record<string, unknown>, m: Mutation): unknown {
  if (m.kind === 'extra') return { ...body, [m.key]: m.value }
  let node: unknown = body
  for (let i = 0; i < m.path.length; i++) {
    if (!node || typeof node !== 'object') break
    const keys = Object.keys(node)
    if (keys.length === 0) break
    const key = keys[m.path[i]! % keys.length]!
    const last = i === m.path.length - 1 || !(node as Record<string, unknown>)[key] || typeof (node as Record<string, unknown>)[key] !== 'object'
    if (last) {
      if (m.kind === 'drop') delete (node as Record<string, unknown>)[key]
      else (node as Record<string, unknown>)[key] = m.value
      break
    }
    node = (node as Record<string, unknown>)[key]
  }
  return body
}

beforeAll(async () => {
  server = await startLocalServer({ apiKeys: [{ key: KEY }], rateLimit: { max: 1_000_000, timeWindowMs: 60_000 } })
  const create = async (path: string, body: unknown) => {
    const res = await call('POST', path, JSON.stringify(body))
    expect(res.status, res.text).toBe(201)
    return JSON.parse(res.text) as { id: string }
  }
  ids.dns = (await create('/v1/checks/dns', VALID.dns!())).id
  ids.icmp = (await create('/v1/checks/icmp', VALID.icmp!())).id
  await create('/v1/variables', { key: 'FUZZ_BASE', value: 'x' })
  ids.service = (await create('/v1/status-pages/services', VALID.service!())).id
  ids.statusPage = (await create('/v1/status-pages', { ...VALID.statusPage!(), url: 'fuzz-base' })).id
  ids.window = String((await create('/v1/maintenance-windows', VALID.window!())).id)
  ids.incident = (await create('/v1/incidents', VALID.incident!())).id
  ids.update = (await create(`/v1/incidents/${ids.incident}/updates`, VALID.update!())).id
})

afterAll(async () => {
  await server?.close()
})

describe('fuzzing every route', () => {
  it('write routes: valid bodies with one to three mutations never make a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...WRITES), fc.array(mutation, { minLength: 1, maxLength: 3 }), async ([method, path, kind], mutations) => {
        let body: unknown = VALID[kind]!()
        for (const m of mutations) body = mutate(body as Record<string, unknown>, m)
        const answer = await call(method, path(), JSON.stringify(body))
        expectWellFormed(answer, `${method} ${path()} ${JSON.stringify(body).slice(0, 200)}`)
      }),
      { numRuns: 600, seed: 7 },
    )
  })

  it('write routes: arbitrary JSON and malformed text never make a 500', async () => {
    const raw = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 200 }),
      fc.constantFrom('{', '{"name":', '[1,2', 'null', '""', '{"a":1}}', '\u0000', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}'),
    )
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...WRITES), raw, async ([method, path], body) => {
        expectWellFormed(await call(method, path(), body), `${method} ${path()} ${body.slice(0, 100)}`)
      }),
      { numRuns: 400, seed: 11 },
    )
  })

  it('write routes: other content types, empty bodies and bodies over 1 MiB are 4xx', async () => {
    for (const [method, path] of WRITES) {
      expectWellFormed(await call(method, path(), 'name=x', 'application/x-www-form-urlencoded'), `${method} ${path()} form`)
      expectWellFormed(await call(method, path(), '', 'application/json'), `${method} ${path()} empty`)
      const huge = await call(method, path(), JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }))
      expect(huge.status).toBe(413)
      expectWellFormed(huge, `${method} ${path()} huge`)
    }
  })

  it('ids and keys in the path: unicode, huge, traversal and numbers never make a 500', async () => {
    const id = fc.oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 50 }),
      fc.string({ minLength: 1000, maxLength: 5000 }),
      fc.uuid(),
      fc.integer().map(String),
      fc.double().map(String),
      fc.constantFrom('..', '../..', '%00', '%ff', '-1', '0', '1e309', 'null', '%2e%2e%2f'),
    )
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...BY_ID), id, async ([method, path], raw) => {
        const encoded = /%[0-9a-f]{2}/i.test(raw) ? raw : encodeURIComponent(raw)
        const answer = await call(method, path(encoded), method === 'PUT' ? JSON.stringify(VALID.dns!()) : undefined)
        expectWellFormed(answer, `${method} ${path(encoded).slice(0, 120)}`)
      }),
      { numRuns: 400, seed: 13 },
    )
  })

  it('list queries: wrong types, negative and fractional paging never make a 500', async () => {
    const value = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.integer({ min: -1000, max: 100000 }).map(String),
      fc.double().map(String),
      fc.constantFrom('', '0', '-1', '1.5', '101', 'NaN', 'Infinity', 'true'),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...LISTS),
        fc.dictionary(fc.constantFrom('limit', 'page', 'nextId', 'checkType', 'tag', 'other'), value),
        async (path, query) => {
          const qs = new URLSearchParams(query).toString()
          expectWellFormed(await call('GET', `${path}?${qs}`), `GET ${path}?${qs}`)
        },
      ),
      { numRuns: 300, seed: 17 },
    )
  })

  it('keeps serving afterwards, with the data it had', async () => {
    const runtimes = await call('GET', '/v1/runtimes')
    expect(runtimes.status).toBe(200)
    expect(JSON.parse(runtimes.text)).toHaveLength(6)
    const check = await call('GET', `/v1/checks/${ids.dns}`)
    // fuzzed deletes use made-up ids only, so the real check is still there
    expect(check.status).toBe(200)
    expect(statuses.get(500) ?? 0).toBe(0)
    // the figures of this run, for the record
    console.log(`fuzz: ${answered} requests answered; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`)
  })
})
