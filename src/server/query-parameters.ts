import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ANALYTICS_ROUTES } from '../schema/index.js'
import { CHECK_TYPE_TABLE, SERVICE_CHECK_TYPES } from '../schema/check-types.js'
import { badRequest } from './errors.js'

/*
 * The query parameters of every API route (/v1 and /v2), in one table: a parameter a route does
 * not take is a 400 naming it, never ignored, so a client misspelling a filter (or sending one
 * this server does not implement) learns it instead of getting the wrong set. Each route's
 * handler validates the values; this table says which names exist. A route registered without
 * an entry here fails the server's start, and so does an entry no route has.
 *
 * `name[]` marks a parameter that may be repeated (`tag=a&tag=b`), also taken in the bracket
 * spelling (`tag[]=a&tag[]=b`) some clients send.
 */

const PAGED = ['limit', 'page'] as const
/** the lists also read by keyset (docs/api.md "Reading long lists") */
const KEYSET = [...PAGED, 'after'] as const
const BADGE = ['style', 'theme', 'responseTime'] as const
const ANALYTICS = ['from', 'to', 'quickRange', 'aggregationInterval', 'filterByStatus', 'groupBy', 'metrics', 'limit', 'page'] as const
const CHECK_WRITE = ['autoAssignAlerts'] as const

/** Routes `METHOD path` (fastify's path, `:param`) → the query parameters they take. */
function routeTable(): Map<string, readonly string[]> {
  const table: Record<string, readonly string[]> = {
    'GET /v1/checks': [...KEYSET, 'checkType', 'tag[]', 'search', 'status', 'apiCheckUrlFilterPattern', 'applyGroupSettings'],
    'GET /v1/checks/:id': ['applyGroupSettings'],
    'DELETE /v1/checks/:id': [],
    'GET /v1/checks/heartbeats/:checkId/availability': ['startTime', 'endTime'],
    'GET /v1/checks/heartbeats/:checkId/events': ['startTime', 'endTime', 'limit'],
    'GET /v1/checks/heartbeats/:checkId/events/:id': [],
    'GET /v1/check-statuses': PAGED,
    'GET /v1/check-statuses/:checkId': [],
    'POST /v1/check-sessions/trigger': [],
    'GET /v1/check-sessions/:id': [],
    'GET /v1/check-sessions/:id/completion': ['maxWaitSeconds'],
    'GET /v1/check-results/:checkId': [...PAGED, 'resultType', 'from', 'to', 'hasFailures', 'location', 'checkType'],
    'GET /v1/check-results/:checkId/:id': [],
    'GET /v1/check-results/:checkId/:id/assets': [],
    'GET /v1/check-results/:checkId/:id/assets/*': [],
    'GET /v1/error-groups': PAGED,
    'GET /v1/error-groups/checks/:checkId': PAGED,
    'GET /v1/error-groups/:id': [],
    'PATCH /v1/error-groups/:id': [],
    'GET /v1/badges/checks/:checkId': BADGE,
    'GET /v1/badges/groups/:groupId': BADGE,
    'GET /v1/badges/tokens': [],
    'GET /v1/analytics/metrics': ['checkType'],
    'GET /v1/alert-notifications': [...PAGED, 'checkId', 'from', 'to', 'alertChannelId', 'hasFailures'],
    'GET /v1/alert-deliveries': [...PAGED, 'checkId', 'notificationId'],
    'GET /v1/alert-deliveries/:id': [],
    'GET /v1/alert-channels': KEYSET,
    'POST /v1/alert-channels': [],
    'PUT /v1/alert-channels/:id/subscriptions': [],
    'GET /v1/check-groups': [...KEYSET, 'tag[]', 'name'],
    'GET /v1/check-groups/:id': [],
    'DELETE /v1/check-groups/:id': [],
    'GET /v1/variables': KEYSET,
    'POST /v1/variables': [],
    'GET /v1/status-pages': ['limit', 'nextId'],
    'POST /v1/status-pages': [],
    'GET /v1/status-pages/services': KEYSET,
    'POST /v1/status-pages/services': [],
    'GET /v1/maintenance-windows': KEYSET,
    'POST /v1/maintenance-windows': [],
    'GET /v1/snippets': KEYSET,
    'POST /v1/snippets': [],
    'GET /v1/incidents': KEYSET,
    'POST /v1/incidents': [],
    'POST /v1/incidents/:incidentId/updates': [],
    'GET /v1/accounts/me': [],
    'GET /v1/private-locations': PAGED,
    'POST /v1/private-locations': [],
    'GET /v1/private-locations/:id': [],
    'PUT /v1/private-locations/:id': [],
    'DELETE /v1/private-locations/:id': [],
    'POST /v1/private-locations/:id/keys': [],
    'DELETE /v1/private-locations/:id/keys/:keyId': [],
    'GET /v1/keys': [],
    'POST /v1/keys': [],
    'DELETE /v1/keys/:id': [],
    'GET /v1/runtimes': [],
    'GET /v1/runtimes/:id': [],
    'GET /v1/static-ipv6s.txt': [],
    'POST /v1/agent/claim': [],
    'POST /v1/agent/runs/:runId/artifacts': [],
    'PUT /v1/agent/runs/:runId/artifacts': ['index', 'name'],
    'POST /v1/agent/runs/:runId/result': [],
    'POST /v1/agent/runs/:runId/extend': [],
    'GET /v1/scheduler/skipped-runs': ['from', 'to', 'checkId'],
  }
  // one resource by id: read, replace, delete, no parameter
  for (const path of [
    '/v1/alert-channels/:id',
    '/v1/variables/:key',
    '/v1/status-pages/:statusPageId',
    '/v1/status-pages/services/:serviceId',
    '/v1/maintenance-windows/:id',
    '/v1/snippets/:id',
    '/v1/incidents/:id',
    '/v1/incidents/:incidentId/updates/:id',
  ]) {
    for (const method of ['GET', 'PUT', 'DELETE']) table[`${method} ${path}`] = []
  }
  for (const kind of ['checks/:checkId', 'groups/:groupId']) {
    for (const key of ['GET', 'POST', 'DELETE']) table[`${key} /v1/badges/${kind}/token`] = []
    table[`POST /v1/badges/${kind}/token/rotate`] = []
  }
  for (const version of ['v1', 'v2']) {
    table[`POST /${version}/check-groups`] = CHECK_WRITE
    table[`PUT /${version}/check-groups/:id`] = CHECK_WRITE
    table[`GET /${version}/check-groups/:id/checks`] = KEYSET
    table[`GET /${version}/check-groups/:groupId/checks/:checkId`] = []
  }
  for (const type of SERVICE_CHECK_TYPES) {
    table[`POST /v1/checks/${CHECK_TYPE_TABLE[type].route}`] = CHECK_WRITE
    table[`PUT /v1/checks/${CHECK_TYPE_TABLE[type].route}/:id`] = CHECK_WRITE
  }
  for (const segment of Object.values(ANALYTICS_ROUTES)) table[`GET /v1/analytics/${segment}/:id`] = ANALYTICS
  return new Map(Object.entries(table))
}

