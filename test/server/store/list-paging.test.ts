/**
 * The check list read by keyset (`after`, an extension of the spec) and conditionally
 * (`ETag` / `If-None-Match`); `page` keeps its meaning. See docs/api.md, "Reading long lists".
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { ApiClient, type Query } from '../../../src/api/client.js'
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
  return match ? (new URL(match[1], 'http://x').searchParams.get('after') ?? undefined) : undefined
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
      const batch = await Promise.all(
        Array.from({ length: Math.min(25, 475 - i) }, (_, j) => api('POST', '/v1/checks/dns', dnsBody({ name: `more ${i + j}` }))),
      )
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
    expect(queries.map((q) => (q.after === undefined ? `page ${q.page}` : 'after'))).toEqual(['page 1', 'after', 'after', 'after', 'after'])
    await client.close()
  })
})

describe('conditional reads of the check list', () => {
  it("answers 304 to If-None-Match with the page's ETag, until a check changes", async () => {
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

  it("never answers another account's page as not modified", async () => {
    const mine = await api('GET', '/v1/checks?limit=10')
    const theirs = await other('GET', '/v1/checks?limit=10', undefined, { 'if-none-match': mine.headers.get('etag')! })
    expect(theirs.status).toBe(200)
    expect(theirs.json.map((c: { name: string }) => c.name)).toEqual(['theirs'])
  })
})

describe('a list the spec answers whole', () => {
  it('is whole without limit or page; the engine, which sends them to every list, reads it page by page (GET /v1/check-statuses)', {
    timeout: 120_000,
  }, async () => {
    const anonymous = caller(server, null)
    // a ping records a result, so each heartbeat check has a status: more than a page of them
    for (let i = 0; i < 120; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          api('POST', '/v1/checks/heartbeat', {
            name: `heartbeat ${i + j}`,
            heartbeat: { period: 1, periodUnit: 'hours', grace: 30, graceUnit: 'minutes' },
          }),
        ),
      )
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

describe('the list version of the check list (monitors-list-version)', () => {
  const versionOf = async (call: Call, path = '/v1/checks?limit=10') => (await call('GET', path)).headers.get('monitors-list-version')

  it("names the whole list on every page and on a 304; moves with every write to the account's checks and check groups, never with another account's", async () => {
    const first = await api('GET', '/v1/checks?limit=10')
    const version = first.headers.get('monitors-list-version')!
    expect(version).toMatch(/^\S+$/)
    expect((await api('GET', `/v1/checks?limit=10&after=${nextOf(first.headers.get('link'))}`)).headers.get('monitors-list-version')).toBe(version)
    const again = await api('GET', '/v1/checks?limit=10', undefined, { 'if-none-match': first.headers.get('etag')! })
    expect(again.status).toBe(304)
    expect(again.headers.get('monitors-list-version')).toBe(version)
    expect(await versionOf(api, '/v1/checks?limit=10&tag=even&page=2')).toBe(version)
    expect(await versionOf(api, '/v1/checks?limit=10&applyGroupSettings=true')).toBe(version)
    // a list by status moves with results, not writes: no version
    expect(await versionOf(api, '/v1/checks?limit=10&status=passing')).toBeNull()
    // another account: its own version, and its writes leave mine
    const theirs = await versionOf(other)
    expect(theirs).not.toBe(version)
    expect((await other('POST', '/v1/checks/dns', dnsBody({ name: 'theirs again' }))).status).toBe(201)
    expect(await versionOf(other)).not.toBe(theirs)
    expect(await versionOf(api)).toBe(version)
    // each write of mine: another version, never one seen before
    const seen = new Set([version])
    const moved = async (what: string, answer: { status: number; text: string }, status: number) => {
      expect(answer.status, `${what}: ${answer.text}`).toBe(status)
      const now = (await versionOf(api))!
      expect(seen.has(now), what).toBe(false)
      seen.add(now)
    }
    const created = await api('POST', '/v1/checks/dns', dnsBody({ name: 'versioned' }))
    await moved('a check created', created, 201)
    await moved('a check replaced', await api('PUT', `/v1/checks/dns/${created.json.id}`, dnsBody({ name: 'versioned again' })), 200)
    await moved('a check deleted', await api('DELETE', `/v1/checks/${created.json.id}`), 204)
    const group = await api('POST', '/v1/check-groups', { name: 'versioned group', locations: ['eu-west-1'] })
    await moved('a group created', group, 201)
    await moved('a group updated', await api('PUT', `/v1/check-groups/${group.json.id}`, { name: 'versioned group', locations: ['us-east-1'] }), 200)
    await moved('a group deleted', await api('DELETE', `/v1/check-groups/${group.json.id}`), 204)
  })

  it("lets the engine take an unchanged list from its page cache on the first page's 304 alone, and read a change on its last page", {
    timeout: 120_000,
  }, async () => {
    // the account's checks fill several pages of 100 (the engine's test above made 500)
    const dir = mkdtempSync(join(tmpdir(), 'list-version-'))
    const client = new ApiClient({ baseUrl: server.url, apiKey: KEY_A, pageCacheDir: dir })
    const sent: Array<{ query: Query; conditional: boolean }> = []
    const get = client.get.bind(client)
    client.get = ((path: string, query?: Query, headers?: Record<string, string>) => {
      sent.push({ query: { ...query }, conditional: headers?.['if-none-match'] !== undefined })
      return get(path, query, headers)
    }) as typeof client.get
    // the list's last item (past the heartbeat checks above): a DNS check, renamed below
    const onLast = await api('POST', '/v1/checks/dns', dnsBody({ name: 'on the last page' }))
    expect(onLast.status).toBe(201)
    try {
      const read = () => listAllByPage<{ id: string; name: string }>(client, '/v1/checks', { idOf: (c) => c.id })
      const all = await read()
      const pages = sent.length
      expect(pages).toBeGreaterThanOrEqual(3)
      // nothing written: page 1 alone, answered 304, stands for the rest
      sent.length = 0
      expect(await read()).toEqual(all)
      expect(sent).toEqual([{ query: { limit: 100, page: 1 }, conditional: true }])
      // an item of the last page changed: every page asked again, the change read
      expect(all.at(-1)!.id).toBe(onLast.json.id)
      expect((await api('PUT', `/v1/checks/dns/${onLast.json.id}`, dnsBody({ name: 'renamed on the last page' }))).status).toBe(200)
      sent.length = 0
      const changed = await read()
      expect(sent).toHaveLength(pages)
      expect(changed.at(-1)!.name).toBe('renamed on the last page')
      expect(changed.slice(0, -1)).toEqual(all.slice(0, -1))
      // and a group written (the version moves, no page of this list changes): every page asked again, 304s; then one request again
      const group = await api('POST', '/v1/check-groups', { name: 'moves the version', locations: ['eu-west-1'] })
      expect(group.status).toBe(201)
      sent.length = 0
      expect(await read()).toEqual(changed)
      expect(sent).toHaveLength(pages)
      sent.length = 0
      expect(await read()).toEqual(changed)
      expect(sent).toHaveLength(1)
      expect((await api('DELETE', `/v1/check-groups/${group.json.id}`)).status).toBe(204)
    } finally {
      await client.close()
    }
  })
})
