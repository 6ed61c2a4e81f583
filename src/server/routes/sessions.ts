import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { HttpError, notFound, parseOr400 } from '../errors.js'
import type { CheckResultRecord, SessionRecord, Store } from '../store/index.js'
import { checkLocations } from '../scheduler/due.js'
import type { RunServices } from '../scheduler/runs.js'
import { contentRange } from './util.js'

/*
 * Check sessions: a trigger runs each targeted check once in each of its locations, now,
 * whatever its schedule (a deactivated check too). The runs are due runs like the scheduled
 * ones, so the server's runner or an agent serving the location takes them. Completion is read
 * from the recorded FINAL results, one per location, so any server on the database answers it.
 */

const RUNNABLE = new Set(['DNS', 'ICMP', 'API'])

const triggerBody = z.object({
  target: z.object({
    checkId: z.array(z.string().min(1).max(200)).max(100).optional(),
    tags: z.array(z.string().min(1)).max(100).optional(),
  }).refine((t) => (t.checkId?.length ?? 0) + (t.tags?.length ?? 0) > 0, { message: 'needs checkId or tags (at least one of them, not empty)' }),
})

const sessionParams = z.object({ id: z.string().min(1).max(200) })
const completionQuery = z.object({ maxWaitSeconds: z.coerce.number().min(1).max(30).default(30) })
const resultParams = z.object({ checkId: z.string().min(1).max(200), id: z.string().min(1).max(200) })
const resultListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(10),
  page: z.coerce.number().int().min(1).default(1),
  resultType: z.enum(['FINAL', 'ATTEMPT']).optional(),
})

/** How often a waiting completion reads the store (the results may come from another process). */
const POLL_MS = 100

