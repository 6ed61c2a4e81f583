import { z } from 'zod'
import { LOCATIONS } from './enums.js'

/*
 * Private locations (reference: privateLocationCreate, privateLocationUpdate): named locations
 * of an account that only its agents serve, each with keys of its own. Checks and groups name
 * them by slug in `privateLocations`; their runs' location is that slug.
 */

/** The reference's slug: 1-30 letters, digits and hyphens, and never a public region's name. */
export const PRIVATE_LOCATION_SLUG = /^[a-zA-Z0-9-]{1,30}$/
const REGION_LIKE = /^(us(-gov)?|ap|ca|cn|eu|sa|af|me)-(central|(north|south)?(east|west)?)-\d+/

/** Where runs of no location are said to run: a check without locations (`local`), a heartbeat's pings. */
const RESERVED: ReadonlyMap<string, string> = new Map([
  ['local', 'it is where a check without locations runs'],
  ['heartbeat', "it is the location of a heartbeat check's results"],
])

/** Why a slug is not one a private location may have, or null when it may. */
export function privateLocationSlugProblem(slug: string): string | null {
  if (!PRIVATE_LOCATION_SLUG.test(slug)) return `must be 1 to 30 letters, digits and hyphens (got ${JSON.stringify(slug)})`
  if (REGION_LIKE.test(slug) || (LOCATIONS as readonly string[]).includes(slug))
    return `must not be a public location's name such as eu-west-1 (got ${JSON.stringify(slug)})`
  const reserved = RESERVED.get(slug)
  if (reserved) return `"${slug}" is reserved: ${reserved}`
  return null
}

/**
 * Whether a run's location may be a private location's slug: what the CLI and the dashboard ask
 * before showing it by the location's name (a public region, `local` and `heartbeat` are shown as
 * they are). One rule with the slugs a private location may take.
 */
export function mayBePrivateLocation(location: string): boolean {
  return privateLocationSlugProblem(location) === null
}

export const privateLocationSlugSchema = z.string().superRefine((slug, ctx) => {
  const problem = privateLocationSlugProblem(slug)
  if (problem) ctx.addIssue({ code: 'custom', message: problem, input: slug })
})

/**
 * `privateLocations` of a check or a group: slugs of the account's private locations, each once
 * (the server refuses one the account has none of; in code a construct's placeholder stands in).
 */
export const privateLocationsSchema = z
  .array(z.string().min(1).max(200))
  .max(100)
  .superRefine((slugs, ctx) => {
    slugs.forEach((slug, i) => {
      if (slugs.indexOf(slug) !== i)
        ctx.addIssue({ code: 'custom', path: [i], message: `names the private location ${JSON.stringify(slug)} twice`, input: slug })
    })
  })

const proxyUrl = z
  .url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' })
  .max(2048)
  .nullish()

/** Body of POST /v1/private-locations. */
export const privateLocationCreateSchema = z.object({
  name: z.string().min(1).max(200),
  slugName: privateLocationSlugSchema,
  icon: z.string().min(1).max(100).default('location'),
  proxyUrl,
})

/** Body of PUT /v1/private-locations/{id}: its slug never changes (a slugName sent must be the same). */
export const privateLocationUpdateSchema = z.object({
  name: z.string().min(1).max(200),
  slugName: z.string().optional(),
  icon: z.string().min(1).max(100).default('location'),
  proxyUrl,
  id: z.unknown().optional(),
  created_at: z.unknown().optional(),
  updated_at: z.unknown().optional(),
})

export type PrivateLocationCreate = z.output<typeof privateLocationCreateSchema>
