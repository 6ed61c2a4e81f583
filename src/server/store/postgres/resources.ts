import { randomUUID } from 'node:crypto'
import {
  UniqueViolation, domainKey, storedCards,
  type IncidentData, type IncidentRecord, type IncidentStore, type IncidentUpdateRecord, type MaintenanceWindowRecord,
  type MaintenanceWindowStore, type AlertChannelRecord, type AlertChannelStore, type CheckGroupRecord, type CheckGroupStore, type KeysetPage, type Page, type Paging, type ServiceRecord, type ServiceStore, type StatusPageRecord,
  type StatusPageStore, type StoredPage, type VariableRecord, type VariableStore,
} from '../index.js'
import type { AlertChannelData, CheckGroup, MaintenanceWindow, StatusPage } from '../../../schema/index.js'
import type { Sql } from './index.js'
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

const variable = (row: VariableRow): VariableRecord =>
  ({ key: row.key, value: row.value, locked: row.locked, secret: row.secret, created_at: row.created_at, updated_at: row.updated_at })

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
        [account, limitOf(paging), paging.offset])
      return { items: rows.map(variable), total: rows.length > 0 ? rows[0].total : await count(sql, 'variables', account) }
    },
    listAfter: async (account, key, limit) => mapPage(await after(sql, account, key, limit), variable),
    get,
    create: async (account, data) => {
      try {
        const [row] = await sql.rows<VariableRow>(
          `INSERT INTO variables (account_id, key, value, locked, secret, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, NULL) RETURNING ${columns}`,
          [account, data.key, data.value, data.locked, data.secret, now()])
        return variable(row)
      } catch (error) {
        if (isUnique(error)) throw new UniqueViolation('variable.key', data.key)
        throw error
      }
    },
    update: async (account, key, data) => {
      const [row] = await sql.rows<VariableRow>(
        `UPDATE variables SET value = $1, locked = $2, secret = $3, updated_at = $4 WHERE account_id = $5 AND key = $6 RETURNING ${columns}`,
        [data.value, data.locked, data.secret, now(), account, key])
      return row && variable(row)
    },
    delete: async (account, key) => (await sql.run(`DELETE FROM variables WHERE account_id = $1 AND key = $2`, [account, key])) > 0,
  }
}

