import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { analyticsQuerySchema, metricSpecs, type AnalyticsCheckType, type AnalyticsQuery } from '../../schema/index.js'
import { failureKey } from '../auth.js'
import { hashKey } from '../keys.js'
import type { Limiter } from '../rate-limit.js'
import { analyticsAnswers, analyticsWindow } from '../results/analytics.js'
import type { StatusPageRecord, Store } from '../store/index.js'
import { ASSETS } from './assets.js'
import { assetFor, resultPage } from './result-page.js'
import { groupPage } from './group-page.js'
import {
  AnalyticsCache,
  DASHBOARD_CSP,
  METRICS,
  NO_FIGURES,
  TIME_METRIC,
  apiFor,
  checkListPage,
  checkPage,
  figureNames,
  formatFigures,
  loginPage,
  messagePage,
  sessionPage,
  type CheckJson,
  type Figures,
  type ListFigures,
  type PageContext,
} from './dashboard.js'
import { privateLocationsPage } from './locations-page.js'
import { sendHtml } from './html.js'
import { COOKIE, WebSessions, readCookie, sameToken, sessionCookie, type WebSession } from './sessions.js'
import { renderFeed } from './feed.js'
import { STATUS_PAGE_CSP, loadStatusPage, renderStatusPage, statusPageSummary } from './status-page.js'
import { FORM_CSP, subscriptionRoutes } from './subscribers.js'
import type { ServerNames } from '../names.js'

/*
 * What a person sees in a browser, served by the local service beside the API:
 * - status pages, public: /status/{url} (HTML, no script) and /status/{url}/summary.json; a
 *   page whose customDomain is the request's host is also served at / and /summary.json;
 *   a page with redirectTo answers its HTML address with a redirect there;
 * - the dashboard at /, behind a log-in with an API key of the account (read, write or admin;
 *   see ./sessions.ts), its pages and form posts under /dashboard/.
 * These routes carry `config.web` and are left alone by the API's key check (app.ts); they
 * check their own session.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    web?: boolean
  }
}

export const isWeb = (request: FastifyRequest): boolean => request.routeOptions.config?.web === true

const web = { config: { web: true } }
const READ_ONLY = 'This key is read-only: log in with a write or admin key of the account to change anything.'
const FORM_LIMIT = 16 * 1024

export interface WebOptions {
  now: () => number
  /** failed authentications per client address, shared with the API's (see auth.ts) */
  failures: Limiter
  /** the server's own host names: never answered with a custom-domain page */
  names: ServerNames
  /**
   * email subscriptions to status pages: on when the server sends email (wakes its sender), with
   * the counts of confirmations per email address and of subscriptions per client address
   */
  subscriptions?: { wake(): void; perAddress: Limiter; perClient: Limiter }
}

