/**
 * The check list read by keyset (`after`, an extension of the spec) and conditionally
 * (`ETag` / `If-None-Match`); `page` keeps its meaning. See docs/api.md, "Reading long lists".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { listAllByPage } from '../../../src/api/paging.js'
import { caller, countingClient, dnsBody, expect400, KEY_A, KEY_B, startTestServer, type Call } from '../helpers.js'

let server: LocalServer
let api: Call
let other: Call
const made: string[] = []

beforeAll(async () => {
  server = await startTestServer()
  api = caller(server)
  other = caller(server, KEY_B)
  for (let i = 0; i < 25; i++) {
    const created = await api('POST', '/v1/checks/dns', dnsBody({ name: `check ${i}`, tags: i % 2 === 0 ? ['even'] : ['odd'] }))
    expect(created.status).toBe(201)
    made.push(created.json.id)
  }
  expect((await other('POST', '/v1/checks/dns', dnsBody({ name: 'theirs' }))).status).toBe(201)
})
afterAll(() => server.close())

/** The `after` of a `Link: <...>; rel="next"` header, or undefined when there is none. */
function nextOf(link: string | null): string | undefined {
  const match = /<([^>]+)>;\s*rel="next"/.exec(link ?? '')
  return match ? new URL(match[1], 'http://x').searchParams.get('after') ?? undefined : undefined
}

describe('keyset paging of checks', () => {
  it('follows Link rel="next" through the list in order, and the pages are those of page=', async () => {
    const byKeyset: string[] = []
    let path = '/v1/checks?limit=10'
    const sizes: number[] = []
    for (let n = 0; n < 10; n++) {
      const answer = await api('GET', path)
      expect(answer.status).toBe(200)
      byKeyset.push(...answer.json.map((c: { id: string }) => c.id))
      sizes.push(answer.json.length)
      const after = nextOf(answer.headers.get('link'))
      if (!after) break
      expect(after).toBe(answer.json.at(-1).id)
      path = `/v1/checks?limit=10&after=${after}`
    }
    expect(sizes).toEqual([10, 10, 5])
    expect(byKeyset).toEqual(made)
    const byPage: string[] = []
    for (let page = 1; page <= 3; page++) byPage.push(...(await api('GET', `/v1/checks?limit=10&page=${page}`)).json.map((c: { id: string }) => c.id))
    expect(byPage).toEqual(made)
    // the last page by number has no next link; a keyset page carries no total
    expect((await api('GET', '/v1/checks?limit=10&page=3')).headers.get('link')).toBeNull()
    expect((await api('GET', `/v1/checks?limit=10&after=${made[9]}`)).headers.get('content-range')).toBeNull()
  })

  it('keeps the filters in the next link', async () => {
    const first = await api('GET', '/v1/checks?limit=5&tag=even')
    expect(first.json.map((c: { name: string }) => c.name)).toEqual(['check 0', 'check 2', 'check 4', 'check 6', 'check 8'])
    const link = first.headers.get('link')!
    expect(link).toContain('tag=even')
    const second = await api('GET', new URL(/<([^>]+)>/.exec(link)![1], 'http://x').pathname + new URL(/<([^>]+)>/.exec(link)![1], 'http://x').search)
    expect(second.json.map((c: { name: string }) => c.name)).toEqual(['check 10', 'check 12', 'check 14', 'check 16', 'check 18'])
  })

  it('refuses an after naming no check of the account, as it refuses one of another account', async () => {
    expect(expect400(await api('GET', '/v1/checks?after=00000000-0000-4000-8000-000000000000'), 'query')).toEqual(['after'])
    const theirs = (await other('GET', '/v1/checks')).json[0].id
    const refused = await api('GET', `/v1/checks?after=${theirs}`)
    expect(expect400(refused, 'query')).toEqual(['after'])
    expect(refused.text).not.toContain('theirs')
  })

  it('is what the engine reads lists with: every check once, in order', { timeout: 120_000 }, async () => {
    const { client, queries } = countingClient(server, KEY_A)
    // pages of 100: five pages' worth of checks
    for (let i = 0; i < 475; i += 25) {
      const batch = await Promise.all(Array.from({ length: Math.min(25, 475 - i) }, (_, j) => api('POST', '/v1/checks/dns', dnsBody({ name: `more ${i + j}` }))))
      expect(batch.every((answer) => answer.status === 201)).toBe(true)
    }
    // the list's order, read by page numbers
    const expected: string[] = []
    for (let page = 1; page <= 5; page++) expected.push(...(await api('GET', `/v1/checks?limit=100&page=${page}`)).json.map((c: { id: string }) => c.id))
    expect(expected.slice(0, made.length)).toEqual(made)
    expect(expected).toHaveLength(500)
    const all = await listAllByPage<{ id: string }>(client, '/v1/checks', { idOf: (c) => c.id })
    expect(all.map((c) => c.id)).toEqual(expected)
    // the first page by number, then each next page by keyset
    expect(queries.map((q) => q.after === undefined ? `page ${q.page}` : 'after')).toEqual(['page 1', 'after', 'after', 'after', 'after'])
    await client.close()
  })
})

