import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { autoAssignAlertsQuerySchema, checkListQuerySchema, dnsCheckSchema, icmpCheckSchema } from '../../schema/index.js'
import { type Db, now } from '../db.js'
import { badRequest, notFound, parseOr400 } from '../errors.js'
import { contentRange, sendJson } from './util.js'

/*
 * A check is answered as stored: the validated body (the schema's output, defaults applied)
 * plus id, checkType, created_at and updated_at (null until the first update). Optional fields
 * the client did not send are omitted, never filled with null; a field sent as null stays null.
 * The stored JSON text is the answer itself, so reads never re-serialize.
 */

type CheckType = 'DNS' | 'ICMP'
const SCHEMAS = { DNS: dnsCheckSchema, ICMP: icmpCheckSchema } as const

export function checkRoutes(app: FastifyInstance, db: Db): void {
  const insert = db.prepare(`INSERT INTO checks (id, account_id, check_type, body) VALUES (?, ?, ?, ?)`)
  const insertTag = db.prepare(`INSERT OR IGNORE INTO check_tags (check_seq, account_id, tag) VALUES (?, ?, ?)`)
  const deleteTags = db.prepare(`DELETE FROM check_tags WHERE check_seq = ?`)
  const byId = db.prepare(`SELECT seq, check_type, body FROM checks WHERE id = ? AND account_id = ?`)
  const update = db.prepare(`UPDATE checks SET body = ? WHERE seq = ?`)
  const remove = db.prepare(`DELETE FROM checks WHERE id = ? AND account_id = ?`)
  const serviceExists = db.prepare(`SELECT 1 FROM services WHERE id = ? AND account_id = ?`).pluck()

  /** A check that opens incidents must name a status-page service of its own account. */
  function checkIncidentService(account: string, data: { triggerIncident?: { serviceId: string } }) {
    const serviceId = data.triggerIncident?.serviceId
    if (serviceId !== undefined && !serviceExists.get(serviceId, account)) {
      throw badRequest('payload', [{ path: 'triggerIncident.serviceId', message: `refers to a status page service that does not exist (got ${JSON.stringify(serviceId)})` }])
    }
  }

  const listStatements = new Map<string, { page: ReturnType<Db['prepare']>; count: ReturnType<Db['prepare']> }>()
  function listStatement(byType: boolean, byTag: boolean) {
    const name = `${byType}:${byTag}`
    let statement = listStatements.get(name)
    if (!statement) {
      const where = [
        'account_id = @account',
        byType ? 'check_type = @type' : '',
        // a check matches when it carries any of the tags asked for
        byTag ? 'seq IN (SELECT check_seq FROM check_tags WHERE account_id = @account AND tag IN (SELECT value FROM json_each(@tags)))' : '',
      ].filter(Boolean).join(' AND ')
      statement = {
        page: db.prepare(`SELECT body FROM checks WHERE ${where} ORDER BY seq LIMIT @limit OFFSET @offset`).pluck(),
        count: db.prepare(`SELECT count(*) FROM checks WHERE ${where}`).pluck(),
      }
      listStatements.set(name, statement)
    }
    return statement
  }

  /*
   * Answers of the list, kept until the next write to any check. This process is the only
   * writer of its database, so a cached page is exact; CI jobs that poll the same page pay
   * for the SQL once per change instead of once per request.
   */
  let generation = 0
  const listCache = new Map<string, { generation: number; body: Buffer; range: string }>()
  const LIST_CACHE_SIZE = 512
  function changed(): void {
    generation++
    listCache.clear()
  }

  const create = db.transaction((account: string, type: CheckType, data: { tags: string[] }) => {
    const id = randomUUID()
    const body = JSON.stringify({ id, ...data, created_at: now(), updated_at: null })
    const seq = insert.run(id, account, type, body).lastInsertRowid
    for (const tag of data.tags) insertTag.run(seq, account, tag)
    changed()
    return body
  })

  const replace = db.transaction((seq: number | bigint, account: string, body: string, tags: string[]) => {
    update.run(body, seq)
    deleteTags.run(seq)
    for (const tag of tags) insertTag.run(seq, account, tag)
    changed()
  })

  app.get('/v1/checks', async (request, reply) => {
    const query = parseOr400(checkListQuerySchema, request.query, 'query')
    const tags = query.tag === undefined ? undefined : Array.isArray(query.tag) ? query.tag : [query.tag]
    const cacheKey = JSON.stringify([request.accountId, query.checkType, tags, query.limit, query.page])
    const cached = listCache.get(cacheKey)
    if (cached && cached.generation === generation) {
      reply.header('content-range', cached.range)
      return reply.code(200).type('application/json; charset=utf-8').send(cached.body)
    }
    const statement = listStatement(query.checkType !== undefined, tags !== undefined)
    const params = { account: request.accountId, type: query.checkType ?? null, tags: JSON.stringify(tags ?? []), limit: query.limit, offset: (query.page - 1) * query.limit }
    const rows = statement.page.all(params) as string[]
    const total = statement.count.get(params) as number
    const range = contentRange(params.offset, rows.length, total)
    const body = Buffer.from(`[${rows.join(',')}]`)
    if (listCache.size >= LIST_CACHE_SIZE) listCache.clear()
    listCache.set(cacheKey, { generation, body, range })
    reply.header('content-range', range)
    return reply.code(200).type('application/json; charset=utf-8').send(body)
  })

  app.get<{ Params: { id: string } }>('/v1/checks/:id', async (request, reply) => {
    const row = byId.get(request.params.id, request.accountId) as { body: string } | undefined
    if (!row) throw notFound('Check')
    return sendJson(reply, 200, row.body)
  })

  for (const type of ['DNS', 'ICMP'] as const) {
    const path = `/v1/checks/${type.toLowerCase()}`
    const schema = SCHEMAS[type]

    app.post(path, async (request, reply) => {
      parseOr400(autoAssignAlertsQuerySchema, request.query, 'query')
      const data = parseOr400(schema, request.body, 'payload')
      checkIncidentService(request.accountId, data)
      return sendJson(reply, 201, create(request.accountId, type, data))
    })

    app.put<{ Params: { id: string } }>(`${path}/:id`, async (request, reply) => {
      const row = byId.get(request.params.id, request.accountId) as { seq: number; check_type: string; body: string } | undefined
      if (!row || row.check_type !== type) throw notFound('Check')
      parseOr400(autoAssignAlertsQuerySchema, request.query, 'query')
      const data = parseOr400(schema, request.body, 'payload')
      checkIncidentService(request.accountId, data)
      const previous = JSON.parse(row.body) as { created_at: string }
      const body = JSON.stringify({ id: request.params.id, ...data, created_at: previous.created_at, updated_at: now() })
      replace(row.seq, request.accountId, body, data.tags)
      return sendJson(reply, 200, body)
    })
  }

  app.delete<{ Params: { id: string } }>('/v1/checks/:id', async (request, reply) => {
    if (remove.run(request.params.id, request.accountId).changes === 0) throw notFound('Check')
    changed()
    return reply.code(204).send()
  })
}