function origin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`
}

/** The request's host name without its port, lower case. */
function hostName(request: FastifyRequest): string {
  const host = (request.host ?? '').toLowerCase()
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '')
}

/**
 * The 24-hour figures of a list of checks, as the analytics routes compute them, from one read
 * of the account's rollups; each check's are kept a minute (they cover a day).
 */
/** The analytics query of a type's figures, and the names of its metrics; undefined when the type has none. */
function figuresQuery(type: AnalyticsCheckType): { query: AnalyticsQuery; names: ReturnType<typeof figureNames> } | undefined {
  // the type's own time metric, else responseTime (as the check page asks the route)
  const known = new Set(metricSpecs(type).map((m) => m.name))
  const base = [TIME_METRIC[type], 'responseTime'].find((b) => b !== null && known.has(`${b}_p50`) && known.has(`${b}_p95`)) ?? null
  const names = figureNames(base)
  const metrics = METRICS.map((m) => names[m]).filter((n): n is string => n !== null)
  const query = analyticsQuerySchema(type).safeParse({ quickRange: 'last24Hours', metrics: metrics.join(',') })
  return query.success ? { query: query.data, names } : undefined
}

function listFigures(store: Store, options: WebOptions, cache: AnalyticsCache<Figures>, accountId: string): ListFigures {
  return async (checks: CheckJson[]) => {
    const now = options.now()
    const out = new Map<string, Figures>()
    const asked: Array<{ checkId: string; type: AnalyticsCheckType; query: AnalyticsQuery; names: ReturnType<typeof figureNames> }> = []
    // one query per type (a schema is built for it), not per check
    const byType = new Map<string, ReturnType<typeof figuresQuery>>()
    for (const check of checks) {
      const kept = cache.get(`${accountId} ${check.id}`, now)
      if (kept) out.set(check.id, kept)
      else if (check.checkType in TIME_METRIC) {
        const type = check.checkType as AnalyticsCheckType
        if (!byType.has(type)) byType.set(type, figuresQuery(type))
        const figures = byType.get(type)
        if (figures) asked.push({ checkId: check.id, type, ...figures })
      }
    }
    if (asked.length === 0) return out
    const window = analyticsWindow({ quickRange: 'last24Hours' }, options.now())
    if ('error' in window) return out
    const answers = await analyticsAnswers(store, accountId, asked, window)
    for (const { checkId, names } of asked) {
      const answer = answers.get(checkId)
      const figures = answer && answer.entries.length === 1 ? formatFigures(answer.entries[0], names, answer.metadata) : { ...NO_FIGURES }
      cache.set(`${accountId} ${checkId}`, figures, now)
      out.set(checkId, figures)
    }
    return out
  }
}

/**
 * The page whose customDomain the request's host is, if any. Never one for the server's own
 * names or an IP address: whatever the database holds, the dashboard stays the server's.
 */
function customDomainPage(store: Store, names: ServerNames, request: FastifyRequest) {
  const host = hostName(request)
  if (host === '' || host.startsWith('[') || /^[\d.]+$/.test(host) || names.has(host)) return Promise.resolve(undefined)
  return store.statusPages.findPublic({ customDomain: host })
}

/** What the web routes share: the app (the dashboard calls the API through it), the store, the sessions and the figures kept. */
interface WebContext {
  app: FastifyInstance
  store: Store
  options: WebOptions
  sessions: WebSessions
  analytics: AnalyticsCache<Figures>
}

export function webRoutes(app: FastifyInstance, store: Store, options: WebOptions): void {
  const context: WebContext = { app, store, options, sessions: new WebSessions(store.webSessions, options), analytics: new AnalyticsCache<Figures>() }

  app.register(async (scope) => {
    // form posts of the dashboard (only in this scope; the API stays JSON only)
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)))
    })
    statusPageRoutes(scope, context)
    subscriptionRoutes(scope, store, { names: options.names, now: options.now, sending: options.subscriptions })
    logInRoutes(scope, context)
    dashboardRoutes(scope, context)
  })
}

// ---- status pages

type PageLinks = { html: string; summary: string; feed: string }

/** The links of the page at `/status/{url}`, or (base '') of a custom domain's page at `/`. */
function pageLinks(base: string): PageLinks {
  return { html: base || '/', summary: `${base}/summary.json`, feed: `${base}/feed.atom` }
}

/** A status page as HTML, as its summary or as its Atom feed; a page not found answers 404 in the same format. */
async function servePage(
  context: WebContext,
  request: FastifyRequest,
  reply: FastifyReply,
  found: { account: string; record: StatusPageRecord } | undefined,
  links: PageLinks,
  format: 'html' | 'json' | 'atom',
) {
  if (!found) {
    if (format === 'json')
      return reply.code(404).type('application/json; charset=utf-8').send({ statusCode: 404, error: 'Not Found', message: 'Status page not found' })
    if (format === 'atom') return reply.code(404).type('text/plain; charset=utf-8').header('x-content-type-options', 'nosniff').send('Status page not found')
    return sendHtml(
      reply,
      404,
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head><body><main><h1>No status page here</h1></main></body></html>',
      STATUS_PAGE_CSP,
    )
  }
  const redirect = found.record.page.redirectTo
  if (format === 'html' && redirect && /^https?:\/\//i.test(redirect)) {
    try {
      return reply.code(302).header('location', new URL(redirect).href).send()
    } catch {
      // not a URL: the page is served instead
    }
  }
  // ?refresh=off: the page does not reload itself (a reader who needs the time, WCAG 2.2.1)
  const refresh = (request.query as Record<string, unknown> | undefined)?.refresh !== 'off'
  const model = await loadStatusPage(context.store, found.account, found.record, context.options.now(), { refresh })
  if (format === 'json') return reply.header('cache-control', 'no-cache').header('access-control-allow-origin', '*').send(statusPageSummary(model, links))
  if (format === 'atom') {
    return reply
      .type('application/atom+xml; charset=utf-8')
      .headers({ 'cache-control': 'no-cache', 'access-control-allow-origin': '*', 'x-content-type-options': 'nosniff' })
      .send(renderFeed(model, origin(request), { html: links.html, self: links.feed }))
  }
  // with email subscriptions, the page's form posts to its own address (also from a custom domain)
  const subscribe = context.options.subscriptions ? { action: `/status/${encodeURIComponent(found.record.page.url)}/subscribe` } : undefined
  return sendHtml(reply, 200, renderStatusPage(model, links, subscribe), subscribe ? FORM_CSP : STATUS_PAGE_CSP, { 'cache-control': 'no-cache' })
}

/** /status/{url}, its summary.json and feed.atom, and those of the page of a custom domain (its HTML is at /, see logInRoutes). */
function statusPageRoutes(scope: FastifyInstance, context: WebContext): void {
  const { store, options } = context
  const byUrl = (format: 'html' | 'json' | 'atom') => async (request: FastifyRequest<{ Params: { url: string } }>, reply: FastifyReply) =>
    servePage(
      context,
      request,
      reply,
      await store.statusPages.findPublic({ url: request.params.url }),
      pageLinks(`/status/${encodeURIComponent(request.params.url)}`),
      format,
    )
  scope.get<{ Params: { url: string } }>('/status/:url', web, byUrl('html'))
  scope.get<{ Params: { url: string } }>('/status/:url/summary.json', web, byUrl('json'))
  scope.get<{ Params: { url: string } }>('/status/:url/feed.atom', web, byUrl('atom'))
  scope.get('/summary.json', web, async (request, reply) => {
    return servePage(context, request, reply, await customDomainPage(store, options.names, request), pageLinks(''), 'json')
  })
  scope.get('/feed.atom', web, async (request, reply) => {
    return servePage(context, request, reply, await customDomainPage(store, options.names, request), pageLinks(''), 'atom')
  })
}

// ---- the dashboard

function sessionOf(context: WebContext, request: FastifyRequest): Promise<WebSession | undefined> {
  return context.sessions.get(readCookie(request.headers.cookie, COOKIE))
}

/** A page of the dashboard: never cached. */
function html(reply: FastifyReply, status: number, text: string, extra: Record<string, string> = {}) {
  return sendHtml(reply, status, text, DASHBOARD_CSP, { 'cache-control': 'no-store', ...extra })
}

/** A form post of a logged-in user: same origin (when the browser says), and the session's token. */
async function postingSession(context: WebContext, request: FastifyRequest, reply: FastifyReply): Promise<WebSession | undefined> {
  const session = await sessionOf(context, request)
  const from = request.headers.origin
  const body = (request.body ?? {}) as Record<string, unknown>
  if (!session) {
    void reply.code(303).header('location', '/').send()
    return undefined
  }
  if ((from !== undefined && from !== origin(request)) || !sameToken(body.csrf, session.csrf)) {
    void html(reply, 403, messagePage(session, 'Refused', 'This form was not sent from this dashboard: reload the page and try again.'))
    return undefined
  }
  return session
}

/** / (a custom domain's status page, else the list of checks or the log-in form), log-in and log-out. */
function logInRoutes(scope: FastifyInstance, context: WebContext): void {
  const { app, store, options, sessions } = context
  scope.get<{ Querystring: { type?: string; tag?: string; refresh?: string } }>('/', web, async (request, reply) => {
    const page = await customDomainPage(store, options.names, request)
    if (page) return servePage(context, request, reply, page, pageLinks(''), 'html')
    const session = await sessionOf(context, request)
    if (!session) return html(reply, 200, loginPage())
    return html(
      reply,
      200,
      await checkListPage(apiFor(app, session), session, request.query ?? {}, listFigures(store, options, context.analytics, session.accountId), options.now()),
    )
  })

  scope.post('/dashboard/login', web, async (request, reply) => {
    const from = request.headers.origin
    if (from !== undefined && from !== origin(request)) return html(reply, 403, loginPage('This log-in was not sent from this dashboard.'))
    // failed log-ins count with the API's failed keys, per client address (--trust-proxy: the one behind the balancer)
    const address = failureKey(request.ip)
    const throttled = (seconds: number) =>
      html(reply, 429, loginPage(`Too many failed log-ins from this address: try again in ${seconds} s.`), { 'retry-after': String(seconds) })
    const counted = await options.failures.peek(address)
    if (counted.remaining === 0) return throttled(counted.resetSeconds)
    const key = (request.body as Record<string, unknown> | undefined)?.apiKey
    const known = typeof key === 'string' && key.length > 0 && key.length <= 512 ? await store.keys.find(hashKey(key.trim())) : undefined
    if (!known) {
      const failed = await options.failures.consume(address)
      if (!failed.allowed) return throttled(failed.resetSeconds)
      return html(reply, 401, loginPage('That API key is not known to this server.'))
    }
    if (known.role === 'agent') return html(reply, 403, loginPage('An agent key cannot log in: use a read, write or admin key of the account.'))
    const { id } = await sessions.create(known)
    return reply
      .code(303)
      .header('location', '/')
      .header('set-cookie', sessionCookie(id, request.protocol === 'https'))
      .header('cache-control', 'no-store')
      .send()
  })

  scope.post('/dashboard/logout', web, async (request, reply) => {
    const session = await postingSession(context, request, reply)
    if (!session) return reply
    await sessions.delete(session)
    return reply
      .code(303)
      .header('location', '/')
      .header('set-cookie', sessionCookie('', request.protocol === 'https', 0))
      .send()
  })
}

/** A check's or a group's public badge: create, rotate or revoke its token (through the API's token routes). */
function badgeTokenForms(scope: FastifyInstance, context: WebContext, kind: 'checks' | 'groups'): void {
  scope.post<{ Params: { id: string } }>(`/dashboard/${kind}/:id/badge-token`, web, async (request, reply) => {
    const session = await postingSession(context, request, reply)
    if (!session) return reply
    const action = (request.body as Record<string, unknown> | undefined)?.action
    const path = `/v1/badges/${kind}/${encodeURIComponent(request.params.id)}/token`
    const call: ['POST' | 'DELETE', string] | undefined =
      action === 'create' ? ['POST', path] : action === 'rotate' ? ['POST', `${path}/rotate`] : action === 'revoke' ? ['DELETE', path] : undefined
    if (!call) return html(reply, 400, messagePage(session, 'Not changed', 'Choose Create, Rotate or Revoke.'))
    const answer = await apiFor(context.app, session)(call[0], call[1])
    if (answer.status === 403) return html(reply, 403, messagePage(session, 'Not changed', READ_ONLY))
    if (answer.status >= 300) return html(reply, 404, messagePage(session, 'Not changed', String(answer.json?.message ?? 'The API did not change the badge.')))
    return reply
      .code(303)
      .header('location', `/dashboard/${kind}/${encodeURIComponent(request.params.id)}#public-badge`)
      .send()
  })
}

