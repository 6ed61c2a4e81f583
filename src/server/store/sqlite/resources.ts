import { randomUUID } from 'node:crypto'
import type { Db } from './migrations.js'
import {
  UniqueViolation, domainKey, storedCards,
  type IncidentData, type IncidentRecord, type IncidentStore, type IncidentUpdateRecord, type MaintenanceWindowRecord,
  type MaintenanceWindowStore, type AlertChannelRecord, type AlertChannelStore, type CheckGroupRecord, type CheckGroupStore, type KeysetPage, type Page, type Paging, type ServiceRecord, type ServiceStore, type StatusPageRecord,
  type StatusPageStore, type StoredPage, type VariableRecord, type VariableStore,
} from '../index.js'
import type { AlertChannelData, CheckGroup, MaintenanceWindow, StatusPage } from '../../../schema/index.js'
import type { Exec } from './index.js'
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
    list: (account, paging) => exec(() => ({
      items: (list.all(account, limitOf(paging), paging.offset) as VariableRow[]).map(variable),
      total: count.get(account) as number,
    })),
    listAfter: (account, key, limit) => exec(() => mapPage(after(account, key, limit), variable)),
    get: (account, key) => exec(() => get(account, key)),
    create: (account, data) => exec(() => {
      try {
        insert.run(account, data.key, data.value, data.locked ? 1 : 0, data.secret ? 1 : 0, now())
      } catch (error) {
        if (isUnique(error)) throw new UniqueViolation('variable.key', data.key)
        throw error
      }
      return get(account, data.key)!
    }),
    update: (account, key, data) => exec(() => {
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
    list: (account, paging) => exec(() => ({
      items: (list.all(account, limitOf(paging), paging.offset) as ServiceRow[]).map(service),
      total: count.get(account) as number,
    })),
    listAfter: (account, id, limit) => exec(() => mapPage(after(account, id, limit), service)),
    byId: (account) => exec(() => new Map((all.all(account) as ServiceRow[]).map((row) => [row.id, service(row)]))),
    existing: (account, ids) => exec(() => new Set(ids.length === 0 ? [] : (existing.all(account, JSON.stringify(ids)) as string[]))),
    get: (account, id) => exec(() => get(account, id)),
    create: (account, name) => exec(() => {
      const id = randomUUID()
      insert.run(id, account, name, now())
      return get(account, id)!
    }),
    update: (account, id, name) => exec(() => (update.run(name, now(), id, account).changes === 0 ? undefined : get(account, id))),
    delete: (account, id) => exec(() => remove.run(id, account).changes > 0),
    usedBy: (account, id) => exec(() => usedBy.get(id, account) as { id: string; url: string } | undefined),
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

function statusPage(row: PageRow): StatusPageRecord {
  return { id: row.id, page: JSON.parse(row.body) as StoredPage, created_at: row.created_at, updated_at: row.updated_at }
}

export function statusPageRepository(db: Db, exec: Exec, clock: Clock): StatusPageStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'seq, id, body, created_at, updated_at'
  const byId = db.prepare(`SELECT ${columns} FROM status_pages WHERE id = ? AND account_id = ?`)
  const seqById = db.prepare(`SELECT seq FROM status_pages WHERE id = ? AND account_id = ?`).pluck()
  const list = db.prepare(`SELECT ${columns} FROM status_pages WHERE account_id = ? AND seq >= ? ORDER BY seq LIMIT ?`)
  const insert = db.prepare(`INSERT INTO status_pages (id, account_id, url, custom_domain, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE status_pages SET url = ?, custom_domain = ?, body = ?, updated_at = ? WHERE seq = ?`)
  const remove = db.prepare(`DELETE FROM status_pages WHERE id = ? AND account_id = ?`)
  const usesInsert = db.prepare(`INSERT INTO status_page_services (page_seq, service_id) VALUES (?, ?)`)
  const usesDelete = db.prepare(`DELETE FROM status_page_services WHERE page_seq = ?`)
  const byUrl = db.prepare(`SELECT account_id, ${columns} FROM status_pages WHERE url = ?`)
  const byDomain = db.prepare(`SELECT account_id, ${columns} FROM status_pages WHERE custom_domain = ?`)
  const countOf = db.prepare(`SELECT count(*) FROM status_pages WHERE account_id = ?`).pluck()

  function recordUses(seq: number | bigint, page: StoredPage): void {
    usesDelete.run(seq)
    for (const id of new Set(page.cards.flatMap((c) => c.services.map((s) => s.id)))) usesInsert.run(seq, id)
  }

  /** the url and the custom domain are unique per server: the constraints decide, whoever writes */
  function unique<T>(data: StatusPage, write: () => T): T {
    try {
      return write()
    } catch (error) {
      if (!isUnique(error)) throw error
      if (/status_pages\.custom_domain/.test((error as Error).message)) throw new UniqueViolation('statusPage.customDomain', data.customDomain ?? '')
      throw new UniqueViolation('statusPage.url', data.url)
    }
  }

  const create = db.transaction((account: string, data: StatusPage) => {
    const id = randomUUID()
    const time = now()
    const page: StoredPage = { ...data, cards: storedCards(data, [], time, randomUUID) }
    const seq = unique(data, () => insert.run(id, account, data.url, domainKey(data.customDomain), JSON.stringify(page), time).lastInsertRowid)
    recordUses(seq, page)
    return statusPage(byId.get(id, account) as PageRow)
  })

  const replace = db.transaction((account: string, id: string, data: StatusPage) => {
    const row = byId.get(id, account) as PageRow | undefined
    if (!row) return undefined
    const time = now()
    const page: StoredPage = { ...data, cards: storedCards(data, (JSON.parse(row.body) as StoredPage).cards, time, randomUUID) }
    unique(data, () => update.run(data.url, domainKey(data.customDomain), JSON.stringify(page), time, row.seq))
    recordUses(row.seq, page)
    return statusPage(byId.get(id, account) as PageRow)
  })

  return {
    list: (account, query) => exec(() => {
      let from = 0
      if (query.nextId !== undefined) {
        const seq = seqById.get(query.nextId, account) as number | undefined
        if (seq === undefined) return null
        from = seq
      }
      const rows = list.all(account, from, query.limit + 1) as PageRow[]
      return { entries: rows.slice(0, query.limit).map(statusPage), nextId: rows.length > query.limit ? rows[query.limit].id : null }
    }),
    get: (account, id) => exec(() => {
      const row = byId.get(id, account) as PageRow | undefined
      return row && statusPage(row)
    }),
    countForCreate: (account) => exec(() => Number(countOf.get(account))),
    create: (account, data) => exec(() => create.immediate(account, data)),
    update: (account, id, data) => exec(() => replace.immediate(account, id, data)),
    delete: (account, id) => exec(() => remove.run(id, account).changes > 0),
    findPublic: (by) => exec(() => {
      const row = ('url' in by ? byUrl.get(by.url) : byDomain.get(domainKey(by.customDomain))) as (PageRow & { account_id: string }) | undefined
      return row && { account: row.account_id, record: statusPage(row) }
    }),
  }
}

// --- maintenance windows

interface WindowRow {
  id: number
  body: string
  created_at: string
  updated_at: string | null
}

function maintenanceWindow(row: WindowRow): MaintenanceWindowRecord {
  return { id: row.id, window: JSON.parse(row.body) as MaintenanceWindow, created_at: row.created_at, updated_at: row.updated_at }
}

export function maintenanceWindowRepository(db: Db, exec: Exec, clock: Clock): MaintenanceWindowStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, body, created_at, updated_at'
  const byId = db.prepare(`SELECT ${columns} FROM maintenance_windows WHERE id = ? AND account_id = ?`)
  const list = db.prepare(`SELECT ${columns} FROM maintenance_windows WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) FROM maintenance_windows WHERE account_id = ?`).pluck()
  const insert = db.prepare(`INSERT INTO maintenance_windows (account_id, body, created_at, updated_at) VALUES (?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE maintenance_windows SET body = ?, updated_at = ? WHERE id = ? AND account_id = ?`)
  const remove = db.prepare(`DELETE FROM maintenance_windows WHERE id = ? AND account_id = ?`)
  const after = keysetReader<WindowRow>(db, { table: 'maintenance_windows', columns, key: 'id', order: 'id', integerKey: true })
  const get = (account: string, id: number | bigint) => {
    const row = byId.get(id, account) as WindowRow | undefined
    return row && maintenanceWindow(row)
  }
  return {
    list: (account, paging) => exec(() => ({
      items: (list.all(account, limitOf(paging), paging.offset) as WindowRow[]).map(maintenanceWindow),
      total: count.get(account) as number,
    })),
    listAfter: (account, id, limit) => exec(() => mapPage(after(account, id, limit), maintenanceWindow)),
    get: (account, id) => exec(() => get(account, id)),
    create: (account, data) => exec(() => get(account, insert.run(account, JSON.stringify(data), now()).lastInsertRowid)!),
    update: (account, id, data) => exec(() => (update.run(JSON.stringify(data), now(), id, account).changes === 0 ? undefined : get(account, id))),
    delete: (account, id) => exec(() => remove.run(id, account).changes > 0),
  }
}

