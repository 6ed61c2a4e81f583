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

/** A boolean of a query string: `true` or `false`, as the reference writes them. */
export const queryBoolean = z
  .string()
  .superRefine((text, ctx) => {
    if (text !== 'true' && text !== 'false') ctx.addIssue({ code: 'custom', message: `must be true or false (got ${JSON.stringify(text.slice(0, 40))})` })
  })
  .transform((text) => text === 'true')

/** The last second of 9999-12-31: a larger "UNIX timestamp in seconds" is a time in milliseconds sent by mistake. */
export const UNIX_SECONDS_MAX = 253_402_300_799

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/

/**
 * A time of a query string (`from`, `to` of the reference's lists): a UNIX timestamp in seconds
 * (`1767225600`, fractions allowed), or an ISO 8601 date or date-time (`2026-01-01`,
 * `2026-01-01T12:00:00Z`; without a zone, UTC). Read as milliseconds, rounded up to a whole one.
 */
export const queryTime = z.string().transform((text, ctx) => {
  const seconds = DECIMAL_TEXT.test(text) ? Number(text) : undefined
  if (seconds !== undefined) {
    if (Number.isFinite(seconds) && seconds >= 0 && seconds <= UNIX_SECONDS_MAX) return Math.ceil(seconds * 1000)
    ctx.addIssue({
      code: 'custom',
      message: `must be a UNIX timestamp in seconds from 0 to ${UNIX_SECONDS_MAX} (9999-12-31; a time in milliseconds is 1000 times larger) (got ${JSON.stringify(text.slice(0, 40))})`,
    })
    return z.NEVER
  }
  const trimmed = text.trim()
  const ms = ISO_DATE.test(trimmed) ? Date.parse(/[T ]\d{2}:\d{2}/.test(trimmed) && !/(?:Z|[+-]\d{2}:?\d{2})$/.test(trimmed) ? `${trimmed}Z` : trimmed) : NaN
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms)
  ctx.addIssue({ code: 'custom', message: `must be a UNIX timestamp in seconds or an ISO 8601 date or date-time (got ${JSON.stringify(text.slice(0, 40))})` })
  return z.NEVER
})

/** `from` before `to` when both are given: the problem named on both (keys `from`, `to`). */
export function rangeProblem(range: { from?: number; to?: number }): Array<{ path: string; message: string }> {
  if (range.from === undefined || range.to === undefined || range.from < range.to) return []
  const shown = (ms: number) => new Date(ms).toISOString()
  const message = `must be before to (got from ${shown(range.from)}, to ${shown(range.to)})`
  return [
    { path: 'from', message },
    { path: 'to', message: `must be after from (got from ${shown(range.from)}, to ${shown(range.to)})` },
  ]
}
