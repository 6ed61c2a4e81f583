import type { FastifyReply } from 'fastify'
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
