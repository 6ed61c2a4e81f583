import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { incidentSchema, incidentUpdateSchema, pageQuerySchema } from '../../schema/index.js'
import type { Clock } from '../../runner/clock.js'
import { notifyIncident } from '../alerts/subscribers.js'
import { notFound, parseOr400 } from '../errors.js'
import type { IncidentRecord, IncidentUpdateRecord, ServiceRecord, Store } from '../store/index.js'
import { parseWithReferences, serviceReferences } from './references.js'
import { quietly, sendPaged } from './util.js'

/** Incident and update ids are GUIDs (spec); another shape is a 400 naming the parameter. */
const guid = z.guid({ message: 'must be a GUID' })
const incidentParams = z.object({ id: guid })
const updateParams = z.object({ incidentId: guid, id: guid })
const updatesOfParams = z.object({ incidentId: guid })

function presentUpdate(record: IncidentUpdateRecord, incidentId: string) {
  return { id: record.id, incidentId, ...record.update, created_at: record.created_at, updated_at: record.updated_at }
}

/** services of a deleted status-page service drop out of the list; updates newest first */
function present(record: IncidentRecord, known: Map<string, ServiceRecord>) {
  const { name, severity, services } = record.incident
  return {
    id: record.id,
    name,
    severity,
    services: services.map((s) => known.get(s.id)).filter((s): s is ServiceRecord => s !== undefined),
    incidentUpdates: record.updates.map((u) => presentUpdate(u, record.id)),
    created_at: record.created_at,
    updated_at: record.updated_at,
  }
}

async function incidentExists(tx: Pick<Store, 'incidents'>, account: string, id: string): Promise<void> {
  if (!(await tx.incidents.get(account, id))) throw notFound('Incident')
}

export function incidentRoutes(app: FastifyInstance, store: Store, clock: Clock): void {
  // API.md "Incidents list": newest first, paged like checks (limit 1-100, default 10; page from 1)
  app.get('/v1/incidents', async (request, reply) => {
    const { limit, page } = parseOr400(pageQuerySchema, request.query, 'query')
    return sendPaged(
      request,
      reply,
      { limit, offset: (page - 1) * limit },
      {
        what: 'incident',
        byPage: (paging) => store.incidents.list(request.accountId, paging),
        byKeyset: (after, n) => store.incidents.listAfter(request.accountId, after, n),
        keyOf: (i) => i.id,
        present: async (items) => {
          const known = await store.services.byId(request.accountId)
          return items.map((record) => present(record, known))
        },
      },
    )
  })

  app.post('/v1/incidents', async (request, reply) => {
    const [incident, known] = await store.transaction(async (tx) => {
      const data = await parseWithReferences(tx, request.accountId, incidentSchema, request.body, serviceReferences.incident)
      return [await tx.incidents.create(request.accountId, data), await tx.services.byId(request.accountId)] as const
    })
    return reply.code(201).send(present(incident, known))
  })

  app.get('/v1/incidents/:id', async (request) => {
    const { id } = parseOr400(incidentParams, request.params, 'params')
    const incident = await store.incidents.get(request.accountId, id)
    if (!incident) throw notFound('Incident')
    return present(incident, await store.services.byId(request.accountId))
  })

  app.put('/v1/incidents/:id', async (request) => {
    const { id } = parseOr400(incidentParams, request.params, 'params')
    const [incident, known] = await store.transaction(async (tx) => {
      await incidentExists(tx, request.accountId, id)
      const data = await parseWithReferences(tx, request.accountId, incidentSchema, request.body, serviceReferences.incident)
      return [await tx.incidents.update(request.accountId, id, data), await tx.services.byId(request.accountId)] as const
    })
    if (!incident) throw notFound('Incident')
    return present(incident, known)
  })

  app.delete('/v1/incidents/:id', async (request, reply) => {
    const { id } = parseOr400(incidentParams, request.params, 'params')
    if (!(await store.incidents.delete(request.accountId, id))) throw notFound('Incident')
    return reply.code(204).send()
  })

  incidentUpdateRoutes(app, store, clock)
}

/** An incident's updates: the spec's notifySubscribers emails a new one to the pages showing its services. */
function incidentUpdateRoutes(app: FastifyInstance, store: Store, clock: Clock): void {
  app.post('/v1/incidents/:incidentId/updates', async (request, reply) => {
    const { incidentId } = parseOr400(updatesOfParams, request.params, 'params')
    const update = await store.transaction(async (tx) => {
      await incidentExists(tx, request.accountId, incidentId)
      const data = parseOr400(incidentUpdateSchema, request.body, 'payload')
      return tx.incidents.addUpdate(request.accountId, incidentId, data)
    })
    if (!update) throw notFound('Incident')
    // the spec's notifySubscribers: this update is emailed to the subscribers of the pages showing its services
    if (update.update.notifySubscribers === true) {
      await quietly(request, async () => {
        const incident = await store.incidents.get(request.accountId, incidentId)
        if (incident)
          await notifyIncident(
            store,
            request.accountId,
            incident,
            { status: String(update.update.status), description: String(update.update.description ?? '') },
            clock.now(),
          )
      })
    }
    return reply.code(201).send(presentUpdate(update, incidentId))
  })

  app.get('/v1/incidents/:incidentId/updates/:id', async (request) => {
    const { incidentId, id } = parseOr400(updateParams, request.params, 'params')
    await incidentExists(store, request.accountId, incidentId)
    const update = await store.incidents.getUpdate(request.accountId, incidentId, id)
    if (!update) throw notFound('Incident update')
    return presentUpdate(update, incidentId)
  })

  app.put('/v1/incidents/:incidentId/updates/:id', async (request) => {
    const { incidentId, id } = parseOr400(updateParams, request.params, 'params')
    const update = await store.transaction(async (tx) => {
      await incidentExists(tx, request.accountId, incidentId)
      if (!(await tx.incidents.getUpdate(request.accountId, incidentId, id))) throw notFound('Incident update')
      const data = parseOr400(incidentUpdateSchema, request.body, 'payload')
      return tx.incidents.replaceUpdate(request.accountId, incidentId, id, data)
    })
    if (!update) throw notFound('Incident update')
    return presentUpdate(update, incidentId)
  })

  app.delete('/v1/incidents/:incidentId/updates/:id', async (request, reply) => {
    const { incidentId, id } = parseOr400(updateParams, request.params, 'params')
    await incidentExists(store, request.accountId, incidentId)
    if (!(await store.incidents.deleteUpdate(request.accountId, incidentId, id))) throw notFound('Incident update')
    return reply.code(204).send()
  })
}