/** All rows of the account (for a page past the end, which has no row to carry the total). */
async function count(sql: Sql, table: string, account: string): Promise<number> {
  const [row] = await sql.rows<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE account_id = $1`, [account])
  return row.n
}

// --- status-page services

interface ServiceRow {
  id: string
  account_id: string
  name: string
  created_at: string
  updated_at: string | null
}

const service = (row: ServiceRow): ServiceRecord =>
  ({ id: row.id, name: row.name, accountId: row.account_id, created_at: row.created_at, updated_at: row.updated_at })

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
        [account, limitOf(paging), paging.offset])
      return { items: rows.map(service), total: rows.length > 0 ? rows[0].total : await count(sql, 'services', account) }
    },
    byId: async (account) => new Map((await sql.rows<ServiceRow>(`SELECT ${columns} FROM services WHERE account_id = $1`, [account])).map((row) => [row.id, service(row)])),
    // in a transaction the services found stay until it ends (FOR SHARE): a delete of one waits,
    // then sees the card that uses it (usedBy locks the service first)
    existing: async (account, ids) => new Set(ids.length === 0 ? [] : (await sql.rows<{ id: string }>(
      `SELECT id FROM services WHERE account_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR SHARE`, [account, ids])).map((r) => r.id)),
    listAfter: async (account, key, limit) => mapPage(await after(sql, account, key, limit), service),
    get,
    create: async (account, name) => {
      const [row] = await sql.rows<ServiceRow>(`INSERT INTO services (id, account_id, name, created_at, updated_at) VALUES ($1, $2, $3, $4, NULL) RETURNING ${columns}`,
        [randomUUID(), account, name, now()])
      return service(row)
    },
    update: async (account, id, name) => {
      const [row] = await sql.rows<ServiceRow>(`UPDATE services SET name = $1, updated_at = $2 WHERE id = $3 AND account_id = $4 RETURNING ${columns}`, [name, now(), id, account])
      return row && service(row)
    },
    delete: async (account, id) => (await sql.run(`DELETE FROM services WHERE id = $1 AND account_id = $2`, [id, account])) > 0,
    usedBy: async (account, id) => {
      // the service is locked first: a page being written with it commits before the cards are read
      await sql.rows(`SELECT 1 FROM services WHERE id = $1 AND account_id = $2 FOR UPDATE`, [id, account])
      const [row] = await sql.rows<{ id: string; url: string }>(
        `SELECT p.id, p.url FROM status_page_services u JOIN status_pages p ON p.seq = u.page_seq WHERE u.service_id = $1 AND p.account_id = $2 LIMIT 1`, [id, account])
      return row
    },
  }
}

// --- status pages

interface PageRow {
  seq: number
  id: string
  body: string
  created_at: string
  updated_at: string | null
}

const statusPage = (row: PageRow): StatusPageRecord =>
  ({ id: row.id, page: JSON.parse(row.body) as StoredPage, created_at: row.created_at, updated_at: row.updated_at })

export function statusPageRepository(sql: Sql, clock: Clock): StatusPageStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'seq, id, body, created_at, updated_at'

  async function recordUses(tx: Sql, seq: number, page: StoredPage): Promise<void> {
    await tx.run(`DELETE FROM status_page_services WHERE page_seq = $1`, [seq])
    const ids = [...new Set(page.cards.flatMap((c) => c.services.map((s) => s.id)))]
    if (ids.length > 0) await tx.run(`INSERT INTO status_page_services (page_seq, service_id) SELECT $1, unnest($2::text[])`, [seq, ids])
  }

  /** the url and the custom domain are unique per server: the constraints decide, whoever writes */
  async function unique<T>(data: StatusPage, write: () => Promise<T>): Promise<T> {
    try {
      return await write()
    } catch (error) {
      if (!isUnique(error)) throw error
      if ((error as { constraint?: string }).constraint === 'status_pages_custom_domain') throw new UniqueViolation('statusPage.customDomain', data.customDomain ?? '')
      throw new UniqueViolation('statusPage.url', data.url)
    }
  }

  return {
    list: async (account, query) => {
      let from = 0
      if (query.nextId !== undefined) {
        const [row] = await sql.rows<{ seq: number }>(`SELECT seq FROM status_pages WHERE id = $1 AND account_id = $2`, [query.nextId, account])
        if (row === undefined) return null
        from = row.seq
      }
      const rows = await sql.rows<PageRow>(`SELECT ${columns} FROM status_pages WHERE account_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`, [account, from, query.limit + 1])
      return { entries: rows.slice(0, query.limit).map(statusPage), nextId: rows.length > query.limit ? rows[query.limit].id : null }
    },
    get: async (account, id) => {
      const [row] = await sql.rows<PageRow>(`SELECT ${columns} FROM status_pages WHERE id = $1 AND account_id = $2`, [id, account])
      return row && statusPage(row)
    },
    countForCreate: async (account) => {
      // held to the end of the transaction: another create of the account counts after this one's insert
      await sql.run(`SELECT pg_advisory_xact_lock(hashtext('status_pages'), hashtext($1))`, [account])
      const [row] = await sql.rows<{ n: number }>(`SELECT count(*)::int AS n FROM status_pages WHERE account_id = $1`, [account])
      return row.n
    },
    create: (account, data: StatusPage) => unique(data, () => sql.atomic(async (tx) => {
      const time = now()
      const page: StoredPage = { ...data, cards: storedCards(data, [], time, randomUUID) }
      const [row] = await tx.rows<PageRow>(
        `INSERT INTO status_pages (id, account_id, url, custom_domain, body, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, NULL) RETURNING ${columns}`,
        [randomUUID(), account, data.url, domainKey(data.customDomain), JSON.stringify(page), time])
      await recordUses(tx, row.seq, page)
      return statusPage(row)
    })),
    update: (account, id, data) => unique(data, () => sql.atomic(async (tx) => {
      const [old] = await tx.rows<PageRow>(`SELECT ${columns} FROM status_pages WHERE id = $1 AND account_id = $2 FOR UPDATE`, [id, account])
      if (!old) return undefined
      const time = now()
      const page: StoredPage = { ...data, cards: storedCards(data, (JSON.parse(old.body) as StoredPage).cards, time, randomUUID) }
      const [row] = await tx.rows<PageRow>(`UPDATE status_pages SET url = $1, custom_domain = $2, body = $3, updated_at = $4 WHERE seq = $5 RETURNING ${columns}`,
        [data.url, domainKey(data.customDomain), JSON.stringify(page), time, old.seq])
      await recordUses(tx, row.seq, page)
      return statusPage(row)
    })),
    delete: async (account, id) => (await sql.run(`DELETE FROM status_pages WHERE id = $1 AND account_id = $2`, [id, account])) > 0,
    findPublic: async (by) => {
      const [row] = 'url' in by
        ? await sql.rows<PageRow & { account_id: string }>(`SELECT account_id, ${columns} FROM status_pages WHERE url = $1`, [by.url])
        : await sql.rows<PageRow & { account_id: string }>(`SELECT account_id, ${columns} FROM status_pages WHERE custom_domain = $1`, [domainKey(by.customDomain)])
      return row && { account: row.account_id, record: statusPage(row) }
    },
  }
}

// --- maintenance windows

interface WindowRow {
  id: number
  body: string
  created_at: string
  updated_at: string | null
}

const maintenanceWindow = (row: WindowRow): MaintenanceWindowRecord =>
  ({ id: row.id, window: JSON.parse(row.body) as MaintenanceWindow, created_at: row.created_at, updated_at: row.updated_at })

export function maintenanceWindowRepository(sql: Sql, clock: Clock): MaintenanceWindowStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, body, created_at, updated_at'
  const after = keysetReader<WindowRow>({ table: 'maintenance_windows', columns, key: 'id', order: 'id', integerKey: true })
  return {
    list: async (account, paging) => {
      const rows = await sql.rows<WindowRow & { total: number }>(
        `SELECT ${columns}, count(*) OVER () AS total FROM maintenance_windows WHERE account_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
        [account, limitOf(paging), paging.offset])
      return { items: rows.map(maintenanceWindow), total: rows.length > 0 ? rows[0].total : await count(sql, 'maintenance_windows', account) }
    },
    listAfter: async (account, key, limit) => mapPage(await after(sql, account, key, limit), maintenanceWindow),
    get: async (account, id) => {
      const [row] = await sql.rows<WindowRow>(`SELECT ${columns} FROM maintenance_windows WHERE id = $1 AND account_id = $2`, [id, account])
      return row && maintenanceWindow(row)
    },
    create: async (account, data) => {
      const [row] = await sql.rows<WindowRow>(`INSERT INTO maintenance_windows (account_id, body, created_at, updated_at) VALUES ($1, $2, $3, NULL) RETURNING ${columns}`,
        [account, JSON.stringify(data), now()])
      return maintenanceWindow(row)
    },
    update: async (account, id, data) => {
      const [row] = await sql.rows<WindowRow>(`UPDATE maintenance_windows SET body = $1, updated_at = $2 WHERE id = $3 AND account_id = $4 RETURNING ${columns}`,
        [JSON.stringify(data), now(), id, account])
      return row && maintenanceWindow(row)
    },
    delete: async (account, id) => (await sql.run(`DELETE FROM maintenance_windows WHERE id = $1 AND account_id = $2`, [id, account])) > 0,
  }
}

