import { runVariables, withGroup } from '../groups.js'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, HttpError, notFound, parseOr400 } from '../errors.js'
import type { Store } from '../store/index.js'
import { completeRun, type RunServices } from '../scheduler/runs.js'
import { accountVariables, checkSnippets, claimDueRuns } from '../scheduler/index.js'
import type { CheckRunResult } from '../../runner/index.js'
import { blankCheckSecrets } from '../../schema/index.js'
import { checkTypeEntry, isScriptCheckType, SERVICE_CHECK_TYPES } from '../../schema/check-types.js'
import { artifactNameProblem, leaseHeld, StagedUploads, UploadRefused, type ArtifactStore } from '../artifacts.js'
import type { FastifyReply, FastifyRequest } from 'fastify'

/*
 * The agent's routes (README, "Agents"): an agent claims due runs of its locations with a
 * lease, extends the lease of a long run, and posts each run's FINAL result with its attempts.
 * Claiming is also its heartbeat: its locations are left to it for 2 × leaseSeconds.
 */

const location = z.string().min(1).max(64)

const claimBody = z.object({
  agentId: z.string().min(1).max(200),
  locations: z.array(location).min(1).max(100),
  max: z.number().int().min(1).max(50).default(10),
  leaseSeconds: z.number().int().min(10).max(600).default(60),
  // optional (agents before it do not send it): at most `max` of the runs claimed are of these
  // check types (an agent holding twice its script concurrency of script runs asks for 0 of them)
  maxOfCheckTypes: z
    .object({
      checkTypes: z.array(z.enum(SERVICE_CHECK_TYPES)).min(1).max(SERVICE_CHECK_TYPES.length),
      max: z.number().int().min(0).max(50),
    })
    .optional(),
})

const dateTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' })

/*
 * A result as the runner makes it (src/runner RunResult). Only these fields are kept: anything
 * else an agent sends is dropped. What identifies the run is the claim's, never the agent's:
 * checkId, name, checkType and runLocation are taken from the claimed run and its check (a
 * runLocation sent is read and ignored), and startedAt / stoppedAt are moved into the claim's
 * window on the server's clock (see store/run-rows.ts, resultOfClaim).
 */
const resultShape = z.object({
  checkId: z.string().max(200).nullable().optional(),
  name: z.string().max(10_000).optional(),
  checkType: z.string().max(64).optional(),
  runLocation: location.optional(),
  attempt: z.number().int().min(1).max(1000).optional(),
  status: z.enum(['PASSED', 'DEGRADED', 'FAILED', 'TIMED_OUT']),
  hasFailures: z.boolean(),
  hasErrors: z.boolean(),
  isDegraded: z.boolean(),
  timedOut: z.boolean().optional(),
  aborted: z.boolean().optional(),
  responseTime: z.number().min(0).nullable(),
  startedAt: dateTime,
  stoppedAt: dateTime,
  failureKind: z.enum(['NETWORK_ERROR', 'ASSERTION', 'RUNNER_ERROR']).nullable().optional(),
  error: z.string().max(10_000).nullable(),
  // what the probe saw: the runner's own shapes, kept as sent
  assertions: z.array(z.looseObject({})).max(1000).optional(),
  details: z.looseObject({}).optional(),
  // the certificate of the check's sslCheckDomain (src/runner/certificate.ts), when it names one
  sslDaysRemaining: z.number().int().min(-1_000_000).max(1_000_000).nullable().optional(),
  sslCheck: z
    .object({
      domain: z.string().max(253),
      daysRemaining: z.number().int().min(-1_000_000).max(1_000_000).nullable(),
      error: z.string().max(2000).nullable(),
    })
    .optional(),
})

const resultBody = z.object({
  result: resultShape.extend({
    resultType: z.literal('FINAL'),
    attempts: z.array(resultShape.extend({ resultType: z.literal('ATTEMPT') })).max(20),
  }),
})

