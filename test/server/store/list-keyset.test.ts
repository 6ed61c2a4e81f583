/**
 * Every list the engine and the dashboard read page by page, besides checks (list-paging.test.ts):
 * read by keyset (`after`, Link rel="next") as by page numbers, conditionally (ETag /
 * If-None-Match → 304), never across accounts. See docs/api.md, "Reading long lists".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { listAllByPage } from '../../../src/api/paging.js'
import { caller, countingClient, dnsBody, expect400, KEY_A, KEY_B, startTestServer, type Call } from '../helpers.js'

type Item = Record<string, unknown>

interface ListCase {
  /** the collection: GET lists it, POST creates in it, <path>/<key> deletes */
  path: string
  body: (n: number, account: string) => Item
  keyOf: (item: Item) => string
  /** the item's name in an answer (the other account's must never show) */
  nameOf: (item: Item) => string
}

const named = (item: Item) => String(item.name)
const LISTS: ListCase[] = [
  {
    path: '/v1/variables',
    body: (n, a) => ({ key: `${a.toUpperCase()}_${String(n).padStart(3, '0')}`, value: `value ${n}` }),
    keyOf: (v) => String(v.key),
    nameOf: (v) => String(v.key),
  },
  { path: '/v1/status-pages/services', body: (n, a) => ({ name: `${a} service ${n}` }), keyOf: (s) => String(s.id), nameOf: named },
  { path: '/v1/snippets', body: (n, a) => ({ name: `${a} snippet ${n}`, script: `// ${n}` }), keyOf: (s) => String(s.id), nameOf: named },
  {
    path: '/v1/alert-channels',
    body: (n, a) => ({ type: 'WEBHOOK', config: { name: `${a} hook ${n}`, url: `http://127.0.0.1:9/${n}` } }),
    keyOf: (c) => String(c.id),
    nameOf: (c) => String((c.config as Item).name),
  },
  {
    path: '/v1/check-groups',
    body: (n, a) => ({ name: `${a} group ${n}`, locations: ['eu-west-1'], activated: false, tags: [n % 2 === 0 ? 'even' : 'odd'] }),
    keyOf: (g) => String(g.id),
    nameOf: named,
  },
  {
    path: '/v1/maintenance-windows',
    body: (n, a) => ({ name: `${a} window ${n}`, startsAt: '2026-01-01T00:00:00Z', endsAt: '2026-01-01T01:00:00Z' }),
    keyOf: (w) => String(w.id),
    nameOf: named,
  },
  { path: '/v1/incidents', body: (n, a) => ({ name: `${a} incident ${n}`, severity: 'MINOR' }), keyOf: (i) => String(i.id), nameOf: named },
]

/** Items per list: more than the engine's page of 100, so that it reads a second page. */
const COUNT = 105

let server: LocalServer
let api: Call
let other: Call

beforeAll(async () => {
  server = await startTestServer()
  api = caller(server)
  other = caller(server, KEY_B)
  for (const list of LISTS) {
    for (let n = 0; n < COUNT; n += 15) {
      const batch = await Promise.all(Array.from({ length: Math.min(15, COUNT - n) }, (_, i) => api('POST', list.path, list.body(n + i, 'mine'))))
      for (const answer of batch) expect(answer.status, `${list.path}: ${answer.text}`).toBe(201)
    }
    expect((await other('POST', list.path, list.body(0, 'theirs'))).status).toBe(201)
  }
}, 300_000)
afterAll(() => server.close())

/** The path and query of a `Link: <...>; rel="next"` header, or undefined. */
function nextOf(link: string | null): string | undefined {
  const match = /<([^>]+)>;\s*rel="next"/.exec(link ?? '')
  return match ? match[1] : undefined
}

/** Reads a list by following its next links from `path`; the keys of each page. */
async function byKeyset(call: Call, path: string, keyOf: (item: Item) => string, afterOf = keyOf): Promise<string[][]> {
  const pages: string[][] = []
  for (let at: string | undefined = path; at !== undefined && pages.length < 50; ) {
    const answer = await call('GET', at)
    expect(answer.status, answer.text).toBe(200)
    pages.push((answer.json as Item[]).map(keyOf))
    const next = nextOf(answer.headers.get('link'))
    if (next !== undefined) {
      expect(new URL(next, 'http://x').searchParams.get('after')).toBe(afterOf((answer.json as Item[]).at(-1)!))
      // a keyset page counts no total
      expect(next).not.toContain('page=')
    }
    at = next
  }
  return pages
}