// --- check groups

const checkGroup = (row: WindowRow): CheckGroupRecord =>
  ({ id: Number(row.id), group: JSON.parse(row.body) as CheckGroup, created_at: row.created_at, updated_at: row.updated_at })

export function checkGroupRepository(sql: Sql, clock: Clock): CheckGroupStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, body, created_at, updated_at'
  const after = keysetReader<WindowRow>({ table: 'check_groups', columns, key: 'id', order: 'id', integerKey: true })
  return {
    list: async (account, paging) => {
      const rows = await sql.rows<WindowRow & { total: number }>(
        `SELECT ${columns}, count(*) OVER () AS total FROM check_groups WHERE account_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
        [account, limitOf(paging), paging.offset])
      return { items: rows.map(checkGroup), total: rows.length > 0 ? rows[0].total : await count(sql, 'check_groups', account) }
    },
    listAfter: async (account, key, limit) => mapPage(await after(sql, account, key, limit), checkGroup),
    get: async (account, id) => {
      const [row] = await sql.rows<WindowRow>(`SELECT ${columns} FROM check_groups WHERE id = $1 AND account_id = $2`, [id, account])
      return row && checkGroup(row)
    },
    create: async (account, data) => {
      const [row] = await sql.rows<WindowRow>(`INSERT INTO check_groups (account_id, body, created_at, updated_at) VALUES ($1, $2, $3, NULL) RETURNING ${columns}`,
        [account, JSON.stringify(data), now()])
      return checkGroup(row)
    },
    update: async (account, id, data) => {
      const [row] = await sql.rows<WindowRow>(`UPDATE check_groups SET body = $1, updated_at = $2 WHERE id = $3 AND account_id = $4 RETURNING ${columns}`,
        [JSON.stringify(data), now(), id, account])
      return row && checkGroup(row)
    },
    delete: async (account, id) => (await sql.run(`DELETE FROM check_groups WHERE id = $1 AND account_id = $2`, [id, account])) > 0,
  }
}

// --- account-level alert channels

interface ChannelRow {
  id: number
  body: string
  created_at: string
  updated_at: string | null
}

const alertChannel = (row: ChannelRow): AlertChannelRecord =>
  ({ id: row.id, channel: JSON.parse(row.body) as AlertChannelData, created_at: row.created_at, updated_at: row.updated_at })

export function alertChannelRepository(sql: Sql, clock: Clock): AlertChannelStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, body, created_at, updated_at'
  const after = keysetReader<ChannelRow>({ table: 'alert_channels', columns, key: 'id', order: 'id', integerKey: true })
  return {
    list: async (account, paging) => {
      const rows = await sql.rows<ChannelRow & { total: number }>(
        `SELECT ${columns}, count(*) OVER () AS total FROM alert_channels WHERE account_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
        [account, limitOf(paging), paging.offset])
      return { items: rows.map(alertChannel), total: rows.length > 0 ? rows[0].total : await count(sql, 'alert_channels', account) }
    },
    listAfter: async (account, key, limit) => mapPage(await after(sql, account, key, limit), alertChannel),
    get: async (account, id) => {
      const [row] = await sql.rows<ChannelRow>(`SELECT ${columns} FROM alert_channels WHERE id = $1 AND account_id = $2`, [id, account])
      return row && alertChannel(row)
    },
    byIds: async (account, ids) => {
      if (ids.length === 0) return []
      const rows = await sql.rows<ChannelRow>(`SELECT ${columns} FROM alert_channels WHERE account_id = $1 AND id = ANY($2::bigint[]) ORDER BY id`, [account, ids])
      return rows.map(alertChannel)
    },
    create: async (account, data) => {
      const [row] = await sql.rows<ChannelRow>(`INSERT INTO alert_channels (account_id, body, created_at, updated_at) VALUES ($1, $2, $3, NULL) RETURNING ${columns}`,
        [account, JSON.stringify(data), now()])
      return alertChannel(row)
    },
    update: async (account, id, data) => {
      const [row] = await sql.rows<ChannelRow>(`UPDATE alert_channels SET body = $1, updated_at = $2 WHERE id = $3 AND account_id = $4 RETURNING ${columns}`,
        [JSON.stringify(data), now(), id, account])
      return row && alertChannel(row)
    },
    delete: async (account, id) => (await sql.run(`DELETE FROM alert_channels WHERE id = $1 AND account_id = $2`, [id, account])) > 0,
  }
}

