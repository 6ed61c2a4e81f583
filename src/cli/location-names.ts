import type { ApiClient } from '../api/client.js'
import { listAllByPage } from '../api/paging.js'
import { mayBePrivateLocation } from '../schema/private-location.js'

/**
 * How a command shows a location to people: a public region as it is, a private location of the
 * account by its name with its slug (`Office Berlin (office-berlin)`), as results name it by slug
 * (their `runLocation`). The names are read once (GET /v1/private-locations), and only when one of
 * `locations` may be a private location's slug (not a public region, `local` nor `heartbeat`); a location the list does not know (or a target without the
 * route) stays its slug.
 */
export async function locationLabels(client: ApiClient, locations: Iterable<string | null | undefined>): Promise<(location: string) => string> {
  const asIs = (location: string) => location
  const others = [...locations].filter((l): l is string => typeof l === 'string' && mayBePrivateLocation(l))
  if (others.length === 0) return asIs
  let names: Map<string, string>
  try {
    const listed = await listAllByPage<{ id: string; slugName: string; name: string }>(client, '/v1/private-locations', { idOf: (l) => String(l.id) })
    names = new Map(listed.map((l) => [l.slugName, l.name]))
  } catch {
    // the names only dress the output: without them each location is shown by its slug
    return asIs
  }
  return (location) => {
    const name = names.get(location)
    return name === undefined || !mayBePrivateLocation(location) || name === location ? location : `${name} (${location})`
  }
}
