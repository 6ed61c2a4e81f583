/**
 * The local server under hostile input (issue 8, part B): deep nesting, prototype keys,
 * rate-limit headers on every /v1 answer, unknown methods, and messages that say what is wrong.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../src/server/index.js'
import { KEY_A, caller, dnsBody, expect400, icmpBody, startTestServer, type Call } from './helpers.js'

let server: LocalServer
let api: Call

beforeAll(async () => {
  server = await startTestServer()
  api = caller(server)
})
afterAll(() => server.close())

const nested = (levels: number) => `${'['.repeat(levels)}4${']'.repeat(levels)}`

describe('deeply nested bodies', () => {
  it('an ICMP create or update with 4,128 levels in heartbeat is a 400 naming the field', async () => {
    const body = `{"name":"deep","request":{"hostname":"example.com"},"heartbeat":{"x":${nested(4128)}}}`
    const created = await api('POST', '/v1/checks/icmp', body)
    const keys = expect400(created, 'payload')
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatch(/^heartbeat\.x\.0\.0\./)
    expect(created.json.message).toMatch(/^heartbeat\.x\.0\.0\.[0.]+: is nested too deeply: at most 64 levels of objects and arrays are allowed$/)

    const check = (await api('POST', '/v1/checks/icmp', icmpBody())).json
    const updated = await api('PUT', `/v1/checks/icmp/${check.id}`, body)
    expect(expect400(updated, 'payload')[0]).toMatch(/^heartbeat\.x\./)
    expect((await api('GET', `/v1/checks/${check.id}`)).json).toEqual(check)
  })

  it('every route refuses it, and a body nested within the limit still works', async () => {
    for (const path of ['/v1/variables', '/v1/status-pages', '/v1/incidents', '/v1/maintenance-windows', '/v1/checks/dns']) {
      const answer = await api('POST', path, `{"name":${nested(100)}}`)
      expect(expect400(answer, 'payload')[0], path).toMatch(/^name\.0\.0/)
    }
    const fine = await api('POST', '/v1/checks/icmp', icmpBody({ heartbeat: { x: JSON.parse(nested(60)) } }))
    expect(fine.status).toBe(201)
  })
})

describe('prototype keys', () => {
  it('a body with a __proto__ key says that the key is refused, and where', async () => {
    const top = await api('POST', '/v1/checks/dns', '{"name":"x","request":{"query":"q"},"__proto__":{"admin":true}}')
    expect(expect400(top, 'payload')).toEqual(['__proto__'])
    expect(top.json.message).toBe('__proto__: is refused: a body may not contain a "__proto__" key')
    const inner = await api('POST', '/v1/checks/dns', '{"name":"x","request":{"query":"q","__proto__":{}}}')
    expect(expect400(inner, 'payload')).toEqual(['request.__proto__'])
    expect(inner.json.message).not.toMatch(/JSON/)
  })
})

describe('rate-limit headers on every /v1 answer', () => {
  const figures = (answer: { headers: Headers }) => ['limit', 'remaining', 'reset'].map((n) => answer.headers.get(`x-ratelimit-${n}`))

  it('401, 403 and unknown-route 404 carry them; a 401 or 403 spends nothing', async () => {
    const limited = await startTestServer({ rateLimit: { max: 5, timeWindowMs: 60_000 } })
    try {
      const a = caller(limited, KEY_A)
      const unauthorized = await caller(limited, 'not-a-key')('GET', '/v1/checks')
      expect(unauthorized.status).toBe(401)
      // nobody's quota: the whole limit of a fresh window
      expect(figures(unauthorized)).toEqual(['5', '5', '60'])
      const missing = await caller(limited, null)('GET', '/v1/nothing')
      expect(missing.status).toBe(401)
      expect(figures(missing)).toEqual(['5', '5', '60'])

      const first = await a('GET', '/v1/runtimes')
      expect(figures(first).slice(0, 2)).toEqual(['5', '4'])
      const forbidden = await a('GET', '/v1/checks', undefined, { 'x-service-account': 'acc-b' })
      expect(forbidden.status).toBe(403)
      // the key's own window, unchanged by the 403
      expect(figures(forbidden).slice(0, 2)).toEqual(['5', '4'])
      const unknown = await a('GET', '/v1/nothing')
      expect(unknown.status).toBe(404)
      expect(figures(unknown).slice(0, 2)).toEqual(['5', '3'])
      expect(Number(unknown.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0)
      const method = await a('QUERY', '/v1/checks')
      expect(method.status).toBe(404)
      expect(figures(method).slice(0, 2)).toEqual(['5', '2'])
    } finally {
      await limited.close()
    }
  })

  it('an unknown method is a 404 in the error shape, not a 400', async () => {
    for (const method of ['QUERY', 'PROPFIND', 'PATCH']) {
      const answer = await api(method, '/v1/checks')
      expect(answer.status, method).toBe(404)
      expect(answer.json, method).toEqual({ statusCode: 404, error: 'Not Found', message: `Route ${method} /v1/checks not found` })
    }
  })
})

describe('messages say what is wrong, without contradicting themselves', () => {
  it('limit=abc says what was sent', async () => {
    const answer = await api('GET', '/v1/checks?limit=abc')
    expect(expect400(answer, 'query')).toEqual(['limit'])
    expect(answer.json.message).toBe('limit: must be a number (got "abc")')
    expect((await api('GET', '/v1/variables?page=x')).json.message).toBe('page: must be a number (got "x")')
  })

  it('a maintenance window id that is too large says it is out of range', async () => {
    const answer = await api('GET', '/v1/maintenance-windows/9999999999999999')
    expect(expect400(answer, 'params')).toEqual(['id'])
    expect(answer.json.message).toBe('id: is out of range: maintenance window ids go up to 9007199254740991')
    expect((await api('GET', '/v1/maintenance-windows/abc')).json.message).toBe('id: must be a positive integer')
    expect((await api('GET', '/v1/maintenance-windows/0')).json.message).toBe('id: must be a positive integer')
    expect((await api('GET', '/v1/maintenance-windows/900719925474099')).status).toBe(404)
  })

  it('a create without a body names the fields it needs', async () => {
    const incident = await api('POST', '/v1/incidents', undefined)
    expect(expect400(incident, 'payload')).toEqual(['', 'name'])
    expect(incident.json.message).toBe('body is required, with the field name')
    const variable = await api('POST', '/v1/variables', undefined)
    expect(variable.json.message).toBe('body is required, with the fields key, value')
    const page = await api('POST', '/v1/status-pages', undefined)
    expect(page.json.message).toMatch(/^body is required, with the fields name, url/)
  })
})

describe('null items in the files of script checks', () => {
  const script = "import { test } from '@playwright/test'\ntest('x', async () => {})\n"
  const file = { path: 'lib/helper.ts', content: 'export const x = 1\n' }
  const bodies: Array<[string, (list: unknown[]) => Record<string, unknown>, string]> = [
    ['browser', (dependencies) => ({ name: 'nulls', activated: false, script, dependencies }), 'dependencies'],
    ['multistep', (dependencies) => ({ name: 'nulls', activated: false, script, dependencies }), 'dependencies'],
    ['playwright', (files) => ({ name: 'nulls', activated: false, files }), 'files'],
  ]

  it('POST and PUT of browser, multi-step and Playwright checks answer 400 naming each null item, never 500', async () => {
    for (const [route, body, field] of bodies) {
      const check = await api('POST', `/v1/checks/${route}`, body([{ path: 'tests/a.spec.ts', content: script }]))
      expect(check.status, check.text).toBe(201)
      for (const [list, keys] of [
        [[null], [`${field}.0`]],
        [[null, null], [`${field}.0`, `${field}.1`]],
        [[file, null, { ...file }], [`${field}.1`, `${field}.2.path`]],
      ] as Array<[unknown[], string[]]>) {
        for (const [method, path] of [['POST', `/v1/checks/${route}`], ['PUT', `/v1/checks/${route}/${check.json.id}`]]) {
          const answer = await api(method, path, body(list))
          expect(expect400(answer, 'payload'), `${method} ${path} ${JSON.stringify(list)}`).toEqual(keys)
        }
      }
      expect(expect400(await api('POST', `/v1/checks/${route}`, body([null])), 'payload')).toEqual([`${field}.0`])
      expect((await api('POST', `/v1/checks/${route}`, body([null]))).json.message).toBe(`${field}.0: must be an object (got null)`)
      // the check is as it was
      expect((await api('GET', `/v1/checks/${check.json.id}`)).json).toEqual(check.json)
    }
  })
})
