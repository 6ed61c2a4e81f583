import type { FastifyInstance } from 'fastify'
import { skippedRunsQuerySchema } from '../../schema/index.js'
import { HttpError, notFound, parseOr400 } from '../errors.js'
import { eachCheck, SKIP_REASONS, type SkipReason, type Store } from '../store/index.js'
import type { RunServices } from '../scheduler/runs.js'

/*
 * GET /v1/scheduler/skipped-runs (the project's own route, docs/api.md): the account's due runs
 * that were not run, counted per check, location and reason over a window of due times, and
 * the due runs waiting for a runner now (the backlog). A run that runs late is not here: only
 * the runs that never ran are.
 */

const HOUR = 3_600_000
const DAY = 86_400_000

export function schedulerRoutes(app: FastifyInstance, store: Store, services: RunServices): void {
  app.get('/v1/scheduler/skipped-runs', async (request) => {
    const query = parseOr400(skippedRunsQuerySchema, request.query, 'query')
    const now = services.now()
    const to = Math.ceil((query.to ?? now) / HOUR) * HOUR
    const from = Math.floor((query.from ?? (query.to ?? now) - DAY) / HOUR) * HOUR
    if (!(from < to))
      throw new HttpError(400, 'Query from must be before to', {
        source: 'query',
        keys: ['from', 'to'],
        issues: [{ path: 'from', message: 'must be before to' }],
      })
    const account = request.accountId
    const check = query.checkId === undefined ? undefined : await store.checks.get(account, query.checkId)
    if (query.checkId !== undefined && !check) throw notFound('Check')
    const [rows, backlog] = await Promise.all([store.runs.skipped(account, from, to, query.checkId), store.runs.backlog(now, account)])
    // the checks' names and types: the one check asked for, or the account's checks read by pages (not one read per check)
    const described = new Map<string, { name: string; checkType: string }>()
    const wanted = new Set(rows.map((r) => r.checkId))
    if (check) described.set(check.id, { name: String((JSON.parse(check.json) as { name?: unknown }).name ?? ''), checkType: check.checkType })
    else if (wanted.size > 0) {
      for await (const c of eachCheck<{ id: string; name?: unknown; checkType: string }>(store.checks, account)) {
        if (!wanted.has(c.id)) continue
        described.set(c.id, { name: String(c.name ?? ''), checkType: c.checkType })
        if (described.size === wanted.size) break
      }
    }
    const byReason = Object.fromEntries(SKIP_REASONS.map((r) => [r, 0])) as Record<SkipReason, number>
    const skipped = []
    for (const row of rows) {
      const about = described.get(row.checkId)
      if (!about) continue
      byReason[row.reason] = (byReason[row.reason] ?? 0) + row.count
      skipped.push({
        checkId: row.checkId,
        name: about.name,
        checkType: about.checkType,
        location: row.location,
        reason: row.reason,
        count: row.count,
        lastDueAt: new Date(row.lastDueAt).toISOString(),
      })
    }
    const waiting = backlog.reduce((n, b) => n + b.due, 0)
    const oldest = backlog.length > 0 ? Math.min(...backlog.map((b) => b.oldestDueAt)) : undefined
    return {
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      total: Object.values(byReason).reduce((n, c) => n + c, 0),
      byReason,
      skipped,
      backlog: {
        due: waiting,
        oldestDueAt: oldest === undefined ? null : new Date(oldest).toISOString(),
        locations: backlog.map((b) => ({ location: b.location, due: b.due, oldestDueAt: new Date(b.oldestDueAt).toISOString() })),
      },
    }
  })
}
