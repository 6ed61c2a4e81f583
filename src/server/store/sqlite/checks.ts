import { randomUUID } from 'node:crypto'
import type { Db } from './migrations.js'
import type { CheckData, CheckListQuery, CheckPage, CheckRecord, CheckStore, CheckType } from '../index.js'
import type { Exec } from './index.js'
import type { PageCache } from './page-cache.js'
import { groupCommit } from './batch.js'
import { foldedName } from '../check-rows.js'
import type { Clock } from '../../../runner/clock.js'

type Statement = ReturnType<Db['prepare']>

/** Part of every list version this process answers: a database file put back from a copy counts again from where the copy was, under another server start. */
const STARTED = randomUUID().slice(0, 8)
type CachedPage = CheckPage & { bytes: number }

/*
 * A check is stored as the text GET answers (the validated body plus id, checkType,
 * created_at and updated_at), so reads never re-serialize; tags are indexed beside it.
 */
export function checkRepository(
  db: Db,
  exec: Exec,
  clock: Clock,
  cache?: PageCache<CachedPage>,
  options: { groupCommit?: boolean; writes?: { count: number } } = {},
): CheckStore {
  // writes of checks by this connection (shared by the store's repositories, inside and outside transactions)
  const writes = options.writes ?? { count: 0 }
  const insert = db.prepare(`INSERT INTO checks (id, account_id, check_type, body, name_folded) VALUES (?, ?, ?, ?, ?)`)
  const insertTag = db.prepare(`INSERT OR IGNORE INTO check_tags (check_seq, account_id, tag) VALUES (?, ?, ?)`)
  const deleteTags = db.prepare(`DELETE FROM check_tags WHERE check_seq = ?`)
  const byId = db.prepare(`SELECT seq, check_type, body FROM checks WHERE id = ? AND account_id = ?`)
  const update = db.prepare(`UPDATE checks SET body = ?, name_folded = ? WHERE seq = ?`)
  const remove = db.prepare(`DELETE FROM checks WHERE id = ? AND account_id = ?`)
  // a check paused or resumed: the scheduled runs planned before (and never claimed) are skipped
  const skipPlanned = db.prepare(`UPDATE check_runs SET state = 'skipped', done_at = ?, skip_reason = 'paused'
    WHERE check_id = ? AND state = 'due' AND session_id IS NULL AND claim_seq = 0`)
  // moves when another connection commits (data_version) or this one writes checks (not when it
  // records results: a server running checks keeps its list pages)
  const dataVersion = db.prepare(`SELECT data_version FROM pragma_data_version`).pluck()
  const version = () => `${dataVersion.get() as number}:${writes.count}`

  const list = checkLister(db, cache, version)
  const listVersion = db.prepare(`SELECT epoch || '.' || n FROM list_versions WHERE account_id = ?`).pluck()

  function record(id: string, checkType: string, json: string): CheckRecord {
    return { id, checkType, json }
  }

  const create = (account: string, type: CheckType, data: CheckData) => {
    writes.count++
    const id = randomUUID()
    const json = JSON.stringify({ id, ...data, created_at: new Date(clock.now()).toISOString(), updated_at: null })
    const seq = insert.run(id, account, type, json, foldedName(data)).lastInsertRowid
    for (const tag of data.tags) insertTag.run(seq, account, tag)
    return record(id, type, json)
  }
  // creates arriving together commit together; inside a caller's transaction, at once
  const write = options.groupCommit ? groupCommit(db, exec) : <T>(fn: () => T) => exec(() => db.transaction(fn).immediate())

  const replace = db.transaction((account: string, id: string, type: CheckType, data: CheckData) => {
    const row = byId.get(id, account) as { seq: number; check_type: string; body: string } | undefined
    if (!row || row.check_type !== type) return undefined
    writes.count++
    const previous = JSON.parse(row.body) as { created_at: string; activated?: boolean }
    const json = JSON.stringify({ id, ...data, created_at: previous.created_at, updated_at: new Date(clock.now()).toISOString() })
    update.run(json, foldedName(data), row.seq)
    if ((previous.activated !== false) !== (data.activated !== false)) skipPlanned.run(clock.now(), id)
    deleteTags.run(row.seq)
    for (const tag of data.tags) insertTag.run(row.seq, account, tag)
    return record(id, type, json)
  })

  return {
    list: (account, query) => exec(() => list(account, query)),
    get: (account, id) =>
      exec(() => {
        const row = byId.get(id, account) as { check_type: string; body: string } | undefined
        return row && record(id, row.check_type, row.body)
      }),
    create: (account, type, data) => write(() => create(account, type, data)),
    replace: (account, id, type, data) => exec(() => replace.immediate(account, id, type, data)),
    delete: (account, id) =>
      exec(() => {
        writes.count++
        return remove.run(id, account).changes > 0
      }),
    listVersion: (account) =>
      exec(() => {
        const at = listVersion.get(account) as string | undefined
        return at === undefined ? undefined : `${STARTED}.${at}`
      }),
  }
}

