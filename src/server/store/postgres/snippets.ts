import type { SnippetRecord, SnippetStore } from '../index.js'
import type { Snippet } from '../../../schema/index.js'
import type { Sql } from './index.js'
import { keysetReader } from './keyset.js'
import type { Clock } from '../../../runner/clock.js'


interface SnippetRow {
  id: number
  body: string
  created_at: string
  updated_at: string | null
}

const snippet = (row: SnippetRow): SnippetRecord => ({ id: Number(row.id), snippet: JSON.parse(row.body) as Snippet, created_at: row.created_at, updated_at: row.updated_at })

/** Snippets: named setup and teardown scripts of API checks, owned by an account. */
export function snippetRepository(sql: Sql, clock: Clock): SnippetStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, body, created_at, updated_at'
  const after = keysetReader<SnippetRow>({ table: 'snippets', columns, key: 'id', order: 'id', integerKey: true })
  return {
    list: async (account, paging) => {
      const rows = await sql.rows<SnippetRow & { total: number }>(
        `SELECT ${columns}, count(*) OVER () AS total FROM snippets WHERE account_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
        [account, paging.limit ?? null, paging.offset])
      if (rows.length > 0) return { items: rows.map(snippet), total: Number(rows[0].total) }
      const [row] = await sql.rows<{ n: number }>(`SELECT count(*) AS n FROM snippets WHERE account_id = $1`, [account])
      return { items: [], total: Number(row.n) }
    },
    listAfter: async (account, id, limit) => {
      const page = await after(sql, account, id, limit)
      return page && { items: page.items.map(snippet), more: page.more }
    },
    get: async (account, id) => {
      const [row] = await sql.rows<SnippetRow>(`SELECT ${columns} FROM snippets WHERE id = $1 AND account_id = $2`, [id, account])
      return row && snippet(row)
    },
    byIds: async (account, ids) => {
      if (ids.length === 0) return []
      const rows = await sql.rows<SnippetRow>(`SELECT ${columns} FROM snippets WHERE account_id = $1 AND id = ANY($2::bigint[]) ORDER BY id`, [account, ids])
      return rows.map(snippet)
    },
    create: async (account, data) => {
      const [row] = await sql.rows<SnippetRow>(`INSERT INTO snippets (account_id, body, created_at, updated_at) VALUES ($1, $2, $3, NULL) RETURNING ${columns}`,
        [account, JSON.stringify(data), now()])
      return snippet(row)
    },
    update: async (account, id, data) => {
      const [row] = await sql.rows<SnippetRow>(`UPDATE snippets SET body = $1, updated_at = $2 WHERE id = $3 AND account_id = $4 RETURNING ${columns}`,
        [JSON.stringify(data), now(), id, account])
      return row && snippet(row)
    },
    delete: async (account, id) => (await sql.run(`DELETE FROM snippets WHERE id = $1 AND account_id = $2`, [id, account])) > 0,
  }
}
