import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { hashKey } from '../keys.js'
import type { StatusPageRecord, Store } from '../store/index.js'
import { ASSETS } from './assets.js'
import { AnalyticsCache, DASHBOARD_CSP, apiFor, checkListPage, checkPage, loginPage, messagePage, sessionPage } from './dashboard.js'
import { sendHtml } from './html.js'
import { COOKIE, LoginThrottle, WebSessions, readCookie, sameToken, sessionCookie, type WebSession } from './sessions.js'
import { STATUS_PAGE_CSP, loadStatusPage, renderStatusPage, statusPageSummary } from './status-page.js'
import type { ServerNames } from '../names.js'

/*
 * What a person sees in a browser, served by the local service beside the API:
 * - status pages, public: /status/{url} (HTML, no script) and /status/{url}/summary.json; a
 *   page whose customDomain is the request's host is also served at / and /summary.json;
 *   a page with redirectTo answers its HTML address with a redirect there;
 * - the dashboard at /, behind a log-in with the account's API key (see ./sessions.ts), its
 *   pages and form posts under /dashboard/.
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
const FORM_LIMIT = 16 * 1024

export interface WebOptions {
  now: () => number
  /** the server's own host names: never answered with a custom-domain page */
  names: ServerNames
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
 * The page whose customDomain the request's host is, if any. Never one for the server's own
 * names or an IP address: whatever the database holds, the dashboard stays the server's.
 */
function customDomainPage(store: Store, names: ServerNames, request: FastifyRequest) {
  const host = hostName(request)
  if (host === '' || host.startsWith('[') || /^[\d.]+$/.test(host) || names.has(host)) return Promise.resolve(undefined)
  return store.statusPages.findPublic({ customDomain: host })
}

