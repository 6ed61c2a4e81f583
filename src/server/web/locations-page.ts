import { headOf, layout, type Api } from './dashboard.js'
import { esc } from './html.js'
import { agoElement } from './refresh.js'
import type { WebSession } from './sessions.js'

/** A private location as GET /v1/private-locations answers it (src/server/routes/private-locations.ts). */
interface LocationJson {
  id: string
  name: string
  slugName: string
  agentCount: number
  lastSeen: string | null
  queueSize: number
  oldestScheduledCheckRun: string | null
}

export const LOCATION_COLUMNS = ['Name', 'Slug', 'Health', 'Live agents', 'Last seen', 'Runs waiting']

/** A location without a live agent runs nothing: its due runs wait (docs/agents.md, "Private locations"). */
function healthOf(l: LocationJson): { state: 'passing' | 'degraded' | 'failing'; text: string } {
  if (l.agentCount === 0) return { state: 'failing', text: 'no live agent' }
  return l.queueSize > 0 ? { state: 'degraded', text: 'runs waiting' } : { state: 'passing', text: 'serving' }
}

function locationRow(l: LocationJson, now: number): string {
  const health = healthOf(l)
  return `<tr data-location="${esc(l.slugName)}">
<td>${esc(l.name)}</td>
<td><code>${esc(l.slugName)}</code></td>
<td class="state-${health.state}" data-health>${health.text}</td>
<td data-agents>${l.agentCount}</td>
<td data-last-seen>${l.lastSeen ? agoElement(l.lastSeen, now) : 'never'}</td>
<td data-queue>${l.queueSize}${l.oldestScheduledCheckRun ? ` <span class="muted">(oldest due ${agoElement(l.oldestScheduledCheckRun, now)})</span>` : ''}</td>
</tr>`
}

/** The account's private locations with what their agents do (the API's agentCount, lastSeen, queueSize), as the session's key reads them. */
export async function privateLocationsPage(api: Api, session: WebSession, now: number): Promise<string> {
  const answer = await api('GET', '/v1/private-locations')
  if (answer.status !== 200 || !Array.isArray(answer.json)) {
    return layout(
      'Private locations',
      '<h1>Private locations</h1><p class="error" role="alert">The API did not answer the list of private locations.</p>',
      session,
    )
  }
  const locations = answer.json as LocationJson[]
  return layout(
    'Private locations',
    `<h1>Private locations</h1>
<p class="muted">Locations of the account that only its own agents serve (<code>monitors agent</code> with a key of the location). A live agent claimed within its heartbeat; runs waiting are due runs no agent holds.</p>
<div class="scroll"><table class="locations stack">
<caption class="muted">Private locations of account ${esc(session.accountId)}</caption>
${headOf(LOCATION_COLUMNS)}
<tbody>${locations.map((l) => locationRow(l, now)).join('') || `<tr><td colspan="${LOCATION_COLUMNS.length}">No private locations.</td></tr>`}</tbody>
</table></div>`,
    session,
  )
}
