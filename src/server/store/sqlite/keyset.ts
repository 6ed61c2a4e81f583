import type { Db } from './migrations.js'
import { integerAfter, type KeysetPage, type KeysetTable } from '../index.js'

/**
 * The keyset reading of an account's list (store/index.ts, KeysetPage): the position of the row
 * `after` names, then the rows past it in the list's order, one more than asked to know whether
 * rows follow. Null when `after` names no row of the account.
 */
export function keysetReader<Row>(db: Db, of: KeysetTable): (account: string, after: string, limit?: number) => KeysetPage<Row> | null {
  const position = db.prepare(`SELECT ${of.order} FROM ${of.table} WHERE account_id = ? AND ${of.key} = ?`).pluck()
  const page = db.prepare(
    `SELECT ${of.columns} FROM ${of.table} WHERE account_id = ? AND ${of.order} ${of.descending ? '<' : '>'} ? ORDER BY ${of.order}${of.descending ? ' DESC' : ''} LIMIT ?`,
  )
  return (account, after, limit) => {
    const key = of.integerKey ? integerAfter(after) : after
    if (key === undefined) return null
    const from = position.get(account, key) as number | undefined
    if (from === undefined) return null
    // SQLite's LIMIT -1 is "no limit"
    const rows = page.all(account, from, limit === undefined ? -1 : limit + 1) as Row[]
    const more = limit !== undefined && rows.length > limit
    return { items: more ? rows.slice(0, limit) : rows, more }
  }
}
