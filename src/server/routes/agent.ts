import { runVariables, withGroup } from '../scheduler/groups.js'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, HttpError, notFound, parseOr400 } from '../errors.js'
import type { Store } from '../store/index.js'
import { completeRun, type RunServices } from '../scheduler/runs.js'
import { accountVariables, checkSnippets, claimDueRuns } from '../scheduler/index.js'
import type { CheckRunResult } from '../../runner/index.js'
import { blankCheckSecrets } from '../../schema/index.js'
import { isScriptCheckType, SERVICE_CHECK_TYPES } from '../../schema/check-types.js'
import { artifactNameProblem, RUN_ARTIFACT_LIMIT_BYTES, StagedUploads, type ArtifactStore } from '../artifacts.js'

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
  maxOfCheckTypes: z.object({
    checkTypes: z.array(z.enum(SERVICE_CHECK_TYPES)).min(1).max(SERVICE_CHECK_TYPES.length),
    max: z.number().int().min(0).max(50),
  }).optional(),
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
  sslCheck: z.object({
    domain: z.string().max(253),
    daysRemaining: z.number().int().min(-1_000_000).max(1_000_000).nullable(),
    error: z.string().max(2000).nullable(),
  }).optional(),
})

const resultBody = z.object({
  result: resultShape.extend({
    resultType: z.literal('FINAL'),
    attempts: z.array(resultShape.extend({ resultType: z.literal('ATTEMPT') })).max(20),
  }),
})

const extendBody = z.object({ leaseSeconds: z.number().int().min(10).max(600) })

/** One artifact file of a browser or multi-step run, uploaded before its result: index 0 the result's, n its n-th retried attempt's. */
const artifactBody = z.object({
  index: z.number().int().min(0).max(20),
  name: z.string().min(1).max(500).superRefine((name, ctx) => {
    const problem = artifactNameProblem(name)
    if (problem) ctx.addIssue({ code: 'custom', message: problem, input: name })
  }),
  contentBase64: z.string().max(Math.ceil(RUN_ARTIFACT_LIMIT_BYTES / 3) * 4),
})

const runParams = z.object({ runId: z.string().min(1).max(200) })

export function agentRoutes(app: FastifyInstance, store: Store, services: RunServices, artifacts?: ArtifactStore): void {
  const staged = artifacts ? new StagedUploads(artifacts) : undefined
  app.post('/v1/agent/claim', async (request) => {
    const body = parseOr400(claimBody, request.body, 'payload')
    const now = services.now()
    const leaseMs = body.leaseSeconds * 1000
    await store.agents.heartbeat(request.accountId, body.agentId, body.locations, now + 2 * leaseMs)
    const runs = await claimDueRuns(store, services, { owner: `agent:${body.agentId}`, account: request.accountId, locations: body.locations, max: body.max, leaseMs, now }, body.maxOfCheckTypes)
    // an API check's {{KEY}} references are resolved by the agent, from the account's variables;
    // its request secrets go with it (the run sends them), no other secret does
    // a check in a group runs with the group's settings (its variables go with the account's)
    const grouped = await Promise.all(runs.map((run) => withGroup(store, request.accountId, JSON.parse(run.checkJson) as Record<string, unknown> & { checkType?: string })))
    // a browser or multi-step check's secret variables go with it too: its script reads them
    const checks = grouped.map((check) => (isScriptCheckType(check.checkType) ? check : blankCheckSecrets(check, { keepRequest: true })))
    const wantsVariables = (check: { checkType?: string }) => check.checkType === 'API' || isScriptCheckType(check.checkType)
    const variables = checks.some(wantsVariables) ? await accountVariables(store, request.accountId) : undefined
    // and the snippets an API check runs as its setup and teardown scripts
    const snippets = await Promise.all(checks.map((check) => (check.checkType === 'API' ? checkSnippets(store, request.accountId, check) : undefined)))
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

  // the artifacts of a browser or multi-step run, before its result: at most 150 MB a run
  app.post('/v1/agent/runs/:runId/artifacts', { bodyLimit: Math.ceil(RUN_ARTIFACT_LIMIT_BYTES / 3) * 4 + 64 * 1024 }, async (request, reply) => {
    const { runId } = parseOr400(runParams, request.params, 'params')
    const body = parseOr400(artifactBody, request.body, 'payload')
    if (!staged) throw notFound('Artifact store')
    const content = Buffer.from(body.contentBase64, 'base64')
    if (staged.bytes(request.accountId, runId) + content.length > RUN_ARTIFACT_LIMIT_BYTES) {
      throw new HttpError(413, `The artifacts of run ${runId} would weigh more than the ${RUN_ARTIFACT_LIMIT_BYTES / 1e6} MB a run may keep`)
    }
    staged.put(request.accountId, runId, body.index, body.name, content)
    return reply.code(204).send()
  })

  app.post('/v1/agent/runs/:runId/result', async (request, reply) => {
    const { runId } = parseOr400(runParams, request.params, 'params')
    const { result } = parseOr400(resultBody, request.body, 'payload')
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
    const until = await store.runs.extend(request.accountId, runId, leaseSeconds * 1000, services.now())
    if (until === 'unknown') throw notFound('Run')
    if (until === 'lost') throw conflict(`The lease of run ${runId} was lost: another runner claimed the run, or completed it`)
    // the agent's own result was recorded before this extension: nothing was lost
    if (until === 'completed') return { completed: true }
    return { leaseExpiresAt: new Date(until).toISOString() }
  })
}
