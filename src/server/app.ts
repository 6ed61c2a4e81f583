import Fastify, { type FastifyInstance } from 'fastify'
import type { Store } from './store/index.js'
import { authHook } from './auth.js'
import { RateLimiter, SharedRateLimiter, type Limiter } from './rate-limit.js'
import { HttpError, errorHandler, routeNotFound, sendHttpError } from './errors.js'
import { checkRoutes } from './routes/checks.js'
import { variableRoutes } from './routes/variables.js'
import { statusPageRoutes } from './routes/status-pages.js'
import { maintenanceWindowRoutes } from './routes/maintenance-windows.js'
import { checkGroupRoutes } from './routes/check-groups.js'
import { snippetRoutes } from './routes/snippets.js'
import { incidentRoutes } from './routes/incidents.js'
import { ipv6Routes, runtimeRoutes } from './routes/runtimes.js'
import { badgeTokenRoutes } from './routes/badge-tokens.js'
import { resultRoutes } from './routes/results.js'
import { assetRoutes } from './routes/assets.js'
import type { ArtifactStore } from './artifacts.js'
import { parseJsonBody } from './json-body.js'
import { decodedBody } from './body-encoding.js'
import { strictQueries } from './query-parameters.js'
import { installFaults, type FaultCounts, type FaultSpec } from './faults.js'
import { agentRoutes } from './routes/agent.js'
import { privateLocationRoutes } from './routes/private-locations.js'
import { schedulerRoutes } from './routes/scheduler.js'
import { sessionRoutes } from './routes/sessions.js'
import { heartbeatRoutes, isPing } from './routes/heartbeats.js'
import type { RunServices } from './scheduler/runs.js'
import { systemClock, type Clock } from '../runner/clock.js'
import { alertRoutes } from './routes/alerts.js'
import { alertChannelRoutes } from './routes/alert-channels.js'
import { analyticsRoutes } from './routes/analytics.js'
import { keyRoutes } from './routes/keys.js'
import { accountRoutes } from './routes/accounts.js'
import { isWeb, webRoutes } from './web/index.js'
import { isProbe, probeRoutes } from './probes.js'
import { serverNames, type ServerNames } from './names.js'
import { isMetricsOperator, metricsRoutes } from './routes/metrics.js'
import type { ServerMetrics } from './metrics.js'
import { DEFAULT_LIMITS, type ServerLimits } from './limits.js'

export const BODY_LIMIT = 1024 * 1024

export interface AppOptions {
  store: Store
  rateLimit: { max: number; timeWindowMs: number }
  ipv6s?: string[]
  /** one line per request, and internal errors; nothing when undefined */
  log?: (line: string) => void
  /** internal errors and the database away (default: `log`, else stderr) */
  warn?: (line: string) => void
  /** reproducible fault injection (see ./faults.ts) */
  faults?: { spec: FaultSpec; seed: number }
  /** the server's clock and the FINAL-result hook of check runs (default: the system clock, no hook) */
  runs?: RunServices
  /** aborted when the server starts closing: waiting requests (session completion) answer at once */
  closing?: AbortSignal
  /**
   * Which peers are trusted to say who the client is (X-Forwarded-For, -Proto, -Host): the
   * balancer's addresses or subnets (comma-separated, or `loopback`, `uniquelocal`…), or the
   * number of balancers in front; default none (the peer is the client). docs/security.md.
   */
  trustProxy?: string | string[] | number
  /** failed authentications allowed per client address and window (/v1 and the dashboard's log-in); default 10 per 60 s */
  authFailureLimit?: { max: number; timeWindowMs: number }
  /** the host names the server is reached under (see names.ts); default localhost and this machine's name */
  names?: ServerNames
  /** email subscriptions to status pages (on when the server sends email): wakes their sender */
  subscriptions?: { wake(): void }
  /** GET /metrics and what it counts; `token`: the operator's (server-wide) metrics token */
  metrics?: { registry: ServerMetrics; token?: string }
  /** where the artifacts of browser and multi-step runs are (none: their routes answer 404) */
  artifacts?: ArtifactStore
  /** what one account or client may make the server hold or send (limits.ts); default DEFAULT_LIMITS */
  limits?: ServerLimits
}

export const DEFAULT_AUTH_FAILURE_LIMIT = { max: 10, timeWindowMs: 60_000 } as const

const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops

