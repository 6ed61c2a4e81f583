import type { PrivateLocationRecord } from './index.js'

/*
 * What both stores do with private_locations rows besides the SQL: the record, and which
 * stored check or group bodies name a slug in their privateLocations.
 */

export interface PrivateLocationRow {
  id: string
  slug_name: string
  name: string
  icon: string
  proxy_url: string | null
  created_at: string
  updated_at: string | null
  last_seen_at: number | string | null
  no_agent_since: number | string | null
  alerted_at: number | string | null
}

export const PRIVATE_LOCATION_COLUMNS = 'id, slug_name, name, icon, proxy_url, created_at, updated_at, last_seen_at, no_agent_since, alerted_at'

const ms = (value: number | string | null): number | null => (value === null ? null : Number(value))

export function privateLocationRecord(row: PrivateLocationRow): PrivateLocationRecord {
  return {
    id: row.id,
    location: { name: row.name, slugName: row.slug_name, icon: row.icon, proxyUrl: row.proxy_url },
    created_at: row.created_at,
    updated_at: row.updated_at,
    lastSeenAt: ms(row.last_seen_at),
    noAgentSince: ms(row.no_agent_since),
    alertedAt: ms(row.alerted_at),
  }
}

/** The text a body holds when its privateLocations may name the slug (the store's coarse filter, exact after `namesSlug`). */
export const slugPattern = (slug: string): string => `%"${slug}"%`

/** Whether a stored check or group body names the slug in its privateLocations. */
export function namesSlug(body: string, slug: string): boolean {
  if (!body.includes('"privateLocations":')) return false
  const list = (JSON.parse(body) as { privateLocations?: unknown }).privateLocations
  return Array.isArray(list) && list.includes(slug)
}