const extendBody = z.object({ leaseSeconds: z.number().int().min(10).max(600) })

/** The bytes of one file in a JSON upload (POST, base64; agents before the streamed PUT): bounded per request. */
export const JSON_UPLOAD_LIMIT_BYTES = 16 * 1000 * 1000

const artifactName = z
  .string()
  .min(1)
  .max(500)
  .superRefine((name, ctx) => {
    const problem = artifactNameProblem(name)
    if (problem) ctx.addIssue({ code: 'custom', message: problem, input: name })
  })
const artifactIndex = z.number().int().min(0).max(20)

/** One artifact file of a browser or multi-step run, uploaded before its result: index 0 the result's, n its n-th retried attempt's. */
const artifactBody = z.object({
  index: artifactIndex,
  name: artifactName,
  contentBase64: z.string().max(Math.ceil(JSON_UPLOAD_LIMIT_BYTES / 3) * 4),
})

/** The same as the query of a streamed upload (PUT, application/octet-stream). */
const artifactQuery = z.object({ index: z.coerce.number().pipe(artifactIndex), name: artifactName })

const runParams = z.object({ runId: z.string().min(1).max(200) })

export function agentRoutes(app: FastifyInstance, store: Store, services: RunServices, artifacts?: ArtifactStore, stagedLimitBytes?: number): void {
  const staged = artifacts ? new StagedUploads(artifacts, stagedLimitBytes) : undefined
  app.post('/v1/agent/claim', async (request) => {
    const body = parseOr400(claimBody, request.body, 'payload')
    const now = services.now()
    const leaseMs = body.leaseSeconds * 1000
    await claimableLocations(store, request, body.locations)
    await store.privateLocations.seen(request.accountId, body.locations, now)
    await store.agents.heartbeat(request.accountId, body.agentId, body.locations, now + 2 * leaseMs)
    // what the account's agents staged for runs they no longer hold goes (a dead agent's, a lease run out)
    await staged?.sweep(leaseHeld(store, now), { account: request.accountId })
    // the lease is the key's: only the claim's key may upload the run's artifacts
    const runs = await claimDueRuns(
      store,
      services,
      { owner: `${leaseOwner(request.keyId)}agent:${body.agentId}`, account: request.accountId, locations: body.locations, max: body.max, leaseMs, now },
      body.maxOfCheckTypes,
    )
    // an API check's {{KEY}} references are resolved by the agent, from the account's variables;
    // its request secrets go with it (the run sends them), no other secret does
    // a check in a group runs with the group's settings (its variables go with the account's)
    const grouped = await Promise.all(
      runs.map((run) => withGroup(store, request.accountId, JSON.parse(run.checkJson) as Record<string, unknown> & { checkType?: string })),
    )
    // a browser or multi-step check's secret variables go with it too: its script reads them
    const checks = grouped.map((check) => (isScriptCheckType(check.checkType) ? check : blankCheckSecrets(check, { keepRequest: true })))
    const wantsVariables = (check: { checkType?: string }) => checkTypeEntry(String(check.checkType))?.variables === true
    const variables = checks.some(wantsVariables) ? await accountVariables(store, request.accountId) : undefined
    // and the snippets an API check runs as its setup and teardown scripts
    const snippets = await Promise.all(
      checks.map((check) => (checkTypeEntry(String(check.checkType))?.snippets ? checkSnippets(store, request.accountId, check) : undefined)),
    )
    return {
      runs: runs.map((run, i) => ({
        runId: run.runId,
        location: run.location,
        dueAt: new Date(run.dueAt).toISOString(),
        leaseExpiresAt: new Date(run.leaseExpiresAt).toISOString(),
        sessionId: run.sessionId,
        check: checks[i],
        ...(variables && wantsVariables(checks[i]) ? { variables: runVariables(variables, grouped[i] as { environmentVariables?: unknown }) } : {}),
        ...(snippets[i] ? { snippets: snippets[i] } : {}),
      })),
    }
  })

  // the artifacts of a browser or multi-step run, before its result: streamed (PUT), or in JSON (POST, older agents)
  if (staged) artifactRoutes(app, store, services, staged)

  app.post('/v1/agent/runs/:runId/result', async (request, reply) => {
    const { runId } = parseOr400(runParams, request.params, 'params')
    const { result } = parseOr400(resultBody, request.body, 'payload')
    await runOfKeyLocation(store, services, request, runId)
    const outcome = await completeRun(store, services, request.accountId, runId, result as unknown as CheckRunResult)
    if (staged && outcome.outcome === 'completed') {
      staged.adopt(request.accountId, runId, 0, outcome.final.id, outcome.final.stoppedAt)
      outcome.attempts.forEach((a, i) => staged.adopt(request.accountId, runId, i + 1, a.id, a.stoppedAt))
    }
    if (staged && outcome.outcome !== 'duplicate') staged.discard(request.accountId, runId)
    if (outcome.outcome === 'unknown') throw notFound('Run')
    if (outcome.outcome === 'lost') throw conflict(`The lease of run ${runId} was lost: another runner claimed the run after the lease expired`)
    return reply.code(204).send()
  })

  app.post('/v1/agent/runs/:runId/extend', async (request) => {
    const { runId } = parseOr400(runParams, request.params, 'params')
    const { leaseSeconds } = parseOr400(extendBody, request.body, 'payload')
    await runOfKeyLocation(store, services, request, runId)
    const until = await store.runs.extend(request.accountId, runId, leaseSeconds * 1000, services.now())
    if (until === 'unknown') throw notFound('Run')
    if (until === 'lost') staged?.discard(request.accountId, runId)
    if (until === 'lost') throw conflict(`The lease of run ${runId} was lost: another runner claimed the run, or completed it`)
    // the agent's own result was recorded before this extension: nothing was lost
    if (until === 'completed') return { completed: true }
    return { leaseExpiresAt: new Date(until).toISOString() }
  })
}

