import { z } from 'zod'

/** A decimal number as a query string writes it: `10`, `1.0`, `-2`, `1e2`; not `0x10`, `Infinity` or an empty value. */
export const DECIMAL_TEXT = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/

const fromText = (value: unknown): unknown => (typeof value === 'string' && DECIMAL_TEXT.test(value) ? Number(value) : value)

/**
 * A number of a query string (`?limit=10`), checked by `schema`: decimal text is read as a
 * number (`1.0` is the whole number 1). An empty value, other text (`abc`, `0x10`, `Infinity`)
 * and a repeated parameter (an array) reach `schema` as they are and are refused there, so
 * that a 400 shows what was sent (never "must be at least 1 (got 0)" for `limit=`).
 */
export function queryNumber<S extends z.ZodType<number, number>>(schema: S) {
  return z.preprocess(fromText, schema)
}

/** Query of offset-paged lists (checks, variables, incidents, error groups, ...): limit 1–100 (default 10), page from 1. */
export const pageQuerySchema = z.object({
  limit: queryNumber(z.number().int().min(1).max(100)).default(10),
  page: queryNumber(z.number().int().min(1)).default(1),
})
