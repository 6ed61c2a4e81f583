import { randomUUID } from 'node:crypto'
import type { Sql } from './index.js'
import { keysetReader } from './keyset.js'
import type { Clock } from '../../../runner/clock.js'
import type { Paging } from '../index.js'
import {
  bodyColumns,
  bodyRecord,
  bodyToWrite,
  childRecord,
  uniqueViolation,
  type BodyRow,
  type ChildStore,
  type ChildTable,
  type JsonBodyRecord,
  type JsonBodyRepository,
  type JsonBodyStore,
  type JsonBodyTable,
} from '../json-body-rows.js'

/** LIMIT NULL is "no limit" */
const limitOf = (paging: Paging) => paging.limit ?? null

/** $1, $2, … $n */
const placeholders = (n: number) => Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ')

/** All rows of the account (for a page past the end, which has no row to carry the total). */
export async function countRows(sql: Sql, table: string, account: string): Promise<number> {
  const [row] = await sql.rows<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE account_id = $1`, [account])
  return row.n
}

/** The write itself: a collision on a unique column is the table's UniqueViolation. */
async function uniqueWrite<Data, T>(
  t: Pick<JsonBodyTable<string, number | string, Data, unknown>, 'table' | 'unique'>,
  data: Data,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write()
  } catch (error) {
    const constraint = (error as { constraint?: string }).constraint
    const names = (column: string) => constraint === `${t.table}_${column}` || constraint === `${t.table}_${column}_key`
    throw ((error as { code?: string }).code === '23505' ? uniqueViolation(t, data, names) : undefined) ?? error
  }
}

/** A row's entries in the table's index (a status page's services), replaced by those of its body. */
async function writeIndex<Stored>(
  db: Sql,
  t: Pick<JsonBodyTable<string, number | string, unknown, Stored>, 'index'>,
  uuid: boolean,
  row: BodyRow,
  body: Stored,
): Promise<void> {
  if (!t.index) return
  const key = uuid ? row.seq : row.id
  await db.run(`DELETE FROM ${t.index.table} WHERE ${t.index.key} = $1`, [key])
  const values = t.index.values(body)
  if (values.length > 0) await db.run(`INSERT INTO ${t.index.table} (${t.index.key}, ${t.index.column}) SELECT $1, unnest($2::text[])`, [key, values])
}

/** The records of rows, with their children (one statement for the children of all of them). */
async function recordsOf<Field extends string, Id extends number | string, Data, Stored, Child extends string, ChildBody extends string>(
  db: Sql,
  t: JsonBodyTable<Field, Id, Data, Stored, Child, ChildBody>,
  rows: BodyRow[],
): Promise<Array<JsonBodyRecord<Field, Id, Stored, Child, ChildBody>>> {
  if (!t.children || rows.length === 0) return rows.map((row) => bodyRecord(t, row))
  const children = await db.rows<BodyRow & { parent: number }>(
    `SELECT ${t.children.parent} AS parent, id, body, created_at, updated_at FROM ${t.children.table} WHERE ${t.children.parent} = ANY($1::bigint[]) ORDER BY seq DESC`,
    [rows.map((r) => r.seq)],
  )
  return rows.map((row) =>
    bodyRecord(
      t,
      row,
      children.filter((c) => c.parent === row.seq),
    ),
  )
}

/**
 * The repository of a JSON-body table on PostgreSQL. A write of more than one statement (an
 * index, a body made from the one it replaces: that row is locked first) and a read of rows with
 * their children are atomic; a write answers the row it wrote (RETURNING).
 */
export function jsonBodyRepository<
  Field extends string,
  Id extends number | string,
  Data,
  Stored,
  Child extends string = never,
  ChildBody extends string = never,
>(sql: Sql, clock: Clock, t: JsonBodyTable<Field, Id, Data, Stored, Child, ChildBody>): JsonBodyRepository<Field, Id, Data, Stored, Child, ChildBody> {
  type Rec = JsonBodyRecord<Field, Id, Stored, Child, ChildBody>
  const now = () => new Date(clock.now()).toISOString()
  const uuid = t.id === 'uuid'
  const columns = bodyColumns(t)
  const order = `${uuid ? 'seq' : 'id'}${t.descending ? ' DESC' : ''}`
  const written = [...Object.keys(t.columns ?? {}), 'body']
  const after = keysetReader<BodyRow>({ table: t.table, columns, key: 'id', order: uuid ? 'seq' : 'id', descending: t.descending, integerKey: !uuid })
  // statements that must see one state: in one transaction
  const reading = <T>(fn: (db: Sql) => Promise<T>): Promise<T> => (t.children ? sql.atomic(fn) : fn(sql))
  const writing = <T>(fn: (db: Sql) => Promise<T>): Promise<T> => (t.children || t.stored || t.index ? sql.atomic(fn) : fn(sql))

  const records = (db: Sql, rows: BodyRow[]) => recordsOf(db, t, rows)
  const unique = <T>(data: Data, write: () => Promise<T>) => uniqueWrite(t, data, write)
  const recordIndex = (db: Sql, row: BodyRow, body: Stored) => writeIndex(db, t, uuid, row, body)
  async function update(db: Sql, account: string, id: Id, data: Data): Promise<Rec | undefined> {
    let previous: Stored | undefined
    if (t.stored) {
      const [old] = await db.rows<BodyRow>(`SELECT ${columns} FROM ${t.table} WHERE id = $1 AND account_id = $2 FOR UPDATE`, [id, account])
      if (!old) return undefined
      previous = JSON.parse(old.body) as Stored
    }
    const time = now()
    const { body, values } = bodyToWrite(t, data, previous, time, randomUUID)
    const n = written.length
    const [row] = await db.rows<BodyRow>(
      `UPDATE ${t.table} SET ${written.map((c, i) => `${c} = $${i + 1}`).join(', ')}, updated_at = $${n + 1} WHERE id = $${n + 2} AND account_id = $${n + 3} RETURNING ${columns}`,
      [...values, JSON.stringify(body), time, id, account],
    )
    if (!row) return undefined
    await recordIndex(db, row, body)
    return (await records(db, [row]))[0]
  }

  const store: JsonBodyStore<Id, Data, Rec> = {
    list: (account, paging) =>
      reading(async (db) => {
        const rows = await db.rows<BodyRow & { total: number }>(
          `SELECT ${columns}, count(*) OVER () AS total FROM ${t.table} WHERE account_id = $1 ORDER BY ${order} LIMIT $2 OFFSET $3`,
          [account, limitOf(paging), paging.offset],
        )
        return { items: await records(db, rows), total: rows.length > 0 ? rows[0].total : await countRows(db, t.table, account) }
      }),
    listAfter: (account, key, limit) =>
      reading(async (db) => {
        const page = await after(db, account, key, limit)
        return page && { items: await records(db, page.items), more: page.more }
      }),
    get: (account, id) =>
      reading(
        async (db) => (await records(db, await db.rows<BodyRow>(`SELECT ${columns} FROM ${t.table} WHERE id = $1 AND account_id = $2`, [id, account])))[0],
      ),
    byIds: async (account, ids) =>
      ids.length === 0
        ? []
        : reading(async (db) =>
            records(
              db,
              await db.rows<BodyRow>(
                `SELECT ${columns} FROM ${t.table} WHERE account_id = $1 AND id = ANY($2::${uuid ? 'text' : 'bigint'}[]) ORDER BY ${order}`,
                [account, ids],
              ),
            ),
          ),
    create: (account, data) =>
      unique(data, () =>
        writing(async (db) => {
          const time = now()
          const { body, values } = bodyToWrite(t, data, undefined, time, randomUUID)
          const params = [...(uuid ? [randomUUID()] : []), account, ...values, JSON.stringify(body), time]
          const [row] = await db.rows<BodyRow>(
            `INSERT INTO ${t.table} (${uuid ? 'id, ' : ''}account_id, ${written.join(', ')}, created_at, updated_at) VALUES (${placeholders(params.length)}, NULL) RETURNING ${columns}`,
            params,
          )
          await recordIndex(db, row, body)
          return (await records(db, [row]))[0]
        }),
      ),
    update: (account, id, data) => unique(data, () => writing((db) => update(db, account, id, data))),
    delete: async (account, id) => (await sql.run(`DELETE FROM ${t.table} WHERE id = $1 AND account_id = $2`, [id, account])) > 0,
  }
  const children = t.children && childRepository(sql, clock, t.table, t.children)
  return (children ? { ...store, children } : store) as JsonBodyRepository<Field, Id, Data, Stored, Child, ChildBody>
}

/** The rows of a child table, each reached through its parent row of the account. */
function childRepository<Body extends string>(sql: Sql, clock: Clock, parentTable: string, child: ChildTable<string, Body>): ChildStore<Body> {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, body, created_at, updated_at'
  const seqOf = async (db: Sql, account: string, parentId: string, lock = false) => {
    const [row] = await db.rows<{ seq: number }>(`SELECT seq FROM ${parentTable} WHERE id = $1 AND account_id = $2${lock ? ' FOR SHARE' : ''}`, [
      parentId,
      account,
    ])
    return row?.seq
  }
  return {
    add: (account, parentId, data) =>
      sql.atomic(async (tx) => {
        // the parent stays until the transaction ends: a delete of it waits
        const seq = await seqOf(tx, account, parentId, true)
        if (seq === undefined) return undefined
        const [row] = await tx.rows<BodyRow>(
          `INSERT INTO ${child.table} (id, ${child.parent}, body, created_at, updated_at) VALUES ($1, $2, $3, $4, NULL) RETURNING ${columns}`,
          [randomUUID(), seq, JSON.stringify(data), now()],
        )
        return childRecord(child, row)
      }),
    get: async (account, parentId, id) => {
      const seq = await seqOf(sql, account, parentId)
      if (seq === undefined) return undefined
      const [row] = await sql.rows<BodyRow>(`SELECT ${columns} FROM ${child.table} WHERE id = $1 AND ${child.parent} = $2`, [id, seq])
      return row && childRecord(child, row)
    },
    replace: (account, parentId, id, data) =>
      sql.atomic(async (tx) => {
        const seq = await seqOf(tx, account, parentId)
        if (seq === undefined) return undefined
        const [row] = await tx.rows<BodyRow>(
          `UPDATE ${child.table} SET body = $1, updated_at = $2 WHERE id = $3 AND ${child.parent} = $4 RETURNING ${columns}`,
          [JSON.stringify(data), now(), id, seq],
        )
        return row && childRecord(child, row)
      }),
    delete: async (account, parentId, id) =>
      (await sql.run(`DELETE FROM ${child.table} WHERE id = $1 AND ${child.parent} = (SELECT seq FROM ${parentTable} WHERE id = $2 AND account_id = $3)`, [
        id,
        parentId,
        account,
      ])) > 0,
  }
}