async function byNumber(call: Call, path: string, pages: number, keyOf: (item: Item) => string): Promise<string[][]> {
  const out: string[][] = []
  for (let page = 1; page <= pages; page++) out.push(((await call('GET', `${path}&page=${page}`)).json as Item[]).map(keyOf))
  return out
}

describe.each(LISTS)('keyset paging of $path', (list) => {
  it('follows Link rel="next" through the list: the pages are those of page numbers, in the same order', async () => {
    const keyset = await byKeyset(api, `${list.path}?limit=50`, list.keyOf)
    expect(keyset.map((p) => p.length)).toEqual([50, 50, 5])
    expect(keyset).toEqual(await byNumber(api, `${list.path}?limit=50`, 3, list.keyOf))
    expect(new Set(keyset.flat()).size).toBe(COUNT)
    // the last page by number has no next link; a keyset page has no content-range
    expect((await api('GET', `${list.path}?limit=50&page=3`)).headers.get('link')).toBeNull()
    const second = await api('GET', `${list.path}?limit=50&after=${encodeURIComponent(keyset[0][49])}`)
    expect(second.headers.get('content-range')).toBeNull()
    expect((await api('GET', `${list.path}?limit=50&page=1`)).headers.get('content-range')).toBe(`0-49/${COUNT}`)
  })

  it('is what the engine reads it with: the first page by number, then by keyset', async () => {
    const { client, queries } = countingClient(server, KEY_A)
    const all = await listAllByPage<Item>(client, list.path, { idOf: list.keyOf })
    await client.close()
    expect(queries.map((q) => (q.after === undefined ? `page ${q.page}` : 'after'))).toEqual(['page 1', 'after'])
    expect(all.map(list.keyOf)).toEqual((await byNumber(api, `${list.path}?limit=100`, 2, list.keyOf)).flat())
    expect(all.map(list.nameOf).every((name) => name.toLowerCase().startsWith('mine'))).toBe(true)
  })

  it('refuses an after naming nothing of the account, as one of another account, with a 400 naming after', async () => {
    for (const unknown of ['999999999', 'NOPE_NOT_THERE', '00000000-0000-4000-8000-000000000000']) {
      expect(expect400(await api('GET', `${list.path}?after=${unknown}`), 'query')).toEqual(['after'])
    }
    const theirs = (await other('GET', list.path)).json as Item[]
    expect(theirs.map(list.nameOf).map((n) => n.toLowerCase().split(/[\s_]/)[0])).toEqual(['theirs'])
    const refused = await api('GET', `${list.path}?after=${encodeURIComponent(list.keyOf(theirs[0]))}`)
    expect(expect400(refused, 'query')).toEqual(['after'])
    expect(refused.text.toLowerCase()).not.toContain('theirs ')
    // and theirs read by keyset never reaches mine
    const mine = (await api('GET', `${list.path}?limit=1`)).json as Item[]
    expect(expect400(await other('GET', `${list.path}?after=${encodeURIComponent(list.keyOf(mine[0]))}`), 'query')).toEqual(['after'])
  })

  it("answers 304 to the page's ETag until the page changes; another account's writes and tags change nothing", async () => {
    const path = `${list.path}?limit=10`
    const first = await api('GET', path)
    const etag = first.headers.get('etag')
    expect(etag).toMatch(/^"[\w-]+"$/)
    const again = await api('GET', path, undefined, { 'if-none-match': etag! })
    expect(again.status).toBe(304)
    expect(again.text).toBe('')
    // a keyset page has its own tag
    const after = `${path}&after=${encodeURIComponent(list.keyOf((first.json as Item[])[9]))}`
    const keysetTag = (await api('GET', after)).headers.get('etag')!
    expect(keysetTag).not.toBe(etag)
    expect((await api('GET', after, undefined, { 'if-none-match': keysetTag })).status).toBe(304)
    // the other account: its writes leave my pages as they were; my tag does not answer its page
    expect((await other('POST', list.path, list.body(1, 'theirs'))).status).toBe(201)
    expect((await api('GET', path, undefined, { 'if-none-match': etag! })).status).toBe(304)
    const theirs = await other('GET', path, undefined, { 'if-none-match': etag! })
    expect(theirs.status).toBe(200)
    expect((theirs.json as Item[]).every((item) => list.nameOf(item).toLowerCase().startsWith('theirs'))).toBe(true)
    // a change of an item on the page: a new page, a new tag
    const gone = list.keyOf((first.json as Item[])[0])
    expect((await api('DELETE', `${list.path}/${encodeURIComponent(gone)}`)).status).toBe(204)
    const changed = await api('GET', path, undefined, { 'if-none-match': etag! })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
    expect((changed.json as Item[]).map(list.keyOf)).not.toContain(gone)
    // the page after the deleted item cannot be read from it any more: the reader starts again
    expect(expect400(await api('GET', `${path}&after=${encodeURIComponent(gone)}`), 'query')).toEqual(['after'])
  })
})

