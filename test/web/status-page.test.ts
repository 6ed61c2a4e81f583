/**
 * Status pages served by the real local server, read over HTTP as a browser or a tool gets
 * them: no key, the HTML, the JSON summary beside it, service states from open incidents (made
 * through the API and by triggerIncident), maintenance windows, the theme's colours, custom
 * domains and redirects. The same pages in a real browser: browser.test.ts.
 */
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../src/server/index.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { caller, startTestServer, type Call } from '../server/helpers.js'

let server: LocalServer
let dns: DnsServerHandle
let api: Call
const anonymous = () => caller(server, null)

const HOUR = 3600_000
const iso = (ms: number) => new Date(ms).toISOString()

beforeAll(async () => {
  dns = await startDnsServer()
  dns.set('up.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
  dns.set('down.test', 'A', { rcode: 'SERVFAIL' })
  server = await startTestServer({ runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
  api = caller(server)
})
afterAll(async () => {
  await server?.close()
  await dns?.close()
})

async function service(name: string): Promise<string> {
  const answer = await api('POST', '/v1/status-pages/services', { name })
  expect(answer.status).toBe(201)
  return answer.json.id
}

async function page(body: Record<string, unknown>): Promise<void> {
  const answer = await api('POST', '/v1/status-pages', body)
  expect(answer.status, answer.text).toBe(201)
}

async function incident(name: string, severity: string, services: string[], updates: Array<[string, string]>): Promise<string> {
  const created = await api('POST', '/v1/incidents', { name, severity, services: services.map((id) => ({ id })) })
  expect(created.status).toBe(201)
  for (const [status, description] of updates) expect((await api('POST', `/v1/incidents/${created.json.id}/updates`, { status, description })).status).toBe(201)
  return created.json.id
}

/** A check that never runs here, tied to a service by its triggerIncident and carrying `tags`. */
async function linkedCheck(name: string, serviceId: string | undefined, tags: string[]): Promise<string> {
  const answer = await api('POST', '/v1/checks/dns', {
    name,
    activated: false,
    tags,
    request: { query: 'up.test' },
    ...(serviceId ? { triggerIncident: { serviceId, severity: 'MINOR', name: `${name} fails`, description: '' } } : {}),
  })
  expect(answer.status, answer.text).toBe(201)
  return answer.json.id
}

/** GET with another Host header (fetch does not let a caller set it). */
function getWithHost(path: string, host: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
    })
    req.on('error', reject)
    req.end()
  })
}

const LIGHT = {
  bodyBackgroundColor: '#fefefe',
  headerBackgroundColor: '#102030',
  headerFontColor: '#fafafa',
  titleFontColor: '#111111',
  bodyFontColor: '#222222',
  bodyFontColorMuted: '#555555',
  navigationFontColor: '#eeeeee',
  linkFontColor: '#0044aa',
  cardBackgroundColor: '#ffffff',
  borderColor: '#cccccc',
  primaryButtonBackgroundColor: '#0044aa',
  primaryButtonFontColor: '#ffffff',
}
const DARK = {
  bodyBackgroundColor: '#101418',
  headerBackgroundColor: '#000000',
  headerFontColor: '#f0f0f0',
  titleFontColor: '#fafafa',
  bodyFontColor: '#dddddd',
  bodyFontColorMuted: '#aaaaaa',
  navigationFontColor: '#cccccc',
  linkFontColor: '#88bbff',
  cardBackgroundColor: '#1c2228',
  borderColor: '#333b44',
  primaryButtonBackgroundColor: '#88bbff',
  primaryButtonFontColor: '#101418',
}