/** A page's clock, its query (its `refresh`) and the dashboard's origin. */
function pageContext(context: WebContext, request: FastifyRequest): PageContext {
  return { now: context.options.now(), query: (request.query ?? {}) as Record<string, unknown>, origin: origin(request) }
}

/** A result's page and its files (screenshots, traces), as the session's key reads them. */
function resultPageRoutes(scope: FastifyInstance, context: WebContext): void {
  const { app } = context
  scope.get<{ Params: { checkId: string; resultId: string } }>('/dashboard/results/:checkId/:resultId', web, async (request, reply) => {
    const session = await sessionOf(context, request)
    if (!session) return reply.code(303).header('location', '/').send()
    const page = await resultPage(apiFor(app, session), session, request.params.checkId, request.params.resultId)
    return html(reply, page.status, page.html)
  })

  // a result's screenshot, trace or log, from the API's asset route as the session's key
  scope.get<{ Params: { checkId: string; resultId: string; '*': string } }>('/dashboard/results/:checkId/:resultId/assets/*', web, async (request, reply) => {
    const session = await sessionOf(context, request)
    if (!session) return reply.code(303).header('location', '/').send()
    const { checkId, resultId } = request.params
    const name = request.params['*'].split('/').map(encodeURIComponent).join('/')
    const answer = await assetFor(app, session, `/v1/check-results/${encodeURIComponent(checkId)}/${encodeURIComponent(resultId)}/assets/${name}`)
    if (answer.status !== 200) return html(reply, 404, messagePage(session, 'Not found', 'This result has no such file.'))
    const download = request.params['*'].split('/').pop() ?? 'asset'
    const inline = answer.contentType.startsWith('image/')
    return reply
      .code(200)
      .type(answer.contentType)
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', `${inline ? 'inline' : 'attachment'}; filename="${download.replace(/[^\w.-]/g, '_')}"`)
      .send(answer.body)
  })
}