// --- check groups

function checkGroup(row: WindowRow): CheckGroupRecord {
  return { id: row.id, group: JSON.parse(row.body) as CheckGroup, created_at: row.created_at, updated_at: row.updated_at }
}

export function checkGroupRepository(db: Db, exec: Exec, clock: Clock): CheckGroupStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, body, created_at, updated_at'
  const byId = db.prepare(`SELECT ${columns} FROM check_groups WHERE id = ? AND account_id = ?`)
  const list = db.prepare(`SELECT ${columns} FROM check_groups WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) FROM check_groups WHERE account_id = ?`).pluck()
  const insert = db.prepare(`INSERT INTO check_groups (account_id, body, created_at, updated_at) VALUES (?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE check_groups SET body = ?, updated_at = ? WHERE id = ? AND account_id = ?`)
  const remove = db.prepare(`DELETE FROM check_groups WHERE id = ? AND account_id = ?`)
  const after = keysetReader<WindowRow>(db, { table: 'check_groups', columns, key: 'id', order: 'id', integerKey: true })
  const get = (account: string, id: number | bigint) => {
    const row = byId.get(id, account) as WindowRow | undefined
    return row && checkGroup(row)
  }
  return {
    list: (account, paging) => exec(() => ({
      items: (list.all(account, limitOf(paging), paging.offset) as WindowRow[]).map(checkGroup),
      total: count.get(account) as number,
    })),
    listAfter: (account, id, limit) => exec(() => mapPage(after(account, id, limit), checkGroup)),
    get: (account, id) => exec(() => get(account, id)),
    create: (account, data) => exec(() => get(account, insert.run(account, JSON.stringify(data), now()).lastInsertRowid)!),
    update: (account, id, data) => exec(() => (update.run(JSON.stringify(data), now(), id, account).changes === 0 ? undefined : get(account, id))),
    delete: (account, id) => exec(() => remove.run(id, account).changes > 0),
  }
}