// --- incidents and their updates

interface IncidentRow {
  seq: number
  id: string
  body: string
  created_at: string
  updated_at: string | null
}
interface UpdateRow {
  incident_seq: number
  id: string
  body: string
  created_at: string
  updated_at: string | null
}

const incidentUpdate = (row: UpdateRow): IncidentUpdateRecord =>
  ({ id: row.id, update: JSON.parse(row.body) as Record<string, unknown>, created_at: row.created_at, updated_at: row.updated_at })

export function incidentRepository(sql: Sql, clock: Clock): IncidentStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'seq, id, body, created_at, updated_at'
  const updateColumns = 'incident_seq, id, body, created_at, updated_at'

  /** the incidents with their updates, newest first (one statement for the updates of all of them) */
  async function withUpdates(db: Sql, rows: IncidentRow[]): Promise<IncidentRecord[]> {
    if (rows.length === 0) return []
    const updates = await db.rows<UpdateRow>(`SELECT ${updateColumns} FROM incident_updates WHERE incident_seq = ANY($1::bigint[]) ORDER BY seq DESC`, [rows.map((r) => r.seq)])
    return rows.map((row) => ({
      id: row.id,
      incident: JSON.parse(row.body) as IncidentData,
      created_at: row.created_at,
      updated_at: row.updated_at,
      updates: updates.filter((u) => u.incident_seq === row.seq).map(incidentUpdate),
    }))
  }
  const get = async (db: Sql, account: string, id: string) => {
    const rows = await db.rows<IncidentRow>(`SELECT ${columns} FROM incidents WHERE id = $1 AND account_id = $2`, [id, account])
    return (await withUpdates(db, rows))[0]
  }
  const seqOf = async (db: Sql, account: string, incidentId: string, lock = false) => {
    const [row] = await db.rows<{ seq: number }>(`SELECT seq FROM incidents WHERE id = $1 AND account_id = $2${lock ? ' FOR SHARE' : ''}`, [incidentId, account])
    return row?.seq
  }
  // newest first, as the list
  const after = keysetReader<IncidentRow>({ table: 'incidents', columns, key: 'id', order: 'seq', descending: true })
  const getUpdate = async (db: Sql, seq: number, id: string) => {
    const [row] = await db.rows<UpdateRow>(`SELECT ${updateColumns} FROM incident_updates WHERE id = $1 AND incident_seq = $2`, [id, seq])
    return row && incidentUpdate(row)
  }

  return {
    list: (account, paging): Promise<Page<IncidentRecord>> => sql.atomic(async (tx) => {
      const rows = await tx.rows<IncidentRow & { total: number }>(
        `SELECT ${columns}, count(*) OVER () AS total FROM incidents WHERE account_id = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3`,
        [account, limitOf(paging), paging.offset])
      return { items: await withUpdates(tx, rows), total: rows.length > 0 ? rows[0].total : await count(tx, 'incidents', account) }
    }),
    listAfter: (account, id, limit) => sql.atomic(async (tx) => {
      const page = await after(tx, account, id, limit)
      return page && { items: await withUpdates(tx, page.items), more: page.more }
    }),
    get: (account, id) => sql.atomic((tx) => get(tx, account, id)),
    create: (account, data) => sql.atomic(async (tx) => {
      const id = randomUUID()
      await tx.run(`INSERT INTO incidents (id, account_id, body, created_at, updated_at) VALUES ($1, $2, $3, $4, NULL)`, [id, account, JSON.stringify(data), now()])
      return (await get(tx, account, id))!
    }),
    update: (account, id, data) => sql.atomic(async (tx) => {
      const changed = await tx.run(`UPDATE incidents SET body = $1, updated_at = $2 WHERE id = $3 AND account_id = $4`, [JSON.stringify(data), now(), id, account])
      return changed === 0 ? undefined : get(tx, account, id)
    }),
    delete: async (account, id) => (await sql.run(`DELETE FROM incidents WHERE id = $1 AND account_id = $2`, [id, account])) > 0,
    addUpdate: (account, incidentId, data) => sql.atomic(async (tx) => {
      const seq = await seqOf(tx, account, incidentId, true)
      if (seq === undefined) return undefined
      const [row] = await tx.rows<UpdateRow>(
        `INSERT INTO incident_updates (id, incident_seq, body, created_at, updated_at) VALUES ($1, $2, $3, $4, NULL) RETURNING ${updateColumns}`,
        [randomUUID(), seq, JSON.stringify(data), now()])
      return incidentUpdate(row)
    }),
    getUpdate: async (account, incidentId, id) => {
      const seq = await seqOf(sql, account, incidentId)
      return seq === undefined ? undefined : getUpdate(sql, seq, id)
    },
    replaceUpdate: (account, incidentId, id, data) => sql.atomic(async (tx) => {
      const seq = await seqOf(tx, account, incidentId)
      if (seq === undefined) return undefined
      const [row] = await tx.rows<UpdateRow>(`UPDATE incident_updates SET body = $1, updated_at = $2 WHERE id = $3 AND incident_seq = $4 RETURNING ${updateColumns}`,
        [JSON.stringify(data), now(), id, seq])
      return row && incidentUpdate(row)
    }),
    deleteUpdate: async (account, incidentId, id) => (await sql.run(
      `DELETE FROM incident_updates WHERE id = $1 AND incident_seq = (SELECT seq FROM incidents WHERE id = $2 AND account_id = $3)`, [id, incidentId, account])) > 0,
  }
}