export function webRoutes(app: FastifyInstance, store: Store, options: WebOptions): void {
  const sessions = new WebSessions()
  const throttle = new LoginThrottle()
  const analytics = new AnalyticsCache()

  app.register(async (scope) => {
    // form posts of the dashboard (only in this scope; the API stays JSON only)
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)))
    })

    // ---- status pages

    async function servePage(reply: FastifyReply, found: { account: string; record: StatusPageRecord } | undefined, links: { html: string; summary: string }, format: 'html' | 'json') {
      if (!found) {
        if (format === 'json') return reply.code(404).type('application/json; charset=utf-8').send({ statusCode: 404, error: 'Not Found', message: 'Status page not found' })
        return sendHtml(reply, 404, '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head><body><main><h1>No status page here</h1></main></body></html>', STATUS_PAGE_CSP)
      }
      const redirect = found.record.page.redirectTo
      if (format === 'html' && redirect && /^https?:\/\//i.test(redirect)) {
        try {
          return reply.code(302).header('location', new URL(redirect).href).send()
        } catch {
          // not a URL: the page is served instead
        }
      }
      const model = await loadStatusPage(store, found.account, found.record, options.now())
      if (format === 'json') return reply.header('cache-control', 'no-cache').header('access-control-allow-origin', '*').send(statusPageSummary(model, links))
      return sendHtml(reply, 200, renderStatusPage(model, links.summary), STATUS_PAGE_CSP, { 'cache-control': 'no-cache' })
    }

    scope.get<{ Params: { url: string } }>('/status/:url', web, async (request, reply) => {
      const base = `/status/${encodeURIComponent(request.params.url)}`
      return servePage(reply, await store.statusPages.findPublic({ url: request.params.url }), { html: base, summary: `${base}/summary.json` }, 'html')
    })
    scope.get<{ Params: { url: string } }>('/status/:url/summary.json', web, async (request, reply) => {
      const base = `/status/${encodeURIComponent(request.params.url)}`
      return servePage(reply, await store.statusPages.findPublic({ url: request.params.url }), { html: base, summary: `${base}/summary.json` }, 'json')
    })
    scope.get('/summary.json', web, async (request, reply) => {
      return servePage(reply, await customDomainPage(store, options.names, request), { html: '/', summary: '/summary.json' }, 'json')
    })

    // ---- the dashboard

    const sessionOf = (request: FastifyRequest): WebSession | undefined => sessions.get(readCookie(request.headers.cookie, COOKIE))
    const html = (reply: FastifyReply, status: number, text: string, extra: Record<string, string> = {}) =>
      sendHtml(reply, status, text, DASHBOARD_CSP, { 'cache-control': 'no-store', ...extra })

    /** A form post of a logged-in user: same origin (when the browser says), and the session's token. */
    function postingSession(request: FastifyRequest, reply: FastifyReply): WebSession | undefined {
      const session = sessionOf(request)
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

    scope.get<{ Querystring: { type?: string; tag?: string } }>('/', web, async (request, reply) => {
      const page = await customDomainPage(store, options.names, request)
      if (page) return servePage(reply, page, { html: '/', summary: '/summary.json' }, 'html')
      const session = sessionOf(request)
      if (!session) return html(reply, 200, loginPage())
      return html(reply, 200, await checkListPage(apiFor(app, session, analytics), session, request.query ?? {}))
    })

    scope.post('/dashboard/login', web, async (request, reply) => {
      const from = request.headers.origin
      if (from !== undefined && from !== origin(request)) return html(reply, 403, loginPage('This log-in was not sent from this dashboard.'))
      const wait = throttle.waitSeconds(request.ip)
      if (wait > 0) return html(reply, 429, loginPage(`Too many failed log-ins from this address: try again in ${wait} s.`), { 'retry-after': String(wait) })
      const key = (request.body as Record<string, unknown> | undefined)?.apiKey
      const known = typeof key === 'string' && key.length > 0 && key.length <= 512 ? await store.keys.find(hashKey(key.trim())) : undefined
      if (!known) {
        throttle.failed(request.ip)
        return html(reply, 401, loginPage('That API key is not known to this server.'))
      }
      const session = sessions.create((key as string).trim(), known.accountId)
      return reply.code(303).header('location', '/').header('set-cookie', sessionCookie(session.id, request.protocol === 'https')).header('cache-control', 'no-store').send()
    })

    scope.post('/dashboard/logout', web, async (request, reply) => {
      const session = postingSession(request, reply)
      if (!session) return reply
      sessions.delete(session.id)
      return reply.code(303).header('location', '/').header('set-cookie', sessionCookie('', request.protocol === 'https', 0)).send()
    })

    scope.get<{ Params: { id: string } }>('/dashboard/checks/:id', web, async (request, reply) => {
      const session = sessionOf(request)
      if (!session) return reply.code(303).header('location', '/').send()
      const page = await checkPage(apiFor(app, session, analytics), session, request.params.id)
      return html(reply, page.status, page.html)
    })

    scope.post<{ Params: { id: string } }>('/dashboard/checks/:id/run', web, async (request, reply) => {
      const session = postingSession(request, reply)
      if (!session) return reply
      const answer = await apiFor(app, session)('POST', '/v1/check-sessions/trigger', { target: { checkId: [request.params.id] } })
      const started = answer.status === 201 ? answer.json?.sessions?.[0]?.checkSessionId : undefined
      if (typeof started !== 'string') return html(reply, answer.status === 404 ? 404 : 400, messagePage(session, 'Not run', String(answer.json?.message ?? 'The API did not start a session.')))
      return reply.code(303).header('location', `/dashboard/sessions/${encodeURIComponent(started)}`).send()
    })

    scope.get<{ Params: { id: string } }>('/dashboard/sessions/:id', web, async (request, reply) => {
      const session = sessionOf(request)
      if (!session) return reply.code(303).header('location', '/').send()
      const page = await sessionPage(apiFor(app, session), session, request.params.id)
      return html(reply, page.status, page.html)
    })

    scope.post<{ Params: { id: string } }>('/dashboard/error-groups/:id/archive', web, async (request, reply) => {
      const session = postingSession(request, reply)
      if (!session) return reply
      const answer = await apiFor(app, session)('PATCH', `/v1/error-groups/${encodeURIComponent(request.params.id)}`, { archiveForEver: true })
      if (answer.status !== 200) return html(reply, 404, messagePage(session, 'Not archived', String(answer.json?.message ?? 'The API did not archive the error group.')))
      return reply.code(303).header('location', `/dashboard/checks/${encodeURIComponent(answer.json.checkId)}`).send()
    })

    scope.get<{ Params: { id: string } }>('/dashboard/badges/:id', web, async (request, reply) => {
      const session = sessionOf(request)
      if (!session) return reply.code(401).type('text/plain').send('Log in first')
      const answer = await apiFor(app, session)('GET', `/v1/badges/checks/${encodeURIComponent(request.params.id)}`)
      if (answer.status !== 200) return reply.code(answer.status).type('text/plain').send('No badge')
      return reply.type('image/svg+xml').header('cache-control', 'no-store').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'").send(answer.text)
    })

    scope.get<{ Params: { name: string } }>('/dashboard/assets/:name', web, async (request, reply) => {
      const asset = Object.hasOwn(ASSETS, request.params.name) ? ASSETS[request.params.name] : undefined
      if (!asset) return reply.code(404).type('text/plain').send('Not found')
      return reply.type(asset.type).header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').send(asset.body())
    })
  })
}