function base(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`
}

/** FAILED over TIMED_OUT over DEGRADED over PASSED. */
export function sessionStatus(finals: Array<Pick<CheckResultRecord, 'status'>>): 'FAILED' | 'TIMED_OUT' | 'DEGRADED' | 'PASSED' {
  const statuses = new Set(finals.map((r) => r.status))
  if (statuses.has('FAILED')) return 'FAILED'
  if (statuses.has('TIMED_OUT')) return 'TIMED_OUT'
  if (statuses.has('DEGRADED')) return 'DEGRADED'
  return 'PASSED'
}

function presentResult(link: string, session: SessionRecord, result: CheckResultRecord) {
  const details = result.details
  return {
    checkResultId: result.id,
    checkResultLink: `${link}/v1/check-results/${encodeURIComponent(result.checkId)}/${result.id}`,
    checkId: result.checkId,
    checkType: session.checkType,
    runLocation: result.runLocation,
    resultType: result.resultType,
    hasErrors: result.hasErrors,
    hasFailures: result.hasFailures,
    isDegraded: result.isDegraded,
    aborted: details.aborted === true,
    name: session.name,
    status: result.status,
    responseTime: result.responseTime,
    startedAt: result.startedAt,
    stoppedAt: result.stoppedAt,
    attempt: typeof details.attempt === 'number' ? details.attempt : null,
    error: result.error,
  }
}

/** The session so far; `done` once every location has its FINAL result. */
async function sessionState(store: Store, account: string, link: string, session: SessionRecord, now: number) {
  const results = await store.results.ofSession(account, session.id)
  const finals = results.filter((r) => r.resultType === 'FINAL')
  // one run per location, one FINAL result per run (a retry elsewhere may name another location)
  const done = finals.length >= session.runLocations.length
  const started = Date.parse(session.startedAt)
  const stopped = done ? Math.max(started, ...finals.map((r) => Date.parse(r.stoppedAt))) : null
  return {
    done,
    body: {
      checkSessionId: session.id,
      checkSessionLink: `${link}/v1/check-sessions/${session.id}`,
      checkId: session.checkId,
      checkType: session.checkType,
      name: session.name,
      status: done ? sessionStatus(finals) : 'RUNNING',
      startedAt: session.startedAt,
      stoppedAt: stopped === null ? null : new Date(stopped).toISOString(),
      timeElapsed: (stopped ?? now) - started,
      runLocations: session.runLocations,
      results: results.map((r) => presentResult(link, session, r)),
    },
  }
}

function presentStored(result: CheckResultRecord) {
  return {
    id: result.id,
    checkId: result.checkId,
    checkSessionId: result.sessionId,
    runLocation: result.runLocation,
    resultType: result.resultType,
    status: result.status,
    hasFailures: result.hasFailures,
    hasErrors: result.hasErrors,
    isDegraded: result.isDegraded,
    responseTime: result.responseTime,
    startedAt: result.startedAt,
    stoppedAt: result.stoppedAt,
    error: result.error,
    result: result.details,
    created_at: result.created_at,
  }
}

export function sessionRoutes(app: FastifyInstance, store: Store, services: RunServices, closing: AbortSignal): void {
  app.post('/v1/check-sessions/trigger', async (request, reply) => {
    const { target } = parseOr400(triggerBody, request.body, 'payload')
    const account = request.accountId
    const checks = new Map<string, { id: string; checkType: string; name: string; locations?: string[] | null }>()
    for (const id of target.checkId ?? []) {
      const record = await store.checks.get(account, id)
      if (!record) throw new HttpError(404, `Check not found: ${id}`)
      if (!RUNNABLE.has(record.checkType)) throw new HttpError(400, `Check ${id} is a ${record.checkType} check; sessions run DNS, ICMP and API checks`)
      checks.set(id, JSON.parse(record.json))
    }
    if (target.tags && target.tags.length > 0) {
      for (let offset = 0; ; offset += 1000) {
        const page = await store.checks.list(account, { tags: target.tags, limit: 1000, offset })
        const items = JSON.parse(page.json.toString()) as Array<{ id: string; checkType: string; name: string; locations?: string[] | null }>
        for (const check of items) if (RUNNABLE.has(check.checkType)) checks.set(check.id, check)
        if (page.count < 1000) break
      }
    }
    const now = services.now()
    const sessions = await store.transaction(async (tx) => {
      const made: SessionRecord[] = []
      for (const check of checks.values()) made.push(await tx.sessions.create(account, check, checkLocations(check), now))
      return made
    })
    const link = base(request)
    return reply.code(201).send({
      sessions: sessions.map((s) => ({ checkSessionId: s.id, checkSessionLink: `${link}/v1/check-sessions/${s.id}`, checkId: s.checkId, name: s.name })),
    })
  })

  app.get('/v1/check-sessions/:id', async (request) => {
    const { id } = parseOr400(sessionParams, request.params, 'params')
    const session = await store.sessions.get(request.accountId, id)
    if (!session) throw notFound('Check session')
    return (await sessionState(store, request.accountId, base(request), session, services.now())).body
  })

  app.get('/v1/check-sessions/:id/completion', async (request) => {
    const { id } = parseOr400(sessionParams, request.params, 'params')
    const { maxWaitSeconds } = parseOr400(completionQuery, request.query, 'query')
    const session = await store.sessions.get(request.accountId, id)
    if (!session) throw notFound('Check session')
    const deadline = Date.now() + maxWaitSeconds * 1000
    for (;;) {
      const state = await sessionState(store, request.accountId, base(request), session, services.now())
      if (state.done) {
        const { status, ...body } = state.body
        return { ...body, status }
      }
      const left = deadline - Date.now()
      if (left <= 0 || closing.aborted || request.raw.destroyed) {
        throw new HttpError(408, `Check session ${id} has not finished after ${maxWaitSeconds} s; ask again`, undefined, { 'retry-after': '1' })
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, left)))
    }
  })

  // a session result's checkResultLink, and a check's results, newest first
  app.get('/v1/check-results/:checkId/:id', async (request) => {
    const { checkId, id } = parseOr400(resultParams, request.params, 'params')
    const result = await store.results.get(request.accountId, id)
    if (!result || result.checkId !== checkId) throw notFound('Check result')
    return presentStored(result)
  })

  app.get('/v1/check-results/:checkId', async (request, reply) => {
    const { checkId } = parseOr400(sessionParams.extend({ checkId: z.string().min(1).max(200) }).omit({ id: true }), request.params, 'params')
    const query = parseOr400(resultListQuery, request.query, 'query')
    const offset = (query.page - 1) * query.limit
    const page = await store.results.list(request.accountId, { checkId, resultType: query.resultType, limit: query.limit, offset })
    reply.header('content-range', contentRange(offset, page.items.length, page.total))
    return page.items.map(presentStored)
  })
}