/**
 * The Monitoring API as a fastify instance: bearer-key auth with roles, rate limit per key,
 * failed authentications throttled per client address, JSON bodies
 * up to 1 MiB, API.md's error bodies for every failure, and the resource routes.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance & { faultCounts?: FaultCounts }> {
  const { store, log } = options
  const clock: Clock = options.runs ?? systemClock
  const app = Fastify({
    logger: false,
    // a number of balancers: the hops from this server that are trusted (as proxy-addr counts them)
    ...(options.trustProxy === undefined ? {} : { trustProxy: typeof options.trustProxy === 'number' ? trustHops(options.trustProxy) : options.trustProxy }),
    bodyLimit: BODY_LIMIT,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // variable keys are up to 128 characters; longer path parameters answer 414
    routerOptions: { maxParamLength: 512 },
    // bad URLs and over-long parameters are found before routing; answer them in API.md's shape too
    frameworkErrors: (error, _request, reply) => {
      const status = (error as { statusCode?: number }).statusCode
      sendHttpError(
        reply,
        new HttpError(status && status >= 400 && status < 500 ? status : 400, status === 414 ? 'A path parameter is too long' : error.message),
      )
    },
  })

  // JSON bodies; an empty body with a JSON content type (common on DELETE) counts as no body.
  // Too deep nesting and prototype keys are refused here, for every route (see json-body.ts).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string
    if (text.trim() === '') return done(null, undefined)
    try {
      done(null, parseJsonBody(text))
    } catch (error) {
      done(error as HttpError, undefined)
    }
  })

  // a body sent with a Content-Encoding (gzip, deflate, br) is decoded as it arrives; the body
  // limit counts decoded bytes (body-encoding.ts); another encoding is a 415
  app.addHook('preParsing', async (request, _reply, payload) => {
    if (request.method === 'GET' || request.method === 'HEAD' || request.is404) return payload
    return decodedBody(payload, request.headers['content-encoding'], request.routeOptions.bodyLimit ?? BODY_LIMIT)
  })

  app.setErrorHandler(errorHandler(clock, (line) => (options.warn ?? log ?? ((l: string) => process.stderr.write(`${l}\n`)))(line)))
  app.setNotFoundHandler((request, reply) => sendHttpError(reply, routeNotFound(request)))

  const metrics = options.metrics
  if (metrics) {
    app.addHook('onResponse', async (request, reply) => {
      const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched')
      metrics.registry.recordRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000)
    })
  }

  if (log) {
    app.addHook('onResponse', async (request, reply) => {
      log(`${request.method} ${request.url} ${reply.statusCode} ${reply.elapsedTime.toFixed(1)}ms`)
    })
  }

  // an answer sent once closing has begun ends its connection: close() waits for open
  // connections, and a keep-alive client would hold one for the whole keep-alive timeout
  app.addHook('onSend', async (_request, reply) => {
    if (options.closing?.aborted) reply.header('connection', 'close')
  })

  // faults come first, so an injected 500 or 429 never reaches the routes
  const faults = options.faults ? installFaults(app, options.faults.spec, options.faults.seed, clock) : undefined

  // authentication, then the key's rate limit (see rate-limit.ts)
  // except pings (/ping/:pingToken): the token is their secret, and they spend no key's quota
  // one count per key in the database when the store keeps one (PostgreSQL: every server shares it)
  // failed authentications are counted per client address the same way (see auth.ts)
  const limiter = (limit: { max: number; timeWindowMs: number }): Limiter =>
    store.rateWindows ? new SharedRateLimiter(limit.max, limit.timeWindowMs, store.rateWindows, clock) : new RateLimiter(limit.max, limit.timeWindowMs, clock)
  const failures = limiter(options.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT)
  const auth = authHook({ store, limiter: limiter(options.rateLimit), failures, clock })
  // and the web pages (status pages, the dashboard): public, or behind their own session cookie
  // and the health probes (/-/readiness, /-/liveness): a balancer asks them without a key
  // and GET /metrics with the server's metrics token (the operator's, no account's)
  app.addHook('onRequest', async (request, reply) => {
    if (isPing(request) || isWeb(request) || isProbe(request)) return undefined
    if (isMetricsOperator(request, metrics?.token)) {
      request.metricsOperator = true
      return undefined
    }
    return auth(request, reply)
  })

  // every API route's query parameters, declared in one table: another name is a 400 (query-parameters.ts)
  strictQueries(app)
  registerRoutes(app, options, { failures, limiter })

  return Object.assign(app, { faultCounts: faults?.counts })
}

/** Every route of the API, the web pages and the probes (after the hooks above). */
function registerRoutes(
  app: FastifyInstance,
  options: AppOptions,
  counts: { failures: Limiter; limiter: (limit: { max: number; timeWindowMs: number }) => Limiter },
): void {
  const { store } = options
  const { failures } = counts
  const metrics = options.metrics
  const limits = options.limits ?? DEFAULT_LIMITS
  const clock: Clock = options.runs ?? systemClock
  checkRoutes(app, store)
  variableRoutes(app, store)
  const names = options.names ?? serverNames()
  statusPageRoutes(app, store, names, limits.statusPagesPerAccount)
  maintenanceWindowRoutes(app, store, clock)
  checkGroupRoutes(app, store)
  snippetRoutes(app, store)
  incidentRoutes(app, store, clock)
  runtimeRoutes(app)
  ipv6Routes(app, options.ipv6s)
  resultRoutes(app, store)
  assetRoutes(app, store, options.artifacts)
  const runs = options.runs ?? systemClock
  sessionRoutes(app, store, runs, options.closing ?? new AbortController().signal)
  agentRoutes(app, store, runs, options.artifacts, limits.stagedArtifactBytesPerAccount)
  privateLocationRoutes(app, store, runs)
  heartbeatRoutes(app, store, runs)
  alertRoutes(app, store)
  alertChannelRoutes(app, store)
  analyticsRoutes(app, store, runs)
  schedulerRoutes(app, store, runs)
  keyRoutes(app, store)
  const subscriptions = options.subscriptions && {
    wake: () => options.subscriptions?.wake(),
    perAddress: counts.limiter(limits.confirmationsPerAddress),
    perClient: counts.limiter(limits.subscriptionsPerClient),
  }
  accountRoutes(app, store)
  webRoutes(app, store, { now: runs.now, failures, names, subscriptions })
  badgeTokenRoutes(app, store, runs.now)
  probeRoutes(app, store, options.closing ?? new AbortController().signal)
  if (metrics) metricsRoutes(app, store, metrics.registry)
}
