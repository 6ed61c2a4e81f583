/**
 * The page cache: the records of list pages kept between commands, so that a page the server
 * answers `304 Not Modified` (its `ETag` still names it, see docs/api.md "Reading long lists") is
 * not sent or parsed again. One file per target (base URL, account and a hash of the API key:
 * never the key itself) and list path, in the folder of the compile cache; each page is found by
 * its path and query, and holds its ETag, its records, and what its headers said of the pages
 * after it (the keyset `after` of its next link, the total of its `content-range`).
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
import { readCacheFile, sha256, writeCacheFile } from '../resources/cache-file.js'

const FORMAT = 'monitors-page-cache-1'
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
}

/** Where and for whom pages are kept (ApiClientOptions.pageCache). */
export interface PageCacheOptions {
  dir: string
}

/** How often each thing happened in this process. */
const counts = { reused: 0, read: 0, invalid: 0, written: 0, unwritten: 0 }
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

/** The pages of one list (`path`) of one target, kept in `dir`. */
export function openPageCache(dir: string, target: { baseUrl: string; accountId?: string; apiKey?: string }, list: string): PageCache {
  const identity = sha256(`${target.baseUrl}\0${target.accountId ?? ''}\0${sha256(target.apiKey ?? '')}\0${list}`)
  const file = path.join(dir, `pages.${identity.slice(0, 24)}.cache`)
  const invalidBefore = counts.invalid
  const old = readPages(file, identity)
  const fresh: Record<string, StoredPage> = {}
  let reused = 0
  let unchanged = 0
  let read = 0
  return {
    get: (url) => (old && Object.hasOwn(old, url) ? old[url] : undefined),
    reuse(url, page) {
      counts.reused++
      reused++
      fresh[url] = page
    },
    same(url, page) {
      reused++
      unchanged++
      fresh[url] = page
    },
    set(url, page) {
      counts.read++
      read++
      fresh[url] = page
    },
    save() {
      if (read > 0 || old === undefined || Object.keys(old).length !== reused) write(file, identity, fresh, old === undefined)
      const damaged = counts.invalid > invalidBefore ? ' (the file was damaged: ignored)' : ''
      if (process.env.MONITORS_DEBUG_CACHE) process.stderr.write(`page cache: GET ${list}: ${reused - unchanged} pages reused (304), ${unchanged ? `${unchanged} read again unchanged, ` : ''}${read} read${damaged}\n`)
    },
  }
}

function readPages(file: string, identity: string): Record<string, StoredPage> | undefined {
  const read = readCacheFile(file, FORMAT, identity)
  // another target's or list's file of the same name prefix is not damage: it is only not this one
  if ('data' in read && read.data && typeof read.data === 'object' && !Array.isArray(read.data)) return read.data as Record<string, StoredPage>
  if (!('miss' in read) || read.miss === 'damaged') counts.invalid++
  return undefined
}

function write(file: string, identity: string, pages: Record<string, StoredPage>, added: boolean): void {
  if (writeCacheFile(file, FORMAT, identity, pages, { maxBytes: MAX_BYTES, prefix: 'pages.', maxFiles: MAX_FILES }, added)) counts.written++
  else counts.unwritten++
}