/** The paths of the API: every route under them has its parameters in the table. */
const API_PATH = /^\/v\d+\//

/** How a route is shown in a message: `GET /v1/checks/{id}`. */
const shown = (key: string) => key.replace(/:(\w+)/g, '{$1}')

/**
 * The query as the route reads it: a `name[]` parameter the route takes as `name[]` joins its
 * plain spelling; a parameter the route does not take is a 400 naming each, with the ones it takes.
 */
function declaredQuery(key: string, declared: readonly string[], query: Record<string, unknown>): Record<string, unknown> {
  const plain = new Set(declared.map((name) => name.replace(/\[\]$/, '')))
  const repeatable = new Set(declared.filter((name) => name.endsWith('[]')).map((name) => name.slice(0, -2)))
  const out: Record<string, unknown> = {}
  const unknown: string[] = []
  for (const [name, value] of Object.entries(query)) {
    const base = name.endsWith('[]') && repeatable.has(name.slice(0, -2)) ? name.slice(0, -2) : name
    if (!plain.has(base)) {
      unknown.push(name)
      continue
    }
    if (base === name && !(base in out)) out[base] = value
    else out[base] = [...[out[base] ?? []].flat(), ...[value].flat()]
  }
  if (unknown.length === 0) return out
  const takes = plain.size === 0 ? 'it takes none' : `it takes ${[...plain].join(', ')}`
  throw badRequest(
    'query',
    unknown.map((name) => ({ path: name === '' ? '""' : name, message: `is not a parameter of ${shown(key)}: ${takes}` })),
  )
}

/**
 * Makes the table the rule of every API route: registering a route it does not list fails (so
 * does listing a route no one registers, when the server is ready), and each request's query
 * is checked against its route's entry before validation.
 */
export function strictQueries(app: FastifyInstance): void {
  const table = routeTable()
  const registered = new Set<string>()
  app.addHook('onRoute', (route) => {
    if (!API_PATH.test(route.url)) return
    for (const method of [route.method].flat()) {
      // fastify's HEAD of a GET takes the GET's parameters
      if (method === 'HEAD' && table.has(`GET ${route.url}`)) continue
      const key = `${method} ${route.url}`
      if (!table.has(key)) throw new Error(`${key}: the route's query parameters are not declared (src/server/query-parameters.ts)`)
      registered.add(key)
    }
  })
  app.addHook('onReady', async () => {
    const stale = [...table.keys()].filter((key) => !registered.has(key))
    if (stale.length > 0) throw new Error(`query parameters declared for routes that do not exist: ${stale.join(', ')} (src/server/query-parameters.ts)`)
  })
  app.addHook('preValidation', async (request: FastifyRequest) => {
    const url = request.routeOptions.url
    if (url === undefined || request.is404 || !API_PATH.test(url)) return
    const key = `${request.method === 'HEAD' ? 'GET' : request.method} ${url}`
    request.query = declaredQuery(key, table.get(key) ?? [], (request.query ?? {}) as Record<string, unknown>)
  })
}
