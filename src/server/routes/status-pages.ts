import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { statusPageListQuerySchema, statusPageSchema, statusPageServiceSchema, type StatusPage, type FieldIssue } from '../../schema/index.js'
import { type Db, now } from '../db.js'
import { badRequest, conflict, notFound, parseOr400, schemaIssues } from '../errors.js'
import { contentRange, optionalPage } from './util.js'

interface ServiceRow {
  id: string
  account_id: string
  name: string
  created_at: string
  updated_at: string | null
}

export interface ServiceRecord {
  id: string
  name: string
  accountId: string
  created_at: string
  updated_at: string | null
}

export function presentService(row: ServiceRow): ServiceRecord {
  return { id: row.id, name: row.name, accountId: row.account_id, created_at: row.created_at, updated_at: row.updated_at }
}

interface StoredCard {
  id: string
  name: string
  services: Array<{ id: string }>
  created_at: string
  updated_at: string | null
}
type StoredPage = Omit<StatusPage, 'cards'> & { cards: StoredCard[] }

interface PageRow {
  seq: number
  id: string
  body: string
  created_at: string
  updated_at: string | null
}

/** Every service of an account by id (an account has few; one query per request). */
export function serviceLookup(db: Db) {
  const all = db.prepare(`SELECT id, account_id, name, created_at, updated_at FROM services WHERE account_id = ?`)
  return (account: string) => new Map((all.all(account) as ServiceRow[]).map((row) => [row.id, presentService(row)]))
}

/**
 * Status pages and their services. Cards reference services of the same account by id; a
 * service that a card uses cannot be deleted (409) until the page stops using it, so a page
 * never silently loses a card's service. Incidents naming a deleted service simply stop
 * listing it.
 */
