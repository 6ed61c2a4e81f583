import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { CHECK_TYPES, pageQuerySchema, queryBoolean, queryNumber, queryTime, rangeProblem } from '../../schema/index.js'
import { isRunnableCheckType, RUNNABLE_CHECK_TYPES, typesInProse } from '../../schema/check-types.js'
import { HttpError, badRequest, notFound, parseOr400 } from '../errors.js'
import { eachCheck, type CheckResultRecord, type SessionRecord, type Store } from '../store/index.js'
import { checkLocations } from '../scheduler/due.js'
import { withGroup } from '../groups.js'
import type { RunServices } from '../scheduler/runs.js'
import { contentRange } from './util.js'
import { playwrightCheckResult } from './assets.js'

/*
 * Check sessions: a trigger runs each targeted check once in each of its locations, now,
 * whatever its schedule (a deactivated check named by id or tag too). The runs are due runs
 * like the scheduled ones, so the server's runner or an agent serving the location takes them.
 * Completion is read from the recorded FINAL results, one per location, so any server on the
 * database answers it.
 */

/** The types a session runs (those that run from locations), as messages name them: `DNS, ICMP and API`. */
const RUNNABLE_NAMES = typesInProse(RUNNABLE_CHECK_TYPES)

/**
 * Most checks one trigger starts: a trigger without a filter runs every eligible check of the
 * account, and one request must not make unbounded work (each session is a row and one due
 * run per location, written in one transaction). More is a 400 asking to narrow the target.
 */
export const MAX_TRIGGERED_CHECKS = 1000

/**
 * Body of POST /v1/check-sessions/trigger (reference: TriggerCheckSessionRequestPayload); every
 * part optional. `tags` is API.md's (a check carrying any of them); `matchTags` the reference's
 * (OR of ANDs, `!tag`: a check without it).
 */
const triggerBody = z
  .object({
    target: z
      .object({
        checkId: z.array(z.string().min(1).max(200)).max(100).optional(),
        tags: z.array(z.string().min(1)).max(100).optional(),
        matchTags: z
          .array(z.array(z.string().min(1).max(200)).min(1).max(100))
          .max(100)
          .optional(),
      })
      .optional(),
  })
  .optional()

/** Whether a check's tags satisfy the reference's matchTags: one inner list all of whose terms hold. */
function matchesTags(checkTags: readonly string[] | undefined, matchTags: string[][]): boolean {
  const carried = new Set(checkTags ?? [])
  return matchTags.some((all) => all.every((term) => (term.startsWith('!') ? !carried.has(term.slice(1)) : carried.has(term))))
}

const sessionParams = z.object({ id: z.string().min(1).max(200) })
const completionQuery = z.object({ maxWaitSeconds: queryNumber(z.number().min(1).max(30)).default(30) })
const resultParams = z.object({ checkId: z.string().min(1).max(200), id: z.string().min(1).max(200) })
/** Query of GET /v1/check-results/{checkId}: the reference's filters (docs/api.md "Check results"). */
const resultListQuery = pageQuerySchema
  .extend({
    resultType: z.enum(['FINAL', 'ATTEMPT', 'ALL']).optional(),
    hasFailures: queryBoolean.optional(),
    location: z.string().min(1).max(200).optional(),
    checkType: z.enum(CHECK_TYPES).optional(),
    from: queryTime.optional(),
    to: queryTime.optional(),
  })
  .superRefine((value, ctx) => {
    for (const issue of rangeProblem(value)) ctx.addIssue({ code: 'custom', path: [issue.path], message: issue.message })
  })

type TriggeredCheck = { id: string; checkType: string; name: string; activated?: boolean; locations?: string[] | null }

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
    // the reference's flag of a run cancelled before completion: sessions here are never cancelled
    isCancelled: false,
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

/** A stored result as answered; a Playwright check suite's also in the reference's shape (`playwrightCheckResult`, asset URLs on `origin`). */
function presentStored(result: CheckResultRecord, origin: string) {
  const playwright = playwrightCheckResult(origin, result)
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
    ...(playwright ? { playwrightCheckResult: playwright } : {}),
    created_at: result.created_at,
  }
}

type TriggerTarget = NonNullable<NonNullable<z.infer<typeof triggerBody>>['target']>

function tooManyChecks(more: string): HttpError {
  return badRequest('payload', [
    {
      path: 'target',
      message: `matches more than ${MAX_TRIGGERED_CHECKS} checks${more}; one trigger starts at most ${MAX_TRIGGERED_CHECKS}: name fewer with checkId or tags`,
    },
  ])
}

/** The checks a trigger names by id: each must exist in the account and be one a session runs. */
async function checksNamed(store: Store, account: string, ids: readonly string[], checks: Map<string, TriggeredCheck>): Promise<void> {
  for (const [index, id] of ids.entries()) {
    const record = await store.checks.get(account, id)
    if (!record) throw new HttpError(404, `Check not found: ${id}`)
    if (!isRunnableCheckType(record.checkType)) {
      throw badRequest('payload', [
        {
          path: `target.checkId.${index}`,
          message: `is a ${record.checkType} check (${id}): a heartbeat check is judged by the pings it receives and cannot be triggered; sessions run ${RUNNABLE_NAMES} checks`,
        },
      ])
    }
    checks.set(id, JSON.parse(record.json))
  }
}

