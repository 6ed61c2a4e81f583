import { randomUUID } from 'node:crypto'
import type { Db } from './migrations.js'
import {
  UniqueViolation,
  domainKey,
  type IncidentStore,
  type KeysetPage,
  type Paging,
  type ServiceRecord,
  type ServiceStore,
  type StatusPageStore,
  type VariableRecord,
  type VariableStore,
} from '../index.js'
import { JSON_BODY_TABLES, bodyColumns, bodyRecord, incidentStore, type BodyRow } from '../json-body-rows.js'
import type { Exec } from './index.js'
import { jsonBodyRepository } from './json-body.js'
import { keysetReader } from './keyset.js'
import type { Clock } from '../../../runner/clock.js'

/** SQLite's LIMIT -1 is "no limit" */
const limitOf = (paging: Paging) => paging.limit ?? -1

/** A keyset page of rows as one of records (null stays null: `after` named nothing). */
function mapPage<Row, T>(page: KeysetPage<Row> | null, record: (row: Row) => T): KeysetPage<T> | null {
  return page && { items: page.items.map(record), more: page.more }
}

function isUnique(error: unknown): boolean {
  return (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE'
}

// --- variables

interface VariableRow {
  key: string
  value: string
  locked: number
  secret: number
  created_at: string
  updated_at: string | null
}

function variable(row: VariableRow): VariableRecord {
  return { key: row.key, value: row.value, locked: row.locked === 1, secret: row.secret === 1, created_at: row.created_at, updated_at: row.updated_at }
}

export function variableRepository(db: Db, exec: Exec, clock: Clock): VariableStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'key, value, locked, secret, created_at, updated_at'
  const list = db.prepare(`SELECT ${columns} FROM variables WHERE account_id = ? ORDER BY seq LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) FROM variables WHERE account_id = ?`).pluck()
  const byKey = db.prepare(`SELECT ${columns} FROM variables WHERE account_id = ? AND key = ?`)
  const insert = db.prepare(`INSERT INTO variables (account_id, key, value, locked, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE variables SET value = ?, locked = ?, secret = ?, updated_at = ? WHERE account_id = ? AND key = ?`)
  const remove = db.prepare(`DELETE FROM variables WHERE account_id = ? AND key = ?`)
  const after = keysetReader<VariableRow>(db, { table: 'variables', columns, key: 'key', order: 'seq' })
  const get = (account: string, key: string) => {
    const row = byKey.get(account, key) as VariableRow | undefined
    return row && variable(row)
  }
  return {
    list: (account, paging) =>
      exec(() => ({
        items: (list.all(account, limitOf(paging), paging.offset) as VariableRow[]).map(variable),
        total: count.get(account) as number,
      })),
    listAfter: (account, key, limit) => exec(() => mapPage(after(account, key, limit), variable)),
    get: (account, key) => exec(() => get(account, key)),
    create: (account, data) =>
      exec(() => {
        try {
          insert.run(account, data.key, data.value, data.locked ? 1 : 0, data.secret ? 1 : 0, now())
        } catch (error) {
          if (isUnique(error)) throw new UniqueViolation('variable.key', data.key)
          throw error
        }
        return get(account, data.key)!
      }),
    update: (account, key, data) =>
      exec(() => {
        if (update.run(data.value, data.locked ? 1 : 0, data.secret ? 1 : 0, now(), account, key).changes === 0) return undefined
        return get(account, key)
      }),
    delete: (account, key) => exec(() => remove.run(account, key).changes > 0),
  }
}

// --- status-page services

interface ServiceRow {
  id: string
  account_id: string
  name: string
  created_at: string
  updated_at: string | null
}

function service(row: ServiceRow): ServiceRecord {
  return { id: row.id, name: row.name, accountId: row.account_id, created_at: row.created_at, updated_at: row.updated_at }
}

