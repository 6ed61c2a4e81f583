import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { maintenanceWindowSchema } from '../../schema/index.js'
import type { Clock } from '../../runner/clock.js'
import { notifyMaintenance } from '../alerts/subscribers.js'
import { notFound, parseOr400 } from '../errors.js'
import type { MaintenanceWindowRecord, Store } from '../store/index.js'
import { optionalPage, quietly, sendPaged } from './util.js'

/** The spec types the path id as an integer; anything else is a 400 naming `id`. */
const idParams = z.object({
  id: z
    .string()
    .superRefine((id, ctx) => {
      if (!/^[0-9]+$/.test(id) || /^0+$/.test(id)) ctx.addIssue({ code: 'custom', message: 'must be a positive integer' })
      else if (Number(id) > Number.MAX_SAFE_INTEGER)
        ctx.addIssue({ code: 'custom', message: `is out of range: maintenance window ids go up to ${Number.MAX_SAFE_INTEGER}` })
    })
    .transform(Number),
})

function present(record: MaintenanceWindowRecord) {
  return { id: record.id, ...record.window, created_at: record.created_at, updated_at: record.updated_at }
}

export function maintenanceWindowRoutes(app: FastifyInstance, store: Store, clock: Clock): void {
  app.get('/v1/maintenance-windows', async (request, reply) => {
    return sendPaged(request, reply, optionalPage(request.query), {
      what: 'maintenance window',
      byPage: (paging) => store.maintenanceWindows.list(request.accountId, paging),
      byKeyset: (after, n) => store.maintenanceWindows.listAfter(request.accountId, after, n),
      keyOf: (w) => w.id,
      present: (items) => items.map(present),
    })
  })

  app.post('/v1/maintenance-windows', async (request, reply) => {
    const data = parseOr400(maintenanceWindowSchema, request.body, 'payload')
    const window = await store.maintenanceWindows.create(request.accountId, data)
    await quietly(request, () => notifyMaintenance(store, request.accountId, window, clock.now()))
    return reply.code(201).send(present(window))
  })

  app.get('/v1/maintenance-windows/:id', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    const window = await store.maintenanceWindows.get(request.accountId, id)
    if (!window) throw notFound('Maintenance window')
    return present(window)
  })

  app.put('/v1/maintenance-windows/:id', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    const window = await store.transaction(async (tx) => {
      if (!(await tx.maintenanceWindows.get(request.accountId, id))) throw notFound('Maintenance window')
      const data = parseOr400(maintenanceWindowSchema, request.body, 'payload')
      return tx.maintenanceWindows.update(request.accountId, id, data)
    })
    if (!window) throw notFound('Maintenance window')
    return present(window)
  })

  app.delete('/v1/maintenance-windows/:id', async (request, reply) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    if (!(await store.maintenanceWindows.delete(request.accountId, id))) throw notFound('Maintenance window')
    return reply.code(204).send()
  })
}
