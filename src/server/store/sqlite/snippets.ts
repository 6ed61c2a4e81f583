import type { Db } from './migrations.js'
import type { Page, Paging, SnippetRecord, SnippetStore } from '../index.js'
import type { Snippet } from '../../../schema/index.js'
import type { Exec } from './index.js'
import { keysetReader } from './keyset.js'
import type { Clock } from '../../../runner/clock.js'


interface SnippetRow {
  id: number
  body: string
  created_at: string
  updated_at: string | null
}

const snippet = (row: SnippetRow): SnippetRecord => ({ id: row.id, snippet: JSON.parse(row.body) as Snippet, created_at: row.created_at, updated_at: row.updated_at })

/** Snippets: named setup and teardown scripts of API checks, owned by an account. */
export function snippetRepository(db: Db, exec: Exec, clock: Clock): SnippetStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, body, created_at, updated_at'
  const byId = db.prepare(`SELECT ${columns} FROM snippets WHERE id = ? AND account_id = ?`)
  const byIds = db.prepare(`SELECT ${columns} FROM snippets WHERE account_id = ? AND id IN (SELECT value FROM json_each(?)) ORDER BY id`)
  const list = db.prepare(`SELECT ${columns} FROM snippets WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) FROM snippets WHERE account_id = ?`).pluck()
  const insert = db.prepare(`INSERT INTO snippets (account_id, body, created_at, updated_at) VALUES (?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE snippets SET body = ?, updated_at = ? WHERE id = ? AND account_id = ?`)
  const remove = db.prepare(`DELETE FROM snippets WHERE id = ? AND account_id = ?`)
  const after = keysetReader<SnippetRow>(db, { table: 'snippets', columns, key: 'id', order: 'id', integerKey: true })
  const get = (account: string, id: number | bigint) => {
    const row = byId.get(id, account) as SnippetRow | undefined
    return row && snippet(row)
  }
  return {
    list: (account, paging: Paging) => exec((): Page<SnippetRecord> => ({
      items: (list.all(account, paging.limit ?? -1, paging.offset) as SnippetRow[]).map(snippet),
      total: count.get(account) as number,
    })),
    listAfter: (account, id, limit) => exec(() => {
      const page = after(account, id, limit)
      return page && { items: page.items.map(snippet), more: page.more }
    }),
    get: (account, id) => exec(() => get(account, id)),
    byIds: (account, ids) => exec(() => (ids.length === 0 ? [] : (byIds.all(account, JSON.stringify(ids)) as SnippetRow[]).map(snippet))),
    create: (account, data) => exec(() => get(account, insert.run(account, JSON.stringify(data), now()).lastInsertRowid)!),
    update: (account, id, data) => exec(() => (update.run(JSON.stringify(data), now(), id, account).changes === 0 ? undefined : get(account, id))),
    delete: (account, id) => exec(() => remove.run(id, account).changes > 0),
  }
}
