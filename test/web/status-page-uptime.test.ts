/**
 * What a status page people keep open shows beyond the current state, on the real server: per
 * service a 90-day bar of daily uptime computed from the recorded runs of its checks (those
 * whose triggerIncident names it) with each day's incidents, the 90-day uptime, the page's
 * own reload (meta refresh, and a way to stop it), "last updated", and an Atom feed of its
 * incidents and maintenance read with a real XML parser. The bars in a real browser
 * (hover, keyboard focus, 375 px): browser.test.ts.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../src/server/index.js'
import { recordRuns, type KnownRun } from '../server/analytics/analytics-helpers.js'
import { KEY_B, caller, startTestServer, type Call } from '../server/helpers.js'

const DAY = 86_400_000
const HOUR = 3_600_000
// the server's clock is the test's (incidents too are dated on it); the test's days are UTC days
// from the wall clock's today: a run started in the last minutes of a day waits for the next one
const untilMidnight = DAY - (Date.now() % DAY)
if (untilMidnight < 180_000) await new Promise((resolve) => setTimeout(resolve, untilMidnight + 1000))
let now = Date.now()
const clock = { get: () => now, set: (ms: number) => void (now = ms) }
const today = Math.floor(now / DAY) * DAY
const dayOf = (offset: number) => new Date(today + offset * DAY).toISOString().slice(0, 10)
/** a run `offset` days from today, at 00:30 + minutes (UTC) */
const run = (offset: number, minutes: number, passed: boolean): KnownRun => ({
  at: new Date(today + offset * DAY + 30 * 60_000 + minutes * 60_000).toISOString(),
  location: 'eu-west-1',
  passed,
  responseTime: 10,
  details: { kind: 'API', statusCode: passed ? 200 : 500, timings: null },
})

let server: LocalServer
let api: Call
const anonymous = () => caller(server, null)
let checkout: string
let search: string

async function created(call: Call, path: string, body: unknown): Promise<any> {
  const answer = await call('POST', path, body)
  expect(answer.status, answer.text).toBe(201)
  return answer.json
}

/** An API check that never runs on its own, tied to a service by its triggerIncident. */
async function linkedCheck(call: Call, name: string, serviceId: string): Promise<string> {
  return (
    await created(call, '/v1/checks/api', {
      name,
      activated: false,
      frequency: 5,
      locations: ['eu-west-1'],
      request: { method: 'GET', url: 'http://127.0.0.1:9/health' },
      triggerIncident: { serviceId, severity: 'MINOR', name: `${name} fails`, description: '' },
    })
  ).id
}

beforeAll(async () => {
  server = await startTestServer({ clock: () => now })
  api = caller(server)
  checkout = (await created(api, '/v1/status-pages/services', { name: 'Checkout' })).id
  search = (await created(api, '/v1/status-pages/services', { name: 'Search' })).id
  await created(api, '/v1/status-pages', {
    name: 'Uptime <shop>',
    url: 'uptime-shop',
    cards: [{ name: 'Storefront', services: [{ id: checkout }, { id: search }] }],
  })
  const payments = await linkedCheck(api, 'payments', checkout)
  const cart = await linkedCheck(api, 'cart', checkout)
  // two days ago: 7 of 8 runs passed over both checks; yesterday 2 of 2; 89 days ago (the first
  // bar) 1 of 1; 90 days ago (before the first bar) a failure that must not count
  await recordRuns(
    api,
    payments,
    [run(-90, 0, false), run(-89, 0, true), run(-2, 0, true), run(-2, 1, true), run(-2, 2, false), run(-2, 3, true), run(-1, 0, true), run(-1, 1, true)],
    clock,
  )
  await recordRuns(api, cart, [run(-2, 0, true), run(-2, 1, true), run(-2, 2, true), run(-2, 3, true)], clock)
  // another account's check naming the same service id is not the page's (and cannot name it: 400 or its own)
  const other = caller(server, KEY_B)
  const theirs = (await created(other, '/v1/status-pages/services', { name: 'Theirs' })).id
  await recordRuns(other, await linkedCheck(other, 'theirs', theirs), [run(-2, 0, false)], clock)
  // an incident of today on Checkout, resolved
  const incident = await created(api, '/v1/incidents', { name: 'Card payments <failing>', severity: 'MAJOR', services: [{ id: checkout }] })
  await created(api, `/v1/incidents/${incident.id}/updates`, { status: 'INVESTIGATING', description: 'Declines \u0001 at the provider' })
  await created(api, `/v1/incidents/${incident.id}/updates`, { status: 'RESOLVED', description: 'Fixed & verified' })
  await created(api, '/v1/maintenance-windows', {
    name: 'Database upgrade',
    tags: ['db'],
    startsAt: new Date(now + DAY).toISOString(),
    endsAt: new Date(now + DAY + HOUR).toISOString(),
  })
  await api('PUT', `/v1/checks/api/${payments}`, {
    ...(await api('GET', `/v1/checks/${payments}`)).json,
    id: undefined,
    checkType: undefined,
    created_at: undefined,
    updated_at: undefined,
    tags: ['db'],
  })
}, 120_000)
afterAll(async () => {
  await server?.close()
})

