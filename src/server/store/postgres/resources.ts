import { randomUUID } from 'node:crypto'
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
import type { Sql } from './index.js'
import { countRows as count, jsonBodyRepository } from './json-body.js'
import { keysetReader } from './keyset.js'
import type { Clock } from '../../../runner/clock.js'

/** LIMIT NULL is "no limit" */
const limitOf = (paging: Paging) => paging.limit ?? null

/** A keyset page of rows as one of records (null stays null: `after` named nothing). */
function mapPage<Row, T>(page: KeysetPage<Row> | null, record: (row: Row) => T): KeysetPage<T> | null {
  return page && { items: page.items.map(record), more: page.more }
}

function isUnique(error: unknown): boolean {
  return (error as { code?: string }).code === '23505'
}

// --- variables

interface VariableRow {
  key: string
  value: string
  locked: boolean
  secret: boolean
  created_at: string
  updated_at: string | null
}

const variable = (row: VariableRow): VariableRecord => ({
  key: row.key,
  value: row.value,
  locked: row.locked,
  secret: row.secret,
  created_at: row.created_at,
  updated_at: row.updated_at,
})

export function variableRepository(sql: Sql, clock: Clock): VariableStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'key, value, locked, secret, created_at, updated_at'
  const get = async (account: string, key: string) => {
    const [row] = await sql.rows<VariableRow>(`SELECT ${columns} FROM variables WHERE account_id = $1 AND key = $2`, [account, key])
    return row && variable(row)
  }
  const after = keysetReader<VariableRow>({ table: 'variables', columns, key: 'key', order: 'seq' })
  return {
    list: async (account, paging) => {
      const rows = await sql.rows<VariableRow & { total: number }>(
        `SELECT ${columns}, count(*) OVER () AS total FROM variables WHERE account_id = $1 ORDER BY seq LIMIT $2 OFFSET $3`,
        [account, limitOf(paging), paging.offset],
      )
      return { items: rows.map(variable), total: rows.length > 0 ? rows[0].total : await count(sql, 'variables', account) }
    },
    listAfter: async (account, key, limit) => mapPage(await after(sql, account, key, limit), variable),
    get,
    create: async (account, data) => {
      try {
        const [row] = await sql.rows<VariableRow>(
          `INSERT INTO variables (account_id, key, value, locked, secret, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, NULL) RETURNING ${columns}`,
          [account, data.key, data.value, data.locked, data.secret, now()],
        )
        return variable(row)
      } catch (error) {
        if (isUnique(error)) throw new UniqueViolation('variable.key', data.key)
        throw error
      }
    },
    update: async (account, key, data) => {
      const [row] = await sql.rows<VariableRow>(
        `UPDATE variables SET value = $1, locked = $2, secret = $3, updated_at = $4 WHERE account_id = $5 AND key = $6 RETURNING ${columns}`,
        [data.value, data.locked, data.secret, now(), account, key],
      )
      return row && variable(row)
    },
    delete: async (account, key) => (await sql.run(`DELETE FROM variables WHERE account_id = $1 AND key = $2`, [account, key])) > 0,
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

const service = (row: ServiceRow): ServiceRecord => ({
  id: row.id,
  name: row.name,
  accountId: row.account_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
})

export function serviceRepository(sql: Sql, clock: Clock): ServiceStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, account_id, name, created_at, updated_at'
  const get = async (account: string, id: string) => {
    const [row] = await sql.rows<ServiceRow>(`SELECT ${columns} FROM services WHERE id = $1 AND account_id = $2`, [id, account])
    return row && service(row)
  }
  const after = keysetReader<ServiceRow>({ table: 'services', columns, key: 'id', order: 'seq' })
  return {
    list: async (account, paging) => {
      const rows = await sql.rows<ServiceRow & { total: number }>(
        `SELECT ${columns}, count(*) OVER () AS total FROM services WHERE account_id = $1 ORDER BY seq LIMIT $2 OFFSET $3`,
        [account, limitOf(paging), paging.offset],
      )
      return { items: rows.map(service), total: rows.length > 0 ? rows[0].total : await count(sql, 'services', account) }
    },
    byId: async (account) =>
      new Map((await sql.rows<ServiceRow>(`SELECT ${columns} FROM services WHERE account_id = $1`, [account])).map((row) => [row.id, service(row)])),
    // in a transaction the services found stay until it ends (FOR SHARE): a delete of one waits,
    // then sees the card that uses it (usedBy locks the service first)
    existing: async (account, ids) =>
      new Set(
        ids.length === 0
          ? []
          : (
              await sql.rows<{ id: string }>(`SELECT id FROM services WHERE account_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR SHARE`, [account, ids])
            ).map((r) => r.id),
      ),
    listAfter: async (account, key, limit) => mapPage(await after(sql, account, key, limit), service),
    get,
    create: async (account, name) => {
      const [row] = await sql.rows<ServiceRow>(
        `INSERT INTO services (id, account_id, name, created_at, updated_at) VALUES ($1, $2, $3, $4, NULL) RETURNING ${columns}`,
        [randomUUID(), account, name, now()],
      )
      return service(row)
    },
    update: async (account, id, name) => {
      const [row] = await sql.rows<ServiceRow>(`UPDATE services SET name = $1, updated_at = $2 WHERE id = $3 AND account_id = $4 RETURNING ${columns}`, [
        name,
        now(),
        id,
        account,
      ])
      return row && service(row)
    },
    delete: async (account, id) => (await sql.run(`DELETE FROM services WHERE id = $1 AND account_id = $2`, [id, account])) > 0,
    usedBy: async (account, id) => {
      // the service is locked first: a page being written with it commits before the cards are read
      await sql.rows(`SELECT 1 FROM services WHERE id = $1 AND account_id = $2 FOR UPDATE`, [id, account])
      const [row] = await sql.rows<{ id: string; url: string }>(
        `SELECT p.id, p.url FROM status_page_services u JOIN status_pages p ON p.seq = u.page_seq WHERE u.service_id = $1 AND p.account_id = $2 LIMIT 1`,
        [id, account],
      )
      return row
    },
  }
}

