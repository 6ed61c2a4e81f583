/** Checks and check groups. (Re-exported by ../index.ts.) */
import type { CheckGroup } from '../../../schema/index.js'
import type { ServiceCheckType } from '../../../schema/check-types.js'
import type { JsonBodyStore, Timestamps } from './paging.js'

/** A check type this service serves (src/schema/check-types.ts). */
export type CheckType = ServiceCheckType

/** A check as GET answers it: `json` is the answer's text (stored as it is answered). */
export interface CheckRecord {
  id: string
  checkType: string
  json: string
}

/** Validated check body (the schema's output): tags index the lists. */
export type CheckData = { tags: string[] } & Record<string, unknown>

/** A check's current status as GET /v1/checks?status= names it (from its newest run; a check that never ran has none). */
export type CheckStatusFilter = 'passing' | 'failing' | 'degraded'

export interface CheckListQuery {
  checkType?: string
  /** a check matches when it carries any of these */
  tags?: string[]
  /** in lower case: a check matches when its name (in lower case) contains it */
  search?: string
  /** failing: failures or errors; degraded: degraded without them; passing: neither */
  status?: CheckStatusFilter
  /** in lower case: an API check whose request URL (in lower case) contains it; no other type */
  apiUrl?: string
  limit: number
  offset: number
  /**
   * Keyset paging: the checks after this one (its id), in the list's order; `offset` is then
   * ignored and no total is counted, so a page costs the same wherever it is in the list.
   */
  after?: string
}

/**
 * One page of checks: `json` is the JSON array of the answers (text, or its UTF-8 bytes so
 * that a kept page is not encoded again per answer), `count` its length, `total` all matches
 * (undefined for a keyset page), `lastId` the id of its last check and `more` whether checks
 * follow it. Null for a keyset page whose `after` names no check of the account.
 */
export interface CheckPage {
  json: string | Buffer
  count: number
  total?: number
  lastId?: string
  more: boolean
}

/**
 * Every check of the account matching `filter`, page after page by keyset (each page costs the
 * same wherever it is in the list), as parsed answers. A check deleted while it is the page's
 * last leaves the rest unread: the list as it was is not needed, only a consistent one.
 */
export async function* eachCheck<T>(
  checks: Pick<CheckStore, 'list'>,
  account: string,
  filter: Pick<CheckListQuery, 'checkType' | 'tags'> = {},
  pageSize = 1000,
): AsyncGenerator<T> {
  let after: string | undefined
  for (;;) {
    const page = await checks.list(account, { ...filter, limit: pageSize, offset: 0, after })
    if (!page) return
    yield* JSON.parse(page.json.toString()) as T[]
    if (!page.more || page.lastId === undefined) return
    after = page.lastId
  }
}

/** A check group (reference: CheckGroup); its checks name it by their own groupId. */
export interface CheckGroupRecord extends Timestamps {
  id: number
  group: CheckGroup
}

export interface CheckStore {
  list(account: string, query: CheckListQuery): Promise<CheckPage | null>
  get(account: string, id: string): Promise<CheckRecord | undefined>
  create(account: string, type: CheckType, data: CheckData): Promise<CheckRecord>
  /** replaces the body of a check of this type; keeps created_at; undefined when there is none */
  replace(account: string, id: string, type: CheckType, data: CheckData): Promise<CheckRecord | undefined>
  delete(account: string, id: string): Promise<boolean>
  /**
   * The version of the account's checks and check groups: another after any write to either
   * (created, replaced, deleted), whichever server wrote it; undefined for an account that never
   * had either. Read before a page, never after: a page read later is the same or newer.
   */
  listVersion(account: string): Promise<string | undefined>
}

export type CheckGroupStore = JsonBodyStore<number, CheckGroup, CheckGroupRecord>