/**
 * The runs of a private location are claimed with a key of that location only, and such a key
 * claims nothing else: another location named, or a private location named with another key, is
 * a 403 naming it (the agent stops: a key does not change its location).
 */
async function claimableLocations(store: Store, request: FastifyRequest, locations: string[]): Promise<void> {
  if (request.keyLocationId) {
    const own = await store.privateLocations.get(request.accountId, request.keyLocationId)
    const slug = own?.location.slugName
    const others = locations.filter((l) => l !== slug)
    if (!own || others.length > 0) {
      throw new HttpError(
        403,
        `This key is a key of the private location ${JSON.stringify(slug ?? request.keyLocationId)}: it claims that location's runs only (got ${others.map((l) => JSON.stringify(l)).join(', ')})`,
      )
    }
    return
  }
  const slugs = new Set((await store.privateLocations.list(request.accountId)).map((p) => p.location.slugName))
  const privateOnes = locations.filter((l) => slugs.has(l))
  if (privateOnes.length > 0) {
    throw new HttpError(
      403,
      `${privateOnes.map((l) => JSON.stringify(l)).join(', ')} ${privateOnes.length === 1 ? 'is a private location' : 'are private locations'}: ` +
        'its runs are claimed with a key of that location (POST /v1/private-locations/{id}/keys)',
    )
  }
}

/**
 * A key of a private location posts, extends and uploads for runs of that location only; another
 * key for none of a private location (a run id of another location's claim is refused, 403).
 */
async function runOfKeyLocation(store: Store, services: RunServices, request: FastifyRequest, runId: string): Promise<void> {
  const lease = await store.runs.lease(request.accountId, runId, services.now())
  if (typeof lease !== 'object') return
  const own = request.keyLocationId ? (await store.privateLocations.get(request.accountId, request.keyLocationId))?.location.slugName : undefined
  if (own !== undefined ? lease.location === own : !(await store.privateLocations.bySlug(request.accountId, lease.location))) return
  throw new HttpError(403, `Run ${runId} is of the location ${JSON.stringify(lease.location)}, which this key does not serve`)
}

