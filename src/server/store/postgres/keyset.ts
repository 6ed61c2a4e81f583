import { integerAfter, type KeysetPage, type KeysetTable } from '../index.js'
import type { Sql } from './index.js'

/**
 * The keyset reading of an account's list (store/index.ts, KeysetPage): the position of the row
 * `after` names, then the rows past it in the list's order, one more than asked to know whether
 * rows follow. Null when `after` names no row of the account.
 */
export function keysetReader<Row>(of: KeysetTable): (sql: Sql, account: string, after: string, limit?: number) => Promise<KeysetPage<Row> | null> {
  const position = `SELECT ${of.order} AS position FROM ${of.table} WHERE account_id = $1 AND ${of.key} = $2`
  const page = `SELECT ${of.columns} FROM ${of.table} WHERE account_id = $1 AND ${of.order} ${of.descending ? '<' : '>'} $2
    ORDER BY ${of.order}${of.descending ? ' DESC' : ''} LIMIT $3`
  return async (sql, account, after, limit) => {
    const key = of.integerKey ? integerAfter(after) : after
    if (key === undefined) return null
    const [found] = await sql.rows<{ position: number }>(position, [account, key])
    if (found === undefined) return null
    // LIMIT NULL is "no limit"
    const rows = await sql.rows<Row>(page, [account, found.position, limit === undefined ? null : limit + 1])
    const more = limit !== undefined && rows.length > limit
    return { items: more ? rows.slice(0, limit) : rows, more }
  }
}
