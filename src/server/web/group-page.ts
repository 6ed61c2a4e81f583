import { groupBadgeState } from '../results/badge.js'
import type { CheckStatusRecord } from '../store/index.js'
import { MEMBER_COLUMNS, headOf, layout, messagePage, publicBadgeSection, type Api, type CheckJson, type GroupJson, type PageContext } from './dashboard.js'
import { esc } from './html.js'
import { locationLabels } from './location-names.js'
import { agoElement, refreshBar, refreshHead, refreshSeconds } from './refresh.js'
import type { WebSession } from './sessions.js'

/*
 * A check group's page on the dashboard: its checks' worst state, its locations, its keyed
 * badge, its checks (each linking to its page, with its last run and where it runs: the group's
 * settings applied, as the group's checks route answers them) and its public badge (an address
 * and the Markdown for a README; Create, Rotate, Revoke with a write or admin key). Made from
 * the API's own routes; it refreshes itself as the list of checks does (refresh.ts).
 */

interface StatusJson {
  checkId: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  created_at: string
  updated_at: string | null
}

const checkState = (s: StatusJson | undefined) => (!s ? 'unknown' : s.hasFailures || s.hasErrors ? 'failing' : s.isDegraded ? 'degraded' : 'passing')

export async function groupPage(api: Api, session: WebSession, id: string, page: PageContext): Promise<{ status: number; html: string }> {
  const answer = /^[1-9][0-9]{0,15}$/.test(id) ? await api('GET', `/v1/check-groups/${id}`) : undefined
  if (answer?.status !== 200) return { status: 404, html: messagePage(session, 'Check group not found', `The API has no check group ${id}.`) }
  const g = answer.json as GroupJson
  const [checks, statuses, badge, token, labelOf] = await Promise.all([
    api('GET', `/v1/check-groups/${id}/checks`),
    api('GET', '/v1/check-statuses'),
    api('GET', `/v1/badges/groups/${id}`),
    api('GET', `/v1/badges/groups/${id}/token`),
    locationLabels(api),
  ])
  const where = (l: { locations?: string[] | null; privateLocations?: string[] | null }) =>
    [...(l.locations ?? []), ...(l.privateLocations ?? [])].map(labelOf).join(', ')
  const members: CheckJson[] = Array.isArray(checks.json) ? checks.json : []
  const byId = new Map((Array.isArray(statuses.json) ? (statuses.json as StatusJson[]) : []).map((s) => [s.checkId, s]))
  const state = groupBadgeState(
    g.activated !== false,
    members.map((c) => ({ status: byId.get(c.id) as unknown as CheckStatusRecord | undefined })),
  )
  const csrf = `<input type="hidden" name="csrf" value="${esc(session.csrf)}">`
  const badgeImg =
    badge.status === 200
      ? ` · <img src="data:image/svg+xml;base64,${Buffer.from(badge.text).toString('base64')}" alt="badge of ${esc(g.name)}" height="20">`
      : ''
  const refresh = refreshSeconds(page.query.refresh)
  const rows = members.map((c) => {
    const status = byId.get(c.id)
    const s = checkState(status)
    return (
      `<tr data-check-id="${esc(c.id)}"><td><a href="/dashboard/checks/${encodeURIComponent(c.id)}">${esc(c.name)}</a></td><td>${esc(c.checkType)}</td><td class="state-${s}">${s}</td>` +
      `<td data-last-run>${status ? agoElement(status.updated_at ?? status.created_at, page.now) : '–'}</td><td data-locations>${where(c) || '–'}</td></tr>`
    )
  })
  const body = `<h1>${esc(g.name)}</h1>
${refreshBar(refresh, page.now, `/dashboard/groups/${encodeURIComponent(String(g.id))}`, page.query)}
<p><span class="state-${state}">${state}</span> · check group ${esc(String(g.id))}${g.muted ? ' · muted' : ''}${badgeImg}</p>
<p class="muted" data-group-locations>Locations: ${where(g) || 'none set: each check runs in its own'}</p>
<h2>Checks</h2>
<div class="scroll"><table class="members stack"><caption class="muted">The group's checks, their newest run and where they run (the group's locations for a check that names none)</caption>${headOf(MEMBER_COLUMNS)}
<tbody>${rows.join('') || `<tr><td colspan="${MEMBER_COLUMNS.length}">No checks in this group.</td></tr>`}</tbody></table></div>
${publicBadgeSection(session, { kind: 'groups', id: String(g.id), name: g.name }, token.status === 200 ? token.json : undefined, page.origin ?? '', csrf)}`
  return { status: 200, html: layout(g.name, body, session, refreshHead(refresh)) }
}