/** The owner a claim records for the key that made it (a lease's owner starts with it). */
const leaseOwner = (keyId: string) => `key:${keyId} `

/**
 * Uploads only for a run leased now, to the caller's key: another account's run (or none) is a
 * 404, a run of the account not held by this key (another agent's, or its lease ran out) a 409.
 */
async function checkHeld(store: Store, services: RunServices, request: FastifyRequest, runId: string): Promise<void> {
  await runOfKeyLocation(store, services, request, runId)
  const lease = await store.runs.lease(request.accountId, runId, services.now())
  if (lease === 'unknown') throw notFound('Run')
  if (lease === 'lost' || lease === 'done')
    throw conflict(`The lease of run ${runId} is not held: it ran out, another runner claimed the run, or it is complete`)
  if (!(lease.owner ?? '').startsWith(leaseOwner(request.keyId)))
    throw conflict(`Run ${runId} is leased to another key: its artifacts are taken from the claim that holds it only`)
}

/** Stages one file, a refusal (the run's or the account's limit) a 413 that closes the connection: the rest of the body is not read. */
async function stage(
  store: Store,
  services: RunServices,
  staged: StagedUploads,
  request: FastifyRequest,
  reply: FastifyReply,
  upload: { runId: string; index: number; name: string; source: FastifyRequest['raw'] | Buffer; length?: number },
): Promise<FastifyReply> {
  const { runId, index, name } = upload
  try {
    await staged.put(request.accountId, runId, index, name, upload.source, upload.length)
  } catch (error) {
    if (!(error instanceof UploadRefused)) throw error
    reply.header('connection', 'close')
    throw new HttpError(error.status, error.message)
  }
  // the lease may have run out while the file came: then nothing of the run is kept
  const lease = await store.runs.lease(request.accountId, runId, services.now())
  if (typeof lease !== 'object') {
    staged.discard(request.accountId, runId)
    throw conflict(`The lease of run ${runId} ran out while its artifact ${name} was uploaded`)
  }
  return reply.code(204).send()
}

function artifactRoutes(app: FastifyInstance, store: Store, services: RunServices, staged: StagedUploads): void {
  // streamed: the body is the file's bytes, written to disk as they come, counted against the limits
  app.register(async (scope) => {
    scope.addContentTypeParser('application/octet-stream', (_request, _payload, done) => done(null))
    scope.put('/v1/agent/runs/:runId/artifacts', async (request, reply) => {
      const { runId } = parseOr400(runParams, request.params, 'params')
      const { index, name } = parseOr400(artifactQuery, request.query, 'query')
      if (!String(request.headers['content-type'] ?? '').startsWith('application/octet-stream')) {
        throw new HttpError(415, 'An artifact is uploaded as its bytes, with content-type application/octet-stream')
      }
      await checkHeld(store, services, request, runId)
      const length = Number(request.headers['content-length'])
      return stage(store, services, staged, request, reply, { runId, index, name, source: request.raw, length: Number.isFinite(length) ? length : undefined })
    })
  })

  app.post('/v1/agent/runs/:runId/artifacts', { bodyLimit: Math.ceil(JSON_UPLOAD_LIMIT_BYTES / 3) * 4 + 64 * 1024 }, async (request, reply) => {
    const { runId } = parseOr400(runParams, request.params, 'params')
    const body = parseOr400(artifactBody, request.body, 'payload')
    await checkHeld(store, services, request, runId)
    return stage(store, services, staged, request, reply, { runId, index: body.index, name: body.name, source: Buffer.from(body.contentBase64, 'base64') })
  })
}
