import type { FastifyInstance } from 'fastify'
import {
  apiCheckSchema,
  applyGroup,
  blankCheckSecrets,
  autoAssignAlertsQuerySchema,
  checkListQuerySchema,
  checkQuerySchema,
  dnsCheckSchema,
  heartbeatCheckSchema,
  icmpCheckSchema,
  tcpCheckSchema,
  urlCheckSchema,
  browserCheckSchema,
  multiStepCheckSchema,
  playwrightCheckSchema,
  type HeartbeatCheck,
} from '../../schema/index.js'
import { CHECK_TYPE_TABLE, SERVICE_CHECK_TYPES, type ServiceCheckType } from '../../schema/check-types.js'
import { badRequest, notFound, parseOr400 } from '../errors.js'
import type { Store } from '../store/index.js'
import { serviceReferences, writeWithReferences } from './references.js'
import { contentRange, LIST_VERSION_HEADER, nextLink, sendJson, sendListPage } from './util.js'
import { packageVersion } from '../version.js'
import { createHeartbeatCheck, replaceHeartbeatCheck } from './heartbeats.js'
import type { Repositories } from '../store/index.js'
import { cycleFrom, dependsOnOf } from '../dependencies.js'

/*
 * A check is answered as stored: the validated body (the schema's output, defaults applied)
 * plus id, checkType, created_at and updated_at (null until the first update). Optional fields
 * the client did not send are omitted, never filled with null; a field sent as null stays null.
 */

/** The request body schema of each type (routes: POST /v1/checks/<route>, PUT /v1/checks/<route>/{id}, from the table). */
const SCHEMAS = {
  DNS: dnsCheckSchema,
  ICMP: icmpCheckSchema,
  API: apiCheckSchema,
  TCP: tcpCheckSchema,
  URL: urlCheckSchema,
  BROWSER: browserCheckSchema,
  MULTI_STEP: multiStepCheckSchema,
  PLAYWRIGHT: playwrightCheckSchema,
  HEARTBEAT: heartbeatCheckSchema,
} satisfies Record<ServiceCheckType, unknown>

/**
 * Answers of checks mask their secret values (see blankCheckSecrets: secret environment
 * variables, secret webhook headers and query parameters, Slack URLs, an API check's request
 * secrets); everything else is answered as stored.
 */
export function withoutSecrets(json: string | Buffer): string | Buffer {
  const text = json.toString()
  // most pages hold nothing to mask: answered as stored, without a parse
  if (!(text.includes('"secret":true') || text.includes('"basicAuth":{') || text.includes('"slack":['))) return json
  const blank = (check: unknown) => blankCheckSecrets(check)
  const parsed = JSON.parse(text) as unknown
  return JSON.stringify(Array.isArray(parsed) ? parsed.map(blank) : blank(parsed))
}

/**
 * A check's `dependsOn` as the account's checks allow it: every id a check of the account (not
 * the check itself), and no cycle through it (A depends on B, B on A). Read in the transaction
 * that writes, so that two writes cannot make a cycle between them (the account's checks are
 * read whole only when the body names some).
 */
async function checkDependencies(tx: Repositories, account: string, selfId: string | undefined, data: Record<string, unknown>): Promise<void> {
  const named = dependsOnOf(data)
  if (named.length === 0) return
  const edges = new Map<string, string[]>()
  const names = new Map<string, string>()
  for (const row of await tx.schedule.allChecks()) {
    if (row.account !== account) continue
    const body = JSON.parse(row.json) as { name?: string }
    edges.set(row.id, dependsOnOf(body))
    names.set(row.id, String(body.name ?? row.id))
  }
  const issues = named.flatMap((id, i) => {
    if (id === selfId) return [{ path: `dependsOn.${i}`, message: 'names the check itself: a check cannot depend on itself' }]
    return edges.has(id) ? [] : [{ path: `dependsOn.${i}`, message: `refers to a check that does not exist (got ${JSON.stringify(id)})` }]
  })
  if (issues.length > 0) throw badRequest('payload', issues)
  const self = selfId ?? '(this check)'
  edges.set(self, named)
  names.set(self, String(data.name))
  const cycle = cycleFrom(self, (id) => edges.get(id) ?? [])
  if (cycle) {
    const shown = cycle.map((id) => JSON.stringify(names.get(id) ?? id)).join(' → ')
    throw badRequest('payload', [
      {
        path: `dependsOn.${named.indexOf(cycle[1])}`,
        message: `makes a cycle of dependencies: ${shown}; a check cannot depend, directly or not, on a check that depends on it`,
      },
    ])
  }
}

/**
 * Checks as they run in their groups (`applyGroupSettings=true`): a check whose groupId names a
 * group of the account gets the group's settings (applyGroup, as GET /v1/check-groups/{id}/checks
 * answers them); the others as they are. Secrets masked either way.
 */
