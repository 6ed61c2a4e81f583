/**
 * The dashboard's page of one result (/dashboard/results/{checkId}/{resultId}): its verdict and
 * error, and for a browser or multi-step run its tests, the screenshots shown inline and the
 * traces offered for `npx playwright show-trace`. The files come from the API's asset route
 * (GET /v1/check-results/{checkId}/{id}/assets/{name}) on behalf of the session's key, through
 * /dashboard/results/{checkId}/{resultId}/assets/{name}: another account's result is 404 here too.
 */
import type { FastifyInstance } from 'fastify'
import { asDashboard } from '../auth.js'
import { locationLabels } from './location-names.js'
import { esc, formatTime } from './html.js'
import { layout, messagePage, type Api } from './dashboard.js'
import type { WebSession } from './sessions.js'

interface AssetJson {
  type: string
  name: string
  contentType?: string
  bytes?: number
}

interface TestJson {
  title?: string[] | string
  status?: string
  duration?: number
  error?: { message?: string } | string | null
}

/** An asset route's answer, bytes and all, on behalf of the session's key. */
export async function assetFor(app: FastifyInstance, session: WebSession, url: string): Promise<{ status: number; contentType: string; body: Buffer }> {
  const caller = { accountId: session.accountId, keyId: session.keyId, role: session.role }
  const answer = await asDashboard(caller, () => app.inject({ method: 'GET', url }))
  return { status: answer.statusCode, contentType: String(answer.headers['content-type'] ?? 'application/octet-stream'), body: answer.rawPayload }
}

const pathOf = (name: string) => name.split('/').map(encodeURIComponent).join('/')

export async function resultPage(api: Api, session: WebSession, checkId: string, resultId: string): Promise<{ status: number; html: string }> {
  const base = `/v1/check-results/${encodeURIComponent(checkId)}/${encodeURIComponent(resultId)}`
  const [result, assets, check, labelOf] = await Promise.all([
    api('GET', base),
    api('GET', `${base}/assets`),
    api('GET', `/v1/checks/${encodeURIComponent(checkId)}`),
    locationLabels(api),
  ])
  if (result.status !== 200) return { status: 404, html: messagePage(session, 'Result not found', `The API has no result ${resultId} of check ${checkId}.`) }
  const r = result.json as {
    status: string
    runLocation: string
    startedAt: string
    responseTime: number | null
    error: string | null
    result?: { details?: { tests?: TestJson[] } }
  }
  const name = check.status === 200 ? String(check.json?.name ?? checkId) : checkId
  const files: AssetJson[] = assets.status === 200 && Array.isArray(assets.json?.assets) ? assets.json.assets : []
  const here = `/dashboard/results/${encodeURIComponent(checkId)}/${encodeURIComponent(resultId)}/assets/`
  const tests = Array.isArray(r.result?.details?.tests) ? (r.result?.details?.tests ?? []) : []
  const testRow = (t: TestJson) => {
    const title = Array.isArray(t.title) ? t.title.join(' › ') : String(t.title ?? '')
    const error = typeof t.error === 'string' ? t.error : (t.error?.message ?? '')
    return `<tr><td>${esc(title)}</td><td>${esc(String(t.status ?? ''))}</td><td>${typeof t.duration === 'number' ? `${Math.round(t.duration)} ms` : '–'}</td><td>${esc(error)}</td></tr>`
  }
  const shots = files.filter((f) => f.type === 'screenshot')
  const traces = files.filter((f) => f.type === 'trace')
  const others = files.filter((f) => f.type !== 'screenshot' && f.type !== 'trace')
  const body = `<h1>Result of <a href="/dashboard/checks/${encodeURIComponent(checkId)}">${esc(name)}</a></h1>
<p><strong data-result-status="${esc(r.status)}">${esc(r.status)}</strong> · <span data-run-location>${labelOf(r.runLocation)}</span> · <time datetime="${esc(r.startedAt)}">${esc(formatTime(r.startedAt, { seconds: true }))}</time>${r.responseTime === null ? '' : ` · ${Math.round(r.responseTime)} ms`}</p>
${r.error ? `<p data-result-error>${esc(r.error)}</p>` : ''}
${tests.length === 0 ? '' : `<h2>Tests</h2><div class="scroll"><table><thead><tr><th scope="col">Test</th><th scope="col">Status</th><th scope="col">Duration</th><th scope="col">Error</th></tr></thead><tbody>${tests.map(testRow).join('')}</tbody></table></div>`}
${shots.length === 0 ? '' : `<h2>Screenshots</h2>${shots.map((f) => `<figure><img src="${esc(here + pathOf(f.name))}" alt="Screenshot ${esc(f.name)}"><figcaption class="muted">${esc(f.name)}</figcaption></figure>`).join('')}`}
${traces.length === 0 ? '' : `<h2>Traces</h2><ul>${traces.map((f) => `<li><a href="${esc(here + pathOf(f.name))}" download data-trace>${esc(f.name)}</a></li>`).join('')}</ul><p class="muted">Open a downloaded trace with <code>npx playwright show-trace ${esc(traces[0].name.split('/').pop() ?? 'trace.zip')}</code>, or drop it on trace.playwright.dev.</p>`}
${others.length === 0 ? '' : `<h2>Logs and files</h2><ul>${others.map((f) => `<li><a href="${esc(here + pathOf(f.name))}">${esc(f.name)}</a></li>`).join('')}</ul>`}`
  return { status: 200, html: layout(`Result of ${name}`, body, session) }
}
