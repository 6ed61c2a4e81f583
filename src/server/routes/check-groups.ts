import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { applyGroup, autoAssignAlertsQuerySchema, blankCheckSecrets, blankGroupSecrets, checkGroupSchema, type CheckGroup } from '../../schema/index.js'
import { badRequest, conflict, notFound, parseOr400 } from '../errors.js'
import { parseWithReferences, serviceReferences } from './references.js'
import { eachCheck, type CheckGroupRecord, type CheckStatusRecord, type KeysetPage, type Repositories, type Store } from '../store/index.js'
import { optionalPage, sendPaged } from './util.js'

/*
 * Check groups (reference: "Check groups v1", and the v2 paths it has: create, update and the
 * checks with group settings applied). A group is the account's: another account's answers 404
 * as a missing one. A check joins by its own `groupId`; the group's `checks` are read only. A
 * group that still has checks cannot be deleted (409, as the reference): move or delete them.
 */

const positiveId = (name: string) =>
  z
    .string()
    .superRefine((id, ctx) => {
      if (!/^[0-9]+$/.test(id) || /^0+$/.test(id)) ctx.addIssue({ code: 'custom', message: 'must be a positive integer' })
      else if (Number(id) > Number.MAX_SAFE_INTEGER)
        ctx.addIssue({ code: 'custom', message: `is out of range: ${name} ids go up to ${Number.MAX_SAFE_INTEGER}` })
    })
    .transform(Number)

const idParams = z.object({ id: positiveId('check group') })
const checkParams = z.object({ groupId: positiveId('check group'), checkId: z.string().min(1).max(200) })
const listQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).optional(),
    page: z.coerce.number().int().min(1).optional(),
    tag: z.union([z.string(), z.array(z.string())]).optional(),
    name: z.string().optional(),
  })
  .passthrough()

type CheckJson = Record<string, unknown> & { id: string; groupId?: unknown; groupOrder?: unknown; name?: unknown }

/** Every check of the account, as stored, read by keyset (the group's members are found by their groupId). */
export async function accountChecks(store: Pick<Repositories, 'checks'>, account: string): Promise<CheckJson[]> {
  const out: CheckJson[] = []
  for await (const check of eachCheck<CheckJson>(store.checks, account)) out.push(check)
  return out
}

/** The keyset page of a list held whole (a group's checks) after the item `after` names: null when the list has no such item. */
function keysetOfList<T>(items: T[], after: string, limit: number | undefined, keyOf: (item: T) => string): KeysetPage<T> | null {
  const at = items.findIndex((item) => keyOf(item) === after)
  if (at < 0) return null
  const rest = items.slice(at + 1)
  return { items: limit === undefined ? rest : rest.slice(0, limit), more: limit !== undefined && rest.length > limit }
}

/** The checks of a group, by groupOrder (checks without one last), then name. */
export async function groupChecks(store: Pick<Repositories, 'checks'>, account: string, groupId: number): Promise<CheckJson[]> {
  const order = (c: CheckJson) => (typeof c.groupOrder === 'number' ? c.groupOrder : Number.POSITIVE_INFINITY)
  return (await accountChecks(store, account))
    .filter((c) => c.groupId === groupId)
    .sort((a, b) => order(a) - order(b) || String(a.name ?? '').localeCompare(String(b.name ?? '')))
}

function presentGroup(record: CheckGroupRecord, checks: string[]) {
  return { id: record.id, ...blankGroupSecrets(record.group), checks, created_at: record.created_at, updated_at: record.updated_at }
}

/** The check as it runs in its group (applyGroup), its secrets masked. */
function applied(check: CheckJson, group: CheckGroup): unknown {
  return blankCheckSecrets(applyGroup(check, group))
}

/** The channels a group subscribes to must be the account's: a 400 names the item otherwise. */
async function knownChannels(tx: Pick<Repositories, 'alertChannels'>, account: string, group: CheckGroup): Promise<void> {
  const ids = group.alertChannelSubscriptions.map((s) => s.alertChannelId)
  if (ids.length === 0) return
  const found = new Set((await tx.alertChannels.byIds(account, ids)).map((c) => c.id))
  const issues = group.alertChannelSubscriptions.flatMap((s, i) =>
    found.has(s.alertChannelId)
      ? []
      : [{ path: `alertChannelSubscriptions.${i}.alertChannelId`, message: `refers to an alert channel that does not exist (got ${s.alertChannelId})` }],
  )
  if (issues.length > 0) throw badRequest('payload', issues)
}

/** GET /v1/check-groups: by page number or keyset, optionally filtered by tag and name. */
async function listGroups(store: Store, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const query = parseOr400(listQuery, request.query, 'query')
  const tags = query.tag === undefined ? [] : Array.isArray(query.tag) ? query.tag : [query.tag]
  const filtered = tags.length > 0 || query.name !== undefined
  const account = request.accountId
  const present = async (items: CheckGroupRecord[]) => {
    const checks = items.length > 0 ? await accountChecks(store, account) : []
    return items.map((g) =>
      presentGroup(
        g,
        checks.filter((c) => c.groupId === g.id).map((c) => c.id),
      ),
    )
  }
  if (!filtered) {
    return sendPaged(request, reply, optionalPage(request.query), {
      what: 'check group',
      keyOf: (g) => g.id,
      present,
      byPage: (paging) => store.checkGroups.list(account, paging),
      byKeyset: (after, n) => store.checkGroups.listAfter(account, after, n),
    })
  }
  // filters are applied to the account's groups (few), in the list's order (by id)
  const matches = (g: CheckGroupRecord) =>
    (tags.length === 0 || g.group.tags.some((t) => tags.includes(t))) &&
    (query.name === undefined || g.group.name.toLowerCase().includes(query.name.toLowerCase()))
  const limit = query.limit ?? 100
  return sendPaged(
    request,
    reply,
    { limit, offset: ((query.page ?? 1) - 1) * limit },
    {
      what: 'check group',
      keyOf: (g) => g.id,
      present,
      byPage: async (paging) => {
        const shown = (await store.checkGroups.list(account, { offset: 0 })).items.filter(matches)
        return { items: shown.slice(paging.offset, paging.offset + limit), total: shown.length }
      },
      byKeyset: async (after, n) => {
        const page = await store.checkGroups.listAfter(account, after, undefined)
        if (!page) return null
        const shown = page.items.filter(matches)
        return { items: shown.slice(0, n), more: n !== undefined && shown.length > n }
      },
    },
  )
}

