import { groupBadgeState } from '../results/badge.js'
import type { CheckStatusRecord } from '../store/index.js'
import { layout, messagePage, publicBadgeSection, type Api, type CheckJson } from './dashboard.js'
import { esc } from './html.js'
import type { WebSession } from './sessions.js'

/*
 * A check group's page on the dashboard: its checks' worst state, its keyed badge, its checks
 * (each linking to its page) and its public badge (an address and the Markdown for a README;
 * Create, Rotate, Revoke with a write or admin key). Made from the API's own routes.
 */

interface GroupJson {
  id: number
  name: string
  activated?: boolean
  muted?: boolean
  locations?: string[]
  checks?: string[]
}

interface StatusJson {
  checkId: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
}

const checkState = (s: StatusJson | undefined) => (!s ? 'unknown' : s.hasFailures || s.hasErrors ? 'failing' : s.isDegraded ? 'degraded' : 'passing')

export async function groupPage(api: Api, session: WebSession, id: string, origin = ''): Promise<{ status: number; html: string }> {
  const answer = /^[1-9][0-9]{0,15}$/.test(id) ? await api('GET', `/v1/check-groups/${id}`) : undefined
  if (answer?.status !== 200) return { status: 404, html: messagePage(session, 'Check group not found', `The API has no check group ${id}.`) }
  const g = answer.json as GroupJson
  const [checks, statuses, badge, token] = await Promise.all([
    api('GET', `/v1/check-groups/${id}/checks`),
    api('GET', '/v1/check-statuses'),
    api('GET', `/v1/badges/groups/${id}`),
    api('GET', `/v1/badges/groups/${id}/token`),
  ])
  const members: CheckJson[] = Array.isArray(checks.json) ? checks.json : []
  const byId = new Map((Array.isArray(statuses.json) ? statuses.json as StatusJson[] : []).map((s) => [s.checkId, s]))
  const state = groupBadgeState(g.activated !== false, members.map((c) => ({ status: byId.get(c.id) as unknown as CheckStatusRecord | undefined })))
  const csrf = `<input type="hidden" name="csrf" value="${esc(session.csrf)}">`
  const badgeImg = badge.status === 200 ? ` · <img src="data:image/svg+xml;base64,${Buffer.from(badge.text).toString('base64')}" alt="badge of ${esc(g.name)}" height="20">` : ''
  const rows = members.map((c) => {
    const s = checkState(byId.get(c.id))
    return `<tr data-check-id="${esc(c.id)}"><td><a href="/dashboard/checks/${encodeURIComponent(c.id)}">${esc(c.name)}</a></td><td>${esc(c.checkType)}</td><td class="state-${s}">${s}</td></tr>`
  })
  const body = `<h1>${esc(g.name)}</h1>
<p><span class="state-${state}">${state}</span> · check group ${esc(String(g.id))}${g.muted ? ' · muted' : ''}${badgeImg}</p>
<p class="muted">Locations: ${esc((g.locations ?? []).join(', ') || '–')}</p>
<h2>Checks</h2>
<div class="scroll"><table><caption class="muted">The group's checks and their newest run</caption><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Status</th></tr></thead>
<tbody>${rows.join('') || '<tr><td colspan="3">No checks in this group.</td></tr>'}</tbody></table></div>
${publicBadgeSection(session, { kind: 'groups', id: String(g.id), name: g.name }, token.status === 200 ? token.json : undefined, origin, csrf)}`
  return { status: 200, html: layout(g.name, body, session) }
}
