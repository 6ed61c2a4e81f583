/**
 * The local server under hostile input (issue 8, part B): deep nesting, prototype keys,
 * rate-limit headers on every /v1 answer, unknown methods, and messages that say what is wrong.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { KEY_A, caller, dnsBody, expect400, icmpBody, startTestServer, type Call } from '../helpers.js'

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
        [
          [null, null],
          [`${field}.0`, `${field}.1`],
        ],
        [
          [file, null, { ...file }],
          [`${field}.1`, `${field}.2.path`],
        ],
      ] as Array<[unknown[], string[]]>) {
        for (const [method, path] of [
          ['POST', `/v1/checks/${route}`],
          ['PUT', `/v1/checks/${route}/${check.json.id}`],
        ]) {
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

describe('request bodies with a Content-Encoding', () => {
  const post = (body: Buffer | string, headers: Record<string, string>) =>
    fetch(`${server.url}/v1/checks/dns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', ...headers },
      body,
    })
  const json = JSON.stringify(dnsBody({ name: 'compressed' }))
  const printable = (text: string) => expect(text).toMatch(/^[\x20-\x7e]*$/)

  it('gzip, deflate and br bodies are decoded (the hosted CLI gzips its bodies)', async () => {
    for (const [encoding, bytes] of [
      ['gzip', gzipSync(json)],
      ['GZip', gzipSync(json)],
      ['x-gzip', gzipSync(json)],
      ['deflate', deflateSync(json)],
      ['br', brotliCompressSync(json)],
      ['identity', Buffer.from(json)],
    ] as const) {
      const answer = await post(bytes, { 'content-encoding': encoding })
      expect(answer.status, `${encoding}: ${await answer.clone().text()}`).toBe(201)
      expect(((await answer.json()) as any).name).toBe('compressed')
    }
    // a PUT too
    const check = (await api('POST', '/v1/checks/dns', dnsBody())).json
    const put = await fetch(`${server.url}/v1/checks/dns/${check.id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(dnsBody({ name: 'replaced' }))),
    })
    expect(put.status).toBe(200)
    expect(((await put.json()) as any).name).toBe('replaced')
  })

  it('what is not what it says is a 400 that never echoes the bytes; an unknown encoding is a 415 naming the accepted ones', async () => {
    const garbage = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe, 0x00, 0x01, 0x9c, 0x7f, 0x03])
    const bad = await post(garbage, { 'content-encoding': 'gzip' })
    expect(bad.status).toBe(400)
    const badBody = (await bad.json()) as any
    expect(badBody).toMatchObject({ statusCode: 400, error: 'Bad Request', attributes: { source: 'payload', keys: [] } })
    expect(badBody.message).toMatch(/^Body is not valid gzip data, as its Content-Encoding says \(Z_[A-Z_]+\)$/)

    // gzip sent without its header: the bytes are not text, and are not quoted
    const unlabelled = await post(gzipSync(json), {})
    expect(unlabelled.status).toBe(400)
    const text = await unlabelled.text()
    printable(text)
    expect(JSON.parse(text).message).toBe('Body is not valid JSON: it is not text (a compressed body needs its Content-Encoding header: gzip, deflate or br)')
    // a text that is not JSON still says where
    const notJson = await post(gzipSync('{"name": tru'), { 'content-encoding': 'gzip' })
    expect(((await notJson.json()) as any).message).toMatch(/^Body is not valid JSON: /)

    for (const encoding of ['compress', 'zstd', 'gzip, br']) {
      const refused = await post(Buffer.from(json), { 'content-encoding': encoding })
      expect(refused.status, encoding).toBe(415)
      const body = (await refused.json()) as any
      expect(body).toEqual({
        statusCode: 415,
        error: 'Unsupported Media Type',
        message: `Content-Encoding ${JSON.stringify(encoding)} is not accepted: send the body as it is, or encoded with one of gzip, deflate, br`,
        attributes: { header: 'content-encoding', accepted: ['gzip', 'deflate', 'br'] },
      })
    }
  })

  it('the 1 MiB limit counts the decoded body: a zip bomb is a 413 as soon as it passes it, a large decoded body within it is taken', async () => {
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 })
    const within = gzipSync(`${json.slice(0, -1)}${' '.repeat(1000 * 1000)}}`)
    const taken = await post(within, { 'content-encoding': 'gzip' })
    expect(taken.status).toBe(201)

    // 256 MiB of zeros in about 250 KiB (16 gzip members of 16 MiB): refused once 1 MiB is decoded, never inflated whole
    const bomb = Buffer.concat(
      Array.from({ length: 16 }, () => member),
      16 * member.length,
    )
    expect(bomb.length).toBeLessThan(1024 * 1024)
    const before = process.memoryUsage().rss
    const started = Date.now()
    const refused = await post(bomb, { 'content-encoding': 'gzip' })
    expect(refused.status).toBe(413)
    expect(((await refused.json()) as any).message).toBe('Request body is larger than 1 MiB once decoded')
    expect(Date.now() - started).toBeLessThan(5000)
    expect(process.memoryUsage().rss - before).toBeLessThan(128 * 1024 * 1024)
    // the server still answers
    expect((await api('GET', '/v1/runtimes')).status).toBe(200)
  })
})

describe('query parameters a route does not take', () => {
  it('are a 400 naming each one and the parameters the route takes, on every /v1 route: never ignored', async () => {
    const typo = await api('GET', '/v1/checks?serach=shop&limit=5')
    expect(expect400(typo, 'query')).toEqual(['serach'])
    expect(typo.json.message).toBe(
      'serach: is not a parameter of GET /v1/checks: it takes limit, page, after, checkType, tag, search, status, apiCheckUrlFilterPattern, applyGroupSettings',
    )
    const check = (await api('POST', '/v1/checks/dns', dnsBody())).json
    for (const [method, path, keys, takes] of [
      ['GET', `/v1/checks/${check.id}?includeDependencies=true`, ['includeDependencies'], 'applyGroupSettings'],
      ['PUT', `/v1/checks/dns/${check.id}?dryRun=1&force=yes`, ['dryRun', 'force'], 'autoAssignAlerts'],
      ['DELETE', `/v1/checks/${check.id}?cascade=true`, ['cascade'], 'none'],
      ['GET', '/v1/check-statuses?status=failing', ['status'], 'limit, page'],
      ['GET', `/v1/check-results/${check.id}?region=eu-west-1`, ['region'], 'limit, page, resultType, from, to, hasFailures, location, checkType'],
      ['GET', '/v1/alert-notifications?channelId=1', ['channelId'], 'limit, page, checkId, from, to, alertChannelId, hasFailures'],
      ['GET', '/v1/variables?search=x', ['search'], 'limit, page, after'],
      ['GET', '/v1/runtimes?=x', ['""'], 'none'],
      ['POST', '/v1/check-sessions/trigger?wait=true', ['wait'], 'none'],
      ['GET', `/v1/checks/heartbeats/${check.id}/availability?limit=5`, ['limit'], 'startTime, endTime'],
    ] as const) {
      const answer = await api(method, path, method === 'PUT' ? dnsBody() : undefined)
      expect(expect400(answer, 'query'), `${method} ${path}`).toEqual(keys)
      expect(answer.json.attributes.issues[0].message, path).toMatch(new RegExp(`: it takes ${takes.replace(/[()]/g, '\\$&')}$`))
    }
    // nothing was done: the check is as it was
    expect((await api('GET', `/v1/checks/${check.id}`)).json).toEqual(check)
    // what the routes take is taken, in both spellings of a repeated one
    expect((await api('GET', '/v1/check-groups?tag[]=a&tag=b&name=x&limit=5')).status).toBe(200)
    expect((await api('GET', `/v1/checks?tag[]=${check.tags[0] ?? 'none'}&checkType=DNS&limit=1`)).status).toBe(200)
    // `[]` marks repeated parameters only
    expect(expect400(await api('GET', '/v1/checks?limit[]=5'), 'query')).toEqual(['limit[]'])
  })

  it('a route registered without its parameters in the table does not start', async () => {
    const { buildApp } = await import('../../../src/server/app.js')
    const { openStore } = await import('../../../src/server/index.js')
    const store = await openStore(':memory:')
    const app = await buildApp({ store, rateLimit: { max: 10, timeWindowMs: 1000 } })
    expect(() => app.get('/v1/undeclared', async () => 'x')).toThrow(
      "GET /v1/undeclared: the route's query parameters are not declared (src/server/query-parameters.ts)",
    )
    // a page of the dashboard or a ping is not an API route: not in the table
    expect(() => app.get('/elsewhere', async () => 'x')).not.toThrow()
    await app.close()
    await store.close()
  })
})
