/**
 * The page cache: the records of list pages kept between commands, so that a page the server
 * answers `304 Not Modified` (its `ETag` still names it, see docs/api.md "Reading long lists") is
 * not sent or parsed again. One file per target (base URL, account and a hash of the API key:
 * never the key itself) and list path, in the folder of the compile cache; each page is found by
 * its path and query, and holds its ETag, its records, and what its headers said of the pages
 * after it (the keyset `after` of its next link, the total of its `content-range`).
 *
 * The file holds an index (each page's ETag, links, records' ids and where each record's JSON
 * ends) and then the records' JSON, one after the other: opening it parses the index only. A
 * page's records are parsed when they are first asked for (a 304 reused by a full read), and
 * one record alone when only it is (`keptRecords`: a plan that reuses what it kept for every
 * check file but the edited one reads the records of that file's resources only). A page kept
 * again unchanged is written back from its bytes, not parsed and written out again.
 *
 * A page is reused only on a 304 to a request that named its ETag: the server decides, so a
 * record changed on the server is always read. The file starts with a header line (format, the
 * data's SHA-256 and length); one that does not match whole (truncated, corrupt) is ignored and
 * written again. It holds the pages of the last read only, is not written above MAX_BYTES, and is
 * written to a temporary file renamed into place (two commands at once leave one whole file),
 * with mode 0600: records hold no secret value (the service masks them) but are the account's.
 * Any error reading or writing it only costs the read it would have saved.
 */
import path from 'node:path'
import { readCacheBytes, sha256, writeCacheBytes } from '../resources/cache-file.js'

const FORMAT = 'monitors-page-cache-2'
const MAX_BYTES = 256 * 1024 * 1024
/** Files kept per folder (one per target and list): the oldest written go first. */
const MAX_FILES = 32

/** One page as the server last answered it. */
export interface StoredPage {
  etag: string
  items: unknown[]
  /** The `after` of its next link (keyset paging), when it had one. */
  after?: string
  /** The total of its `content-range`, when it had one. */
  total?: number
  /** Each record's id (the list's idOf), when it was known. */
  ids?: string[]
  /** The version of the whole list its answer named (paging.ts LIST_VERSION_HEADER), when it named one. */
  version?: string
}

/** Where and for whom pages are kept (ApiClientOptions.pageCache). */
export interface PageCacheOptions {
  dir: string
}

/** How often each thing happened in this process. */
const counts = { reused: 0, read: 0, invalid: 0, written: 0, unwritten: 0, pagesParsed: 0, recordsParsed: 0 }
export function pageCacheCounts(): Readonly<typeof counts> {
  return { ...counts }
}

export interface PageCache {
  /** The stored page of this path and query, to send its ETag. */
  get(url: string): StoredPage | undefined
  /** A page answered 304: its stored records are used (and kept). */
  reuse(url: string, page: StoredPage): void
  /** A page read whole (not asked conditionally) that is the same as kept: kept, nothing to write. */
  same(url: string, page: StoredPage): void
  /** A page answered 200 with an ETag: stored. */
  set(url: string, page: StoredPage): void
  /** Writes the file when a page changed or went; never throws. */
  save(): void
}

/** Where a kept page's records are in the file's bytes: each one's end (exclusive), the first starting at `start`, each next one after a comma. */
interface Span {
  bytes: Buffer
  start: number
  ends: number[]
}

/** A page read from the file: its records parsed when first asked for. */
class KeptPage implements StoredPage {
  #items: unknown[] | undefined
  readonly after?: string
  readonly total?: number
  readonly ids?: string[]
  readonly version?: string
  constructor(
    readonly etag: string,
    meta: { after?: string; total?: number; ids?: string[]; version?: string },
    readonly span: Span,
  ) {
    if (meta.after !== undefined) this.after = meta.after
    if (meta.total !== undefined) this.total = meta.total
    if (meta.ids !== undefined) this.ids = meta.ids
    if (typeof meta.version === 'string') this.version = meta.version
  }
  get items(): unknown[] {
    if (this.#items === undefined) {
      const { bytes, start, ends } = this.span
      counts.pagesParsed++
      this.#items = ends.length === 0 ? [] : (JSON.parse(`[${bytes.toString('utf8', start, ends[ends.length - 1])}]`) as unknown[])
    }
    return this.#items
  }
  /** Record `i` alone, parsed from its bytes. */
  record(i: number): unknown {
    const { bytes, start, ends } = this.span
    counts.recordsParsed++
    return JSON.parse(bytes.toString('utf8', i === 0 ? start : ends[i - 1] + 1, ends[i]))
  }
}

