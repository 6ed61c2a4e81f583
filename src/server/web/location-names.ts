import { mayBePrivateLocation } from '../../schema/private-location.js'
import { esc } from './html.js'

/** What the dashboard asks the API (as the session's key): a GET answering JSON. */
type Get = (method: 'GET', url: string) => Promise<{ status: number; json: unknown }>

/** How the dashboard shows a location: a public region as it is, a private location by its name. */
export type LocationLabel = (location: string) => string

/**
 * The names of the account's private locations (GET /v1/private-locations, docs/agents.md),
 * as a label of each location: `Office Berlin (office-berlin)`, HTML-escaped; a public region,
 * or a slug the list does not know, as it is. Results keep naming a location by its slug.
 */
export async function locationLabels(api: Get): Promise<LocationLabel> {
  const answer = await api('GET', '/v1/private-locations')
  const names = new Map<string, string>()
  if (answer.status === 200 && Array.isArray(answer.json)) {
    for (const l of answer.json as Array<{ slugName?: unknown; name?: unknown }>) {
      if (typeof l.slugName === 'string' && typeof l.name === 'string' && mayBePrivateLocation(l.slugName)) names.set(l.slugName, l.name)
    }
  }
  return (location) => {
    const name = names.get(location)
    return name === undefined || name === location ? esc(location) : `${esc(name)} <span class="muted">(${esc(location)})</span>`
  }
}

/** The label of each location, for a page that shows none of the private ones. */
export const plainLabels: LocationLabel = (location) => esc(location)