/** A filter of GET /v1/checks: the check's type, its tags, its name, its current status, an API check's URL. */
type CheckFilter = 'type' | 'tags' | 'search' | 'passing' | 'failing' | 'degraded' | 'apiUrl'

/** The filters a query asks for, in one order (a store keeps one statement per combination). */
function checkFilters(query: CheckListQuery): CheckFilter[] {
  const out: CheckFilter[] = []
  if (query.checkType !== undefined) out.push('type')
  if (query.tags !== undefined) out.push('tags')
  if (query.search !== undefined) out.push('search')
  if (query.status !== undefined) out.push(query.status)
  if (query.apiUrl !== undefined) out.push('apiUrl')
  return out
}

/** The condition of each filter of the list (CheckListQuery), on the checks table. */
const CHECK_FILTERS: Record<CheckFilter, string> = {
  type: 'check_type = @type',
  // a check matches when it carries any of the tags asked for
  tags: 'seq IN (SELECT check_seq FROM check_tags WHERE account_id = @account AND tag IN (SELECT value FROM json_each(@tags)))',
  search: 'instr(name_folded, @search) > 0',
  passing: `id IN (SELECT check_id FROM check_statuses WHERE account_id = @account AND NOT has_failures AND NOT has_errors AND NOT is_degraded)`,
  failing: `id IN (SELECT check_id FROM check_statuses WHERE account_id = @account AND (has_failures OR has_errors))`,
  degraded: `id IN (SELECT check_id FROM check_statuses WHERE account_id = @account AND is_degraded AND NOT has_failures AND NOT has_errors)`,
  apiUrl: `check_type = 'API' AND instr(lower(json_extract(body, '$.request.url')), @apiUrl) > 0`,
}

/**
 * The list of checks of an account: a page by offset (with the total) or after a check (keyset,
 * one row more than asked to tell whether another follows), kept in the cache while the
 * database's version is the same.
 */
function checkLister(db: Db, cache: PageCache<CachedPage> | undefined, version: () => string) {
  const seqOf = db.prepare(`SELECT seq FROM checks WHERE id = ? AND account_id = ?`).pluck()
  const lists = new Map<string, { page: Statement; count: Statement; after: Statement }>()
  function listStatement(query: CheckListQuery) {
    const filters = checkFilters(query)
    const name = filters.join(':')
    let statement = lists.get(name)
    if (!statement) {
      const where = ['account_id = @account', ...filters.map((f) => CHECK_FILTERS[f])].join(' AND ')
      statement = {
        page: db.prepare(`SELECT id, body FROM checks WHERE ${where} ORDER BY seq LIMIT @limit OFFSET @offset`),
        count: db.prepare(`SELECT count(*) FROM checks WHERE ${where}`).pluck(),
        // one more row than asked: whether another page follows
        after: db.prepare(`SELECT id, body FROM checks WHERE ${where} AND seq > @after ORDER BY seq LIMIT @limit + 1`),
      }
      lists.set(name, statement)
    }
    return statement
  }

  return (account: string, query: CheckListQuery): CachedPage | null => {
    const key = cache
      ? JSON.stringify([account, query.checkType, query.tags, query.search, query.status, query.apiUrl, query.limit, query.offset, query.after])
      : ''
    // a page filtered by status changes with every result recorded: not kept
    const at = cache && query.status === undefined ? version() : ''
    const cached = at === '' ? undefined : cache?.get(at, key)
    if (cached) return cached
    const statement = listStatement(query)
    const params = {
      account,
      type: query.checkType ?? null,
      tags: JSON.stringify(query.tags ?? []),
      search: query.search ?? '',
      apiUrl: query.apiUrl ?? '',
      limit: query.limit,
      offset: query.offset,
    }
    let rows: { id: string; body: string }[]
    let total: number | undefined
    let more: boolean
    if (query.after !== undefined) {
      const after = seqOf.get(query.after, account) as number | undefined
      if (after === undefined) return null
      rows = statement.after.all({ ...params, after }) as typeof rows
      more = rows.length > query.limit
      if (more) rows.pop()
    } else {
      rows = statement.page.all(params) as typeof rows
      total = statement.count.get(params) as number
      more = query.offset + rows.length < total
    }
    const json = Buffer.from(`[${rows.map((row) => row.body).join(',')}]`)
    const page: CachedPage = { json, count: rows.length, total, lastId: rows.at(-1)?.id, more, bytes: json.length }
    if (at !== '') cache?.set(at, key, page)
    return page
  }
}