/** The pages of one list (`path`) of one target, kept in `dir`. */
export function openPageCache(dir: string, target: { baseUrl: string; accountId?: string; apiKey?: string }, list: string): PageCache {
  const identity = sha256(`${target.baseUrl}\0${target.accountId ?? ''}\0${sha256(target.apiKey ?? '')}\0${list}`)
  const file = path.join(dir, `pages.${identity.slice(0, 24)}.cache`)
  const invalidBefore = counts.invalid
  const old = readPages(file, identity)
  /** What is written: each page, with the bytes of its records when they are the kept ones. */
  const fresh: Record<string, { page: StoredPage; span?: Span }> = {}
  const kept = (url: string, page: StoredPage) => {
    const was = old?.get(url)
    return { page, ...(was && was.etag === page.etag ? { span: was.span } : {}) }
  }
  let reused = 0
  let unchanged = 0
  let read = 0
  // a page reused at another list version than kept: the file is written again with it
  let moved = false
  return {
    get: (url) => old?.get(url),
    reuse(url, page) {
      counts.reused++
      reused++
      if (old?.get(url)?.version !== page.version) moved = true
      fresh[url] = kept(url, page)
    },
    same(url, page) {
      reused++
      unchanged++
      fresh[url] = kept(url, page)
    },
    set(url, page) {
      counts.read++
      read++
      fresh[url] = { page }
    },
    save() {
      if (read > 0 || moved || old === undefined || old.size !== reused) write(file, identity, fresh, old === undefined)
      const damaged = counts.invalid > invalidBefore ? ' (the file was damaged: ignored)' : ''
      if (process.env.MONITORS_DEBUG_CACHE)
        process.stderr.write(
          `page cache: GET ${list}: ${reused - unchanged} pages reused (304), ${unchanged ? `${unchanged} read again unchanged, ` : ''}${read} read${damaged}\n`,
        )
    },
  }
}

/**
 * The kept records of `ids` among `pages` (each kept with that ETag, as the last read of the
 * list left it), each record parsed alone, by id; the first page holding an id gives it, as a
 * read does. Undefined when a page is not kept with that ETag, or was kept without its records'
 * ids: the caller then reads the list.
 */
export function keptRecords(cache: PageCache, pages: ReadonlyArray<{ url: string; etag: string }>, ids: ReadonlySet<string>): Map<string, unknown> | undefined {
  const out = new Map<string, unknown>()
  for (const { url, etag } of pages) {
    const page = cache.get(url)
    if (!(page instanceof KeptPage) || page.etag !== etag || !page.ids || page.ids.length !== page.span.ends.length) return undefined
    page.ids.forEach((id, i) => {
      if (ids.has(id) && !out.has(id)) out.set(id, page.record(i))
    })
  }
  return out
}

interface PageMeta {
  etag: string
  after?: string
  total?: number
  ids?: string[]
  version?: string
  /** each record's end in the records' bytes, from this page's start */
  ends: number[]
}

function readPages(file: string, identity: string): Map<string, KeptPage> | undefined {
  const read = readCacheBytes(file, FORMAT, identity)
  // another target's or list's file of the same name prefix is not damage: it is only not this one
  if ('miss' in read) {
    if (read.miss === 'damaged') counts.invalid++
    return undefined
  }
  const bytes = read.bytes
  const split = bytes.indexOf(10)
  try {
    const index = JSON.parse(bytes.toString('utf8', 0, split < 0 ? bytes.length : split)) as Record<string, PageMeta>
    if (split < 0 || !index || typeof index !== 'object' || Array.isArray(index)) throw new Error('no index')
    const pages = new Map<string, KeptPage>()
    let at = split + 1
    for (const url of Object.keys(index)) {
      const meta = index[url]
      if (typeof meta?.etag !== 'string' || !Array.isArray(meta.ends)) throw new Error('not a page')
      const ends = meta.ends.map((end) => at + end)
      if (ends.some((end, i) => !(end >= (i === 0 ? at + 1 : ends[i - 1] + 2) && end <= bytes.length))) throw new Error('records out of the file')
      pages.set(url, new KeptPage(meta.etag, meta, { bytes, start: at, ends }))
      at = ends.length > 0 ? ends[ends.length - 1] : at
    }
    if (at !== bytes.length) throw new Error('bytes left over')
    return pages
  } catch {
    counts.invalid++
    return undefined
  }
}

/** The index, then each page's records' JSON: the kept bytes of a page unchanged, else its records written out. */
function write(file: string, identity: string, pages: Record<string, { page: StoredPage; span?: Span }>, added: boolean): void {
  const index: Record<string, PageMeta> = {}
  const chunks: Buffer[] = []
  for (const [url, { page, span }] of Object.entries(pages)) {
    let ends: number[]
    if (span) {
      const first = span.start
      const last = span.ends.length > 0 ? span.ends[span.ends.length - 1] : first
      chunks.push(span.bytes.subarray(first, last))
      ends = span.ends.map((end) => end - first)
    } else {
      ends = []
      let own = 0
      page.items.forEach((item, i) => {
        const text = Buffer.from(`${i === 0 ? '' : ','}${JSON.stringify(item)}`, 'utf8')
        chunks.push(text)
        own += text.length
        ends.push(own)
      })
    }
    const meta: PageMeta = { etag: page.etag, ends }
    if (page.after !== undefined) meta.after = page.after
    if (page.total !== undefined) meta.total = page.total
    if (page.ids !== undefined && page.ids.length === ends.length) meta.ids = page.ids
    if (page.version !== undefined) meta.version = page.version
    index[url] = meta
  }
  const data = Buffer.concat([Buffer.from(`${JSON.stringify(index)}\n`, 'utf8'), ...chunks])
  if (writeCacheBytes(file, FORMAT, identity, data, { maxBytes: MAX_BYTES, prefix: 'pages.', maxFiles: MAX_FILES }, added)) counts.written++
  else counts.unwritten++
}
