import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { pageQuerySchema } from '../../schema/index.js'
import { z } from 'zod'
import { notFound, parseOr400 } from '../errors.js'
import { BADGE_STYLES, BADGE_THEMES, groupBadgeState, renderBadge } from '../results/badge.js'
import { groupMemberStatuses } from './check-groups.js'
import { eachCheck, type CheckStatusRecord, type ErrorGroupRecord, type Store } from '../store/index.js'
import { contentRange, wantsPage } from './util.js'
import { dependsOnOf, failingDependencies, type DependencyRef } from '../dependencies.js'

/*
 * Reads served from recorded results: check statuses, error groups (and their archive flags)
 * and status badges. A check that never ran has no status: it is left out of the list, and
 * its own status answers 404 `Check status not found` (no invented flags or numbers).
 */

/** Body of PATCH /v1/error-groups/{id}: both flags optional, nothing else. */
const errorGroupPatchSchema = z
  .object({
    archiveForEver: z.boolean().optional(),
    archivedUntilNextEvent: z.boolean().optional(),
  })
  .strict()

/** Query of the badge (the keyed routes take these alone, src/server/query-parameters.ts; the public badge ignores others: cache busters). */
export const badgeQuerySchema = z.object({
  style: z.enum(BADGE_STYLES).default('flat'),
  theme: z.enum(BADGE_THEMES).default('default'),
  responseTime: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
})

/**
 * A status as answered; `alertsSuppressedBy` (an extension, docs/api.md) only while the check
 * fails or is degraded and checks it depends on are failing: its alerts are held back.
 */
function presentStatus(record: CheckStatusRecord, suppressedBy: DependencyRef[] = []) {
  return {
    name: record.name,
    checkId: record.checkId,
    hasFailures: record.hasFailures,
    hasErrors: record.hasErrors,
    isDegraded: record.isDegraded,
    longestRun: record.longestRun,
    shortestRun: record.shortestRun,
    lastRunLocation: record.lastRunLocation,
    lastCheckRunId: record.lastCheckRunId,
    sslDaysRemaining: record.sslDaysRemaining,
    created_at: record.created_at,
    updated_at: record.updated_at,
    ...(suppressedBy.length > 0 ? { alertsSuppressedBy: suppressedBy } : {}),
  }
}

const troubled = (s: CheckStatusRecord) => s.hasFailures || s.hasErrors || s.isDegraded

/** Statuses of the account (all of them, or a page), each with the failing dependencies that hold its alerts back. */
async function statusesWithSuppression(store: Store, account: string, statuses: CheckStatusRecord[]) {
  // nothing failing: no check body to read
  if (!statuses.some(troubled)) return statuses.map((s) => presentStatus(s))
  const byId = new Map(statuses.map((s) => [s.checkId, s]))
  // a dependency off the page is read by itself
  const statusOf = async (id: string) => byId.get(id) ?? store.checkStatuses.get(account, id)
  const bodies = new Map<string, { id: string; dependsOn?: unknown }>()
  for await (const check of eachCheck<{ id: string; dependsOn?: unknown }>(store.checks, account)) bodies.set(check.id, check)
  const out = []
  for (const status of statuses) {
    const body = bodies.get(status.checkId)
    const by = troubled(status) && dependsOnOf(body).length > 0 ? await failingDependencies(body, statusOf) : []
    out.push(presentStatus(status, by))
  }
  return out
}

function presentErrorGroup(record: ErrorGroupRecord) {
  return {
    id: record.id,
    checkId: record.checkId,
    errorHash: record.errorHash,
    rawErrorMessage: record.rawErrorMessage,
    cleanedErrorMessage: record.cleanedErrorMessage,
    firstSeen: record.firstSeen,
    lastSeen: record.lastSeen,
    archivedUntilNextEvent: record.archivedUntilNextEvent,
    archiveForEver: record.archiveForEver,
  }
}

