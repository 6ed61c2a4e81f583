import type { FastifyInstance } from 'fastify'
import { pageQuerySchema, variableKeySchema, variableSchema, variableUpdateSchema } from '../../schema/index.js'
import { type Db, now } from '../db.js'
import { badRequest, conflict, notFound, parseOr400 } from '../errors.js'
import { contentRange } from './util.js'
import { z } from 'zod'

interface VariableRow {
  key: string
  value: string
  locked: number
  secret: number
  created_at: string
  updated_at: string | null
}

/** A variable as every read answers it: a secret's value is always "". */
function present(row: VariableRow) {
  return {
    key: row.key,
    value: row.secret ? '' : row.value,
    locked: row.locked === 1,
    secret: row.secret === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

const keyParams = z.object({ key: variableKeySchema })

/*
 * Account variables are not limited in number: the spec's "at most 50" is about an ICMP
 * check's own environmentVariables, which the check schema enforces.
 */
export function variableRoutes(app: FastifyInstance, db: Db): void {
  const columns = 'key, value, locked, secret, created_at, updated_at'
  const list = db.prepare(`SELECT ${columns} FROM variables WHERE account_id = ? ORDER BY seq LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) FROM variables WHERE account_id = ?`).pluck()
  const byKey = db.prepare(`SELECT ${columns} FROM variables WHERE account_id = ? AND key = ?`)
  const insert = db.prepare(`INSERT INTO variables (account_id, key, value, locked, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, NULL)`)
  const update = db.prepare(`UPDATE variables SET value = ?, locked = ?, secret = ?, updated_at = ? WHERE account_id = ? AND key = ?`)
  const remove = db.prepare(`DELETE FROM variables WHERE account_id = ? AND key = ?`)

  app.get('/v1/variables', async (request, reply) => {
    const { limit, page } = parseOr400(pageQuerySchema, request.query, 'query')
    const offset = (page - 1) * limit
    const rows = list.all(request.accountId, limit, offset) as VariableRow[]
    reply.header('content-range', contentRange(offset, rows.length, count.get(request.accountId) as number))
    return rows.map(present)
  })

  app.post('/v1/variables', async (request, reply) => {
    const data = parseOr400(variableSchema, request.body, 'payload')
    const created = db.transaction(() => {
      if (byKey.get(request.accountId, data.key)) return undefined
      insert.run(request.accountId, data.key, data.value, data.locked ? 1 : 0, data.secret ? 1 : 0, now())
      return byKey.get(request.accountId, data.key) as VariableRow
    })()
    if (!created) throw conflict(`Variable with key ${data.key} already exists`)
    return reply.code(201).send(present(created))
  })

  app.get<{ Params: { key: string } }>('/v1/variables/:key', async (request) => {
    const row = byKey.get(request.accountId, request.params.key) as VariableRow | undefined
    if (!row) throw notFound('Variable')
    return present(row)
  })

  app.put<{ Params: { key: string } }>('/v1/variables/:key', async (request) => {
    const { key } = parseOr400(keyParams, request.params, 'params')
    const row = byKey.get(request.accountId, key) as VariableRow | undefined
    if (!row) throw notFound('Variable')
    const data = parseOr400(variableUpdateSchema, request.body, 'payload')
    const issues = []
    if (data.key !== undefined && data.key !== key) issues.push({ path: 'key', message: `cannot be changed (the variable's key is ${key})` })
    if (row.secret === 1 && !data.secret) issues.push({ path: 'secret', message: 'cannot go back to false once a variable is secret' })
    if (issues.length > 0) throw badRequest('payload', issues)
    update.run(data.value, data.locked ? 1 : 0, data.secret ? 1 : 0, now(), request.accountId, key)
    return present(byKey.get(request.accountId, key) as VariableRow)
  })

  app.delete<{ Params: { key: string } }>('/v1/variables/:key', async (request, reply) => {
    if (remove.run(request.accountId, request.params.key).changes === 0) throw notFound('Variable')
    return reply.code(204).send()
  })
}