export function serviceRepository(db: Db, exec: Exec, clock: Clock): ServiceStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, account_id, name, created_at, updated_at'
  const all = db.prepare(`SELECT ${columns} FROM services WHERE account_id = ?`)
  const byId = db.prepare(`SELECT ${columns} FROM services WHERE id = ? AND account_id = ?`)
  const existing = db.prepare(`SELECT id FROM services WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))`).pluck()
  const list = db.prepare(`SELECT ${columns} FROM services WHERE account_id = ? ORDER BY seq LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) FROM services WHERE account_id = ?`).pluck()
  const insert = db.prepare(`INSERT INTO services (id, account_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE services SET name = ?, updated_at = ? WHERE id = ? AND account_id = ?`)
  const remove = db.prepare(`DELETE FROM services WHERE id = ? AND account_id = ?`)
  const after = keysetReader<ServiceRow>(db, { table: 'services', columns, key: 'id', order: 'seq' })
  const usedBy = db.prepare(
    `SELECT p.id, p.url FROM status_page_services u JOIN status_pages p ON p.seq = u.page_seq WHERE u.service_id = ? AND p.account_id = ? LIMIT 1`,
  )
  const get = (account: string, id: string) => {
    const row = byId.get(id, account) as ServiceRow | undefined
    return row && service(row)
  }
  return {
    list: (account, paging) =>
      exec(() => ({
        items: (list.all(account, limitOf(paging), paging.offset) as ServiceRow[]).map(service),
        total: count.get(account) as number,
      })),
    listAfter: (account, id, limit) => exec(() => mapPage(after(account, id, limit), service)),
    byId: (account) => exec(() => new Map((all.all(account) as ServiceRow[]).map((row) => [row.id, service(row)]))),
    existing: (account, ids) => exec(() => new Set(ids.length === 0 ? [] : (existing.all(account, JSON.stringify(ids)) as string[]))),
    get: (account, id) => exec(() => get(account, id)),
    create: (account, name) =>
      exec(() => {
        const id = randomUUID()
        insert.run(id, account, name, now())
        return get(account, id)!
      }),
    update: (account, id, name) => exec(() => (update.run(name, now(), id, account).changes === 0 ? undefined : get(account, id))),
    delete: (account, id) => exec(() => remove.run(id, account).changes > 0),
    usedBy: (account, id) => exec(() => usedBy.get(id, account) as { id: string; url: string } | undefined),
  }
}

// --- status pages: their table's repository (json-body.ts), and the reads only pages have

export function statusPageRepository(db: Db, exec: Exec, clock: Clock): StatusPageStore {
  const t = JSON_BODY_TABLES.statusPages
  const pages = jsonBodyRepository(db, exec, clock, t)
  const columns = bodyColumns(t)
  const seqById = db.prepare(`SELECT seq FROM status_pages WHERE id = ? AND account_id = ?`).pluck()
  const list = db.prepare(`SELECT ${columns} FROM status_pages WHERE account_id = ? AND seq >= ? ORDER BY seq LIMIT ?`)
  const byUrl = db.prepare(`SELECT account_id, ${columns} FROM status_pages WHERE url = ?`)
  const byDomain = db.prepare(`SELECT account_id, ${columns} FROM status_pages WHERE custom_domain = ?`)
  const countOf = db.prepare(`SELECT count(*) FROM status_pages WHERE account_id = ?`).pluck()
  return {
    list: (account, query) =>
      exec(() => {
        let from = 0
        if (query.nextId !== undefined) {
          const seq = seqById.get(query.nextId, account) as number | undefined
          if (seq === undefined) return null
          from = seq
        }
        const rows = list.all(account, from, query.limit + 1) as BodyRow[]
        return { entries: rows.slice(0, query.limit).map((row) => bodyRecord(t, row)), nextId: rows.length > query.limit ? String(rows[query.limit].id) : null }
      }),
    get: pages.get,
    countForCreate: (account) => exec(() => Number(countOf.get(account))),
    create: pages.create,
    update: pages.update,
    delete: pages.delete,
    findPublic: (by) =>
      exec(() => {
        const row = ('url' in by ? byUrl.get(by.url) : byDomain.get(domainKey(by.customDomain))) as (BodyRow & { account_id: string }) | undefined
        return row && { account: row.account_id, record: bodyRecord(t, row) }
      }),
  }
}

// --- incidents and their updates

export function incidentRepository(db: Db, exec: Exec, clock: Clock): IncidentStore {
  return incidentStore(jsonBodyRepository(db, exec, clock, JSON_BODY_TABLES.incidents))
}
