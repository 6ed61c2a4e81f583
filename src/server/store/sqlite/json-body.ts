import { randomUUID } from 'node:crypto'
import type { Db } from './migrations.js'
import type { Exec } from './index.js'
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
  type BodyTableShape,
  type ChildStore,
  type ChildTable,
  type JsonBodyRecord,
  type JsonBodyRepository,
  type JsonBodyStore,
  type JsonBodyTable,
} from '../json-body-rows.js'

/** SQLite's LIMIT -1 is "no limit" */
const limitOf = (paging: Paging) => paging.limit ?? -1

function isUnique(error: unknown): boolean {
  return (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE'
}

/** The statements of a JSON-body table (json-body-rows.ts), prepared once. */
function statements(db: Db, t: BodyTableShape) {
  const uuid = t.id === 'uuid'
  const columns = bodyColumns(t)
  const order = uuid ? 'seq' : 'id'
  const written = [...Object.keys(t.columns ?? {}), 'body']
  const from = `FROM ${t.table} WHERE account_id = ?`
  return {
    order,
    byId: db.prepare(`SELECT ${columns} FROM ${t.table} WHERE id = ? AND account_id = ?`),
    byIds: db.prepare(`SELECT ${columns} ${from} AND id IN (SELECT value FROM json_each(?)) ORDER BY ${order}${t.descending ? ' DESC' : ''}`),
    list: db.prepare(`SELECT ${columns} ${from} ORDER BY ${order}${t.descending ? ' DESC' : ''} LIMIT ? OFFSET ?`),
    count: db.prepare(`SELECT count(*) ${from}`).pluck(),
    insert: db.prepare(
      `INSERT INTO ${t.table} (${uuid ? 'id, ' : ''}account_id, ${written.join(', ')}, created_at, updated_at) VALUES (${uuid ? '?, ' : ''}?, ${written.map(() => '?').join(', ')}, ?, NULL)`,
    ),
    update: db.prepare(`UPDATE ${t.table} SET ${written.map((c) => `${c} = ?`).join(', ')}, updated_at = ? WHERE id = ? AND account_id = ?`),
    remove: db.prepare(`DELETE FROM ${t.table} WHERE id = ? AND account_id = ?`),
    after: keysetReader<BodyRow>(db, { table: t.table, columns, key: 'id', order, descending: t.descending, integerKey: !uuid }),
    indexDelete: t.index && db.prepare(`DELETE FROM ${t.index.table} WHERE ${t.index.key} = ?`),
    indexInsert: t.index && db.prepare(`INSERT INTO ${t.index.table} (${t.index.key}, ${t.index.column}) VALUES (?, ?)`),
    childrenOf: t.children && db.prepare(`SELECT id, body, created_at, updated_at FROM ${t.children.table} WHERE ${t.children.parent} = ? ORDER BY seq DESC`),
  }
}

/**
 * The repository of a JSON-body table on SQLite. A write of more than one statement (an index, a
 * body made from the one it replaces) is one IMMEDIATE transaction; a read of a row with its
 * children one transaction.
 */
export function jsonBodyRepository<
  Field extends string,
  Id extends number | string,
  Data,
  Stored,
  Child extends string = never,
  ChildBody extends string = never,
>(
  db: Db,
  exec: Exec,
  clock: Clock,
  t: JsonBodyTable<Field, Id, Data, Stored, Child, ChildBody>,
): JsonBodyRepository<Field, Id, Data, Stored, Child, ChildBody> {
  const now = () => new Date(clock.now()).toISOString()
  const s = statements(db, t)
  const record = (row: BodyRow) => bodyRecord(t, row, s.childrenOf && (s.childrenOf.all(row.seq) as BodyRow[]))
  const get = (account: string, id: number | bigint | string) => {
    const row = s.byId.get(id, account) as BodyRow | undefined
    return row && record(row)
  }
  // a row and its children are read in one transaction
  const read = <T>(fn: () => T): T => (t.children ? db.transaction(fn)() : fn())

  /** the write itself: a collision on a unique column is the table's UniqueViolation */
  function unique<T>(data: Data, write: () => T): T {
    try {
      return write()
    } catch (error) {
      const violation = isUnique(error) ? uniqueViolation(t, data, (column) => (error as Error).message.includes(`${t.table}.${column}`)) : undefined
      throw violation ?? error
    }
  }
  function recordIndex(key: number | bigint, body: Stored): void {
    if (!t.index) return
    s.indexDelete!.run(key)
    for (const value of t.index.values(body)) s.indexInsert!.run(key, value)
  }
  function create(account: string, data: Data) {
    const time = now()
    const { body, values } = bodyToWrite(t, data, undefined, time, randomUUID)
    const id = t.id === 'uuid' ? randomUUID() : undefined
    const rowid = unique(data, () => s.insert.run(...(id === undefined ? [] : [id]), account, ...values, JSON.stringify(body), time).lastInsertRowid)
    recordIndex(rowid, body)
    return get(account, id ?? rowid)!
  }
  function update(account: string, id: Id, data: Data) {
    const time = now()
    const row = t.stored || t.index ? (s.byId.get(id, account) as BodyRow | undefined) : undefined
    if ((t.stored || t.index) && !row) return undefined
    const { body, values } = bodyToWrite(t, data, row && (JSON.parse(row.body) as Stored), time, randomUUID)
    if (unique(data, () => s.update.run(...values, JSON.stringify(body), time, id, account).changes) === 0) return undefined
    if (row) recordIndex((row.seq ?? row.id) as number, body)
    return get(account, id)
  }
  // more than one statement: one transaction
  const creating = db.transaction(create)
  const updating = db.transaction(update)
  const several = Boolean(t.stored || t.index)

  const store: JsonBodyStore<Id, Data, JsonBodyRecord<Field, Id, Stored, Child, ChildBody>> = {
    list: (account: string, paging: Paging) =>
      exec(() =>
        read(() => ({
          items: (s.list.all(account, limitOf(paging), paging.offset) as BodyRow[]).map(record),
          total: s.count.get(account) as number,
        })),
      ),
    listAfter: (account: string, after: string, limit?: number) =>
      exec(() =>
        read(() => {
          const page = s.after(account, after, limit)
          return page && { items: page.items.map(record), more: page.more }
        }),
      ),
    get: (account: string, id: Id) => exec(() => read(() => get(account, id))),
    byIds: (account: string, ids: Id[]) =>
      exec(() => (ids.length === 0 ? [] : read(() => (s.byIds.all(account, JSON.stringify(ids)) as BodyRow[]).map(record)))),
    create: (account: string, data: Data) => exec(() => (several ? creating.immediate(account, data) : create(account, data))),
    update: (account: string, id: Id, data: Data) => exec(() => (several ? updating.immediate(account, id, data) : update(account, id, data))),
    delete: (account: string, id: Id) => exec(() => s.remove.run(id, account).changes > 0),
  }
  const children = t.children && childRepository(db, exec, clock, t.table, t.children)
  return (children ? { ...store, children } : store) as JsonBodyRepository<Field, Id, Data, Stored, Child, ChildBody>
}

/** The rows of a child table, each reached through its parent row of the account. */
function childRepository<Body extends string>(db: Db, exec: Exec, clock: Clock, parentTable: string, child: ChildTable<string, Body>): ChildStore<Body> {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, body, created_at, updated_at'
  const seqById = db.prepare(`SELECT seq FROM ${parentTable} WHERE id = ? AND account_id = ?`).pluck()
  const byId = db.prepare(`SELECT ${columns} FROM ${child.table} WHERE id = ? AND ${child.parent} = ?`)
  const insert = db.prepare(`INSERT INTO ${child.table} (id, ${child.parent}, body, created_at, updated_at) VALUES (?, ?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE ${child.table} SET body = ?, updated_at = ? WHERE id = ? AND ${child.parent} = ?`)
  const remove = db.prepare(`DELETE FROM ${child.table} WHERE id = ? AND ${child.parent} = ?`)
  const seqOf = (account: string, parentId: string) => seqById.get(parentId, account) as number | undefined
  const get = (seq: number, id: string) => {
    const row = byId.get(id, seq) as BodyRow | undefined
    return row && childRecord(child, row)
  }
  return {
    add: (account, parentId, data) =>
      exec(() =>
        db
          .transaction(() => {
            const seq = seqOf(account, parentId)
            if (seq === undefined) return undefined
            const id = randomUUID()
            insert.run(id, seq, JSON.stringify(data), now())
            return get(seq, id)
          })
          .immediate(),
      ),
    get: (account, parentId, id) =>
      exec(() => {
        const seq = seqOf(account, parentId)
        return seq === undefined ? undefined : get(seq, id)
      }),
    replace: (account, parentId, id, data) =>
      exec(() =>
        db
          .transaction(() => {
            const seq = seqOf(account, parentId)
            if (seq === undefined || update.run(JSON.stringify(data), now(), id, seq).changes === 0) return undefined
            return get(seq, id)
          })
          .immediate(),
      ),
    delete: (account, parentId, id) =>
      exec(() => {
        const seq = seqOf(account, parentId)
        return seq !== undefined && remove.run(id, seq).changes > 0
      }),
  }
}
