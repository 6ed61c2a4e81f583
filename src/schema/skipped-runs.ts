import { z } from 'zod'
import { queryTime } from './paging.js'

/**
 * The query of GET /v1/scheduler/skipped-runs (the project's own route, docs/api.md): a window
 * of due times (`from`, `to`: unix seconds or ISO; default the last 24 hours, widened to whole
 * UTC hours) and an optional check.
 */
export const skippedRunsQuerySchema = z.object({
  from: queryTime.optional(),
  to: queryTime.optional(),
  checkId: z.string().min(1).max(200).optional(),
})