export function statusPageRoutes(app: FastifyInstance, db: Db): void {
  const services = serviceLookup(db)
  const serviceColumns = 'id, account_id, name, created_at, updated_at'
  const serviceById = db.prepare(`SELECT ${serviceColumns} FROM services WHERE id = ? AND account_id = ?`)
  const serviceList = db.prepare(`SELECT ${serviceColumns} FROM services WHERE account_id = ? ORDER BY seq LIMIT ? OFFSET ?`)
  const serviceCount = db.prepare(`SELECT count(*) FROM services WHERE account_id = ?`).pluck()
  const serviceInsert = db.prepare(`INSERT INTO services (id, account_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, NULL)`)
  const serviceUpdate = db.prepare(`UPDATE services SET name = ?, updated_at = ? WHERE id = ? AND account_id = ?`)
  const serviceDelete = db.prepare(`DELETE FROM services WHERE id = ? AND account_id = ?`)
  const serviceUsedBy = db.prepare(
    `SELECT p.id, p.url FROM status_page_services u JOIN status_pages p ON p.seq = u.page_seq WHERE u.service_id = ? LIMIT 1`,
  )

  const pageColumns = 'seq, id, body, created_at, updated_at'
  const pageById = db.prepare(`SELECT ${pageColumns} FROM status_pages WHERE id = ? AND account_id = ?`)
  const pageSeqById = db.prepare(`SELECT seq FROM status_pages WHERE id = ? AND account_id = ?`).pluck()
  const pageList = db.prepare(`SELECT ${pageColumns} FROM status_pages WHERE account_id = ? AND seq >= ? ORDER BY seq LIMIT ?`)
  const pageByUrl = db.prepare(`SELECT id FROM status_pages WHERE url = ?`).pluck()
  const pageInsert = db.prepare(`INSERT INTO status_pages (id, account_id, url, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, NULL)`)
  const pageUpdate = db.prepare(`UPDATE status_pages SET url = ?, body = ?, updated_at = ? WHERE seq = ?`)
  const pageDelete = db.prepare(`DELETE FROM status_pages WHERE id = ? AND account_id = ?`)
  const usesInsert = db.prepare(`INSERT INTO status_page_services (page_seq, service_id) VALUES (?, ?)`)
  const usesDelete = db.prepare(`DELETE FROM status_page_services WHERE page_seq = ?`)

  function present(row: PageRow, known: Map<string, ServiceRecord>) {
    const { cards, ...rest } = JSON.parse(row.body) as StoredPage
    return {
      id: row.id,
      ...rest,
      cards: cards.map((card) => ({
        ...card,
        statusPageId: row.id,
        services: card.services.map((s) => known.get(s.id)).filter((s): s is ServiceRecord => s !== undefined),
      })),
      whiteLabel: false,
      isPrivate: false,
      created_at: row.created_at,
      updated_at: row.updated_at,
    }
  }

  /** unknown service ids of the cards; reads the raw body so that they are reported with schema problems */
  function cardIssues(body: unknown, known: Map<string, ServiceRecord>): FieldIssue[] {
    const issues: FieldIssue[] = []
    const cards = (body as { cards?: unknown } | null)?.cards
    if (!Array.isArray(cards)) return issues
    cards.forEach((card: unknown, i) => {
      const services = (card as { services?: unknown } | null)?.services
      if (!Array.isArray(services)) return
      services.forEach((service: unknown, j) => {
        const id = (service as { id?: unknown } | null)?.id
        if (typeof id === 'string' && id !== '' && !known.has(id)) issues.push({ path: `cards.${i}.services.${j}.id`, message: `is not a known status page service (got "${id}")` })
      })
    })
    return issues
  }

  function parsePage(body: unknown, known: Map<string, ServiceRecord>): StatusPage {
    const result = schemaIssues(statusPageSchema, body, 'payload')
    const issues = [...result.issues, ...cardIssues(body, known)]
    if (issues.length > 0) throw badRequest('payload', issues)
    return result.data!
  }

  function storedCards(data: StatusPage, previous: StoredCard[], time: string): StoredCard[] {
    const old = new Map(previous.map((c) => [c.id, c]))
    return data.cards.map((card) => {
      const kept = card.id !== undefined ? old.get(card.id) : undefined
      return {
        id: kept ? kept.id : randomUUID(),
        name: card.name,
        services: card.services.map((s) => ({ id: s.id })),
        created_at: kept ? kept.created_at : time,
        updated_at: kept ? time : null,
      }
    })
  }

  function recordUses(seq: number | bigint, cards: StoredCard[]): void {
    usesDelete.run(seq)
    for (const id of new Set(cards.flatMap((c) => c.services.map((s) => s.id)))) usesInsert.run(seq, id)
  }

  // --- services (registered before /:statusPageId so "services" is never taken for a page id)

  app.get('/v1/status-pages/services', async (request, reply) => {
    const { limit, offset } = optionalPage(request.query)
    const rows = serviceList.all(request.accountId, limit, offset) as ServiceRow[]
    reply.header('content-range', contentRange(offset, rows.length, serviceCount.get(request.accountId) as number))
    return rows.map(presentService)
  })

  app.post('/v1/status-pages/services', async (request, reply) => {
    const data = parseOr400(statusPageServiceSchema, request.body, 'payload')
    const id = randomUUID()
    serviceInsert.run(id, request.accountId, data.name, now())
    return reply.code(201).send(presentService(serviceById.get(id, request.accountId) as ServiceRow))
  })

  app.get<{ Params: { serviceId: string } }>('/v1/status-pages/services/:serviceId', async (request) => {
    const row = serviceById.get(request.params.serviceId, request.accountId) as ServiceRow | undefined
    if (!row) throw notFound('Service')
    return presentService(row)
  })

  app.put<{ Params: { serviceId: string } }>('/v1/status-pages/services/:serviceId', async (request) => {
    const { serviceId } = request.params
    if (!serviceById.get(serviceId, request.accountId)) throw notFound('Service')
    const data = parseOr400(statusPageServiceSchema, request.body, 'payload')
    serviceUpdate.run(data.name, now(), serviceId, request.accountId)
    return presentService(serviceById.get(serviceId, request.accountId) as ServiceRow)
  })

  app.delete<{ Params: { serviceId: string } }>('/v1/status-pages/services/:serviceId', async (request, reply) => {
    const { serviceId } = request.params
    if (!serviceById.get(serviceId, request.accountId)) throw notFound('Service')
    const user = serviceUsedBy.get(serviceId) as { id: string; url: string } | undefined
    if (user) throw conflict(`Service ${serviceId} is used by a card of status page ${user.id} (${user.url}); remove it from the page first`)
    serviceDelete.run(serviceId, request.accountId)
    return reply.code(204).send()
  })

  // --- status pages

  app.get('/v1/status-pages', async (request) => {
    const query = parseOr400(statusPageListQuerySchema, request.query, 'query')
    let from = 0
    if (query.nextId !== undefined) {
      const seq = pageSeqById.get(query.nextId, request.accountId) as number | undefined
      if (seq === undefined) throw badRequest('query', [{ path: 'nextId', message: `is not a cursor this list gave (got "${query.nextId}")` }])
      from = seq
    }
    const rows = pageList.all(request.accountId, from, query.limit + 1) as PageRow[]
    const known = services(request.accountId)
    const entries = rows.slice(0, query.limit).map((row) => present(row, known))
    return { length: entries.length, entries, nextId: rows.length > query.limit ? rows[query.limit].id : null }
  })

  app.post('/v1/status-pages', async (request, reply) => {
    const known = services(request.accountId)
    const data = parsePage(request.body, known)
    const id = randomUUID()
    const row = db.transaction(() => {
      if (pageByUrl.get(data.url) !== undefined) throw conflict(`Status page with url ${data.url} already exists`)
      const time = now()
      const cards = storedCards(data, [], time)
      const seq = pageInsert.run(id, request.accountId, data.url, JSON.stringify({ ...data, cards }), time).lastInsertRowid
      recordUses(seq, cards)
      return pageById.get(id, request.accountId) as PageRow
    })()
    return reply.code(201).send(present(row, known))
  })

  app.get<{ Params: { statusPageId: string } }>('/v1/status-pages/:statusPageId', async (request) => {
    const row = pageById.get(request.params.statusPageId, request.accountId) as PageRow | undefined
    if (!row) throw notFound('Status page')
    return present(row, services(request.accountId))
  })

  app.put<{ Params: { statusPageId: string } }>('/v1/status-pages/:statusPageId', async (request) => {
    const { statusPageId } = request.params
    const existing = pageById.get(statusPageId, request.accountId) as PageRow | undefined
    if (!existing) throw notFound('Status page')
    const known = services(request.accountId)
    const data = parsePage(request.body, known)
    const row = db.transaction(() => {
      const owner = pageByUrl.get(data.url) as string | undefined
      if (owner !== undefined && owner !== statusPageId) throw conflict(`Status page with url ${data.url} already exists`)
      const time = now()
      const cards = storedCards(data, (JSON.parse(existing.body) as StoredPage).cards, time)
      pageUpdate.run(data.url, JSON.stringify({ ...data, cards }), time, existing.seq)
      recordUses(existing.seq, cards)
      return pageById.get(statusPageId, request.accountId) as PageRow
    })()
    return present(row, known)
  })

  app.delete<{ Params: { statusPageId: string } }>('/v1/status-pages/:statusPageId', async (request, reply) => {
    if (pageDelete.run(request.params.statusPageId, request.accountId).changes === 0) throw notFound('Status page')
    return reply.code(204).send()
  })
}
