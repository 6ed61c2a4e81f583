import type { FastifyInstance, FastifyRequest } from 'fastify'
import { heartbeatRangeQuerySchema, type HeartbeatCheck } from '../../schema/index.js'
import { HttpError, badRequest, notFound, parseOr400 } from '../errors.js'
import { availability, newPingToken, periodsOf, pingUrlOf, receivePing } from '../heartbeats/index.js'
import type { CheckRecord, HeartbeatEventRecord, Repositories, Store } from '../store/index.js'
import type { RunServices } from '../scheduler/runs.js'
import { sendJson } from './util.js'
import { systemClock } from '../../runner/clock.js'

const DAY = 86_400_000

const inTransaction = <T>(tx: Repositories, fn: (tx: Repositories) => Promise<T>): Promise<T> =>
  typeof (tx as Store).transaction === 'function' ? (tx as Store).transaction(fn) : fn(tx)

/** The server's own address as the client reached it: the base of ping URLs. */
const baseUrlOf = (request: FastifyRequest): string => `${request.protocol}://${request.host}`

/** POST /v1/checks/heartbeat: the check with a new ping token and URL, and its first period starting now. */
export function createHeartbeatCheck(tx: Repositories, request: FastifyRequest, data: HeartbeatCheck): Promise<CheckRecord> {
  return inTransaction(tx, async (t) => {
    const token = newPingToken()
    const heartbeat = { ...data.heartbeat, pingToken: token, pingUrl: pingUrlOf(baseUrlOf(request), token) }
    const check = await t.checks.create(request.accountId, 'HEARTBEAT', { ...data, heartbeat })
    const { periodMs, graceMs } = periodsOf(data.heartbeat)
    await t.heartbeats.save(request.accountId, check.id, token, periodMs, graceMs, nowOf(request))
    return check
  })
}

/** PUT /v1/checks/heartbeat/{id}: the token and URL are kept; the current period keeps its start. */
export function replaceHeartbeatCheck(
  tx: Repositories,
  request: FastifyRequest<{ Params: { id: string } }>,
  existing: CheckRecord,
  data: HeartbeatCheck,
): Promise<CheckRecord | undefined> {
  return inTransaction(tx, async (t) => {
    const old = (JSON.parse(existing.json) as { heartbeat?: { pingToken?: string; pingUrl?: string } }).heartbeat ?? {}
    const token = old.pingToken ?? newPingToken()
    const heartbeat = { ...data.heartbeat, pingToken: token, pingUrl: old.pingUrl ?? pingUrlOf(baseUrlOf(request), token) }
    const check = await t.checks.replace(request.accountId, request.params.id, 'HEARTBEAT', { ...data, heartbeat })
    if (!check) return undefined
    const { periodMs, graceMs } = periodsOf(data.heartbeat)
    await t.heartbeats.save(request.accountId, check.id, token, periodMs, graceMs, nowOf(request))
    return check
  })
}

/** The clock of the server the request reached (see heartbeatRoutes). */
const nowOf = (request: FastifyRequest): number => ((request.server as unknown as { heartbeatClock?: () => number }).heartbeatClock ?? systemClock.now)()

/** A time of the query: an ISO date or date-time, or epoch milliseconds. */
function timeOf(text: string | undefined, name: string): number | undefined {
  if (text === undefined || text === '') return undefined
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text)
  // a date is within ±8.64e15 ms of the epoch (ECMAScript's time range)
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15)
    throw badRequest('query', [{ path: name, message: `must be an ISO date, date-time or epoch milliseconds (got ${JSON.stringify(text.slice(0, 40))})` }])
  return ms
}

function presentEvent(e: HeartbeatEventRecord) {
  return { id: e.id, state: e.state, timestamp: new Date(e.at).toISOString(), source: e.source, userAgent: e.userAgent }
}

/** A ping request: served without a key. */
export const isPing = (request: FastifyRequest): boolean => request.routeOptions.url === '/ping/:pingToken'

