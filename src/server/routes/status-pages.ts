import type { FastifyInstance } from 'fastify'
import { statusPageListQuerySchema, statusPageSchema, statusPageServiceSchema } from '../../schema/index.js'
import { badRequest, conflict, notFound, parseOr400 } from '../errors.js'
import { UniqueViolation, type ServiceRecord, type StatusPageRecord, type Store } from '../store/index.js'
import { parseWithReferences, serviceReferences } from './references.js'
import type { ServerNames } from '../names.js'
import { optionalPage, sendListPage, sendPaged } from './util.js'
import { DEFAULT_LIMITS } from '../limits.js'

function present(record: StatusPageRecord, known: Map<string, ServiceRecord>) {
  const { cards, ...rest } = record.page
  return {
    id: record.id,
    ...rest,
    cards: cards.map((card) => ({
      ...card,
      statusPageId: record.id,
      services: card.services.map((s) => known.get(s.id)).filter((s): s is ServiceRecord => s !== undefined),
    })),
    whiteLabel: false,
    isPrivate: false,
    created_at: record.created_at,
    updated_at: record.updated_at,
  }
}

/** the url and the custom domain are unique per server; the store's constraints decide */
async function urlConflict<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (error) {
    if (error instanceof UniqueViolation && error.field === 'statusPage.customDomain') {
      throw conflict(`customDomain ${error.value} is already the customDomain of another status page`)
    }
    if (error instanceof UniqueViolation) throw conflict(`Status page with url ${error.value} already exists`)
    throw error
  }
}

/** a custom domain is never one of the server's own names (its API and dashboard are served there) */
function checkDomain(names: ServerNames, data: { customDomain?: string | null }): void {
  if (data.customDomain && names.has(data.customDomain)) {
    throw conflict(`customDomain ${data.customDomain} is a name of this server (its API and dashboard are served there); use a domain of your own`)
  }
}

/**
 * Status pages and their services. Cards reference services of the same account by id; a
 * service that a card uses cannot be deleted (409) until the page stops using it, so a page
 * never silently loses a card's service. Incidents naming a deleted service simply stop
 * listing it.
 */
export function statusPageRoutes(app: FastifyInstance, store: Store, names: ServerNames, maxPages = DEFAULT_LIMITS.statusPagesPerAccount): void {
  // --- services (registered before /:statusPageId so "services" is never taken for a page id)

  app.get('/v1/status-pages/services', async (request, reply) => {
    return sendPaged(request, reply, optionalPage(request.query), {
      what: 'service',
      byPage: (paging) => store.services.list(request.accountId, paging),
      byKeyset: (after, n) => store.services.listAfter(request.accountId, after, n),
      keyOf: (s) => s.id,
      present: (items) => items,
    })
  })

  app.post('/v1/status-pages/services', async (request, reply) => {
    const data = parseOr400(statusPageServiceSchema, request.body, 'payload')
    return reply.code(201).send(await store.services.create(request.accountId, data.name))
  })

  app.get<{ Params: { serviceId: string } }>('/v1/status-pages/services/:serviceId', async (request) => {
    const service = await store.services.get(request.accountId, request.params.serviceId)
    if (!service) throw notFound('Service')
    return service
  })

  app.put<{ Params: { serviceId: string } }>('/v1/status-pages/services/:serviceId', async (request) => {
    const { serviceId } = request.params
    const service = await store.transaction(async (tx) => {
      if (!(await tx.services.get(request.accountId, serviceId))) throw notFound('Service')
      const data = parseOr400(statusPageServiceSchema, request.body, 'payload')
      return tx.services.update(request.accountId, serviceId, data.name)
    })
    if (!service) throw notFound('Service')
    return service
  })

  app.delete<{ Params: { serviceId: string } }>('/v1/status-pages/services/:serviceId', async (request, reply) => {
    const { serviceId } = request.params
    await store.transaction(async (tx) => {
      if (!(await tx.services.get(request.accountId, serviceId))) throw notFound('Service')
      const user = await tx.services.usedBy(request.accountId, serviceId)
      if (user) throw conflict(`Service ${serviceId} is used by a card of status page ${user.id} (${user.url}); remove it from the page first`)
      await tx.services.delete(request.accountId, serviceId)
    })
    return reply.code(204).send()
  })

  // --- status pages

  app.get('/v1/status-pages', async (request, reply) => {
    const query = parseOr400(statusPageListQuerySchema, request.query, 'query')
    const list = await store.statusPages.list(request.accountId, { nextId: query.nextId, limit: query.limit })
    if (!list) throw badRequest('query', [{ path: 'nextId', message: `is not a cursor this list gave (got "${query.nextId}")` }])
    const known = await store.services.byId(request.accountId)
    const entries = list.entries.map((record) => present(record, known))
    // nextId is the list's keyset (the spec's cursor); each page has an ETag too
    return sendListPage(request, reply, JSON.stringify({ length: entries.length, entries, nextId: list.nextId }))
  })

  app.post('/v1/status-pages', async (request, reply) => {
    const [page, known] = await store.transaction(async (tx) => {
      const data = await parseWithReferences(tx, request.accountId, statusPageSchema, request.body, serviceReferences.statusPage)
      checkDomain(names, data)
      // an account's pages are bounded: each is public, with a subscription form that sends email
      if ((await tx.statusPages.countForCreate(request.accountId)) >= maxPages) {
        throw conflict(
          `The account has ${maxPages} status pages, the most this server allows an account (monitors server --max-status-pages); delete one first`,
        )
      }
      return [await urlConflict(() => tx.statusPages.create(request.accountId, data)), await tx.services.byId(request.accountId)] as const
    })
    return reply.code(201).send(present(page, known))
  })

  app.get<{ Params: { statusPageId: string } }>('/v1/status-pages/:statusPageId', async (request) => {
    const page = await store.statusPages.get(request.accountId, request.params.statusPageId)
    if (!page) throw notFound('Status page')
    return present(page, await store.services.byId(request.accountId))
  })

  app.put<{ Params: { statusPageId: string } }>('/v1/status-pages/:statusPageId', async (request) => {
    const { statusPageId } = request.params
    const [page, known] = await store.transaction(async (tx) => {
      if (!(await tx.statusPages.get(request.accountId, statusPageId))) throw notFound('Status page')
      const data = await parseWithReferences(tx, request.accountId, statusPageSchema, request.body, serviceReferences.statusPage)
      checkDomain(names, data)
      return [await urlConflict(() => tx.statusPages.update(request.accountId, statusPageId, data)), await tx.services.byId(request.accountId)] as const
    })
    if (!page) throw notFound('Status page')
    return present(page, known)
  })

  app.delete<{ Params: { statusPageId: string } }>('/v1/status-pages/:statusPageId', async (request, reply) => {
    if (!(await store.statusPages.delete(request.accountId, request.params.statusPageId))) throw notFound('Status page')
    return reply.code(204).send()
  })
}