/** The dashboard's pages and form posts behind the log-in: each goes through the API as the session's key. */
function dashboardRoutes(scope: FastifyInstance, context: WebContext): void {
  const { app } = context
  scope.get<{ Params: { id: string } }>('/dashboard/checks/:id', web, async (request, reply) => {
    const session = await sessionOf(context, request)
    if (!session) return reply.code(303).header('location', '/').send()
    const page = await checkPage(apiFor(app, session), session, request.params.id, pageContext(context, request))
    return html(reply, page.status, page.html)
  })

  scope.post<{ Params: { id: string } }>('/dashboard/checks/:id/run', web, async (request, reply) => {
    const session = await postingSession(context, request, reply)
    if (!session) return reply
    const answer = await apiFor(app, session)('POST', '/v1/check-sessions/trigger', { target: { checkId: [request.params.id] } })
    const started = answer.status === 201 ? answer.json?.sessions?.[0]?.checkSessionId : undefined
    if (answer.status === 403) return html(reply, 403, messagePage(session, 'Not run', READ_ONLY))
    if (typeof started !== 'string')
      return html(reply, answer.status === 404 ? 404 : 400, messagePage(session, 'Not run', String(answer.json?.message ?? 'The API did not start a session.')))
    return reply
      .code(303)
      .header('location', `/dashboard/sessions/${encodeURIComponent(started)}`)
      .send()
  })

  badgeTokenForms(scope, context, 'checks')
  badgeTokenForms(scope, context, 'groups')

  scope.get<{ Params: { id: string } }>('/dashboard/groups/:id', web, async (request, reply) => {
    const session = await sessionOf(context, request)
    if (!session) return reply.code(303).header('location', '/').send()
    const page = await groupPage(apiFor(app, session), session, request.params.id, pageContext(context, request))
    return html(reply, page.status, page.html)
  })

  resultPageRoutes(scope, context)

  scope.get('/dashboard/private-locations', web, async (request, reply) => {
    const session = await sessionOf(context, request)
    if (!session) return reply.code(303).header('location', '/').send()
    return html(reply, 200, await privateLocationsPage(apiFor(app, session), session, context.options.now()))
  })

  scope.get<{ Params: { id: string } }>('/dashboard/sessions/:id', web, async (request, reply) => {
    const session = await sessionOf(context, request)
    if (!session) return reply.code(303).header('location', '/').send()
    const page = await sessionPage(apiFor(app, session), session, request.params.id)
    return html(reply, page.status, page.html)
  })

  scope.post<{ Params: { id: string } }>('/dashboard/error-groups/:id/archive', web, async (request, reply) => {
    const session = await postingSession(context, request, reply)
    if (!session) return reply
    const answer = await apiFor(app, session)('PATCH', `/v1/error-groups/${encodeURIComponent(request.params.id)}`, { archiveForEver: true })
    if (answer.status === 403) return html(reply, 403, messagePage(session, 'Not archived', READ_ONLY))
    if (answer.status !== 200)
      return html(reply, 404, messagePage(session, 'Not archived', String(answer.json?.message ?? 'The API did not archive the error group.')))
    return reply
      .code(303)
      .header('location', `/dashboard/checks/${encodeURIComponent(answer.json.checkId)}`)
      .send()
  })

  scope.get<{ Params: { id: string } }>('/dashboard/badges/:id', web, async (request, reply) => {
    const session = await sessionOf(context, request)
    if (!session) return reply.code(401).type('text/plain').send('Log in first')
    const answer = await apiFor(app, session)('GET', `/v1/badges/checks/${encodeURIComponent(request.params.id)}`)
    if (answer.status !== 200) return reply.code(answer.status).type('text/plain').send('No badge')
    return reply
      .type('image/svg+xml')
      .header('cache-control', 'no-store')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(answer.text)
  })

  scope.get<{ Params: { name: string } }>('/dashboard/assets/:name', web, async (request, reply) => {
    const asset = Object.hasOwn(ASSETS, request.params.name) ? ASSETS[request.params.name] : undefined
    if (!asset) return reply.code(404).type('text/plain').send('Not found')
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').send(asset.body())
  })
}