describe('a status page at /status/{url}', () => {
  it('is public HTML without a script, and its JSON summary says the same: states from open incidents, maintenance, history with updates', async () => {
    const checkout = await service('Checkout')
    const search = await service('Search')
    const mail = await service('Mail')
    await page({
      name: 'Shop <status>',
      url: 'shop',
      cards: [
        { name: 'Storefront', services: [{ id: checkout }, { id: search }] },
        { name: 'Back office', services: [{ id: mail }] },
      ],
      logo: 'https://example.com/logo.png',
      favicon: 'javascript:alert(1)',
    })
    await incident(
      'Payments fail',
      'MAJOR',
      [checkout],
      [
        ['INVESTIGATING', 'We are looking into failed payments'],
        ['IDENTIFIED', 'A bad deploy'],
      ],
    )
    await incident(
      'Slow search',
      'MINOR',
      [search],
      [
        ['INVESTIGATING', 'Search is slow'],
        ['RESOLVED', 'Search is fast again'],
      ],
    )
    await incident('Other page only', 'CRITICAL', [], [])
    // the windows below concern the page through these checks of its services (tags db, web, os)
    await linkedCheck('checkout dns', checkout, ['db', 'web'])
    await linkedCheck('mail dns', mail, ['os'])
    const now = Date.now()
    expect(
      (await api('POST', '/v1/maintenance-windows', { name: 'Database upgrade', tags: ['db'], startsAt: iso(now - HOUR), endsAt: iso(now + HOUR) })).status,
    ).toBe(201)
    expect(
      (
        await api('POST', '/v1/maintenance-windows', {
          name: 'Weekly restart',
          tags: ['web'],
          startsAt: iso(now - 7 * 24 * HOUR + 2 * HOUR),
          endsAt: iso(now - 7 * 24 * HOUR + 3 * HOUR),
          repeatInterval: 1,
          repeatUnit: 'WEEK',
        })
      ).status,
    ).toBe(201)

    // monthly on the 15th at 03:00 UTC since three months ago: the next occurrence is the first 15th at 03:00 after now
    const first = new Date(now)
    first.setUTCMonth(first.getUTCMonth() - 3, 15)
    first.setUTCHours(3, 0, 0, 0)
    expect(
      (
        await api('POST', '/v1/maintenance-windows', {
          name: 'Monthly patching',
          tags: ['os'],
          startsAt: iso(first.getTime()),
          endsAt: iso(first.getTime() + HOUR),
          repeatInterval: 1,
          repeatUnit: 'MONTH',
        })
      ).status,
    ).toBe(201)
    const nextMonthly = new Date(first)
    while (nextMonthly.getTime() <= now) nextMonthly.setUTCMonth(nextMonthly.getUTCMonth() + 1)

    const html = await anonymous()('GET', '/status/shop')
    expect(html.status).toBe(200)
    expect(html.headers.get('content-type')).toMatch(/^text\/html/)
    expect(html.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(html.text).not.toMatch(/<script/i)
    expect(html.text).toContain('Shop &lt;status&gt;')
    expect(html.text).not.toContain('Shop <status>')
    expect(html.text).toContain('<img src="https://example.com/logo.png" alt="Shop &lt;status&gt; logo">')
    expect(html.text).not.toContain('javascript:')
    expect(html.text).toMatch(/<header>[\s\S]*<nav aria-label="Sections">[\s\S]*<main>[\s\S]*<footer>/)
    expect(html.text).toMatch(/<div class="overall major_outage" data-state="major_outage"><h1>Major outage<\/h1><\/div>/)
    expect(html.text).toContain('We are looking into failed payments')
    expect(html.text).toContain('Search is fast again')
    expect(html.text).toContain('Database upgrade')
    expect(html.text).not.toContain('Other page only')

    const summary = await anonymous()('GET', '/status/shop/summary.json')
    expect(summary.status).toBe(200)
    expect(summary.json).toMatchObject({
      name: 'Shop <status>',
      url: 'shop',
      status: 'major_outage',
      links: { html: '/status/shop', summary: '/status/shop/summary.json' },
    })
    const states = Object.fromEntries(summary.json.cards.flatMap((c: any) => c.services.map((s: any) => [s.name, s.state])))
    expect(states).toEqual({ Checkout: 'major_outage', Search: 'operational', Mail: 'operational' })
    expect(summary.json.maintenance.active.map((w: any) => w.name)).toEqual(['Database upgrade'])
    const weekly = summary.json.maintenance.upcoming.find((w: any) => w.name === 'Weekly restart')
    expect(Date.parse(weekly.startsAt)).toBe(now + 2 * HOUR)
    expect(summary.json.maintenance.upcoming.find((w: any) => w.name === 'Monthly patching')).toMatchObject({
      startsAt: nextMonthly.toISOString(),
      endsAt: iso(nextMonthly.getTime() + HOUR),
    })
    expect(summary.json.incidents.map((i: any) => [i.name, i.open])).toEqual([
      ['Slow search', false],
      ['Payments fail', true],
    ])
    expect(summary.json.incidents[1].updates.map((u: any) => u.status)).toEqual(['IDENTIFIED', 'INVESTIGATING'])
  })

  it("lists the maintenance windows of its services' checks only, not every window of the account", async () => {
    const alpha = await service('Alpha service')
    const beta = await service('Beta service')
    await page({ name: 'Alpha', url: 'windows-alpha', cards: [{ name: 'c', services: [{ id: alpha }] }] })
    await page({ name: 'Beta', url: 'windows-beta', cards: [{ name: 'c', services: [{ id: beta }] }] })
    await page({ name: 'Nobody', url: 'windows-none', cards: [{ name: 'c', services: [] }] })
    await linkedCheck('alpha dns', alpha, ['alpha-tag', 'shared-tag'])
    await linkedCheck('beta dns', beta, ['beta-tag'])
    await linkedCheck('unlinked dns', undefined, ['gamma-tag'])
    const now = Date.now()
    const window = async (name: string, tags: string[]) => {
      const answer = await api('POST', '/v1/maintenance-windows', { name, tags, startsAt: iso(now - HOUR), endsAt: iso(now + HOUR) })
      expect(answer.status).toBe(201)
    }
    await window('Alpha window', ['alpha-tag'])
    await window('Shared window', ['shared-tag', 'nobody-tag'])
    await window('Beta window', ['beta-tag'])
    await window('Gamma window', ['gamma-tag'])
    await window('Untagged window', [])
    const names = async (url: string) =>
      (await anonymous()('GET', `/status/${url}/summary.json`)).json.maintenance.active.map((w: { name: string }) => w.name).sort()
    expect(await names('windows-alpha')).toEqual(['Alpha window', 'Shared window'])
    expect(await names('windows-beta')).toEqual(['Beta window'])
    expect(await names('windows-none')).toEqual([])
    const html = (await anonymous()('GET', '/status/windows-beta')).text
    expect(html).toContain('Beta window')
    for (const other of ['Alpha window', 'Shared window', 'Gamma window', 'Untagged window']) expect(html).not.toContain(other)
  })

  it('an incident opened by a failing check with triggerIncident marks its service; recovery resolves it', async () => {
    const shop = await service('Shop DNS service')
    await page({ name: 'Triggered', url: 'triggered', cards: [{ name: 'All', services: [{ id: shop }] }] })
    const check = await api('POST', '/v1/checks/dns', {
      name: 'shop dns',
      activated: false,
      locations: ['eu-west-1'],
      request: {
        query: 'down.test',
        recordType: 'A',
        nameServer: '127.0.0.1',
        port: dns.port,
        assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }],
      },
      triggerIncident: { serviceId: shop, severity: 'MEDIUM', name: 'Shop DNS fails', description: 'The shop does not resolve' },
    })
    expect(check.status, check.text).toBe(201)
    const run = async () => {
      const trigger = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })
      const done = await api('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
      expect(done.status).toBe(200)
      return done.json.status
    }
    expect(await run()).toBe('FAILED')
    let summary = await anonymous()('GET', '/status/triggered/summary.json')
    expect(summary.json.status).toBe('partial_outage')
    expect(summary.json.incidents[0]).toMatchObject({ name: 'Shop DNS fails', open: true, services: ['Shop DNS service'] })

    dns.set('down.test', 'A', { records: [{ type: 'A', data: '192.0.2.9' }] })
    expect(await run()).toBe('PASSED')
    summary = await anonymous()('GET', '/status/triggered/summary.json')
    expect(summary.json.status).toBe('operational')
    expect(summary.json.incidents[0]).toMatchObject({ name: 'Shop DNS fails', open: false })
    expect(summary.json.incidents[0].updates[0].status).toBe('RESOLVED')
    const html = await anonymous()('GET', '/status/triggered')
    expect(html.text).toContain('All systems operational')
  }, 60_000)

  it('applies themeColors exactly per defaultTheme, and reports colours that are not colours or read badly', async () => {
    const id = await service('Themed')
    await page({
      name: 'Light',
      url: 'theme-light',
      cards: [{ name: 'c', services: [{ id }] }],
      themeColors: { light: LIGHT, dark: DARK },
      defaultTheme: 'LIGHT',
    })
    await page({ name: 'Dark', url: 'theme-dark', cards: [{ name: 'c', services: [{ id }] }], themeColors: { light: LIGHT, dark: DARK }, defaultTheme: 'DARK' })
    await page({ name: 'Auto', url: 'theme-auto', cards: [{ name: 'c', services: [{ id }] }], themeColors: { light: LIGHT, dark: DARK }, defaultTheme: 'AUTO' })
    const vars = (theme: Record<string, string>) =>
      Object.entries(theme)
        .map(([k, v]) => `--${k}:${v}`)
        .join(';')

    const light = (await anonymous()('GET', '/status/theme-light')).text
    expect(light).toContain(`:root{color-scheme:light;${vars(LIGHT)}}`)
    expect(light).not.toContain(DARK.bodyBackgroundColor)
    const dark = (await anonymous()('GET', '/status/theme-dark')).text
    expect(dark).toContain(`:root{color-scheme:dark;${vars(DARK)}}`)
    expect(dark).not.toContain(LIGHT.bodyBackgroundColor)
    const auto = (await anonymous()('GET', '/status/theme-auto')).text
    expect(auto).toContain(`:root{color-scheme:light dark;${vars(LIGHT)}}@media (prefers-color-scheme: dark){:root{color-scheme:dark;${vars(DARK)}}}`)
    expect((await anonymous()('GET', '/status/theme-auto/summary.json')).json.accessibility).toEqual({ contrast: [], ignoredColors: [] })

    // a value that would end the style block is not a colour: refused, naming the field
    const hostile = { ...LIGHT, bodyBackgroundColor: 'red}</style><script>alert(1)</script>' }
    const refused = await api('POST', '/v1/status-pages', {
      name: 'Bad',
      url: 'theme-bad',
      cards: [{ name: 'c', services: [{ id }] }],
      themeColors: { light: hostile, dark: DARK },
    })
    expect(refused.status).toBe(400)
    expect(refused.json.attributes.keys).toEqual(['themeColors.light.bodyBackgroundColor'])
    expect((await anonymous()('GET', '/status/theme-bad')).status).toBe(404)
    const low = { ...LIGHT, bodyFontColorMuted: '#bbbbbb' }
    await page({ name: 'Low', url: 'theme-low', cards: [{ name: 'c', services: [{ id }] }], themeColors: { light: low, dark: DARK }, defaultTheme: 'LIGHT' })
    const report = (await anonymous()('GET', '/status/theme-low/summary.json')).json.accessibility
    expect(report.ignoredColors).toEqual([])
    // #bbbbbb on white is 1.92:1
    expect(report.contrast).toEqual([{ theme: 'light', foreground: 'bodyFontColorMuted', background: 'cardBackgroundColor', ratio: 1.92, required: 4.5 }])
  })

  it('colours the whole overall banner by state, its text at least 4.5:1 on it, the same in the light and dark themes', async () => {
    const id = await service('Bannered')
    await page({
      name: 'Banner light',
      url: 'banner-light',
      cards: [{ name: 'c', services: [{ id }] }],
      themeColors: { light: LIGHT, dark: DARK },
      defaultTheme: 'LIGHT',
    })
    await page({
      name: 'Banner dark',
      url: 'banner-dark',
      cards: [{ name: 'c', services: [{ id }] }],
      themeColors: { light: LIGHT, dark: DARK },
      defaultTheme: 'DARK',
    })
    // WCAG 2 contrast of two #rrggbb colours
    const luminance = (h: string) => {
      const [r, g, b] = [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
      return 0.2126 * r + 0.7152 * g + 0.0722 * b
    }
    const contrast = (a: string, b: string) => {
      const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x)
      return (hi + 0.05) / (lo + 0.05)
    }
    for (const url of ['banner-light', 'banner-dark']) {
      const html = (await anonymous()('GET', `/status/${url}`)).text
      expect(html).toContain('<div class="overall operational" data-state="operational"><h1>All systems operational</h1></div>')
      const rules = Object.fromEntries(
        [...html.matchAll(/\.overall\.(\w+)\{background:(#[0-9a-f]{6});color:(#[0-9a-f]{6})\}/g)].map((m) => [m[1], { background: m[2], text: m[3] }]),
      )
      expect(Object.keys(rules).sort()).toEqual(['degraded', 'maintenance', 'major_outage', 'operational', 'partial_outage'])
      for (const [state, { background, text }] of Object.entries(rules)) {
        expect(contrast(text, background), state).toBeGreaterThanOrEqual(4.5)
        // never a theme's card or body colour: the banner is coloured, not white
        expect([LIGHT.cardBackgroundColor, LIGHT.bodyBackgroundColor, DARK.cardBackgroundColor, DARK.bodyBackgroundColor]).not.toContain(background)
      }
    }
  })

  it('is served at / and /summary.json for a request to its customDomain; redirectTo redirects the HTML address', async () => {
    const id = await service('Domain service')
    await page({ name: 'On my domain', url: 'domain', customDomain: 'Status.Example.COM', cards: [{ name: 'c', services: [{ id }] }] })
    await page({ name: 'Moved', url: 'moved', redirectTo: 'https://status.example.org/', cards: [{ name: 'c', services: [{ id }] }] })

    const root = await getWithHost('/', 'status.example.com:8080')
    expect(root.status).toBe(200)
    expect(root.text).toContain('<title>On my domain status</title>')
    expect(root.text).toContain('href="/summary.json"')
    const json = await getWithHost('/summary.json', 'status.example.com')
    expect(JSON.parse(json.text)).toMatchObject({ name: 'On my domain', links: { html: '/', summary: '/summary.json' } })
    // any other host gets the dashboard's log-in at /
    const other = await getWithHost('/', 'dashboard.example.net')
    expect(other.text).toContain('action="/dashboard/login"')
    expect((await getWithHost('/summary.json', 'other.example.com')).status).toBe(404)

    const moved = await fetch(`${server.url}/status/moved`, { redirect: 'manual' })
    expect(moved.status).toBe(302)
    expect(moved.headers.get('location')).toBe('https://status.example.org/')
    expect((await anonymous()('GET', '/status/moved/summary.json')).json.name).toBe('Moved')
  })

  it('an unknown page is a 404; the API keeps asking for a key', async () => {
    const missing = await anonymous()('GET', '/status/nothing-here')
    expect(missing.status).toBe(404)
    expect(missing.text).toContain('No status page here')
    expect((await anonymous()('GET', '/status/nothing-here/summary.json')).json).toMatchObject({ statusCode: 404, message: 'Status page not found' })
    expect((await anonymous()('GET', '/v1/status-pages')).status).toBe(401)
    expect((await anonymous()('GET', '/no-such-route')).status).toBe(401)
  })
})