export function resultRoutes(app: FastifyInstance, store: Store): void {
  async function checkOf(account: string, id: string) {
    const check = await store.checks.get(account, id)
    if (!check) throw notFound('Check')
    return JSON.parse(check.json) as { name: string; activated?: boolean; dependsOn?: string[] }
  }

  // the spec's list is whole; `limit` and `page` (as the engine sends them to every list) ask for a page
  app.get('/v1/check-statuses', async (request, reply) => {
    if (!wantsPage(request.query)) return statusesWithSuppression(store, request.accountId, await store.checkStatuses.list(request.accountId))
    const { limit, page } = parseOr400(pageQuerySchema, request.query, 'query')
    const offset = (page - 1) * limit
    const found = await store.checkStatuses.page(request.accountId, { limit, offset })
    reply.header('content-range', contentRange(offset, found.items.length, found.total))
    return statusesWithSuppression(store, request.accountId, found.items)
  })

  app.get<{ Params: { checkId: string } }>('/v1/check-statuses/:checkId', async (request) => {
    const check = await checkOf(request.accountId, request.params.checkId)
    const status = await store.checkStatuses.get(request.accountId, request.params.checkId)
    if (!status) throw notFound('Check status')
    const by = troubled(status) ? await failingDependencies(check, (id) => store.checkStatuses.get(request.accountId, id)) : []
    return presentStatus(status, by)
  })

  // paged as the reference pages them (limit 1–100, default 10; page from 1), oldest first
  const errorGroupPage = async (request: FastifyRequest, reply: FastifyReply, checkId?: string) => {
    const { limit, page } = parseOr400(pageQuerySchema, request.query, 'query')
    if (checkId !== undefined) await checkOf(request.accountId, checkId)
    const offset = (page - 1) * limit
    const groups = await store.errorGroups.list(request.accountId, { checkId, limit, offset })
    reply.header('content-range', contentRange(offset, groups.items.length, groups.total))
    return groups.items.map(presentErrorGroup)
  }

  app.get('/v1/error-groups', async (request, reply) => errorGroupPage(request, reply))

  app.get<{ Params: { checkId: string } }>('/v1/error-groups/checks/:checkId', async (request, reply) => errorGroupPage(request, reply, request.params.checkId))

  app.get<{ Params: { id: string } }>('/v1/error-groups/:id', async (request) => {
    const group = await store.errorGroups.get(request.accountId, request.params.id)
    if (!group) throw notFound('Error group')
    return presentErrorGroup(group)
  })

  app.patch<{ Params: { id: string } }>('/v1/error-groups/:id', async (request) => {
    const flags = parseOr400(errorGroupPatchSchema, request.body, 'payload')
    const group = await store.errorGroups.update(request.accountId, request.params.id, flags)
    if (!group) throw notFound('Error group')
    return presentErrorGroup(group)
  })

  app.get<{ Params: { checkId: string } }>('/v1/badges/checks/:checkId', async (request, reply) => {
    const query = parseOr400(badgeQuerySchema, request.query, 'query')
    const check = await checkOf(request.accountId, request.params.checkId)
    const status = await store.checkStatuses.get(request.accountId, request.params.checkId)
    const svg = renderBadge({
      name: check.name,
      activated: check.activated !== false,
      status,
      style: query.style,
      theme: query.theme,
      responseTime: query.responseTime,
    })
    return reply.code(200).type('image/svg+xml').header('cache-control', 'no-cache').send(svg)
  })

  // a group's badge (groupBadge)
  app.get<{ Params: { groupId: string } }>('/v1/badges/groups/:groupId', async (request, reply) => {
    const query = parseOr400(badgeQuerySchema, request.query, 'query')
    const { groupId } = request.params
    const group = /^[1-9][0-9]{0,15}$/.test(groupId) ? await store.checkGroups.get(request.accountId, Number(groupId)) : undefined
    if (!group) throw notFound('Check group')
    const svg = await groupBadge(store, request.accountId, group, query)
    return reply.code(200).type('image/svg+xml').header('cache-control', 'no-cache').send(svg)
  })
}

/** A group's badge: its checks' worst state (groupBadgeState); the response time is the slowest newest run of its checks. */
export async function groupBadge(
  store: Store,
  account: string,
  group: { id: number; group: { name: string; activated: boolean } },
  query: z.output<typeof badgeQuerySchema>,
): Promise<string> {
  const members = await groupMemberStatuses(store, account, group.id)
  const state = groupBadgeState(group.group.activated, members)
  const times = members.map((m) => m.status?.lastResponseTime).filter((t): t is number => typeof t === 'number')
  const slowest = members.find((m) => m.status?.lastResponseTime === Math.max(...times))?.status
  return renderBadge({
    name: group.group.name,
    activated: group.group.activated,
    status: slowest,
    state,
    style: query.style,
    theme: query.theme,
    responseTime: query.responseTime,
  })
}
