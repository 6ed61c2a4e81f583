import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { applyGroup, blankCheckSecrets, blankGroupSecrets, checkGroupSchema, type CheckGroup } from '../../schema/index.js'
import { badRequest, conflict, notFound, parseOr400 } from '../errors.js'
import type { CheckGroupRecord, CheckStatusRecord, Repositories, Store } from '../store/index.js'
import { contentRange, optionalPage } from './util.js'

/*
 * Check groups (reference: "Check groups v1", and the v2 paths it has: create, update and the
 * checks with group settings applied). A group is the account's: another account's answers 404
 * as a missing one. A check joins by its own `groupId`; the group's `checks` are read only. A
 * group that still has checks cannot be deleted (409, as the reference): move or delete them.
 */

const positiveId = (name: string) => z.string()
  .superRefine((id, ctx) => {
    if (!/^[0-9]+$/.test(id) || /^0+$/.test(id)) ctx.addIssue({ code: 'custom', message: 'must be a positive integer' })
    else if (Number(id) > Number.MAX_SAFE_INTEGER) ctx.addIssue({ code: 'custom', message: `is out of range: ${name} ids go up to ${Number.MAX_SAFE_INTEGER}` })
  })
  .transform(Number)

const idParams = z.object({ id: positiveId('check group') })
const checkParams = z.object({ groupId: positiveId('check group'), checkId: z.string().min(1).max(200) })
const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  page: z.coerce.number().int().min(1).optional(),
  tag: z.union([z.string(), z.array(z.string())]).optional(),
  name: z.string().optional(),
}).passthrough()

type CheckJson = Record<string, unknown> & { id: string; groupId?: unknown; groupOrder?: unknown; name?: unknown }

/** Every check of the account, as stored (the group's members are found by their groupId). */
export async function accountChecks(store: Pick<Repositories, 'checks'>, account: string): Promise<CheckJson[]> {
  const PAGE = 1000
  const out: CheckJson[] = []
  for (let offset = 0; ; offset += PAGE) {
    // without `after` a page is always answered
    const page = await store.checks.list(account, { limit: PAGE, offset })
    if (!page) break
    out.push(...(JSON.parse(page.json.toString()) as CheckJson[]))
    if (page.count < PAGE) break
  }
  return out
}

/** The checks of a group, by groupOrder (checks without one last), then name. */
export async function groupChecks(store: Pick<Repositories, 'checks'>, account: string, groupId: number): Promise<CheckJson[]> {
  const order = (c: CheckJson) => (typeof c.groupOrder === 'number' ? c.groupOrder : Number.POSITIVE_INFINITY)
  return (await accountChecks(store, account))
    .filter((c) => c.groupId === groupId)
    .sort((a, b) => order(a) - order(b) || String(a.name ?? '').localeCompare(String(b.name ?? '')))
}

function present(record: CheckGroupRecord, checks: string[]) {
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
  const issues = group.alertChannelSubscriptions.flatMap((s, i) => (found.has(s.alertChannelId) ? []
    : [{ path: `alertChannelSubscriptions.${i}.alertChannelId`, message: `refers to an alert channel that does not exist (got ${s.alertChannelId})` }]))
  if (issues.length > 0) throw badRequest('payload', issues)
}

export function checkGroupRoutes(app: FastifyInstance, store: Store): void {
  app.get('/v1/check-groups', async (request, reply) => {
    const query = parseOr400(listQuery, request.query, 'query')
    const tags = query.tag === undefined ? [] : Array.isArray(query.tag) ? query.tag : [query.tag]
    const filtered = tags.length > 0 || query.name !== undefined
    const paging = filtered ? { offset: 0 } : optionalPage(request.query)
    const [{ items, total }, checks] = await Promise.all([store.checkGroups.list(request.accountId, paging), accountChecks(store, request.accountId)])
    let shown = items
    if (filtered) {
      shown = items.filter((g) => (tags.length === 0 || g.group.tags.some((t) => tags.includes(t)))
        && (query.name === undefined || g.group.name.toLowerCase().includes(query.name.toLowerCase())))
    }
    const members = (id: number) => checks.filter((c) => c.groupId === id).map((c) => c.id)
    if (filtered) {
      const limit = query.limit ?? 100
      const offset = ((query.page ?? 1) - 1) * limit
      reply.header('content-range', contentRange(offset, Math.min(limit, Math.max(0, shown.length - offset)), shown.length))
      return shown.slice(offset, offset + limit).map((g) => present(g, members(g.id)))
    }
    reply.header('content-range', contentRange(paging.offset, shown.length, total))
    return shown.map((g) => present(g, members(g.id)))
  })

  for (const version of ['v1', 'v2']) {
    app.post(`/${version}/check-groups`, async (request, reply) => {
      const data = parseOr400(checkGroupSchema, request.body, 'payload')
      const record = await store.transaction(async (tx) => {
        await knownChannels(tx, request.accountId, data)
        return tx.checkGroups.create(request.accountId, data)
      })
      return reply.code(201).send(present(record, []))
    })

    app.put(`/${version}/check-groups/:id`, async (request) => {
      const { id } = parseOr400(idParams, request.params, 'params')
      const record = await store.transaction(async (tx) => {
        if (!(await tx.checkGroups.get(request.accountId, id))) throw notFound('Check group')
        const data = parseOr400(checkGroupSchema, request.body, 'payload')
        await knownChannels(tx, request.accountId, data)
        return tx.checkGroups.update(request.accountId, id, data)
      })
      if (!record) throw notFound('Check group')
      return present(record, (await groupChecks(store, request.accountId, id)).map((c) => c.id))
    })

    app.get(`/${version}/check-groups/:id/checks`, async (request, reply) => {
      const { id } = parseOr400(idParams, request.params, 'params')
      const group = await store.checkGroups.get(request.accountId, id)
      if (!group) throw notFound('Check group')
      const checks = await groupChecks(store, request.accountId, id)
      const paging = optionalPage(request.query)
      const page = checks.slice(paging.offset, paging.limit === undefined ? undefined : paging.offset + paging.limit)
      reply.header('content-range', contentRange(paging.offset, page.length, checks.length))
      return page.map((c) => applied(c, group.group))
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
    return present(group, (await groupChecks(store, request.accountId, id)).map((c) => c.id))
  })

  app.delete('/v1/check-groups/:id', async (request, reply) => {
    const { id } = parseOr400(idParams, request.params, 'params')
    await store.transaction(async (tx) => {
      if (!(await tx.checkGroups.get(request.accountId, id))) throw notFound('Check group')
      const members = await groupChecks(tx, request.accountId, id)
      if (members.length > 0) {
        const names = members.slice(0, 5).map((c) => JSON.stringify(c.name ?? c.id)).join(', ')
        throw conflict(`Check group ${id} still has ${members.length} check${members.length === 1 ? '' : 's'} (${names}${members.length > 5 ? ', …' : ''}): delete them or move them out of the group first`)
      }
      await tx.checkGroups.delete(request.accountId, id)
    })
    return reply.code(204).send()
  })
}

/** The checks of a group with their own activated and their statuses (a group's badge and status). */
export async function groupMemberStatuses(store: Store, account: string, groupId: number): Promise<Array<{ checkId: string; activated: boolean; status: CheckStatusRecord | undefined }>> {
  const [members, statuses] = await Promise.all([groupChecks(store, account, groupId), store.checkStatuses.list(account)])
  const byCheck = new Map(statuses.map((s) => [s.checkId, s]))
  return members.map((c) => ({ checkId: c.id, activated: c.activated !== false, status: byCheck.get(c.id) }))
}