export function checkGroupRoutes(app: FastifyInstance, store: Store): void {
  app.get('/v1/check-groups', (request, reply) => listGroups(store, request, reply))

  for (const version of ['v1', 'v2']) {
    app.post(`/${version}/check-groups`, async (request, reply) => {
      // the reference's autoAssignAlerts, validated as on checks (docs/api.md: nothing is subscribed by itself)
      parseOr400(autoAssignAlertsQuerySchema, request.query, 'query')
      const record = await store.transaction(async (tx) => {
        const data = await parseWithReferences(tx, request.accountId, checkGroupSchema, request.body, serviceReferences.checkGroup)
        await knownChannels(tx, request.accountId, data)
        return tx.checkGroups.create(request.accountId, data)
      })
      return reply.code(201).send(presentGroup(record, []))
    })

    app.put(`/${version}/check-groups/:id`, async (request) => {
      const { id } = parseOr400(idParams, request.params, 'params')
      parseOr400(autoAssignAlertsQuerySchema, request.query, 'query')
      const record = await store.transaction(async (tx) => {
        if (!(await tx.checkGroups.get(request.accountId, id))) throw notFound('Check group')
        const data = await parseWithReferences(tx, request.accountId, checkGroupSchema, request.body, serviceReferences.checkGroup)
        await knownChannels(tx, request.accountId, data)
        return tx.checkGroups.update(request.accountId, id, data)
      })
      if (!record) throw notFound('Check group')
      return presentGroup(
        record,
        (await groupChecks(store, request.accountId, id)).map((c) => c.id),
      )
    })

    app.get(`/${version}/check-groups/:id/checks`, async (request, reply) => {
      const { id } = parseOr400(idParams, request.params, 'params')
      const group = await store.checkGroups.get(request.accountId, id)
      if (!group) throw notFound('Check group')
      const checks = await groupChecks(store, request.accountId, id)
      // the group's checks are read whole (by keyset) and ordered by groupOrder: `after` names one of them
      return sendPaged<CheckJson>(request, reply, optionalPage(request.query), {
        what: 'check of the group',
        keyOf: (c) => c.id,
        present: (items) => items.map((c) => applied(c, group.group)),
        byPage: async (paging) => ({
          items: checks.slice(paging.offset, paging.limit === undefined ? undefined : paging.offset + paging.limit),
          total: checks.length,
        }),
        byKeyset: async (after, n) => keysetOfList(checks, after, n, (c) => c.id),
      })
    })

    app.get(`/${version}/check-groups/:groupId/checks/:checkId`, async (request) => {
      const { groupId, checkId } = parseOr400(checkParams, request.params, 'params')
      const group = await store.checkGroups.get(request.accountId, groupId)
      if (!group) throw notFound('Check group')
      const check = await store.checks.get(request.accountId, checkId)
      const body = check && (JSON.parse(check.json) as CheckJson)
      if (!body || body.groupId !== groupId) throw notFound('Check')
      return applied(body, group.group)
    })
  }

  app.get('/v1/check-groups/:id', async (request) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    const group = await store.checkGroups.get(request.accountId, id)
    if (!group) throw notFound('Check group')
    return presentGroup(
      group,
      (await groupChecks(store, request.accountId, id)).map((c) => c.id),
    )
  })

  app.delete('/v1/check-groups/:id', async (request, reply) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    await store.transaction(async (tx) => {
      if (!(await tx.checkGroups.get(request.accountId, id))) throw notFound('Check group')
      const members = await groupChecks(tx, request.accountId, id)
      if (members.length > 0) {
        const names = members
          .slice(0, 5)
          .map((c) => JSON.stringify(c.name ?? c.id))
          .join(', ')
        throw conflict(
          `Check group ${id} still has ${members.length} check${members.length === 1 ? '' : 's'} (${names}${members.length > 5 ? ', …' : ''}): delete them or move them out of the group first`,
        )
      }
      await tx.checkGroups.delete(request.accountId, id)
    })
    return reply.code(204).send()
  })
}

/** The checks of a group with their own activated and their statuses (a group's badge and status). */
export async function groupMemberStatuses(
  store: Store,
  account: string,
  groupId: number,
): Promise<Array<{ checkId: string; activated: boolean; status: CheckStatusRecord | undefined }>> {
  const [members, statuses] = await Promise.all([groupChecks(store, account, groupId), store.checkStatuses.list(account)])
  const byCheck = new Map(statuses.map((s) => [s.checkId, s]))
  return members.map((c) => ({ checkId: c.id, activated: c.activated !== false, status: byCheck.get(c.id) }))
}
