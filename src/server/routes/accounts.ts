import type { FastifyInstance } from 'fastify'
import { DEFAULT_RUNTIME_ID } from '../../schema/index.js'
import { notFound } from '../errors.js'
import { SELF_ROUTE } from '../keys.js'
import type { Store } from '../store/index.js'
import { packageVersion } from '../version.js'

/*
 * GET /v1/accounts/me: the reference's "Fetch current account details" (Account: id, name,
 * runtimeId), and, as this server's extension (docs/api.md), who the key is — its id, name,
 * prefix and role, never the key — and the server's version. Every role may ask it (keys.ts):
 * it is how `monitors whoami` shows the key's role and how the CLI refuses a write with a read
 * key before sending it. An account has no name of its own here: its id is its name.
 */
export function accountRoutes(app: FastifyInstance, store: Store): void {
  const version = packageVersion()
  app.get(SELF_ROUTE, async (request) => {
    // the dashboard's own calls carry no key hash: the key is found by its id
    const key = request.keyHash !== '' ? await store.keys.find(request.keyHash) : (await store.keys.list(request.accountId)).find((k) => k.id === request.keyId)
    if (!key) throw notFound('Key')
    return {
      id: request.accountId,
      name: request.accountId,
      runtimeId: DEFAULT_RUNTIME_ID,
      key: { id: key.id, name: key.name, prefix: key.prefix, role: request.role },
      server: { name: 'monitors', version },
    }
  })
}
