import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { alertChannelSchema, alertChannelSubscriptionBodySchema, blankAlertChannelSecrets } from '../../schema/index.js'
import { badRequest, notFound, parseOr400 } from '../errors.js'
import { eachCheck, type AlertChannelRecord, type Repositories, type Store } from '../store/index.js'
import { optionalPage, sendPaged } from './util.js'

/*
 * Account-level alert channels (the reference's /v1/alert-channels): a channel is its type, its
 * configuration (checked by the type's schema; secrets answered masked) and which notifications
 * it gets. A check subscribes by its own `alertChannelSubscriptions` ({alertChannelId,
 * activated}); a channel's `subscriptions` are read from the account's checks, and
 * PUT …/subscriptions writes the check's list. docs/api.md says what was decided where the
 * reference is silent.
 */

/** The reference types the path id as a positive number; anything else is a 400 naming `id`. */
const idParams = z.object({
  id: z
    .string()
    .superRefine((id, ctx) => {
      if (!/^[0-9]+$/.test(id) || /^0+$/.test(id)) ctx.addIssue({ code: 'custom', message: 'must be a positive integer' })
      else if (Number(id) > Number.MAX_SAFE_INTEGER)
        ctx.addIssue({ code: 'custom', message: `is out of range: alert channel ids go up to ${Number.MAX_SAFE_INTEGER}` })
    })
    .transform(Number),
})

interface Subscription {
  checkId: string
  groupId: null
  activated: boolean
}

/** The subscriptions of every channel of the account, read from its checks (by channel id). */
async function subscriptionsOf(store: Pick<Repositories, 'checks'>, account: string): Promise<Map<number, Subscription[]>> {
  const out = new Map<number, Subscription[]>()
  for await (const check of eachCheck<{ id: string; alertChannelSubscriptions?: unknown }>(store.checks, account)) {
    if (!Array.isArray(check.alertChannelSubscriptions)) continue
    for (const s of check.alertChannelSubscriptions as Array<{ alertChannelId?: unknown; activated?: unknown }>) {
      if (typeof s?.alertChannelId !== 'number') continue
      const list = out.get(s.alertChannelId) ?? []
      if (!list.some((x) => x.checkId === check.id)) list.push({ checkId: check.id, groupId: null, activated: s.activated !== false })
      out.set(s.alertChannelId, list)
    }
  }
  return out
}

function present(record: AlertChannelRecord, subscriptions: Map<number, Subscription[]>) {
  const { type, config, ...settings } = record.channel
  return {
    id: record.id,
    type,
    config: blankAlertChannelSecrets(type, config),
    subscriptions: subscriptions.get(record.id) ?? [],
    ...settings,
    created_at: record.created_at,
    updated_at: record.updated_at,
  }
}

export function alertChannelRoutes(app: FastifyInstance, store: Store): void {
  app.get('/v1/alert-channels', async (request, reply) => {
    return sendPaged(request, reply, optionalPage(request.query), {
      what: 'alert channel',
      byPage: (paging) => store.alertChannels.list(request.accountId, paging),
      byKeyset: (after, n) => store.alertChannels.listAfter(request.accountId, after, n),
      keyOf: (c) => c.id,
      present: async (items) => {
        const subscriptions = items.length > 0 ? await subscriptionsOf(store, request.accountId) : new Map()
        return items.map((item) => present(item, subscriptions))
      },
    })
  })

  app.post('/v1/alert-channels', async (request, reply) => {
    const data = parseOr400(alertChannelSchema, request.body, 'payload')
    const record = await store.alertChannels.create(request.accountId, data)
    return reply.code(201).send(present(record, new Map()))
  })

  app.get('/v1/alert-channels/:id', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    const channel = await store.alertChannels.get(request.accountId, id)
    if (!channel) throw notFound('Alert channel')
    return present(channel, await subscriptionsOf(store, request.accountId))
  })

  app.put('/v1/alert-channels/:id', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    const channel = await store.transaction(async (tx) => {
      if (!(await tx.alertChannels.get(request.accountId, id))) throw notFound('Alert channel')
      const data = parseOr400(alertChannelSchema, request.body, 'payload')
      return tx.alertChannels.update(request.accountId, id, data)
    })
    if (!channel) throw notFound('Alert channel')
    return present(channel, await subscriptionsOf(store, request.accountId))
  })

  app.delete('/v1/alert-channels/:id', async (request, reply) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    if (!(await store.alertChannels.delete(request.accountId, id))) throw notFound('Alert channel')
    return reply.code(204).send()
  })

  /*
   * Subscribes one check to the channel (activated true or false) by writing the check's own
   * alertChannelSubscriptions: the item of this channel is replaced, or added at the end.
   */
  app.put('/v1/alert-channels/:id/subscriptions', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    return store.transaction(async (tx) => {
      if (!(await tx.alertChannels.get(request.accountId, id))) throw notFound('Alert channel')
      const body = parseOr400(alertChannelSubscriptionBodySchema, request.body, 'payload')
      const check = await tx.checks.get(request.accountId, body.checkId)
      if (!check) throw badRequest('payload', [{ path: 'checkId', message: `refers to a check that does not exist (got ${JSON.stringify(body.checkId)})` }])
      const { id: checkId, created_at: _created, updated_at: _updated, ...data } = JSON.parse(check.json) as Record<string, unknown> & { tags: string[] }
      const current = Array.isArray(data.alertChannelSubscriptions) ? (data.alertChannelSubscriptions as Array<{ alertChannelId?: unknown }>) : []
      const item = { alertChannelId: id, activated: body.activated }
      const next = current.some((s) => s?.alertChannelId === id) ? current.map((s) => (s?.alertChannelId === id ? item : s)) : [...current, item]
      await tx.checks.replace(request.accountId, String(checkId), check.checkType as never, { ...data, alertChannelSubscriptions: next })
      return { checkId: body.checkId, groupId: null, activated: body.activated }
    })
  })
}