// --- account-level alert channels

interface ChannelRow {
  id: number
  body: string
  created_at: string
  updated_at: string | null
}

function alertChannel(row: ChannelRow): AlertChannelRecord {
  return { id: row.id, channel: JSON.parse(row.body) as AlertChannelData, created_at: row.created_at, updated_at: row.updated_at }
}

export function alertChannelRepository(db: Db, exec: Exec, clock: Clock): AlertChannelStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'id, body, created_at, updated_at'
  const byId = db.prepare(`SELECT ${columns} FROM alert_channels WHERE id = ? AND account_id = ?`)
  const byIds = db.prepare(`SELECT ${columns} FROM alert_channels WHERE account_id = ? AND id IN (SELECT value FROM json_each(?)) ORDER BY id`)
  const list = db.prepare(`SELECT ${columns} FROM alert_channels WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) FROM alert_channels WHERE account_id = ?`).pluck()
  const insert = db.prepare(`INSERT INTO alert_channels (account_id, body, created_at, updated_at) VALUES (?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE alert_channels SET body = ?, updated_at = ? WHERE id = ? AND account_id = ?`)
  const remove = db.prepare(`DELETE FROM alert_channels WHERE id = ? AND account_id = ?`)
  const after = keysetReader<ChannelRow>(db, { table: 'alert_channels', columns, key: 'id', order: 'id', integerKey: true })
  const get = (account: string, id: number | bigint) => {
    const row = byId.get(id, account) as ChannelRow | undefined
    return row && alertChannel(row)
  }
  return {
    list: (account, paging) => exec(() => ({
      items: (list.all(account, limitOf(paging), paging.offset) as ChannelRow[]).map(alertChannel),
      total: count.get(account) as number,
    })),
    listAfter: (account, id, limit) => exec(() => mapPage(after(account, id, limit), alertChannel)),
    get: (account, id) => exec(() => get(account, id)),
    byIds: (account, ids) => exec(() => (ids.length === 0 ? [] : (byIds.all(account, JSON.stringify(ids)) as ChannelRow[]).map(alertChannel))),
    create: (account, data) => exec(() => get(account, insert.run(account, JSON.stringify(data), now()).lastInsertRowid)!),
    update: (account, id, data) => exec(() => (update.run(JSON.stringify(data), now(), id, account).changes === 0 ? undefined : get(account, id))),
    delete: (account, id) => exec(() => remove.run(id, account).changes > 0),
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
  id: string
  body: string
  created_at: string
  updated_at: string | null
}

function incidentUpdate(row: UpdateRow): IncidentUpdateRecord {
  return { id: row.id, update: JSON.parse(row.body) as Record<string, unknown>, created_at: row.created_at, updated_at: row.updated_at }
}

