import type { KeyRecord } from './index.js'

/*
 * What both stores do with api_keys rows besides the SQL: the record lists answer.
 */

export interface KeyRow {
  id: string
  prefix: string
  account_id: string
  role: KeyRecord['role']
  name: string | null
  source: string
  created_at: string
  last_used_at: string | null
  location_id?: string | null
  key_end?: string
}

export function keyRecord(row: KeyRow): KeyRecord {
  return {
    id: row.id,
    prefix: row.prefix,
    accountId: row.account_id,
    role: row.role,
    name: row.name,
    source: row.source,
    created_at: row.created_at,
    lastUsedAt: row.last_used_at,
    locationId: row.location_id ?? null,
    keyEnd: row.key_end ?? '',
  }
}
