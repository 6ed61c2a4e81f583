import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { maintenanceWindowSchema } from '../../schema/index.js'
import { type Db, now } from '../db.js'
import { notFound, parseOr400 } from '../errors.js'
import { contentRange, optionalPage } from './util.js'

interface WindowRow {
  id: number
  body: string
  created_at: string
  updated_at: string | null
}

/** The spec types the path id as an integer; anything else is a 400 naming `id`. */
const idParams = z.object({
  id: z.string()
    .superRefine((id, ctx) => {
      if (!/^[0-9]+$/.test(id) || /^0+$/.test(id)) ctx.addIssue({ code: 'custom', message: 'must be a positive integer' })
      else if (Number(id) > Number.MAX_SAFE_INTEGER) ctx.addIssue({ code: 'custom', message: `is out of range: maintenance window ids go up to ${Number.MAX_SAFE_INTEGER}` })
    })
    .transform(Number),
})

function present(row: WindowRow) {
  return { id: row.id, ...(JSON.parse(row.body) as object), created_at: row.created_at, updated_at: row.updated_at }
}

export function maintenanceWindowRoutes(app: FastifyInstance, db: Db): void {
  const columns = 'id, body, created_at, updated_at'
  const byId = db.prepare(`SELECT ${columns} FROM maintenance_windows WHERE id = ? AND account_id = ?`)
  const list = db.prepare(`SELECT ${columns} FROM maintenance_windows WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) FROM maintenance_windows WHERE account_id = ?`).pluck()
  const insert = db.prepare(`INSERT INTO maintenance_windows (account_id, body, created_at, updated_at) VALUES (?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE maintenance_windows SET body = ?, updated_at = ? WHERE id = ? AND account_id = ?`)
  const remove = db.prepare(`DELETE FROM maintenance_windows WHERE id = ? AND account_id = ?`)

  app.get('/v1/maintenance-windows', async (request, reply) => {
    const { limit, offset } = optionalPage(request.query)
    const rows = list.all(request.accountId, limit, offset) as WindowRow[]
    reply.header('content-range', contentRange(offset, rows.length, count.get(request.accountId) as number))
    return rows.map(present)
  })

  app.post('/v1/maintenance-windows', async (request, reply) => {
    const data = parseOr400(maintenanceWindowSchema, request.body, 'payload')
    const id = insert.run(request.accountId, JSON.stringify(data), now()).lastInsertRowid
    return reply.code(201).send(present(byId.get(id, request.accountId) as WindowRow))
  })

  app.get('/v1/maintenance-windows/:id', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    const row = byId.get(id, request.accountId) as WindowRow | undefined
    if (!row) throw notFound('Maintenance window')
    return present(row)
  })

  app.put('/v1/maintenance-windows/:id', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    if (!byId.get(id, request.accountId)) throw notFound('Maintenance window')
    const data = parseOr400(maintenanceWindowSchema, request.body, 'payload')
    update.run(JSON.stringify(data), now(), id, request.accountId)
    return present(byId.get(id, request.accountId) as WindowRow)
  })

  app.delete('/v1/maintenance-windows/:id', async (request, reply) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    if (remove.run(id, request.accountId).changes === 0) throw notFound('Maintenance window')
    return reply.code(204).send()
  })
}