/**
 * Heartbeat routes: pings (`/ping/:pingToken`, GET or POST, no key), availability and events.
 * `services.now` is the clock of pings and periods.
 */
export function heartbeatRoutes(app: FastifyInstance, store: Store, services: RunServices): void {
  app.decorate('heartbeatClock', services.now)

  const ping = async (request: FastifyRequest<{ Params: { pingToken: string } }>, reply: import('fastify').FastifyReply) => {
    const userAgent = request.headers['user-agent']
    const event = await receivePing(store, request.params.pingToken, services.now(), {
      source: request.ip ?? null,
      userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 500) : null,
    })
    if (!event) throw new HttpError(404, 'No heartbeat check has this ping token')
    return reply.code(200).type('text/plain; charset=utf-8').send('OK')
  }
  app.get('/ping/:pingToken', ping)
  app.post('/ping/:pingToken', ping)

  const heartbeatOf = async (account: string, checkId: string) => {
    const check = await store.checks.get(account, checkId)
    if (check?.checkType !== 'HEARTBEAT') throw notFound('Heartbeat check')
    return check
  }

  const windowOf = async (account: string, checkId: string, from: number, to: number) => {
    const current = availability(await store.heartbeats.events(account, checkId, from, to))
    const previous = availability(await store.heartbeats.events(account, checkId, from - (to - from), from))
    return { successRatio: { previousPeriod: previous.successRatio, currentPeriod: current.successRatio }, totalEntitiesCurrentPeriod: current.total }
  }
  const stats = async (account: string, checkId: string) => {
    const now = services.now()
    return { last24Hours: await windowOf(account, checkId, now - DAY, now), last7Days: await windowOf(account, checkId, now - 7 * DAY, now) }
  }
  const rangeOf = (query: { startTime?: string; endTime?: string }) => {
    const to = timeOf(query.endTime, 'endTime') ?? services.now()
    const from = timeOf(query.startTime, 'startTime') ?? to - DAY
    if (!(from < to)) {
      const shown = `startTime ${new Date(from).toISOString()}, endTime ${new Date(to).toISOString()}`
      throw badRequest('query', [
        { path: 'startTime', message: `must be before endTime (got ${shown})` },
        { path: 'endTime', message: `must be after startTime (got ${shown})` },
      ])
    }
    return { from, to }
  }

  app.get<{ Params: { checkId: string } }>('/v1/checks/heartbeats/:checkId/availability', async (request, reply) => {
    const query = parseOr400(heartbeatRangeQuerySchema, request.query, 'query')
    await heartbeatOf(request.accountId, request.params.checkId)
    const { from, to } = rangeOf(query)
    return sendJson(reply, 200, JSON.stringify(await windowOf(request.accountId, request.params.checkId, from, to)))
  })

  app.get<{ Params: { checkId: string } }>('/v1/checks/heartbeats/:checkId/events', async (request, reply) => {
    const query = parseOr400(heartbeatRangeQuerySchema, request.query, 'query')
    await heartbeatOf(request.accountId, request.params.checkId)
    const { from, to } = rangeOf(query)
    const events = await store.heartbeats.events(request.accountId, request.params.checkId, from, to, query.limit)
    const body = [{ events: events.reverse().map(presentEvent), stats: await stats(request.accountId, request.params.checkId) }]
    return sendJson(reply, 200, JSON.stringify(body))
  })

  app.get<{ Params: { checkId: string; id: string } }>('/v1/checks/heartbeats/:checkId/events/:id', async (request, reply) => {
    await heartbeatOf(request.accountId, request.params.checkId)
    const event = await store.heartbeats.event(request.accountId, request.params.checkId, request.params.id)
    if (!event) throw notFound('Heartbeat event')
    return sendJson(reply, 200, JSON.stringify({ event: presentEvent(event), stats: await stats(request.accountId, request.params.checkId) }))
  })
}
