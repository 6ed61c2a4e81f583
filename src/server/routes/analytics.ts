import type { FastifyInstance } from 'fastify'
import { ANALYTICS_ROUTES, CHECK_TYPE_TABLE, analyticsQuerySchema, metricNames, metricsQuerySchema, type AnalyticsCheckType } from '../../schema/index.js'
import { HttpError, notFound, parseOr400 } from '../errors.js'
import { analyticsAnswer, analyticsWindow } from '../results/analytics.js'
import type { Store } from '../store/index.js'
import type { RunServices } from '../scheduler/runs.js'
import { contentRange, sendJson } from './util.js'

/*
 * GET /v1/analytics/{api-checks,dns,icmp,heartbeat-checks}/{id}: a check's metrics over a
 * window, from its recorded results (the rollups of ../results/analytics.ts), and
 * GET /v1/analytics/metrics?checkType= listing a type's metric names. README "Analytics".
 */

export function analyticsRoutes(app: FastifyInstance, store: Store, services: RunServices): void {
  app.get('/v1/analytics/metrics', async (request) => {
    const { checkType } = parseOr400(metricsQuerySchema, request.query, 'query')
    return metricNames(checkType)
  })

  for (const [type, segment] of Object.entries(ANALYTICS_ROUTES) as Array<[AnalyticsCheckType, string]>) {
    const schema = analyticsQuerySchema(type)
    app.get<{ Params: { id: string } }>(`/v1/analytics/${segment}/:id`, async (request, reply) => {
      const query = parseOr400(schema, request.query, 'query')
      const check = await store.checks.get(request.accountId, request.params.id)
      if (!check || check.checkType !== type) throw notFound(CHECK_TYPE_TABLE[type].label)
      const window = analyticsWindow(query, services.now())
      if ('error' in window)
        throw new HttpError(400, `Query ${window.error}`, { source: 'query', keys: ['from', 'to'], issues: [{ path: 'from', message: window.error }] })
      const answer = await analyticsAnswer(store, request.accountId, check.id, type, query, window)
      const body = JSON.parse(check.json) as { name?: string; activated?: boolean; muted?: boolean; frequency?: number; tags?: string[] }
      const offset = (query.page - 1) * query.limit
      const page = answer.entries.slice(offset, offset + query.limit)
      reply.header('content-range', contentRange(offset, page.length, answer.entries.length))
      return sendJson(
        reply,
        200,
        JSON.stringify({
          checkId: check.id,
          name: body.name ?? '',
          checkType: type,
          activated: body.activated !== false,
          muted: body.muted === true,
          frequency: body.frequency ?? null,
          from: new Date(answer.from).toISOString(),
          to: new Date(answer.to).toISOString(),
          tags: body.tags ?? [],
          // API.md: each entry is a JSON-encoded object {bucketStart, runLocation?, statusCode?, <metric>: value}
          series: page.map((entry) => JSON.stringify(entry)),
          pagination: { page: query.page, limit: query.limit },
          metadata: answer.metadata,
        }),
      )
    })
  }
}