// --- status pages: their table's repository (json-body.ts), and the reads only pages have

export function statusPageRepository(sql: Sql, clock: Clock): StatusPageStore {
  const t = JSON_BODY_TABLES.statusPages
  const pages = jsonBodyRepository(sql, clock, t)
  const columns = bodyColumns(t)
  return {
    list: async (account, query) => {
      let from = 0
      if (query.nextId !== undefined) {
        const [row] = await sql.rows<{ seq: number }>(`SELECT seq FROM status_pages WHERE id = $1 AND account_id = $2`, [query.nextId, account])
        if (row === undefined) return null
        from = row.seq
      }
      const rows = await sql.rows<BodyRow>(`SELECT ${columns} FROM status_pages WHERE account_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`, [
        account,
        from,
        query.limit + 1,
      ])
      return { entries: rows.slice(0, query.limit).map((row) => bodyRecord(t, row)), nextId: rows.length > query.limit ? String(rows[query.limit].id) : null }
    },
    get: pages.get,
    countForCreate: async (account) => {
      // held to the end of the transaction: another create of the account counts after this one's insert
      await sql.run(`SELECT pg_advisory_xact_lock(hashtext('status_pages'), hashtext($1))`, [account])
      const [row] = await sql.rows<{ n: number }>(`SELECT count(*)::int AS n FROM status_pages WHERE account_id = $1`, [account])
      return row.n
    },
    create: pages.create,
    update: pages.update,
    delete: pages.delete,
    findPublic: async (by) => {
      const [row] =
        'url' in by
          ? await sql.rows<BodyRow & { account_id: string }>(`SELECT account_id, ${columns} FROM status_pages WHERE url = $1`, [by.url])
          : await sql.rows<BodyRow & { account_id: string }>(`SELECT account_id, ${columns} FROM status_pages WHERE custom_domain = $1`, [
              domainKey(by.customDomain),
            ])
      return row && { account: row.account_id, record: bodyRecord(t, row) }
    },
  }
}

// --- incidents and their updates

export function incidentRepository(sql: Sql, clock: Clock): IncidentStore {
  return incidentStore(jsonBodyRepository(sql, clock, JSON_BODY_TABLES.incidents))
}
