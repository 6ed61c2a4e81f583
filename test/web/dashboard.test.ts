/**
 * The dashboard's log-in and form posts over HTTP, against the real local server: the key is
 * posted once and never comes back (not in a URL, not in the cookie), the cookie is HttpOnly
 * and SameSite=Strict, posts need the session's token and this origin, log-out ends the
 * session. A real browser using it: browser.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SERVICE_CHECK_TYPES } from '../../src/schema/check-types.js'
import type { LocalServer } from '../../src/server/index.js'
import { KEY_A, KEY_B, caller, dnsBody, icmpBody, startTestServer } from '../server/helpers.js'

let server: LocalServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server?.close()
})

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

async function post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: form(fields),
  })
}

async function logIn(): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const answer = await post('/dashboard/login', { apiKey: KEY_A }, { origin: server.url })
  expect(answer.status).toBe(303)
  const setCookie = answer.headers.get('set-cookie') ?? ''
  const cookie = setCookie.split(';')[0]
  const home = await (await fetch(`${server.url}/`, { headers: { cookie } })).text()
  const csrf = /name="csrf" value="([^"]+)"/.exec(home)?.[1] ?? ''
  return { cookie, csrf, setCookie }
}

describe('dashboard log-in', () => {
  it('shows a log-in form at / without a session, and refuses an unknown key without a cookie', async () => {
    const home = await fetch(`${server.url}/`)
    expect(home.status).toBe(200)
    const html = await home.text()
    expect(html).toMatch(/<form method="post" action="\/dashboard\/login">/)
    expect(html).toContain('type="password"')
    const wrong = await post('/dashboard/login', { apiKey: 'not-a-key' })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('set-cookie')).toBeNull()
    expect(await wrong.text()).toContain('That API key is not known to this server.')
  })

  it('answers a known key with an HttpOnly, SameSite=Strict session cookie holding a random id, never the key', async () => {
    const first = await logIn()
    expect(first.setCookie).toMatch(/^monitors_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/)
    expect(first.setCookie).not.toContain(KEY_A)
    const second = await logIn()
    expect(second.cookie).not.toBe(first.cookie)
    const page = await (await fetch(`${server.url}/`, { headers: { cookie: first.cookie } })).text()
    expect(page).toContain('Checks of account acc-a')
    expect(page).not.toContain(KEY_A)
    // a forged cookie is no session
    expect(await (await fetch(`${server.url}/`, { headers: { cookie: 'monitors_session=forged' } })).text()).toContain('action="/dashboard/login"')
  })

  it('lists the checks as the API answers them, filtered by type and tag', async () => {
    const api = caller(server)
    for (const [path, body] of [
      ['/v1/checks/dns', dnsBody({ name: 'web dns', tags: ['web'], activated: false })],
      ['/v1/checks/dns', dnsBody({ name: 'db dns', tags: ['db'], activated: false })],
      ['/v1/checks/icmp', icmpBody({ name: 'web ping', tags: ['web'], activated: false })],
    ] as const)
      expect((await api('POST', path, body)).status).toBe(201)
    const { cookie } = await logIn()
    const names = async (query: string) => {
      const html = await (await fetch(`${server.url}/${query}`, { headers: { cookie } })).text()
      return [...html.matchAll(/<a href="\/dashboard\/checks\/[^"]+">([^<]+)<\/a>/g)].map((m) => m[1]).sort()
    }
    expect(await names('')).toEqual(['db dns', 'web dns', 'web ping'])
    expect(await names('?tag=web')).toEqual(['web dns', 'web ping'])
    expect(await names('?type=DNS&tag=web')).toEqual(['web dns'])
    expect(await names('?type=ICMP')).toEqual(['web ping'])
    // the filter offers every type of the check-type table, and the list the API answers for each is shown
    const home = await (await fetch(`${server.url}/`, { headers: { cookie } })).text()
    const offered = [...home.matchAll(/<option value="([A-Z_]+)"/g)].map((m) => m[1])
    expect(offered).toEqual(SERVICE_CHECK_TYPES)
    for (const type of SERVICE_CHECK_TYPES) {
      const page = await (await fetch(`${server.url}/?type=${type}`, { headers: { cookie } })).text()
      expect(page, type).toContain(`<option value="${type}" selected>`)
      expect(page, type).not.toContain('The API did not answer the list of checks.')
    }
    // no analytics answer here (404): the figures are –, not invented
    const html = await (await fetch(`${server.url}/`, { headers: { cookie } })).text()
    expect(html).toMatch(/<td data-metric="availability">–<\/td>/)
    expect(html).toContain('<td class="state-unknown">unknown<span class="muted"> · paused</span></td>')
  })

  it('lists every check of a list longer than a page, following the list by keyset, filters kept', async () => {
    const api = caller(server)
    for (let i = 0; i < 230; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          api('POST', '/v1/checks/dns', dnsBody({ name: `bulk ${String(i + j).padStart(3, '0')}`, tags: ['bulk'], activated: false })),
        ),
      )
    }
    const { cookie } = await logIn()
    const html = await (await fetch(`${server.url}/?tag=bulk`, { headers: { cookie } })).text()
    const names = [...html.matchAll(/<a href="\/dashboard\/checks\/[^"]+">(bulk \d+)<\/a>/g)].map((m) => m[1]).sort()
    expect(names).toEqual(Array.from({ length: 230 }, (_, i) => `bulk ${String(i).padStart(3, '0')}`))
  })

  it('refuses a post without the session token or from another origin, and log-out ends the session', async () => {
    const { cookie, csrf } = await logIn()
    const check = await caller(server)('POST', '/v1/checks/dns', dnsBody({ name: 'to run', activated: false }))
    const run = `/dashboard/checks/${check.json.id}/run`
    expect((await post(run, {}, { cookie })).status).toBe(403)
    expect((await post(run, { csrf: 'x'.repeat(csrf.length) }, { cookie })).status).toBe(403)
    expect((await post(run, { csrf }, { cookie, origin: 'http://evil.example' })).status).toBe(403)
    expect((await post('/dashboard/login', { apiKey: KEY_A }, { origin: 'http://evil.example' })).status).toBe(403)
    const runs = await post(run, { csrf }, { cookie, origin: server.url })
    expect(runs.status).toBe(303)
    expect(runs.headers.get('location')).toMatch(/^\/dashboard\/sessions\/[\w-]+$/)

    const out = await post('/dashboard/logout', { csrf }, { cookie })
    expect(out.status).toBe(303)
    expect(out.headers.get('set-cookie')).toMatch(/^monitors_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/)
    expect(await (await fetch(`${server.url}/`, { headers: { cookie } })).text()).toContain('action="/dashboard/login"')
    const after = await fetch(`${server.url}/dashboard/checks/${check.json.id}`, { headers: { cookie }, redirect: 'manual' })
    expect(after.status).toBe(303)
  })

  it("a heartbeat check's page shows its ping URL and its pings, and offers no Run now", async () => {
    const api = caller(server)
    const created = await api('POST', '/v1/checks/heartbeat', {
      name: 'nightly backup',
      heartbeat: { period: 1, periodUnit: 'days', grace: 2, graceUnit: 'hours' },
    })
    expect(created.status).toBe(201)
    const { pingUrl } = created.json.heartbeat
    expect((await fetch(pingUrl, { headers: { 'user-agent': 'cron/1.0' } })).status).toBe(200)
    const { cookie } = await logIn()
    const html = await (await fetch(`${server.url}/dashboard/checks/${created.json.id}`, { headers: { cookie } })).text()
    expect(html).toContain(`<code data-ping-url>${pingUrl}</code>`)
    expect(html).toContain('at least every 1 day; a ping up to 2 hours later still counts')
    expect(html).not.toContain('Run now')
    expect(html).not.toContain('/run"')
    // the ping, read from GET /v1/check-results/{checkId}, at its time to the second
    expect(html).toMatch(/<tr><td><time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time><\/td><td>RECEIVED<\/td><td>PASSED<\/td><td><\/td><\/tr>/)
  })

  it('refreshes its pages every 30 s by default (with a meta refresh for a browser without JavaScript), ?refresh=N from 2 to 3600 s, ?refresh=off pauses; the filter keeps it', async () => {
    const { cookie } = await logIn()
    const page = async (query: string) => (await fetch(`${server.url}/${query}`, { headers: { cookie } })).text()
    const bar = (html: string) => /<p class="refresh muted" data-refresh="[^"]*">[\s\S]*?<\/p>/.exec(html)?.[0]
    const usual = await page('')
    expect(bar(usual)).toMatch(
      /^<p class="refresh muted" data-refresh="30">Updated <time data-updated datetime="[^"]+">\d\d:\d\d:\d\d UTC<\/time> · <span data-refresh-note>refreshes every 30 s<\/span> · <a href="\/\?refresh=off">Pause<\/a><\/p>$/,
    )
    expect(usual).toContain('<script src="/dashboard/assets/dashboard.js" defer></script>\n<noscript><meta http-equiv="refresh" content="30"></noscript>')
    expect(usual).not.toContain('name="refresh"')
    expect(bar(await page('?refresh=1'))).toContain('data-refresh="2"')
    expect(bar(await page('?refresh=99999'))).toContain('data-refresh="3600"')
    expect(bar(await page('?refresh=soon'))).toContain('data-refresh="30"')
    const fast = await page('?tag=web&refresh=5')
    expect(fast).toContain('<noscript><meta http-equiv="refresh" content="5"></noscript>')
    expect(fast).toContain('<input type="hidden" name="refresh" value="5">')
    expect(bar(fast)).toContain('<a href="/?tag=web&amp;refresh=off">Pause</a>')
    const paused = await page('?tag=web&refresh=off')
    expect(bar(paused)).toMatch(/ · paused · <a href="\/\?tag=web">Resume refreshing<\/a><\/p>$/)
    expect(paused).not.toContain('http-equiv="refresh"')
    expect(paused).toContain('<input type="hidden" name="refresh" value="off">')
  })

  it('refuses every log-in from an address after 10 failed ones in a minute', async () => {
    const own = await startTestServer()
    try {
      const attempt = (apiKey: string) =>
        fetch(`${own.url}/dashboard/login`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form({ apiKey }),
        })
      for (let i = 0; i < 10; i++) expect((await attempt(`guess-${i}`)).status).toBe(401)
      const refused = await attempt(KEY_A)
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(refused.headers.get('set-cookie')).toBeNull()
      expect(await refused.text()).toMatch(/Too many failed log-ins from this address: try again in \d+ s\./)
    } finally {
      await own.close()
    }
  })

  it("spends none of the key's rate limit on its own reads", async () => {
    const own = await startTestServer({ rateLimit: { max: 12, timeWindowMs: 60_000 } })
    try {
      const api = caller(own)
      for (const name of ['one', 'two', 'three']) expect((await api('POST', '/v1/checks/dns', dnsBody({ name, activated: false }))).status).toBe(201)
      const login = await fetch(`${own.url}/dashboard/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form({ apiKey: KEY_A }),
      })
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]
      // 3 creates, then views: each asks the list, the statuses and the figures, none of it on the key
      for (let view = 0; view < 5; view++) {
        const html = await (await fetch(`${own.url}/`, { headers: { cookie } })).text()
        expect(html, `view ${view + 1}`).toContain('3 of 3 checks')
      }
      const check = await api('GET', '/v1/checks')
      expect(check.status).toBe(200)
      expect(check.headers.get('x-ratelimit-remaining')).toBe(String(12 - 3 - 1))
    } finally {
      await own.close()
    }
  })

  it('ships uPlot and its own assets with the package; pages carry a content policy without inline script', async () => {
    const uplot = await fetch(`${server.url}/dashboard/assets/uplot.js`)
    expect(uplot.status).toBe(200)
    expect(uplot.headers.get('content-type')).toMatch(/javascript/)
    expect(await uplot.text()).toContain('uPlot')
    expect((await fetch(`${server.url}/dashboard/assets/uplot.css`)).status).toBe(200)
    expect((await fetch(`${server.url}/dashboard/assets/..%2Fpackage.json`)).status).toBe(404)
    const home = await fetch(`${server.url}/`)
    expect(home.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(home.headers.get('x-frame-options')).toBe('DENY')
  })
})

describe("a check's public badge on the dashboard", () => {
  it("is created, shown with its address, rotated and revoked from the check's page; each answer of the public route follows", async () => {
    const api = caller(server)
    const made = await api('POST', '/v1/checks/dns', dnsBody({ name: 'Readme badge' }))
    expect(made.status, made.text).toBe(201)
    const id = made.json.id
    const { cookie, csrf } = await logIn()
    const pageOf = async () => (await fetch(`${server.url}/dashboard/checks/${id}`, { headers: { cookie } })).text()
    const address = (html: string) => /<code data-public-badge>([^<]+)<\/code>/.exec(html)?.[1]
    const act = (action: string) => post(`/dashboard/checks/${id}/badge-token`, { csrf, action }, { cookie, origin: server.url })

    expect(await pageOf()).toContain('No public badge')
    expect(address(await pageOf())).toBeUndefined()
    const created = await act('create')
    expect(created.status).toBe(303)
    expect(created.headers.get('location')).toBe(`/dashboard/checks/${id}#public-badge`)
    const first = address(await pageOf())
    expect(first).toMatch(new RegExp(`^${server.url}/badges/[A-Za-z0-9_-]{32}\\.svg$`))
    expect(first).toBe((await api('GET', `/v1/badges/checks/${id}/token`)).json.url.replace(/^http:\/\/[^/]+/, server.url))
    expect((await fetch(first as string)).status).toBe(200)

    expect((await act('rotate')).status).toBe(303)
    const second = address(await pageOf())
    expect(second).not.toBe(first)
    expect((await fetch(first as string)).status).toBe(404)
    expect((await fetch(second as string)).status).toBe(200)

    expect((await act('revoke')).status).toBe(303)
    expect(address(await pageOf())).toBeUndefined()
    expect((await fetch(second as string)).status).toBe(404)
    // without the session's token nothing changes
    expect((await post(`/dashboard/checks/${id}/badge-token`, { csrf: 'forged', action: 'create' }, { cookie, origin: server.url })).status).toBe(403)
    expect((await api('GET', `/v1/badges/checks/${id}/token`)).status).toBe(404)
  })
})

describe("a check group's page on the dashboard", () => {
  it('shows its checks and state, and makes, shows (with the Markdown for a README), rotates and revokes its public badge', async () => {
    const api = caller(server)
    const group = await api('POST', '/v1/check-groups', { name: 'Readme <group>', locations: ['eu-west-1'] })
    expect(group.status, group.text).toBe(201)
    const id = group.json.id
    const member = await api('POST', '/v1/checks/dns', dnsBody({ name: 'Grouped check', groupId: id }))
    expect(member.status, member.text).toBe(201)
    const { cookie, csrf } = await logIn()
    // the list links the group to its page
    expect(await (await fetch(`${server.url}/`, { headers: { cookie } })).text()).toContain(`<a href="/dashboard/groups/${id}">Readme &lt;group&gt;</a>`)
    const pageOf = async () => (await fetch(`${server.url}/dashboard/groups/${id}`, { headers: { cookie } })).text()
    const address = (html: string) => /<code data-public-badge>([^<]+)<\/code>/.exec(html)?.[1]
    const act = (action: string) => post(`/dashboard/groups/${id}/badge-token`, { csrf, action }, { cookie, origin: server.url })

    const first = await pageOf()
    expect(first).toContain('<h1>Readme &lt;group&gt;</h1>')
    expect(first).toContain(`<a href="/dashboard/checks/${member.json.id}">Grouped check</a>`)
    expect(first).toContain('alt="badge of Readme &lt;group&gt;"')
    expect(first).toContain('No public badge')
    const created = await act('create')
    expect(created.status).toBe(303)
    expect(created.headers.get('location')).toBe(`/dashboard/groups/${id}#public-badge`)
    const html = await pageOf()
    const url = address(html)
    expect(url).toMatch(new RegExp(`^${server.url}/badges/[A-Za-z0-9_-]{32}\\.svg$`))
    expect(html).toContain(`<code data-markdown>![Readme &lt;group&gt;](${url})</code>`)
    expect(url).toBe((await api('GET', `/v1/badges/groups/${id}/token`)).json.url.replace(/^http:\/\/[^/]+/, server.url))
    expect((await fetch(url as string)).status).toBe(200)

    expect((await act('rotate')).status).toBe(303)
    const second = address(await pageOf())
    expect(second).not.toBe(url)
    expect((await fetch(url as string)).status).toBe(404)
    expect((await act('revoke')).status).toBe(303)
    expect(address(await pageOf())).toBeUndefined()
    expect((await fetch(second as string)).status).toBe(404)
    expect((await post(`/dashboard/groups/${id}/badge-token`, { csrf: 'forged', action: 'create' }, { cookie, origin: server.url })).status).toBe(403)
    // a group that is not the account's, or no group at all, is not found
    expect((await fetch(`${server.url}/dashboard/groups/999999`, { headers: { cookie } })).status).toBe(404)
    expect((await fetch(`${server.url}/dashboard/groups/x`, { headers: { cookie } })).status).toBe(404)
    expect((await act('create')).status).toBe(303)
    expect((await post(`/dashboard/groups/999999/badge-token`, { csrf, action: 'create' }, { cookie, origin: server.url })).status).toBe(404)
  })
})

describe('private locations on the dashboard', () => {
  it("shows a private location by its name where a check's locations and runs are listed, and lists the account's locations with their health", async () => {
    const api = caller(server)
    const office = await api('POST', '/v1/private-locations', { name: 'Office Berlin', slugName: 'office-berlin' })
    expect(office.status, office.text).toBe(201)
    expect((await api('POST', '/v1/private-locations', { name: 'Idle Lab', slugName: 'idle-lab' })).status).toBe(201)
    // another account's location is not shown
    expect((await caller(server, KEY_B)('POST', '/v1/private-locations', { name: 'Other Paris', slugName: 'other-paris' })).status).toBe(201)
    const key = await api('POST', `/v1/private-locations/${office.json.id}/keys`)
    expect(key.status, key.text).toBe(201)
    const check = await api('POST', '/v1/checks/dns', dnsBody({ name: 'office dns', privateLocations: ['office-berlin'], activated: false }))
    expect(check.status, check.text).toBe(201)
    const trigger = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })
    expect(trigger.status, trigger.text).toBe(201)
    const agent = caller(server, key.json.rawKey as string)
    const claim = await agent('POST', '/v1/agent/claim', { agentId: 'office-1', locations: ['office-berlin'], max: 10 })
    expect(claim.status, claim.text).toBe(200)
    expect(claim.json.runs).toHaveLength(1)
    const at = new Date().toISOString()
    const result = {
      runLocation: 'office-berlin',
      resultType: 'FINAL',
      attempt: 1,
      status: 'PASSED',
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      responseTime: 7,
      startedAt: at,
      stoppedAt: at,
      error: null,
      assertions: [],
      details: {},
      attempts: [],
    }
    expect((await agent('POST', `/v1/agent/runs/${encodeURIComponent(claim.json.runs[0].runId)}/result`, { result })).status).toBe(204)

    const { cookie } = await logIn()
    const get = async (path: string) => (await fetch(`${server.url}${path}`, { headers: { cookie } })).text()
    const named = 'Office Berlin <span class="muted">(office-berlin)</span>'
    const list = await get('/')
    const row = /<tr data-check-id="[^"]+">\s*<td><a href="[^"]+">office dns<\/a>[\s\S]*?<\/tr>/.exec(list)?.[0] ?? ''
    expect(row).toContain(`<td data-locations>${named}</td>`)
    const page = await get(`/dashboard/checks/${check.json.id}`)
    expect(page).toContain(`Locations: ${named}`)
    expect(page).toContain(`<td data-run-location>${named}</td>`)
    expect(await get(`/dashboard/sessions/${trigger.json.sessions[0].checkSessionId}`)).toContain(`<td data-run-location>${named}</td>`)
    const resultId = /href="\/dashboard\/results\/[^/]+\/([^"]+)"/.exec(page)?.[1]
    expect(await get(`/dashboard/results/${check.json.id}/${resultId}`)).toContain(`<span data-run-location>${named}</span>`)
    // a group running in the office, and its check that names no location of its own
    const group = await api('POST', '/v1/check-groups', { name: 'Office group', privateLocations: ['office-berlin'], activated: false })
    expect(group.status, group.text).toBe(201)
    expect((await api('POST', '/v1/checks/dns', dnsBody({ name: 'office member', groupId: group.json.id, activated: false }))).status).toBe(201)
    const groupPage = await get(`/dashboard/groups/${group.json.id}`)
    expect(groupPage).toContain(`Locations: ${named}</p>`)
    expect(groupPage).toContain(`<td data-locations>${named}</td>`)

    // the account's locations: the office's agent claimed just now, the lab has none
    const locations = await get('/dashboard/private-locations')
    expect(locations).toContain('Private locations of account acc-a')
    const rowOf = (slug: string) => new RegExp(`<tr data-location="${slug}">[\\s\\S]*?</tr>`).exec(locations)?.[0] ?? ''
    expect(rowOf('office-berlin')).toMatch(
      /<td>Office Berlin<\/td>[\s\S]*<td class="state-passing" data-health>serving<\/td>\s*<td data-agents>1<\/td>\s*<td data-last-seen><time[^>]*>[^<]+<\/time><\/td>\s*<td data-queue>0<\/td>/,
    )
    expect(rowOf('idle-lab')).toMatch(/<td class="state-failing" data-health>no live agent<\/td>\s*<td data-agents>0<\/td>\s*<td data-last-seen>never<\/td>/)
    expect(locations).not.toContain('other-paris')
    expect(await get('/')).toContain('<a href="/dashboard/private-locations">Private locations</a>')
  })
})