describe('conditional reads of the check list', () => {
  it('answers 304 to If-None-Match with the page\'s ETag, until a check changes', async () => {
    const first = await api('GET', '/v1/checks?limit=10')
    const etag = first.headers.get('etag')
    expect(etag).toMatch(/^"[\w-]+"$/)
    const again = await api('GET', '/v1/checks?limit=10', undefined, { 'if-none-match': etag! })
    expect(again.status).toBe(304)
    expect(again.text).toBe('')
    expect(again.headers.get('etag')).toBe(etag)
    // a weak form of the tag and a list of tags match too
    expect((await api('GET', '/v1/checks?limit=10', undefined, { 'if-none-match': `"other", W/${etag}` })).status).toBe(304)
    // another page has another tag
    expect((await api('GET', '/v1/checks?limit=10&page=2', undefined, { 'if-none-match': etag! })).status).toBe(200)
    const renamed = await api('PUT', `/v1/checks/dns/${made[3]}`, dnsBody({ name: 'renamed', tags: ['odd'] }))
    expect(renamed.status).toBe(200)
    const changed = await api('GET', '/v1/checks?limit=10', undefined, { 'if-none-match': etag! })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
    expect(changed.json[3].name).toBe('renamed')
  })

  it('never answers another account\'s page as not modified', async () => {
    const mine = await api('GET', '/v1/checks?limit=10')
    const theirs = await other('GET', '/v1/checks?limit=10', undefined, { 'if-none-match': mine.headers.get('etag')! })
    expect(theirs.status).toBe(200)
    expect(theirs.json.map((c: { name: string }) => c.name)).toEqual(['theirs'])
  })
})

describe('a list the spec answers whole', () => {
  it('is whole without limit or page; the engine, which sends them to every list, reads it page by page (GET /v1/check-statuses)', { timeout: 120_000 }, async () => {
    const anonymous = caller(server, null)
    // a ping records a result, so each heartbeat check has a status: more than a page of them
    for (let i = 0; i < 120; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, (_, j) => api('POST', '/v1/checks/heartbeat', {
        name: `heartbeat ${i + j}`, heartbeat: { period: 1, periodUnit: 'hours', grace: 30, graceUnit: 'minutes' },
      })))
      expect(batch.every((answer) => answer.status === 201)).toBe(true)
      for (const created of batch) expect((await anonymous('GET', `/ping/${created.json.heartbeat.pingToken}`)).status).toBe(200)
    }
    const whole = await api('GET', '/v1/check-statuses')
    expect(whole.json.length).toBeGreaterThanOrEqual(120)
    const { client, queries } = countingClient(server, KEY_A)
    const all = await listAllByPage<{ checkId: string }>(client, '/v1/check-statuses', { idOf: (s) => s.checkId })
    expect(all.map((s) => s.checkId)).toEqual(whole.json.map((s: { checkId: string }) => s.checkId))
    // limit and page are honoured (a route that ignored them would answer the whole list to each)
    expect(queries).toEqual(Array.from({ length: Math.ceil(whole.json.length / 100) }, (_, i) => ({ limit: 100, page: i + 1 })))
    await client.close()
  })
})
