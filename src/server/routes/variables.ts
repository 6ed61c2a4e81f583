import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { pageQuerySchema, variableKeySchema, variableSchema, variableUpdateSchema } from '../../schema/index.js'
import { badRequest, conflict, notFound, parseOr400 } from '../errors.js'
import { UniqueViolation, type Store, type VariableRecord } from '../store/index.js'
import { sendPaged } from './util.js'

/** A variable as every read answers it: a secret's value is always "". */
function present(record: VariableRecord) {
  return { ...record, value: record.secret ? '' : record.value }
}

const keyParams = z.object({ key: variableKeySchema })

/*
 * Account variables are not limited in number: the spec's "at most 50" is about an ICMP
 * check's own environmentVariables, which the check schema enforces.
 */
export function variableRoutes(app: FastifyInstance, store: Store): void {
  app.get('/v1/variables', async (request, reply) => {
    const { limit, page } = parseOr400(pageQuerySchema, request.query, 'query')
    return sendPaged(
      request,
      reply,
      { limit, offset: (page - 1) * limit },
      {
        what: 'variable',
        byPage: (paging) => store.variables.list(request.accountId, paging),
        byKeyset: (after, n) => store.variables.listAfter(request.accountId, after, n),
        keyOf: (v) => v.key,
        present: (items) => items.map(present),
      },
    )
  })

  app.post('/v1/variables', async (request, reply) => {
    const data = parseOr400(variableSchema, request.body, 'payload')
    try {
      return reply.code(201).send(present(await store.variables.create(request.accountId, data)))
    } catch (error) {
      if (error instanceof UniqueViolation) throw conflict(`Variable with key ${data.key} already exists`)
      throw error
    }
  })

  app.get<{ Params: { key: string } }>('/v1/variables/:key', async (request) => {
    const variable = await store.variables.get(request.accountId, request.params.key)
    if (!variable) throw notFound('Variable')
    return present(variable)
  })

  app.put<{ Params: { key: string } }>('/v1/variables/:key', async (request) => {
    const { key } = parseOr400(keyParams, request.params, 'params')
    const updated = await store.transaction(async (tx) => {
      const variable = await tx.variables.get(request.accountId, key)
      if (!variable) throw notFound('Variable')
      const data = parseOr400(variableUpdateSchema, request.body, 'payload')
      const issues = []
      if (data.key !== undefined && data.key !== key) issues.push({ path: 'key', message: `cannot be changed (the variable's key is ${key})` })
      if (variable.secret && !data.secret) issues.push({ path: 'secret', message: 'cannot go back to false once a variable is secret' })
      if (issues.length > 0) throw badRequest('payload', issues)
      return tx.variables.update(request.accountId, key, { value: data.value, locked: data.locked, secret: data.secret })
    })
    if (!updated) throw notFound('Variable')
    return present(updated)
  })

  app.delete<{ Params: { key: string } }>('/v1/variables/:key', async (request, reply) => {
    if (!(await store.variables.delete(request.accountId, request.params.key))) throw notFound('Variable')
    return reply.code(204).send()
  })
}
