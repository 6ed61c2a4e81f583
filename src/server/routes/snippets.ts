import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { snippetSchema } from '../../schema/index.js'
import { notFound, parseOr400 } from '../errors.js'
import type { SnippetRecord, Store } from '../store/index.js'
import { optionalPage, sendPaged } from './util.js'

/** The reference types the path id as a positive integer; anything else is a 400 naming `id`. */
const idParams = z.object({
  id: z
    .string()
    .superRefine((id, ctx) => {
      if (!/^[0-9]+$/.test(id) || /^0+$/.test(id)) ctx.addIssue({ code: 'custom', message: 'must be a positive integer' })
      else if (Number(id) > Number.MAX_SAFE_INTEGER)
        ctx.addIssue({ code: 'custom', message: `is out of range: snippet ids go up to ${Number.MAX_SAFE_INTEGER}` })
    })
    .transform(Number),
})

/** A snippet as the reference's `Snippet` answers it. */
function present(record: SnippetRecord) {
  return { id: record.id, name: record.snippet.name, script: record.snippet.script, created_at: record.created_at, updated_at: record.updated_at }
}

/** GET/POST /v1/snippets, GET/PUT/DELETE /v1/snippets/{id}: the account's snippets (another account's answer 404). */
export function snippetRoutes(app: FastifyInstance, store: Store): void {
  app.get('/v1/snippets', async (request, reply) => {
    return sendPaged(request, reply, optionalPage(request.query), {
      what: 'snippet',
      byPage: (paging) => store.snippets.list(request.accountId, paging),
      byKeyset: (after, n) => store.snippets.listAfter(request.accountId, after, n),
      keyOf: (s) => s.id,
      present: (items) => items.map(present),
    })
  })

  app.post('/v1/snippets', async (request, reply) => {
    const data = parseOr400(snippetSchema, request.body, 'payload')
    return reply.code(201).send(present(await store.snippets.create(request.accountId, data)))
  })

  app.get('/v1/snippets/:id', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    const snippet = await store.snippets.get(request.accountId, id)
    if (!snippet) throw notFound('Snippet')
    return present(snippet)
  })

  app.put('/v1/snippets/:id', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    if (!(await store.snippets.get(request.accountId, id))) throw notFound('Snippet')
    const data = parseOr400(snippetSchema, request.body, 'payload')
    const snippet = await store.snippets.update(request.accountId, id, data)
    if (!snippet) throw notFound('Snippet')
    return present(snippet)
  })

  app.delete('/v1/snippets/:id', async (request, reply) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    if (!(await store.snippets.delete(request.accountId, id))) throw notFound('Snippet')
    return reply.code(204).send()
  })
}
