import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { pageQuerySchema } from '../../schema/index.js'
import { badRequest, parseOr400 } from '../errors.js'
import type { KeysetPage, Page, Paging } from '../store/index.js'

/** Sends JSON text as it is (stored answers are already serialized). */
export function sendJson(reply: FastifyReply, status: number, json: string | Buffer): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(json)
}

/** `content-range: <first>-<last>/<total>` (zero-based, inclusive); `*\/<total>` for an empty page. */
export function contentRange(offset: number, count: number, total: number): string {
  return count === 0 ? `*/${total}` : `${offset}-${offset + count - 1}/${total}`
}

/**
 * Lists API.md does not describe as paged (services, maintenance windows) answer
 * every item unless the client asks for a page with `limit` or `page`.
 */
export function wantsPage(query: unknown): boolean {
  return !!query && typeof query === 'object' && ('limit' in query || 'page' in query)
}

/** The rows an optionally paged list asks for: all of them (no limit) unless it names a page. */
export function optionalPage(query: unknown): { limit?: number; offset: number } {
  if (!wantsPage(query)) return { offset: 0 }
  const { limit, page } = parseOr400(pageQuerySchema, query, 'query')
  return { limit, offset: (page - 1) * limit }
}

/**
 * The version of the whole list a page is of (docs/api.md "Reading long lists"), on every page
 * of GET /v1/checks, 304s too: another after any write to the account's checks or check groups.
 */
export const LIST_VERSION_HEADER = 'monitors-list-version'

/**
 * Answers a list page conditionally: an `ETag` of its bytes, and 304 without a body when the
 * request's `If-None-Match` names it (or is `*`). `memo` keeps the tag with a page the store
 * caches, so a page answered again is not hashed again.
 */
export function sendListPage(request: FastifyRequest, reply: FastifyReply, json: string | Buffer, memo?: { etag?: string }): FastifyReply {
  const etag = memo?.etag ?? `"${createHash('sha1').update(json).digest('base64url')}"`
  if (memo) memo.etag = etag
  reply.header('etag', etag)
  const match = request.headers['if-none-match']
  if (
    typeof match === 'string' &&
    match.split(',').some((tag) => {
      const t = tag.trim()
      return t === '*' || t.replace(/^W\//, '') === etag
    })
  ) {
    return reply.code(304).send()
  }
  return sendJson(reply, 200, json)
}

/**
 * `Link: <path?...&after=<last>>; rel="next"` (RFC 8288) when items follow the page: the query
 * of the request with `page` replaced by `after`, so that a client following it reads the rest
 * by keyset, each page costing what the first cost.
 */
export function nextLink(request: FastifyRequest, reply: FastifyReply, lastId: string | undefined, more: boolean): void {
  if (!more || lastId === undefined) return
  const url = new URL(request.url, 'http://local')
  url.searchParams.delete('page')
  url.searchParams.set('after', lastId)
  reply.header('link', `<${url.pathname}${url.search}>; rel="next"`)
}

/** `after` of a list's query (keyset paging, an extension of the spec; docs/api.md "Reading long lists"). */
const afterQuerySchema = z.object({ after: z.string().min(1).max(200).optional() })

/** How a route reads one of its lists by page number and by keyset, and presents its items. */
export interface PagedList<T> {
  /** what the list holds, for the 400 of an `after` naming none ("variable") */
  what: string
  /** the page by number (offset) */
  byPage: (paging: Paging) => Promise<Page<T>>
  /** the items after the one `after` names; null when it names none of the account's */
  byKeyset: (after: string, limit?: number) => Promise<KeysetPage<T> | null>
  /** what `after` names an item by (its id, a variable's key) */
  keyOf: (item: T) => string | number
  present: (items: T[]) => unknown[] | Promise<unknown[]>
}

/**
 * Answers a list page read by page number (`paging`, as the route reads `limit` and `page`;
 * `content-range` with the total) or, when the query names `after`, by keyset (the items after
 * that one, `limit` of them; no total counted). Either way: `Link: <…after=<last>>; rel="next"`
 * when items follow, and an ETag (304 to a matching If-None-Match). An `after` naming nothing
 * of the account's (another account's, a deleted one) is a 400 naming `after`.
 */
export async function sendPaged<T>(request: FastifyRequest, reply: FastifyReply, paging: Paging, list: PagedList<T>): Promise<FastifyReply> {
  const { after } = parseOr400(afterQuerySchema, request.query, 'query')
  let items: T[]
  let more: boolean
  if (after !== undefined) {
    const page = await list.byKeyset(after, paging.limit)
    if (!page)
      throw badRequest('query', [
        {
          path: 'after',
          message: `no ${list.what} ${JSON.stringify(after)} in this account (deleted while the list was read?): read the list again from its first page`,
        },
      ])
    ;({ items, more } = page)
  } else {
    const page = await list.byPage(paging)
    reply.header('content-range', contentRange(paging.offset, page.items.length, page.total))
    items = page.items
    more = paging.offset + items.length < page.total
  }
  nextLink(request, reply, items.length > 0 ? String(list.keyOf(items[items.length - 1])) : undefined, more)
  return sendListPage(request, reply, JSON.stringify(await list.present(items)))
}

/**
 * Work that follows a write the client's answer does not depend on (queuing subscribers'
 * emails): awaited, so it is done when the answer leaves, but its failure is logged, never
 * answered: the write itself succeeded.
 */
export async function quietly(request: FastifyRequest, work: () => Promise<unknown>): Promise<void> {
  try {
    await work()
  } catch (error) {
    request.log.error({ err: error }, 'after the write')
  }
}