async function withGroupSettings(store: Store, account: string, checks: Array<Record<string, unknown>>): Promise<unknown[]> {
  const ids = [...new Set(checks.map((c) => c.groupId).filter((id): id is number => typeof id === 'number' && Number.isSafeInteger(id) && id > 0))]
  const groups = new Map((await Promise.all(ids.map((id) => store.checkGroups.get(account, id)))).flatMap((g) => (g ? [[g.id, g.group] as const] : [])))
  return checks.map((check) => blankCheckSecrets(applyGroup(check, typeof check.groupId === 'number' ? groups.get(check.groupId) : undefined)))
}

let ownVersion: string | undefined
/** This server's version, part of every list version it answers: another server's way of answering a list is another list. */
const serverVersion = () => (ownVersion ??= packageVersion())

export function checkRoutes(app: FastifyInstance, store: Store): void {
  app.get('/v1/checks', async (request, reply) => {
    const query = parseOr400(checkListQuerySchema, request.query, 'query')
    const tags = query.tag === undefined ? undefined : Array.isArray(query.tag) ? query.tag : [query.tag]
    const offset = query.after === undefined ? (query.page - 1) * query.limit : 0
    // read before the page (docs/api.md "Reading long lists"): the page is then as new as the version or newer;
    // none for a list by status, which moves with results, not writes
    const version = query.status === undefined ? await store.checks.listVersion(request.accountId) : undefined
    if (version !== undefined) reply.header(LIST_VERSION_HEADER, `${serverVersion()}.${version}`)
    const page = await store.checks.list(request.accountId, {
      checkType: query.checkType,
      tags,
      search: query.search?.toLowerCase(),
      status: query.status,
      apiUrl: query.apiCheckUrlFilterPattern?.toLowerCase(),
      limit: query.limit,
      offset,
      after: query.after,
    })
    if (!page)
      throw badRequest('query', [
        { path: 'after', message: `no check ${query.after} in this account (deleted while the list was read?): read the list again from its first page` },
      ])
    if (page.total !== undefined) reply.header('content-range', contentRange(offset, page.count, page.total))
    nextLink(request, reply, page.lastId, page.more)
    if (query.applyGroupSettings)
      return sendListPage(request, reply, JSON.stringify(await withGroupSettings(store, request.accountId, JSON.parse(page.json.toString()))))
    return sendListPage(request, reply, withoutSecrets(page.json), page as { etag?: string })
  })

  app.get<{ Params: { id: string } }>('/v1/checks/:id', async (request, reply) => {
    const { applyGroupSettings } = parseOr400(checkQuerySchema, request.query, 'query')
    const check = await store.checks.get(request.accountId, request.params.id)
    if (!check) throw notFound('Check')
    if (applyGroupSettings) return sendJson(reply, 200, JSON.stringify((await withGroupSettings(store, request.accountId, [JSON.parse(check.json)]))[0]))
    return sendJson(reply, 200, withoutSecrets(check.json))
  })

  for (const type of SERVICE_CHECK_TYPES) {
    const path = `/v1/checks/${CHECK_TYPE_TABLE[type].route}`
    const schema = SCHEMAS[type]

    app.post(path, async (request, reply) => {
      parseOr400(autoAssignAlertsQuerySchema, request.query, 'query')
      const check = await writeWithReferences(
        store,
        request.accountId,
        schema,
        request.body,
        serviceReferences.check,
        async (tx, data) => {
          await checkDependencies(tx, request.accountId, undefined, data)
          return type === 'HEARTBEAT' ? createHeartbeatCheck(tx, request, data as HeartbeatCheck) : tx.checks.create(request.accountId, type, data)
        },
        dependsOnOf(request.body).length > 0,
      )
      return sendJson(reply, 201, withoutSecrets(check.json))
    })

    app.put<{ Params: { id: string } }>(`${path}/:id`, async (request, reply) => {
      const existing = await store.checks.get(request.accountId, request.params.id)
      if (!existing || existing.checkType !== type) throw notFound('Check')
      parseOr400(autoAssignAlertsQuerySchema, request.query, 'query')
      // replace finds the check again in its own transaction: gone by now is a 404 too
      const check = await writeWithReferences(
        store,
        request.accountId,
        schema,
        request.body,
        serviceReferences.check,
        async (tx, data) => {
          await checkDependencies(tx, request.accountId, request.params.id, data)
          return type === 'HEARTBEAT'
            ? replaceHeartbeatCheck(tx, request, existing, data as HeartbeatCheck)
            : tx.checks.replace(request.accountId, request.params.id, type, data)
        },
        dependsOnOf(request.body).length > 0,
      )
      if (!check) throw notFound('Check')
      return sendJson(reply, 200, withoutSecrets(check.json))
    })
  }

  app.delete<{ Params: { id: string } }>('/v1/checks/:id', async (request, reply) => {
    if (!(await store.checks.delete(request.accountId, request.params.id))) throw notFound('Check')
    return reply.code(204).send()
  })
}
