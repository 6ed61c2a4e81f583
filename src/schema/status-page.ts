import { z } from 'zod'
import { omitKeys } from './omit.js'
import { THEMES, THEME_COLOR_FIELDS } from './enums.js'
import { queryNumber } from './paging.js'
import { cssColorSchema } from './colors.js'

export const STATUS_PAGE_URL_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/**
 * A status page's customDomain: a DNS name of dot-separated labels of letters, digits and -
 * (not starting or ending with -), at least two labels, at most 253 characters, the last label
 * not all digits (an IP address is not a domain). No scheme, port, path or trailing dot; an
 * international name in its xn-- form. Compared without case.
 */
export const CUSTOM_DOMAIN_PATTERN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?![0-9]+$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i

/** Body of POST /v1/status-pages/services and PUT /v1/status-pages/services/{id}. */
export const statusPageServiceSchema = z.object({
  name: z.string().min(1).max(200),
})

/** One theme of `themeColors`: the 12 fields, each a CSS colour (see colors.ts for the notations allowed). */
const themeSchema = z.object(
  Object.fromEntries(THEME_COLOR_FIELDS.map((f) => [f, cssColorSchema])) as Record<(typeof THEME_COLOR_FIELDS)[number], typeof cssColorSchema>,
)

export const statusPageCardSchema = z.object({
  name: z.string().min(1),
  id: z.string().optional(),
  statusPageId: z.string().optional(),
  services: z.array(z.object({ id: z.string().min(1) })).default([]),
})

/** Body of POST /v1/status-pages and PUT /v1/status-pages/{statusPageId}. */
export const statusPageSchema = z
  .object({
    id: z.unknown().optional(),
    name: z.string().min(1).max(200),
    url: z.string().regex(STATUS_PAGE_URL_PATTERN, {
      message: 'must be a lower-case slug of a-z, 0-9 and -, 1-63 characters, not starting or ending with -',
    }),
    cards: z.array(statusPageCardSchema),
    customDomain: z
      .string()
      .regex(CUSTOM_DOMAIN_PATTERN, {
        message:
          'must be a domain name such as status.example.com: dot-separated labels of letters, digits and - (no scheme, port, path or trailing dot; an international name in its xn-- form)',
      })
      .nullish(),
    themeColors: z.object({ light: themeSchema, dark: themeSchema }).optional(),
    logo: z.string().nullish(),
    redirectTo: z.string().nullish(),
    favicon: z.string().nullish(),
    defaultTheme: z.enum(THEMES).default('AUTO'),
    // an extension (docs/api.md, "Status pages"): each service's average response time over the last 24 hours; off when left out
    showResponseTime: z.boolean().optional(),
  })
  .transform((value) => omitKeys(value, ['id']))

export type StatusPageServiceInput = z.input<typeof statusPageServiceSchema>
export type StatusPageInput = z.input<typeof statusPageSchema>
export type StatusPage = z.output<typeof statusPageSchema>

/** Query of GET /v1/status-pages (cursor paging). */
export const statusPageListQuerySchema = z.object({
  limit: queryNumber(z.number().int().min(1).max(100)).default(20),
  nextId: z.string().min(1).optional(),
})