/**
 * tags and matchTags: every runnable check they match (heartbeat checks are left out);
 * no filter at all: every activated one of the account, as the reference's "all eligible checks".
 */
async function checksMatching(store: Store, account: string, target: TriggerTarget, checks: Map<string, TriggeredCheck>): Promise<void> {
  const tags = target.tags ?? []
  const matchTags = target.matchTags ?? []
  const everything = (target.checkId ?? []).length === 0 && tags.length === 0 && matchTags.length === 0
  if (tags.length === 0 && matchTags.length === 0 && !everything) return
  // matchTags can ask for checks without a tag: then every check is read (1,000 at a time)
  const byTag = matchTags.length === 0 && tags.length > 0
  const wanted = new Set(tags)
  for await (const check of eachCheck<TriggeredCheck & { tags?: string[] }>(store.checks, account, { tags: byTag ? tags : undefined })) {
    if (!isRunnableCheckType(check.checkType)) continue
    const matched = everything
      ? check.activated !== false
      : (check.tags ?? []).some((t) => wanted.has(t)) || (matchTags.length > 0 && matchesTags(check.tags, matchTags))
    if (!matched) continue
    checks.set(check.id, check)
    if (checks.size > MAX_TRIGGERED_CHECKS) throw tooManyChecks(everything ? ` (every activated ${RUNNABLE_NAMES} check of the account)` : '')
  }
}

/** The checks a trigger runs: those it names, then those its tags match; at least one, at most MAX_TRIGGERED_CHECKS. */
async function triggeredChecks(store: Store, account: string, target: TriggerTarget): Promise<TriggeredCheck[]> {
  const checks = new Map<string, TriggeredCheck>()
  await checksNamed(store, account, target.checkId ?? [], checks)
  await checksMatching(store, account, target, checks)
  if (checks.size > MAX_TRIGGERED_CHECKS) throw tooManyChecks('')
  // the reference: 404 when there are no matching checks
  if (checks.size === 0) throw new HttpError(404, 'No matching checks were found.')
  return [...checks.values()]
}

export function sessionRoutes(app: FastifyInstance, store: Store, services: RunServices, closing: AbortSignal): void {
  app.post('/v1/check-sessions/trigger', async (request, reply) => {
    const target = parseOr400(triggerBody, request.body, 'payload')?.target ?? {}
    const account = request.accountId
    const checks = await triggeredChecks(store, account, target)
    const now = services.now()
    const sessions = await store.transaction(async (tx) => {
      const made: SessionRecord[] = []
      // a check in a group runs in the group's locations when it names none of its own
      for (const check of checks) made.push(await tx.sessions.create(account, check, checkLocations(await withGroup(tx, account, check)), now))
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
    // a real wait (timers): elapsed time, not the server's clock
    const deadline = performance.now() + maxWaitSeconds * 1000
    for (;;) {
      const state = await sessionState(store, request.accountId, base(request), session, services.now())
      if (state.done) {
        const { status, ...body } = state.body
        return { ...body, status }
      }
      const left = deadline - performance.now()
      if (left <= 0 || closing.aborted || request.raw.destroyed) {
        throw new HttpError(408, `Check session ${id} has not finished after ${maxWaitSeconds} s; ask again`, undefined, { 'retry-after': '1' })
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, left)))
    }
  })

  // a session result's checkResultLink, and a check's results, newest first
  app.get('/v1/check-results/:checkId/:id', async (request) => {
    const { checkId, id } = parseOr400(resultParams, request.params, 'params')
    const result = await store.results.get(request.accountId, id, checkId)
    if (!result || result.checkId !== checkId) throw notFound('Check result')
    return presentStored(result, base(request))
  })

  app.get('/v1/check-results/:checkId', async (request, reply) => {
    const { checkId } = parseOr400(sessionParams.extend({ checkId: z.string().min(1).max(200) }).omit({ id: true }), request.params, 'params')
    const query = parseOr400(resultListQuery, request.query, 'query')
    // an unknown check, or another account's, is a 404 as on every other per-check route
    const check = await store.checks.get(request.accountId, checkId)
    if (!check) throw notFound('Check')
    const offset = (query.page - 1) * query.limit
    // the check is of one type: another type asked for has no results
    const page =
      query.checkType !== undefined && query.checkType !== check.checkType
        ? { items: [], total: 0 }
        : await store.results.list(request.accountId, {
            checkId,
            resultType: query.resultType === 'ALL' ? undefined : query.resultType,
            hasFailures: query.hasFailures,
            location: query.location,
            from: query.from,
            to: query.to,
            limit: query.limit,
            offset,
          })
    reply.header('content-range', contentRange(offset, page.items.length, page.total))
    return page.items.map((r) => presentStored(r, base(request)))
  })
}
