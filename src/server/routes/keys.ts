import type { FastifyInstance } from 'fastify'
import { keyCreateSchema } from '../../schema/index.js'
import { notFound, parseOr400 } from '../errors.js'
import { generateKey, presentKey } from '../keys.js'
import type { Store } from '../store/index.js'

/*
 * The account's keys, for admin keys only (the role check is auth.ts's): list, create (the
 * answer carries the key, once) and revoke. The same as `monitors keys`, without access to the
 * database, and limited to the caller's account. docs/security.md.
 */
export function keyRoutes(app: FastifyInstance, store: Store): void {
  app.get('/v1/keys', async (request) => {
    return (await store.keys.list(request.accountId)).map(presentKey)
  })

  app.post('/v1/keys', async (request, reply) => {
    const data = parseOr400(keyCreateSchema, request.body, 'payload')
    const key = generateKey()
    const record = await store.keys.create(key, { accountId: request.accountId, role: data.role, name: data.name ?? null })
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({ ...presentKey(record), key })
  })

  app.delete<{ Params: { id: string } }>('/v1/keys/:id', async (request, reply) => {
    const revoked = await store.keys.revoke(request.params.id, request.accountId)
    if (!revoked) throw notFound('Key')
    return reply.code(204).send()
  })
}
