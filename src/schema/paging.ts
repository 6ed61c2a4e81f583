import { z } from 'zod'

/** Query of offset-paged lists (checks, variables, maintenance windows, ...). */
export const pageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(10),
  page: z.coerce.number().int().min(1).default(1),
})
