import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Store } from '../store/index.js'
import type { ServerMetrics } from '../metrics.js'
import { CONTENT_TYPE } from '../../runner/metrics.js'

/*
 * GET /metrics, Prometheus' text format (docs/metrics.md):
 * - with the server's metrics token (--metrics-token, MONITORING_SERVER_METRICS_TOKEN): the
 *   server's own metrics and every account's checks, each labelled with its account;
 * - with an API key of role read, write or admin: that account's checks and outbox only (the
 *   key's rate limit applies, as on /v1);
 * - else 401 (403 for an agent key), in API.md's error body.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    metrics?: boolean
  }
  interface FastifyRequest {
    /** the server's metrics token was given (GET /metrics only) */
    metricsOperator?: boolean
  }
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()

/** Whether the request is GET /metrics carrying the server's metrics token as its bearer. */
export function isMetricsOperator(request: FastifyRequest, token: string | undefined): boolean {
  if (!token || request.routeOptions.config?.metrics !== true) return false
  const header = request.headers.authorization
  const match = typeof header === 'string' ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null
  return match !== null && timingSafeEqual(digest(match[1]), digest(token))
}

export function metricsRoutes(app: FastifyInstance, store: Store, metrics: ServerMetrics): void {
  app.get('/metrics', { config: { metrics: true } }, async (request, reply) => {
    const scope = request.metricsOperator ? { operator: true as const } : { operator: false as const, account: request.accountId }
    const text = await metrics.render(store, scope)
    return reply.type(CONTENT_TYPE).header('cache-control', 'no-store').send(text)
  })
}
