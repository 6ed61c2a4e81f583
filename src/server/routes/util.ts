import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { pageQuerySchema } from '../../schema/index.js'
import { parseOr400 } from '../errors.js'

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
 * Answers a list page conditionally: an `ETag` of its bytes, and 304 without a body when the
 * request's `If-None-Match` names it (or is `*`). `memo` keeps the tag with a page the store
 * caches, so a page answered again is not hashed again.
 */
export function sendListPage(request: FastifyRequest, reply: FastifyReply, json: string | Buffer, memo?: { etag?: string }): FastifyReply {
  const etag = memo?.etag ?? `"${createHash('sha1').update(json).digest('base64url')}"`
  if (memo) memo.etag = etag
  reply.header('etag', etag)
  const match = request.headers['if-none-match']
  if (typeof match === 'string' && match.split(',').some((tag) => { const t = tag.trim(); return t === '*' || t.replace(/^W\//, '') === etag })) {
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
