import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { incidentSchema, incidentUpdateSchema, type FieldIssue } from '../../schema/index.js'
import { type Db, now } from '../db.js'
import { badRequest, notFound, parseOr400, schemaIssues } from '../errors.js'
import { serviceLookup, type ServiceRecord } from './status-pages.js'
import { contentRange, optionalPage } from './util.js'

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

/** Incident and update ids are GUIDs (spec); another shape is a 400 naming the parameter. */
const guid = z.guid({ message: 'must be a GUID' })
const incidentParams = z.object({ id: guid })
const updateParams = z.object({ incidentId: guid, id: guid })
const updatesOfParams = z.object({ incidentId: guid })

export function incidentRoutes(app: FastifyInstance, db: Db): void {
  const services = serviceLookup(db)
  const columns = 'seq, id, body, created_at, updated_at'
  const byId = db.prepare(`SELECT ${columns} FROM incidents WHERE id = ? AND account_id = ?`)
  const list = db.prepare(`SELECT ${columns} FROM incidents WHERE account_id = ? ORDER BY seq LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) FROM incidents WHERE account_id = ?`).pluck()
  const insert = db.prepare(`INSERT INTO incidents (id, account_id, body, created_at, updated_at) VALUES (?, ?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE incidents SET body = ?, updated_at = ? WHERE seq = ?`)
  const remove = db.prepare(`DELETE FROM incidents WHERE id = ? AND account_id = ?`)

  const updateColumns = 'id, body, created_at, updated_at'
  const updatesOf = db.prepare(`SELECT ${updateColumns} FROM incident_updates WHERE incident_seq = ? ORDER BY seq DESC`)
  const updateById = db.prepare(`SELECT ${updateColumns} FROM incident_updates WHERE id = ? AND incident_seq = ?`)
  const updateInsert = db.prepare(`INSERT INTO incident_updates (id, incident_seq, body, created_at, updated_at) VALUES (?, ?, ?, ?, NULL)`)
  const updateUpdate = db.prepare(`UPDATE incident_updates SET body = ?, updated_at = ? WHERE id = ? AND incident_seq = ?`)
  const updateDelete = db.prepare(`DELETE FROM incident_updates WHERE id = ? AND incident_seq = ?`)

  function presentUpdate(row: UpdateRow, incidentId: string) {
    return { id: row.id, incidentId, ...(JSON.parse(row.body) as object), created_at: row.created_at, updated_at: row.updated_at }
  }

  /** services of a deleted status-page service drop out of the list; updates newest first */
  function present(row: IncidentRow, known: Map<string, ServiceRecord>) {
    const body = JSON.parse(row.body) as { name: string; severity: string; services: Array<{ id: string }> }
    return {
      id: row.id,
      name: body.name,
      severity: body.severity,
      services: body.services.map((s) => known.get(s.id)).filter((s): s is ServiceRecord => s !== undefined),
      incidentUpdates: (updatesOf.all(row.seq) as UpdateRow[]).map((u) => presentUpdate(u, row.id)),
      created_at: row.created_at,
      updated_at: row.updated_at,
    }
  }

  /** the incident body, with unknown service ids reported together with the schema's problems */
  function parseIncident(body: unknown, known: Map<string, ServiceRecord>) {
    const result = schemaIssues(incidentSchema, body, 'payload')
    const issues: FieldIssue[] = [...result.issues]
    const raw = (body as { services?: unknown } | null)?.services
    if (Array.isArray(raw)) {
      raw.forEach((s: unknown, i) => {
        const id = (s as { id?: unknown } | null)?.id
        if (typeof id === 'string' && id !== '' && !known.has(id)) issues.push({ path: `services.${i}.id`, message: `is not a known status page service (got "${id}")` })
      })
    }
    if (issues.length > 0) throw badRequest('payload', issues)
    return result.data!
  }

  function incidentOf(account: string, id: string): IncidentRow {
    const row = byId.get(id, account) as IncidentRow | undefined
    if (!row) throw notFound('Incident')
    return row
  }

  app.get('/v1/incidents', async (request, reply) => {
    const { limit, offset } = optionalPage(request.query)
    const rows = list.all(request.accountId, limit, offset) as IncidentRow[]
    reply.header('content-range', contentRange(offset, rows.length, count.get(request.accountId) as number))
    const known = services(request.accountId)
    return rows.map((row) => present(row, known))
  })

  app.post('/v1/incidents', async (request, reply) => {
    const known = services(request.accountId)
    const data = parseIncident(request.body, known)
    const id = randomUUID()
    insert.run(id, request.accountId, JSON.stringify(data), now())
    return reply.code(201).send(present(byId.get(id, request.accountId) as IncidentRow, known))
  })

  app.get('/v1/incidents/:id', async (request) => {
    const { id } = parseOr400(incidentParams, request.params, 'params')
    return present(incidentOf(request.accountId, id), services(request.accountId))
  })

  app.put('/v1/incidents/:id', async (request) => {
    const { id } = parseOr400(incidentParams, request.params, 'params')
    const row = incidentOf(request.accountId, id)
    const known = services(request.accountId)
    const data = parseIncident(request.body, known)
    update.run(JSON.stringify(data), now(), row.seq)
    return present(byId.get(id, request.accountId) as IncidentRow, known)
  })

  app.delete('/v1/incidents/:id', async (request, reply) => {
    const { id } = parseOr400(incidentParams, request.params, 'params')
    if (remove.run(id, request.accountId).changes === 0) throw notFound('Incident')
    return reply.code(204).send()
  })

  app.post('/v1/incidents/:incidentId/updates', async (request, reply) => {
    const { incidentId } = parseOr400(updatesOfParams, request.params, 'params')
    const incident = incidentOf(request.accountId, incidentId)
    const data = parseOr400(incidentUpdateSchema, request.body, 'payload')
    const id = randomUUID()
    updateInsert.run(id, incident.seq, JSON.stringify(data), now())
    return reply.code(201).send(presentUpdate(updateById.get(id, incident.seq) as UpdateRow, incidentId))
  })

  app.get('/v1/incidents/:incidentId/updates/:id', async (request) => {
    const { incidentId, id } = parseOr400(updateParams, request.params, 'params')
    const incident = incidentOf(request.accountId, incidentId)
    const row = updateById.get(id, incident.seq) as UpdateRow | undefined
    if (!row) throw notFound('Incident update')
    return presentUpdate(row, incidentId)
  })

  app.put('/v1/incidents/:incidentId/updates/:id', async (request) => {
    const { incidentId, id } = parseOr400(updateParams, request.params, 'params')
    const incident = incidentOf(request.accountId, incidentId)
    if (!updateById.get(id, incident.seq)) throw notFound('Incident update')
    const data = parseOr400(incidentUpdateSchema, request.body, 'payload')
    updateUpdate.run(JSON.stringify(data), now(), id, incident.seq)
    return presentUpdate(updateById.get(id, incident.seq) as UpdateRow, incidentId)
  })

  app.delete('/v1/incidents/:incidentId/updates/:id', async (request, reply) => {
    const { incidentId, id } = parseOr400(updateParams, request.params, 'params')
    const incident = incidentOf(request.accountId, incidentId)
    if (updateDelete.run(id, incident.seq).changes === 0) throw notFound('Incident update')
    return reply.code(204).send()
  })
}
