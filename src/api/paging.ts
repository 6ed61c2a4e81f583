import type { ApiClient, Query } from './client.js'

/** Page size used for every list: the API's maximum. */
export const PAGE_LIMIT = 100

/**
 * Offset paging (`?limit=&page=`, a bare array, optionally a `content-range: a-b/total` header).
 * With a total, stops at the last page; without one, stops at the first page that is not full.
 */
export async function listAllByPage<T>(
  client: ApiClient,
  path: string,
  options: { query?: Query; idOf?: (item: T) => string } = {},
): Promise<T[]> {
  const all: T[] = []
  const seen = new Set<string>()
  for (let page = 1; ; page++) {
    const response = await client.get<unknown>(path, { ...options.query, limit: PAGE_LIMIT, page })
    const items = asArray<T>(response.body, path)
    if (options.idOf) {
      // A route that ignores paging answers the same list for every page: stop at the first
      // page that brings nothing new.
      const fresh = items.filter((item) => !seen.has(options.idOf!(item)))
      if (items.length > 0 && fresh.length === 0) return all
      for (const item of fresh) seen.add(options.idOf(item))
      all.push(...fresh)
    } else {
      all.push(...items)
    }
    const total = totalFromContentRange(response.headers['content-range'])
    if (total !== undefined) {
      if (all.length >= total || items.length === 0) return all
    } else if (items.length < PAGE_LIMIT) {
      return all
    }
  }
}

/** Cursor paging (`?limit=&nextId=` answering `{length, entries, nextId}`; nextId null at the end). */
export async function listAllByCursor<T>(client: ApiClient, path: string): Promise<T[]> {
  const all: T[] = []
  let nextId: string | undefined
  for (;;) {
    const response = await client.get<{ entries?: T[]; nextId?: string | null }>(path, { limit: PAGE_LIMIT, nextId })
    const body = response.body
    if (!body || typeof body !== 'object' || !Array.isArray(body.entries)) {
      throw Object.assign(new Error(`GET ${path} answered with an unexpected body (expected {length, entries, nextId}).`), {
        userError: true,
      })
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
  throw Object.assign(new Error(`GET ${path} answered with an unexpected body (expected a JSON array).`), { userError: true })
}

export function totalFromContentRange(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (!value) return undefined
  const match = /\/\s*(\d+)\s*$/.exec(value)
  return match ? Number(match[1]) : undefined
}
