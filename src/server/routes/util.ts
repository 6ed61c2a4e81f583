import type { FastifyReply } from 'fastify'

/** Sends JSON text as it is (stored answers are already serialized). */
export function sendJson(reply: FastifyReply, status: number, json: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(json)
}

/** `content-range: <first>-<last>/<total>` (zero-based, inclusive); `*\/<total>` for an empty page. */
export function contentRange(offset: number, count: number, total: number): string {
  return count === 0 ? `*/${total}` : `${offset}-${offset + count - 1}/${total}`
}

/**
 * Lists API.md does not describe as paged (services, maintenance windows, incidents) answer
 * every item unless the client asks for a page with `limit` or `page`.
 */
export function wantsPage(query: unknown): boolean {
  return !!query && typeof query === 'object' && ('limit' in query || 'page' in query)
}