describe("keyset paging with filters and of a group's checks", () => {
  it("keeps the check groups' filters in the next link", async () => {
    const pages = await byKeyset(
      api,
      '/v1/check-groups?tag=even&limit=20',
      (g) => String(g.name),
      (g) => String(g.id),
    )
    // 53 even groups (an earlier test of the file may have deleted the first)
    const even = ((await api('GET', '/v1/check-groups')).json as Item[]).filter((g) => (g.tags as string[]).includes('even')).length
    expect(even).toBeGreaterThan(50)
    expect(pages.map((p) => p.length)).toEqual([20, 20, even - 40])
    expect(pages.flat().every((name) => Number(name.split(' ').at(-1)) % 2 === 0)).toBe(true)
    const byPage = await byNumber(api, '/v1/check-groups?tag=even&limit=20', 3, (g) => String(g.name))
    expect(pages).toEqual(byPage)
    const first = await api('GET', '/v1/check-groups?tag=even&limit=20')
    expect(nextOf(first.headers.get('link'))).toContain('tag=even')
  })

  it("reads a group's checks by keyset in their group order", async () => {
    const group = await api('POST', '/v1/check-groups', { name: 'members', locations: ['eu-west-1'], activated: false })
    expect(group.status).toBe(201)
    const made = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        api('POST', '/v1/checks/dns', dnsBody({ name: `member ${i}`, groupId: group.json.id, groupOrder: 12 - i, activated: false })),
      ),
    )
    expect(made.every((a) => a.status === 201)).toBe(true)
    const path = `/v1/check-groups/${group.json.id}/checks?limit=5`
    const pages = await byKeyset(
      api,
      path,
      (c) => String(c.name),
      (c) => String(c.id),
    )
    expect(pages.map((p) => p.length)).toEqual([5, 5, 2])
    expect(pages.flat()).toEqual(Array.from({ length: 12 }, (_, i) => `member ${11 - i}`))
    expect(pages).toEqual(await byNumber(api, path, 3, (c) => String(c.name)))
    // a check of the account outside the group is no place in this list
    const outside = await api('POST', '/v1/checks/dns', dnsBody({ name: 'outside', activated: false }))
    expect(expect400(await api('GET', `${path}&after=${outside.json.id}`), 'query')).toEqual(['after'])
  })

  it('answers the status page list with an ETag (its nextId is its keyset), 304 until a page changes', async () => {
    const made = await api('POST', '/v1/status-pages', { name: 'Status', url: 'keyset-status', cards: [] })
    expect(made.status, made.text).toBe(201)
    const first = await api('GET', '/v1/status-pages')
    const etag = first.headers.get('etag')!
    expect((await api('GET', '/v1/status-pages', undefined, { 'if-none-match': etag })).status).toBe(304)
    expect((await other('GET', '/v1/status-pages', undefined, { 'if-none-match': etag })).status).toBe(200)
    expect((await api('PUT', `/v1/status-pages/${made.json.id}`, { name: 'Renamed', url: 'keyset-status', cards: [] })).status).toBe(200)
    expect((await api('GET', '/v1/status-pages', undefined, { 'if-none-match': etag })).status).toBe(200)
  })
})
