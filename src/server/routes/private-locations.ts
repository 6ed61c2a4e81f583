import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { privateLocationCreateSchema, privateLocationUpdateSchema } from '../../schema/index.js'
import { badRequest, conflict, HttpError, notFound, parseOr400 } from '../errors.js'
import type { RunServices } from '../scheduler/runs.js'
import type { KeyRecord, PrivateLocationLoad, PrivateLocationRecord, Store } from '../store/index.js'

/*
 * The reference's /v1/private-locations: named locations of an account that only its agents
 * serve (docs/agents.md, "Private locations"). Each has keys of its own (POST …/keys): an agent
 * key bound to the location, which claims that location's runs only. A location named by a check
 * or a group is not deleted (409 naming them).
 */

const idParams = z.object({ id: z.string().min(1).max(200) })
const pageQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).optional(), page: z.coerce.number().int().min(1).optional() })
const keyParams = z.object({ id: z.string().min(1).max(200), keyId: z.string().min(1).max(200) })

/** A key of a location as the reference shows it: masked, except once in the answer to its creation. */
function presentLocationKey(key: KeyRecord) {
  return { id: key.id, maskedKey: `...${key.keyEnd}`, created_at: key.created_at, updated_at: null }
}

/** What the location's agents do now (the reference's agentCount and lastSeen, and this server's queue). */
export function presentLocation(record: PrivateLocationRecord, keys: KeyRecord[], load?: PrivateLocationLoad) {
  return {
    id: record.id,
    ...record.location,
    created_at: record.created_at,
    updated_at: record.updated_at,
    keys: keys.map(presentLocationKey),
    lastSeen: record.lastSeenAt === null ? null : new Date(record.lastSeenAt).toISOString(),
    agentCount: load?.agents ?? 0,
    queueSize: load?.waiting ?? 0,
    oldestScheduledCheckRun: load?.oldestDueAt == null ? null : new Date(load.oldestDueAt).toISOString(),
  }
}

/** A key for an agent of a location: `pl_` and 48 random characters, as the reference's rawKey. */
const locationKey = () => `pl_${randomBytes(24).toString('hex')}`

export function privateLocationRoutes(app: FastifyInstance, store: Store, services: RunServices): void {
  const keysOf = async (account: string) => {
    const byLocation = new Map<string, KeyRecord[]>()
    for (const key of await store.keys.list(account)) {
      if (key.locationId) byLocation.set(key.locationId, [...(byLocation.get(key.locationId) ?? []), key])
    }
    return byLocation
  }
  const loadOf = async (account: string) => new Map((await store.privateLocations.load(services.now(), account)).map((l) => [l.slugName, l]))
  // a location is named by its id or by its slug (what checks name it by, and what `monitors apply` keeps)
  const found = async (account: string, id: string, tx: Pick<Store, 'privateLocations'> = store) => {
    const record = (await tx.privateLocations.get(account, id)) ?? (await tx.privateLocations.bySlug(account, id))
    if (!record) throw notFound('Private location')
    return record
  }

  app.get('/v1/private-locations', async (request) => {
    const { limit, page } = parseOr400(pageQuery, request.query, 'query')
    const [records, keys, load] = await Promise.all([store.privateLocations.list(request.accountId), keysOf(request.accountId), loadOf(request.accountId)])
    const from = limit === undefined ? 0 : ((page ?? 1) - 1) * limit
    const shown = records.slice(from, limit === undefined ? undefined : from + limit)
    return shown.map((r) => presentLocation(r, keys.get(r.id) ?? [], load.get(r.location.slugName)))
  })

  app.get('/v1/private-locations/:id', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    const record = await found(request.accountId, id)
    const [keys, load] = await Promise.all([keysOf(request.accountId), loadOf(request.accountId)])
    return presentLocation(record, keys.get(record.id) ?? [], load.get(record.location.slugName))
  })

  app.post('/v1/private-locations', async (request, reply) => {
    const data = parseOr400(privateLocationCreateSchema, request.body, 'payload')
    const record = await store.privateLocations.create(request.accountId, { ...data, proxyUrl: data.proxyUrl ?? null })
    if (record === 'exists') throw conflict(`A private location with the slugName ${JSON.stringify(data.slugName)} exists already in the account`)
    return reply.code(201).send(presentLocation(record, []))
  })

  app.put('/v1/private-locations/:id', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    const data = parseOr400(privateLocationUpdateSchema, request.body, 'payload')
    const before = await found(request.accountId, id)
    if (data.slugName !== undefined && data.slugName !== before.location.slugName) {
      throw badRequest('payload', [
        {
          path: 'slugName',
          message: `cannot change: a private location keeps its slug (it is ${JSON.stringify(before.location.slugName)}); create another location for another slug`,
        },
      ])
    }
    const record = await store.privateLocations.update(request.accountId, before.id, { name: data.name, icon: data.icon, proxyUrl: data.proxyUrl ?? null })
    if (!record) throw notFound('Private location')
    return presentLocation(record, (await keysOf(request.accountId)).get(record.id) ?? [])
  })

  app.delete('/v1/private-locations/:id', async (request, reply) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    await store.transaction(async (tx) => {
      const record = await found(request.accountId, id, tx)
      const used = await tx.privateLocations.usedBy(request.accountId, record.location.slugName)
      if (used.checks.length > 0 || used.groups.length > 0) throw conflict(usedMessage(record.location.slugName, used))
      await tx.privateLocations.delete(request.accountId, record.id)
    })
    return reply.code(204).send()
  })

  app.post('/v1/private-locations/:id/keys', async (request, reply) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    // a key that claims runs (and reads their secrets) is made by an admin key, as on /v1/keys
    if (request.role !== 'admin') throw new HttpError(403, 'Only an admin key makes the keys of a private location (they are agent keys)')
    const location = await found(request.accountId, id)
    const rawKey = locationKey()
    const key = await store.keys.create(rawKey, {
      accountId: request.accountId,
      role: 'agent',
      name: `private location ${location.location.slugName}`,
      locationId: location.id,
    })
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({ ...presentLocationKey(key), rawKey })
  })

  app.delete('/v1/private-locations/:id/keys/:keyId', async (request, reply) => {
    const { id, keyId } = parseOr400(keyParams, request.params, 'params')
    const location = await found(request.accountId, id)
    const key = (await store.keys.list(request.accountId)).find((k) => k.id === keyId && k.locationId === location.id)
    if (!key || !(await store.keys.revoke(keyId, request.accountId))) throw notFound('Key of the private location')
    return reply.code(204).send()
  })
}

function usedMessage(slug: string, used: { checks: string[]; groups: number[] }): string {
  const named = [
    ...(used.checks.length > 0 ? [`checks ${used.checks.join(', ')}`] : []),
    ...(used.groups.length > 0 ? [`check groups ${used.groups.join(', ')}`] : []),
  ]
  return `The private location ${JSON.stringify(slug)} is in the privateLocations of ${named.join(' and ')}: remove it there first`
}
