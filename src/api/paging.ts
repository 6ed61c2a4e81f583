import type { ApiClient, Query } from './client.js'
import type { StoredPage } from './page-cache.js'
import { UserError } from '../errors.js'

/** One list page as a read resolved it: its ETag, and what its headers said of the pages after it. */
export interface ListPageRead {
  path: string
  query: Query
  etag: string
  after?: string
  total?: number
  /** Asked by keyset (`after`) rather than by number. */
  keyset: boolean
  /** It held PAGE_LIMIT records. */
  full: boolean
  /** The version of the whole list its answer named (LIST_VERSION_HEADER), when it named one. */
  version?: string
}

/** What a client read (ApiClient.readLog): every request counted, every list page with an ETag recorded. */
export interface ReadLog {
  requests: number
  pages: ListPageRead[]
}

/**
 * The local server's version of a whole list (docs/api.md "Reading long lists"), on each of its
 * pages: when the first page answers 304 naming the version every kept page of the list was read
 * at, no write has touched the list since, and the kept pages are the list without asking for
 * them. The hosted service sends none: each page is asked again.
 */
export const LIST_VERSION_HEADER = 'monitors-list-version'

/** The list version an answer names, when it names one. */
function listVersion(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers[LIST_VERSION_HEADER]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** Page size used for every list: the API's maximum. */
export const PAGE_LIMIT = 100

/**
 * Offset paging (`?limit=&page=`, a bare array, optionally a `content-range: a-b/total` header).
 * When the first page names the total, the remaining pages are fetched in parallel (at most
 * `parallel` at once); without a total, page after page until one is not full. A route that
 * ignores paging answers the same list for every page: `idOf` detects it and stops.
 */
export async function listAllByPage<T>(
  client: ApiClient,
  path: string,
  options: { query?: Query; idOf?: (item: T) => string; parallel?: number } = {},
): Promise<T[]> {
  const cache = client.pageCache(path)
  // the list version the first page proved unchanged (a 304 naming the version it was kept at): the other pages kept at it are reused unasked
  let proven: string | undefined
  const fetchPage = async (page: number, after?: string): Promise<{ items: T[]; total?: number; after?: string }> => {
    const query = { ...options.query, limit: PAGE_LIMIT, ...(after === undefined ? { page } : { after }) }
    const url = pageUrl(path, query)
    const stored = cache?.get(url)
    if (stored && proven !== undefined && stored.version === proven) {
      // a page of the read as one asked is (ReadLog: one request a page)
      if (client.readLog) client.readLog.requests++
      cache!.reuse(url, stored)
      logRead(client, path, query, stored, after !== undefined, stored.items.length)
      return { items: stored.items as T[], total: stored.total, after: stored.after }
    }
    let response = await client.get<unknown>(path, query, stored ? { 'if-none-match': stored.etag } : undefined)
    if (response.status === 304 && stored) {
      const reused = reusedPage(stored, response.headers, after !== undefined)
      if (reused) {
        if (page === 1 && after === undefined && reused.version !== undefined && reused.version === stored.version) proven = reused.version
        cache!.reuse(url, reused)
        logRead(client, path, query, reused, after !== undefined, reused.items.length)
        return { items: reused.items as T[], total: reused.total, after: reused.after }
      }
      // the same page asked again whole: still one page of the read (ReadLog)
      if (client.readLog) client.readLog.requests--
      response = await client.get<unknown>(path, query)
    }
    const read = {
      items: asArray<T>(response.body, path),
      total: totalFromContentRange(response.headers['content-range']),
      after: nextAfter(response.headers.link),
    }
    const etag = response.headers.etag
    const version = listVersion(response.headers)
    if (typeof etag === 'string' && etag !== '')
      logRead(client, path, query, { etag, after: read.after, total: read.total, version }, after !== undefined, read.items.length)
    if (cache && typeof etag === 'string' && etag !== '') {
      const page: StoredPage = {
        etag,
        items: read.items,
        ...(read.after !== undefined ? { after: read.after } : {}),
        ...(read.total !== undefined ? { total: read.total } : {}),
        ...(version !== undefined ? { version } : {}),
      }
      // each record's id: a plan that reuses what it kept for the other check files reads only the records of the edited ones
      if (options.idOf) page.ids = read.items.map(options.idOf)
      // read whole but the same as kept (a full last page, see reusedPage): the file needs no rewrite
      if (stored && stored.etag === etag && stored.after === page.after && stored.total === page.total && stored.version === page.version) cache.same(url, page)
      else cache.set(url, page)
    }
    return read
  }
  const all = await readPages(fetchPage, options)
  cache?.save()
  return all
}

function logRead(
  client: ApiClient,
  path: string,
  query: Query,
  page: { etag: string; after?: string; total?: number; version?: string },
  keyset: boolean,
  items: number,
): void {
  client.readLog?.pages.push({
    path,
    query,
    etag: page.etag,
    ...(page.after !== undefined ? { after: page.after } : {}),
    ...(page.total !== undefined ? { total: page.total } : {}),
    keyset,
    full: items >= PAGE_LIMIT,
    ...(page.version !== undefined ? { version: page.version } : {}),
  })
}

/**
 * Whether every page of `pages` is unchanged: each asked again with its ETag, all at once (at
 * most `parallel`), must answer 304 and say of the pages after it what it said before (the same
 * next link and total, as listAllByPage would resolve them). Any other answer, or an error, is a
 * no (undefined): a full read then sees what changed. A list whose pages were all read at one
 * list version (LIST_VERSION_HEADER) is asked for its first page alone: a 304 naming that version
 * stands for every page of it. Resolves to the pages with the versions their answers named (a
 * list version may move with no page changed: a check group written), the pages not asked
 * keeping theirs.
 */
export async function pagesUnchanged(client: ApiClient, pages: readonly ListPageRead[], parallel = 8): Promise<ListPageRead[] | undefined> {
  const now = [...pages]
  let same = true
  const askAll = async (indexes: number[]) => {
    let next = 0
    const worker = async () => {
      while (same && next < indexes.length) {
        const i = indexes[next++]
        const answer = await askAgain(client, now[i])
        if (!answer) same = false
        else now[i] = answer
      }
    }
    await Promise.all(Array.from({ length: Math.min(parallel, indexes.length) }, worker))
  }
  // each list's pages (its path and query, but for the page asked for), and whether one version covers them all
  const lists = new Map<string, number[]>()
  pages.forEach((page, i) => {
    const { page: _page, after: _after, ...rest } = page.query
    const list = pageUrl(page.path, rest)
    lists.set(list, [...(lists.get(list) ?? []), i])
  })
  const rest: number[] = []
  const firsts: Array<{ first: number; others: number[]; version: string }> = []
  for (const indexes of lists.values()) {
    const version = pages[indexes[0]].version
    const first = indexes.find((i) => !pages[i].keyset && pages[i].query.page === 1)
    if (version === undefined || first === undefined || indexes.length === 1 || !indexes.every((i) => pages[i].version === version)) rest.push(...indexes)
    else firsts.push({ first, others: indexes.filter((i) => i !== first), version })
  }
  await Promise.all(
    firsts.map(async ({ first, others, version }) => {
      const answer = await askAgain(client, pages[first])
      if (!answer) same = false
      else if (answer.version !== version) rest.push(...others)
      now[first] = answer ?? now[first]
    }),
  )
  if (same) await askAll(rest)
  return same ? now : undefined
}

/** A page asked again with its ETag: the page as the answer resolves it (its version too), or undefined when it changed or did not answer. */
async function askAgain(client: ApiClient, page: ListPageRead): Promise<ListPageRead | undefined> {
  try {
    const response = await client.get<unknown>(page.path, page.query, { 'if-none-match': page.etag })
    let resolved =
      response.status === 304
        ? reusedPage({ etag: page.etag, items: [], ...(page.after !== undefined ? { after: page.after } : {}) }, response.headers, page.keyset, page.full)
        : undefined
    if (response.status === 304 && !resolved) {
      // a full page by keyset whose 304 does not say whether the list goes on: read whole, as listAllByPage does
      const whole = await client.get<unknown>(page.path, page.query)
      const etag = whole.headers.etag
      const version = listVersion(whole.headers)
      resolved = {
        etag: typeof etag === 'string' ? etag : '',
        items: [],
        after: nextAfter(whole.headers.link),
        total: totalFromContentRange(whole.headers['content-range']),
        ...(version !== undefined ? { version } : {}),
      }
      if (resolved.etag !== page.etag) return undefined
    }
    if (!resolved || resolved.after !== page.after || resolved.total !== page.total) return undefined
    const { version: _was, ...kept } = page
    return { ...kept, ...(resolved.version !== undefined ? { version: resolved.version } : {}) }
  } catch {
    return undefined
  }
}

/**
 * A page answered 304: its kept records, with what the answer's own headers say of the pages
 * after it (the body is the same, but the list may have grown past it: a full last page gains a
 * next link, the total changes). Without a `Link` header the kept next link stands (the page ends
 * with the same record); without a `content-range` the total is unknown, and the rest is read
 * page after page until one is not full. Undefined when a full page read by keyset has neither
 * a next link nor a `Link` header on the 304: whether the list goes on is not known, so the page
 * is read whole.
 */
function reusedPage(
  stored: StoredPage,
  headers: Record<string, string | string[] | undefined>,
  keyset: boolean,
  full = stored.items.length >= PAGE_LIMIT,
): StoredPage | undefined {
  const link = headers.link
  const after = link !== undefined ? nextAfter(link) : stored.after
  if (keyset && link === undefined && after === undefined && full) return undefined
  const total = totalFromContentRange(headers['content-range'])
  // the version the 304 names: the page is the list's at that version (it was read before the page was compared)
  const version = listVersion(headers)
  return {
    etag: stored.etag,
    items: stored.items,
    ...(after !== undefined ? { after } : {}),
    ...(total !== undefined ? { total } : {}),
    ...(stored.ids !== undefined ? { ids: stored.ids } : {}),
    ...(version !== undefined ? { version } : {}),
  }
}

/** A page's path and query as the page cache finds it: the parameters in name order. */
export function pageUrl(path: string, query: Query): string {
  const names = Object.keys(query)
    .filter((name) => query[name] !== undefined)
    .sort()
  return `${path}?${names.map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(String(query[name]))}`).join('&')}`
}

/** Every page, from the first: by keyset when the server offers it, else by number (see listAllByPage). */
async function readPages<T>(
  fetchPage: (page: number, after?: string) => Promise<{ items: T[]; total?: number; after?: string }>,
  options: { idOf?: (item: T) => string; parallel?: number },
): Promise<T[]> {
  const first = await fetchPage(1)
  if (first.after !== undefined) {
    // the server offers keyset paging (Link rel="next" with `after`): each next page costs what the first did
    const all = [...first.items]
    for (let after: string | undefined = first.after; after !== undefined; ) {
      const page = await fetchPage(0, after)
      all.push(...page.items)
      after = page.after
    }
    return all
  }
  const all: T[] = []
  const seen = new Set<string>()
  /** Adds a page; false when it brought nothing new (paging ignored). */
  const add = (items: T[]) => {
    if (!options.idOf) {
      all.push(...items)
      return true
    }
    let fresh = 0
    for (const item of items) {
      const id = options.idOf(item)
      if (seen.has(id)) continue
      seen.add(id)
      all.push(item)
      fresh++
    }
    return items.length === 0 || fresh > 0
  }
  add(first.items)
  // fewer than a page: the last one; more than a page: the route does not page (the hosted service's
  // GET /v1/check-statuses answers every status at once), and asking for page 2 would read the whole list again
  if (first.items.length !== PAGE_LIMIT) return all
  if (first.total !== undefined && first.items.length > 0) {
    const pages = Math.ceil(first.total / PAGE_LIMIT)
    const rest: number[] = []
    for (let page = 2; page <= pages; page++) rest.push(page)
    const results = new Array<T[]>(rest.length)
    let next = 0
    const worker = async () => {
      while (next < rest.length) {
        const index = next++
        results[index] = (await fetchPage(rest[index])).items
      }
    }
    await Promise.all(Array.from({ length: Math.min(options.parallel ?? 4, rest.length) }, worker))
    for (const items of results) if (!add(items)) break
    // The list grew while it was read: pick up the tail page by page.
    for (let page = pages + 1; all.length < first.total; page++) {
      const { items } = await fetchPage(page)
      if (!add(items) || items.length < PAGE_LIMIT) break
    }
    return all
  }
  for (let page = 2; ; page++) {
    const { items } = await fetchPage(page)
    if (!add(items) || items.length < PAGE_LIMIT) return all
  }
}

/**
 * The `after` of a `Link: <...after=...>; rel="next"` header (RFC 8288): the local server's keyset
 * paging of long lists. Undefined without one (the hosted service, an older server).
 */
function nextAfter(link: string | string[] | undefined): string | undefined {
  for (const value of Array.isArray(link) ? link : link === undefined ? [] : [link]) {
    for (const part of value.split(/,(?=\s*<)/)) {
      const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part)
      if (!match || !/(^|;)\s*rel="?next"?\s*(;|$)/.test(match[2])) continue
      const after = new URL(match[1], 'http://link.invalid').searchParams.get('after')
      if (after) return after
    }
  }
  return undefined
}

/** Cursor paging (`?limit=&nextId=` answering `{length, entries, nextId}`; nextId null at the end). */
export async function listAllByCursor<T>(client: ApiClient, path: string): Promise<T[]> {
  // not read conditionally: a plan that reads a cursor list is never memoized (one request more than pages recorded)
  if (client.readLog) client.readLog.requests++
  const all: T[] = []
  let nextId: string | undefined
  for (;;) {
    const response = await client.get<{ entries?: T[]; nextId?: string | null }>(path, { limit: PAGE_LIMIT, nextId })
    const body = response.body
    if (!body || typeof body !== 'object' || !Array.isArray(body.entries)) {
      throw new UserError(`GET ${path} answered with an unexpected body (expected {length, entries, nextId}).`)
    }
    all.push(...body.entries)
    if (!body.nextId || body.entries.length === 0) return all
    nextId = String(body.nextId)
  }
}

function asArray<T>(body: unknown, path: string): T[] {
  if (Array.isArray(body)) return body as T[]
  // Some deployments wrap lists; accept the common envelope rather than fail.
  if (body && typeof body === 'object' && Array.isArray((body as { entries?: unknown }).entries)) {
    return (body as { entries: T[] }).entries
  }
  throw new UserError(`GET ${path} answered with an unexpected body (expected a JSON array).`)
}

export function totalFromContentRange(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (!value) return undefined
  const match = /\/\s*(\d+)\s*$/.exec(value)
  return match ? Number(match[1]) : undefined
}

/** The first items of a list, as a command shows them: those read, the total when the list says it, whether more follow. */
export interface ListSlice<T> {
  items: T[]
  /** The list's length as the server counts it (`content-range`); undefined when unknown or when `keep` filtered it. */
  total?: number
  /** Items follow those read. */
  more: boolean
}

export interface SliceOptions<T> {
  query?: Query
  /** How many items at most (Infinity: every one). */
  limit: number
  /** Items the caller keeps (a filter the server may not apply); the others are not counted. */
  keep?: (item: T) => boolean
  /** `page` (`?limit=&page=`, a bare array) or `cursor` (`?limit=&nextId=` answering `{entries, nextId}`). */
  paging?: 'page' | 'cursor'
}

/**
 * Reads a list from its first page until `limit` items are kept or the list ends: the one
 * paging loop of the commands that show a list (checks, results, deliveries, incidents,
 * status pages, variables). Pages are of `limit` items (at most PAGE_LIMIT), or of PAGE_LIMIT
 * when `keep` filters; a route that answers more than it was asked for does not page (its
 * answer is the whole list), and one that answers the same first page again has ended.
 */
export async function readSlice<T>(client: ApiClient, path: string, options: SliceOptions<T>): Promise<ListSlice<T>> {
  const size = options.keep || options.limit > PAGE_LIMIT ? PAGE_LIMIT : Math.max(1, options.limit)
  const kept: T[] = []
  let total: number | undefined
  let nextId: string | undefined
  let previousFirst: string | undefined
  for (let page = 1; ; page++) {
    const cursor = options.paging === 'cursor'
    const response = await client.get<unknown>(path, { ...options.query, limit: size, ...(cursor ? { nextId } : { page }) })
    const body = response.body as { entries?: unknown; nextId?: unknown }
    const items = cursor ? (Array.isArray(body?.entries) ? (body.entries as T[]) : asArray<T>(response.body, path)) : asArray<T>(response.body, path)
    if (page === 1 && !options.keep) total = totalFromContentRange(response.headers['content-range'])
    // a route that ignores the page answers its first page again: the list has ended
    const first = JSON.stringify(items[0])
    if (page > 1 && first === previousFirst) return { items: kept, total, more: false }
    previousFirst = first
    const fresh = options.keep ? items.filter(options.keep) : items
    const room = options.limit - kept.length
    kept.push(...fresh.slice(0, room))
    const unpaged = items.length > size
    const ended = cursor ? !body?.nextId || items.length === 0 : items.length < size || unpaged || (total !== undefined && page * size >= total)
    if (fresh.length > room) return { items: kept, total, more: true }
    if (ended) return { items: kept, total, more: false }
    if (kept.length >= options.limit) return { items: kept, total, more: true }
    if (cursor) nextId = String(body.nextId)
  }
}