export function incidentRepository(db: Db, exec: Exec, clock: Clock): IncidentStore {
  const now = () => new Date(clock.now()).toISOString()
  const columns = 'seq, id, body, created_at, updated_at'
  const byId = db.prepare(`SELECT ${columns} FROM incidents WHERE id = ? AND account_id = ?`)
  const seqById = db.prepare(`SELECT seq FROM incidents WHERE id = ? AND account_id = ?`).pluck()
  // newest first (API.md: Incidents list)
  const list = db.prepare(`SELECT ${columns} FROM incidents WHERE account_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) FROM incidents WHERE account_id = ?`).pluck()
  const insert = db.prepare(`INSERT INTO incidents (id, account_id, body, created_at, updated_at) VALUES (?, ?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE incidents SET body = ?, updated_at = ? WHERE id = ? AND account_id = ?`)
  const remove = db.prepare(`DELETE FROM incidents WHERE id = ? AND account_id = ?`)
  // newest first, as the list
  const after = keysetReader<IncidentRow>(db, { table: 'incidents', columns, key: 'id', order: 'seq', descending: true })

  const updateColumns = 'id, body, created_at, updated_at'
  const updatesOf = db.prepare(`SELECT ${updateColumns} FROM incident_updates WHERE incident_seq = ? ORDER BY seq DESC`)
  const updateById = db.prepare(`SELECT ${updateColumns} FROM incident_updates WHERE id = ? AND incident_seq = ?`)
  const updateInsert = db.prepare(`INSERT INTO incident_updates (id, incident_seq, body, created_at, updated_at) VALUES (?, ?, ?, ?, NULL)`)
  const updateUpdate = db.prepare(`UPDATE incident_updates SET body = ?, updated_at = ? WHERE id = ? AND incident_seq = ?`)
  const updateDelete = db.prepare(`DELETE FROM incident_updates WHERE id = ? AND incident_seq = ?`)

  function incident(row: IncidentRow): IncidentRecord {
    return {
      id: row.id,
      incident: JSON.parse(row.body) as IncidentData,
      created_at: row.created_at,
      updated_at: row.updated_at,
      updates: (updatesOf.all(row.seq) as UpdateRow[]).map(incidentUpdate),
    }
  }
  const get = (account: string, id: string) => {
    const row = byId.get(id, account) as IncidentRow | undefined
    return row && incident(row)
  }
  const getUpdate = (seq: number, id: string) => {
    const row = updateById.get(id, seq) as UpdateRow | undefined
    return row && incidentUpdate(row)
  }
  const seqOf = (account: string, incidentId: string) => seqById.get(incidentId, account) as number | undefined

  return {
    list: (account, paging): Promise<Page<IncidentRecord>> => exec(() => db.transaction(() => ({
      items: (list.all(account, limitOf(paging), paging.offset) as IncidentRow[]).map(incident),
      total: count.get(account) as number,
    }))()),
    listAfter: (account, id, limit) => exec(() => db.transaction(() => mapPage(after(account, id, limit), incident))()),
    get: (account, id) => exec(() => db.transaction(() => get(account, id))()),
    create: (account, data) => exec(() => {
      const id = randomUUID()
      insert.run(id, account, JSON.stringify(data), now())
      return get(account, id)!
    }),
    update: (account, id, data) => exec(() => (update.run(JSON.stringify(data), now(), id, account).changes === 0 ? undefined : get(account, id))),
    delete: (account, id) => exec(() => remove.run(id, account).changes > 0),
    addUpdate: (account, incidentId, data) => exec(() => db.transaction(() => {
      const seq = seqOf(account, incidentId)
      if (seq === undefined) return undefined
      const id = randomUUID()
      updateInsert.run(id, seq, JSON.stringify(data), now())
      return getUpdate(seq, id)
    }).immediate()),
    getUpdate: (account, incidentId, id) => exec(() => {
      const seq = seqOf(account, incidentId)
      return seq === undefined ? undefined : getUpdate(seq, id)
    }),
    replaceUpdate: (account, incidentId, id, data) => exec(() => db.transaction(() => {
      const seq = seqOf(account, incidentId)
      if (seq === undefined || updateUpdate.run(JSON.stringify(data), now(), id, seq).changes === 0) return undefined
      return getUpdate(seq, id)
    }).immediate()),
    deleteUpdate: (account, incidentId, id) => exec(() => {
      const seq = seqOf(account, incidentId)
      return seq !== undefined && updateDelete.run(id, seq).changes > 0
    }),
  }
}