describe('a status page people keep open', () => {
  it("shows per service 90 daily bars from the runs of its checks, each day's uptime and incidents, and the 90-day uptime cut (never rounded up)", async () => {
    const summary = await anonymous()('GET', '/status/uptime-shop/summary.json')
    expect(summary.status).toBe(200)
    const [shop, other] = summary.json.cards[0].services
    expect(shop.name).toBe('Checkout')
    expect(shop.uptime.days).toHaveLength(90)
    expect(shop.uptime.days[0].date).toBe(dayOf(-89))
    expect(shop.uptime.days[89].date).toBe(dayOf(0))
    // 10 of 11 runs passed in the 90 days: 90.909… % shows as 90.90, not 90.91
    expect(shop.uptime).toMatchObject({ passed: 10, failed: 1, uptime: 90.9 })
    // the failure of 90 days ago opened an incident through triggerIncident (dated on the server's clock), which that day's pass resolved
    expect(shop.uptime.days[0]).toMatchObject({
      passed: 1,
      failed: 0,
      uptime: 100,
      state: 'degraded',
      incidents: [expect.objectContaining({ name: 'payments fails', severity: 'MINOR' })],
    })
    expect(shop.uptime.days[87]).toMatchObject({
      date: dayOf(-2),
      passed: 7,
      failed: 1,
      uptime: 87.5,
      state: 'major_outage',
      incidents: [expect.objectContaining({ name: 'payments fails', severity: 'MINOR' })],
    })
    expect(shop.uptime.days[88]).toMatchObject({ date: dayOf(-1), passed: 2, failed: 0, uptime: 100, state: 'operational' })
    // today: the incident made through the API; those the failed runs opened through triggerIncident are on their runs' days
    expect(shop.uptime.days[89]).toMatchObject({
      passed: 0,
      failed: 0,
      uptime: null,
      state: 'major_outage',
      incidents: [expect.objectContaining({ name: 'Card payments <failing>', severity: 'MAJOR' })],
    })
    const onBars = [0, 87, 89].flatMap((d) => shop.uptime.days[d].incidents.map((i: any) => i.id)).sort()
    expect(onBars).toEqual(summary.json.incidents.map((i: any) => i.id).sort())
    expect(shop.uptime.days.slice(1, 87).every((d: any) => d.state === 'no_data' && d.uptime === null)).toBe(true)
    // a service without checks has no figures, only days without data
    expect(other.uptime).toMatchObject({ passed: 0, failed: 0, uptime: null })
    expect(other.uptime.days.every((d: any) => d.state === 'no_data')).toBe(true)

    const html = await anonymous()('GET', '/status/uptime-shop')
    expect(html.status).toBe(200)
    expect(html.text).not.toMatch(/<script/i)
    expect(html.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(html.text.match(/<li class="day /g)).toHaveLength(180)
    expect(html.text).toContain('aria-label="Checkout: uptime by day, last 90 days"')
    expect(html.text).toContain('<span class="figure" data-uptime="90.9">90.90 % uptime</span>')
    expect(html.text).toContain('<span class="figure" data-uptime="">No data</span>')
    // the days with something to say are focusable and say it; quiet days are not tab stops
    expect(html.text).toContain(
      `<li class="day major_outage" data-date="${dayOf(-2)}" data-state="major_outage" tabindex="0"><span class="tip">${dayOf(-2)}: 87.50 % uptime (7 of 8 runs passed); incidents: payments fails (minor).</span></li>`,
    )
    expect(html.text).toContain(
      `<li class="day operational" data-date="${dayOf(-1)}" data-state="operational"><span class="tip">${dayOf(-1)}: 100.00 % uptime (2 of 2 runs passed); no incidents.</span></li>`,
    )
    expect(html.text).toMatch(
      new RegExp(
        `data-date="${dayOf(0)}" data-state="major_outage" tabindex="0"><span class="tip">${dayOf(0)}: no runs recorded; incidents: [^<]*Card payments &lt;failing&gt; \\(major\\)[^<]*\\.</span>`,
      ),
    )
  })

  it('reloads itself every minute without a script, says when it was last updated, and stops reloading when asked', async () => {
    const html = await anonymous()('GET', '/status/uptime-shop')
    expect(html.text).toContain('<meta http-equiv="refresh" content="60">')
    expect(html.text).toMatch(
      new RegExp(
        `Last updated <time datetime="${new Date(now).toISOString()}">[^<]+ UTC</time> · refreshes every minute · <a href="\\?refresh=off">Stop refreshing</a>`,
      ),
    )
    const still = await anonymous()('GET', '/status/uptime-shop?refresh=off')
    expect(still.status).toBe(200)
    expect(still.text).not.toContain('http-equiv="refresh"')
    expect(still.text).toContain('not refreshing · <a href="?">Refresh automatically</a>')
  })

  it('links an Atom feed of its incidents and maintenance that a real XML parser reads as valid Atom', async () => {
    const html = await anonymous()('GET', '/status/uptime-shop')
    expect(html.text).toContain(
      '<link rel="alternate" type="application/atom+xml" title="Uptime &lt;shop&gt; incidents and maintenance" href="/status/uptime-shop/feed.atom">',
    )
    const feed = await anonymous()('GET', '/status/uptime-shop/feed.atom')
    expect(feed.status).toBe(200)
    expect(feed.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8')
    expect(XMLValidator.validate(feed.text)).toBe(true)
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', isArray: (name) => ['entry', 'link', 'category'].includes(name) }).parse(
      feed.text,
    )
    const atom = doc.feed
    expect(atom['@xmlns']).toBe('http://www.w3.org/2005/Atom')
    const rfc3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/
    // the feed's required elements (RFC 4287 4.1.1): id, title, updated, an author, a self link
    expect(atom.id).toBe(`${server.url}/status/uptime-shop`)
    expect(atom.title).toBe('Uptime <shop> status')
    expect(atom.updated).toMatch(rfc3339)
    expect(atom.author.name).toBe('Uptime <shop>')
    expect(atom.link.find((l: any) => l['@rel'] === 'self')['@href']).toBe(`${server.url}/status/uptime-shop/feed.atom`)
    const incidents = (await anonymous()('GET', '/status/uptime-shop/summary.json')).json.incidents
    expect(atom.entry).toHaveLength(incidents.length + 1)
    for (const entry of atom.entry) {
      expect(entry.id).toMatch(/^http:\/\//)
      expect(entry.updated).toMatch(rfc3339)
      expect(typeof entry.title).toBe('string')
    }
    expect(new Set(atom.entry.map((e: any) => e.id)).size).toBe(incidents.length + 1)
    expect(atom.entry.filter((e: any) => e.category.some((c: any) => c['@term'] === 'incident'))).toHaveLength(incidents.length)
    const incident = atom.entry.find((e: any) => e.title === 'Resolved: Card payments <failing>')
    expect(incident.title).toBe('Resolved: Card payments <failing>')
    // the content is HTML as text; a control character XML cannot carry is left out
    expect(incident.content['#text']).toContain('<strong>RESOLVED</strong>')
    expect(incident.content['#text']).toContain('Fixed &amp; verified')
    expect(incident.content['#text']).toContain('Declines  at the provider')
    const [maintenance] = atom.entry.filter((e: any) => e.category.some((c: any) => c['@term'] === 'maintenance'))
    expect(maintenance.title).toBe('Maintenance: Database upgrade')
    expect(maintenance.summary['#text']).toMatch(/^Scheduled: /)
    expect(feed.text).not.toContain('\u0001')
    expect((await anonymous()('GET', '/status/no-such-page/feed.atom')).status).toBe(404)
  })
})
