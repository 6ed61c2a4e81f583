/**
 * The status page and the dashboard in a real browser (Debian's Chromium through
 * playwright-core), against the real local server running real checks. Screenshots go to
 * test-results/screenshots/ for a reviewer. Accessibility basics are checked on every page:
 * landmarks, contrast of the theme colours (the ratio computed here from what the browser
 * paints, and the page generator's own report), every control reachable by keyboard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { LocalServer } from '../../src/server/index.js'
import { contrast, hasChromium, landmarks, launch, screenshot, unreachableByKeyboard } from '../helpers/browser.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'
import { KEY_A, caller, startTestServer, type Call } from '../server/helpers.js'

// evaluated in the page, not in Node (the project's TypeScript has no DOM library)
declare const document: any
declare function getComputedStyle(element: unknown, pseudo?: string): any

const HOUR = 3600_000
const iso = (ms: number) => new Date(ms).toISOString()
const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`

const LIGHT = {
  bodyBackgroundColor: '#f4f6f8',
  headerBackgroundColor: '#0b3d91',
  headerFontColor: '#ffffff',
  titleFontColor: '#0b1f3a',
  bodyFontColor: '#1c2733',
  bodyFontColorMuted: '#4a5561',
  navigationFontColor: '#e8eefc',
  linkFontColor: '#0b3d91',
  cardBackgroundColor: '#ffffff',
  borderColor: '#c9d1db',
  primaryButtonBackgroundColor: '#0b3d91',
  primaryButtonFontColor: '#ffffff',
}
/** bodyFontColorMuted is too dim on the cards: the page generator and this test must both say so */
const DARK = {
  bodyBackgroundColor: '#0d1117',
  headerBackgroundColor: '#161b22',
  headerFontColor: '#f0f6fc',
  titleFontColor: '#f0f6fc',
  bodyFontColor: '#c9d1d9',
  bodyFontColorMuted: '#4d5560',
  navigationFontColor: '#c9d1d9',
  linkFontColor: '#79c0ff',
  cardBackgroundColor: '#1c2128',
  borderColor: '#30363d',
  primaryButtonBackgroundColor: '#79c0ff',
  primaryButtonFontColor: '#0d1117',
}
/** The overall banner's colour of each state (as Statuspage, Instatus, Better Stack colour it) */
const BANNER = { operational: '#15803d', maintenance: '#1d4ed8', major_outage: '#b91c1c' }
const LOGO = `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><circle cx="20" cy="20" r="18" fill="#f5a623"/></svg>').toString('base64')}`

let server: LocalServer
let dns: DnsServerHandle
let api: Call
let browser: Browser
let closeBrowser: () => Promise<void>

beforeAll(async () => {
  if (!hasChromium) return
  dns = await startDnsServer()
  dns.set('shop.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
  dns.set('broken.test', 'A', { rcode: 'SERVFAIL' })
  server = await startTestServer({ runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
  api = caller(server)
  ;({ browser, close: closeBrowser } = await launch())
}, 60_000)
afterAll(async () => {
  await closeBrowser?.()
  await server?.close()
  await dns?.close()
})

/** Fails the test on any script error or refused resource (a content policy blocking the chart, say). */
function watchErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  return errors
}

async function created(path: string, body: unknown): Promise<any> {
  const answer = await api('POST', path, body)
  expect(answer.status, answer.text).toBe(201)
  return answer.json
}

/** One real run of a check in each of its locations, waited for. */
async function runOnce(id: string): Promise<void> {
  const trigger = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
  expect(trigger.status, trigger.text).toBe(201)
  const done = await api('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
  expect(done.status).toBe(200)
}

/** Logs the page's context in with the account's key. */
async function logIn(page: Page): Promise<void> {
  await page.goto(`${server.url}/`)
  await page.locator('#apiKey').fill(KEY_A)
  await page.keyboard.press('Enter')
  await page.locator('h1', { hasText: 'Checks' }).waitFor()
}

/** Whether anything is wider than the screen (sideways scrolling). */
const pageWidth = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth)

/** Each element's rendered lines: its height against its line height, and its boxes (a wrapped inline element has several). */
function lineBoxes(page: Page, selector: string): Promise<Array<{ height: number; lineHeight: number; boxes: number; text: string }>> {
  return page.locator(selector).evaluateAll((els: any[]) =>
    els.map((el) => ({
      height: el.getBoundingClientRect().height,
      lineHeight: parseFloat(getComputedStyle(el).lineHeight),
      boxes: el.getClientRects().length,
      text: el.textContent,
    })),
  )
}

/** Pixels of the chart's canvas painted in the failed-run red (#dc2626). */
function redPixels(page: Page): Promise<number> {
  return page
    .locator('#chart canvas')
    .first()
    .evaluate((canvas: any) => {
      const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data
      let n = 0
      for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i] - 0xdc) < 6 && Math.abs(data[i + 1] - 0x26) < 6 && Math.abs(data[i + 2] - 0x26) < 6) n++
      return n
    })
}

/** Watches a page for reloads (a refresh must swap its content in place) and for requests to a path. */
function watchTraffic(page: Page, prefix: string): { navigations: () => number; asked: number[] } {
  let navigations = 0
  const asked: number[] = []
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations++
  })
  page.on('request', (request) => {
    if (request.url().startsWith(prefix)) asked.push(Date.now())
  })
  return { navigations: () => navigations, asked }
}

/** No two requests closer than most of an interval, and about one per interval. */
function expectOnePerInterval(asked: number[], intervalMs: number, elapsedMs: number): void {
  expect(asked.length).toBeGreaterThanOrEqual(1)
  expect(asked.length).toBeLessThanOrEqual(Math.ceil(elapsedMs / intervalMs) + 1)
  for (let i = 1; i < asked.length; i++) expect(asked[i] - asked[i - 1]).toBeGreaterThan(intervalMs * 0.8)
}

describe.skipIf(!hasChromium)('status page in Chromium', () => {
  const pages = ['LIGHT', 'DARK', 'AUTO'] as const

  beforeAll(async () => {
    const checkout = await created('/v1/status-pages/services', { name: 'Checkout' })
    const search = await created('/v1/status-pages/services', { name: 'Search' })
    for (const theme of pages) {
      await created('/v1/status-pages', {
        name: 'Acme Shop',
        url: `acme-${theme.toLowerCase()}`,
        logo: LOGO,
        defaultTheme: theme,
        themeColors: { light: LIGHT, dark: DARK },
        cards: [{ name: 'Storefront', services: [{ id: checkout.id }, { id: search.id }] }],
      })
    }
    const incident = await created('/v1/incidents', { name: 'Card payments failing', severity: 'MAJOR', services: [{ id: checkout.id }] })
    await created(`/v1/incidents/${incident.id}/updates`, { status: 'INVESTIGATING', description: 'Some card payments are declined; we are on it.' })
    await created(`/v1/incidents/${incident.id}/updates`, { status: 'IDENTIFIED', description: 'A certificate expired at the payment provider.' })
    // the windows concern the page through checks of its services (their triggerIncident), by tag
    const linked = (name: string, serviceId: string, tags: string[]) =>
      created('/v1/checks/dns', {
        name,
        activated: false,
        tags,
        request: { query: 'shop.test' },
        triggerIncident: { serviceId, severity: 'MAJOR', name: `${name} fails`, description: '' },
      })
    await linked('Checkout database', checkout.id, ['db'])
    await linked('Search index', search.id, ['search'])
    const now = Date.now()
    await created('/v1/maintenance-windows', { name: 'Database upgrade', tags: ['db'], startsAt: iso(now - HOUR), endsAt: iso(now + HOUR) })
    await created('/v1/maintenance-windows', { name: 'Search index rebuild', tags: ['search'], startsAt: iso(now + 24 * HOUR), endsAt: iso(now + 26 * HOUR) })
    // a page whose services are all fine (Search: its window is only upcoming), and one under maintenance
    const billing = await created('/v1/status-pages/services', { name: 'Billing' })
    await linked('Billing ledger', billing.id, ['billing'])
    await created('/v1/maintenance-windows', { name: 'Ledger migration', tags: ['billing'], startsAt: iso(now - HOUR), endsAt: iso(now + HOUR) })
    for (const [url, service] of [
      ['acme-calm', search.id],
      ['acme-works', billing.id],
    ]) {
      await created('/v1/status-pages', {
        name: 'Acme Shop',
        url,
        defaultTheme: 'AUTO',
        themeColors: { light: LIGHT, dark: DARK },
        cards: [{ name: 'Storefront', services: [{ id: service }] }],
      })
    }
  })

  for (const [url, state, label] of [
    ['acme-calm', 'operational', 'All systems operational'],
    ['acme-works', 'maintenance', 'Maintenance in progress'],
  ] as const) {
    it(`the ${state} banner is coloured whole, readable in light and dark, at 1920 and 375 px`, async () => {
      for (const scheme of ['light', 'dark'] as const) {
        const context = await browser.newContext({ colorScheme: scheme, javaScriptEnabled: false })
        try {
          const page = await context.newPage()
          for (const width of [1920, 375]) {
            await page.setViewportSize({ width, height: width === 375 ? 812 : 1080 })
            expect((await page.goto(`${server.url}/status/${url}`))?.status()).toBe(200)
            const banner = page.locator('.overall')
            expect(await banner.getAttribute('data-state')).toBe(state)
            expect(await banner.locator('h1').textContent()).toBe(label)
            const background = await banner.evaluate((el: unknown) => getComputedStyle(el).backgroundColor)
            expect(background).toBe(rgb(BANNER[state]))
            expect(contrast(await banner.locator('h1').evaluate((el: unknown) => getComputedStyle(el).color), background)).toBeGreaterThanOrEqual(4.5)
            // the banner spans the page's column (not a dot in a white box)
            const [bannerBox, mainBox] = [await banner.boundingBox(), await page.locator('main .wrap').boundingBox()]
            expect(bannerBox!.width).toBeGreaterThan(mainBox!.width - 40)
            expect(await pageWidth(page)).toBeLessThanOrEqual(width)
            await screenshot(page, `status-page-banner-${state}-${width}-${scheme}`)
          }
        } finally {
          await context.close()
        }
      }
    }, 120_000)
  }

  const cases: Array<{ theme: (typeof pages)[number]; scheme: 'light' | 'dark'; expected: typeof LIGHT; shot: string }> = [
    { theme: 'LIGHT', scheme: 'dark', expected: LIGHT, shot: 'status-page-light' },
    { theme: 'DARK', scheme: 'light', expected: DARK, shot: 'status-page-dark' },
    { theme: 'AUTO', scheme: 'light', expected: LIGHT, shot: 'status-page-auto-light' },
    { theme: 'AUTO', scheme: 'dark', expected: DARK, shot: 'status-page-auto-dark' },
  ]

  for (const { theme, scheme, expected, shot } of cases) {
    it(`${theme} page in a browser preferring ${scheme}, 375 px wide, without scripts: colours as configured, readable, reachable`, async () => {
      const context: BrowserContext = await browser.newContext({ viewport: { width: 375, height: 812 }, colorScheme: scheme, javaScriptEnabled: false })
      try {
        const page = await context.newPage()
        const errors = watchErrors(page)
        const answer = await page.goto(`${server.url}/status/acme-${theme.toLowerCase()}`)
        expect(answer?.status()).toBe(200)

        expect(await page.locator('h1').textContent()).toBe('Major outage')
        expect(await page.locator('[data-state="major_outage"] .status-word').textContent()).toBe('Major outage')
        expect(await page.locator('.service.operational .status-word').textContent()).toBe('Operational')
        expect(await page.locator('#maintenance-active').textContent()).toContain('Database upgrade')
        expect(await page.locator('#maintenance-upcoming').textContent()).toContain('Search index rebuild')
        const incident = await page.locator('.incident').textContent()
        expect(incident).toContain('Card payments failing')
        expect(incident).toContain('A certificate expired at the payment provider.')
        expect(await page.locator('header img').evaluate((img: any) => img.naturalWidth)).toBe(40)

        // the theme, exactly: each of the twelve colours where the page uses it
        const style = (selector: string, property: string) =>
          page
            .locator(selector)
            .first()
            .evaluate((el: unknown, p: string) => getComputedStyle(el).getPropertyValue(p), property)
        expect(await style('body', 'background-color')).toBe(rgb(expected.bodyBackgroundColor))
        expect(await style('body', 'color')).toBe(rgb(expected.bodyFontColor))
        expect(await style('header', 'background-color')).toBe(rgb(expected.headerBackgroundColor))
        expect(await style('.brand', 'color')).toBe(rgb(expected.headerFontColor))
        expect(await style('h2', 'color')).toBe(rgb(expected.titleFontColor))
        expect(await style('.card .muted, .incident .muted', 'color')).toBe(rgb(expected.bodyFontColorMuted))
        expect(await style('nav a', 'color')).toBe(rgb(expected.navigationFontColor))
        expect(await style('.card', 'background-color')).toBe(rgb(expected.cardBackgroundColor))
        expect(await style('.card', 'border-top-color')).toBe(rgb(expected.borderColor))
        expect(await style('.button', 'background-color')).toBe(rgb(expected.primaryButtonBackgroundColor))
        expect(await style('.button', 'color')).toBe(rgb(expected.primaryButtonFontColor))
        expect(await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--linkFontColor').trim())).toBe(expected.linkFontColor)
        // the overall banner: all of it in the state's colour (major outage: red), its text readable on it
        expect(await style('.overall', 'background-color')).toBe(rgb(BANNER.major_outage))
        expect(contrast(await style('.overall h1', 'color'), await style('.overall', 'background-color'))).toBeGreaterThanOrEqual(4.5)

        // readable on a phone: nothing wider than the screen
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)

        // accessibility basics
        expect(await landmarks(page)).toEqual(['banner', 'navigation', 'main', 'contentinfo'])
        expect(await unreachableByKeyboard(page)).toEqual([])
        const low: string[] = []
        for (const [fg, bg, name] of [
          ['body', 'body', 'bodyFontColor/bodyBackgroundColor'],
          ['.incident .muted', '.incident', 'bodyFontColorMuted/cardBackgroundColor'],
          ['.brand', 'header', 'headerFontColor/headerBackgroundColor'],
          ['nav a', 'header', 'navigationFontColor/headerBackgroundColor'],
          ['.button', '.button', 'primaryButtonFontColor/primaryButtonBackgroundColor'],
        ] as const) {
          const ratio = contrast(await style(fg, 'color'), await style(bg, 'background-color'))
          if (ratio < 4.5) low.push(`${name} ${ratio.toFixed(2)}`)
        }
        // the generator's report agrees with what the browser paints
        const summary: any = await (await fetch(`${server.url}/status/acme-${theme.toLowerCase()}/summary.json`)).json()
        const reported = summary.accessibility.contrast.filter((p: any) => p.theme === scheme || theme !== 'AUTO')
        if (expected === DARK) {
          expect(low).toEqual([expect.stringMatching(/^bodyFontColorMuted\/cardBackgroundColor 2\.\d\d$/)])
          expect(reported).toEqual([expect.objectContaining({ theme: 'dark', foreground: 'bodyFontColorMuted', background: 'cardBackgroundColor' })])
        } else {
          expect(low).toEqual([])
          expect(reported.filter((p: any) => p.theme === 'light')).toEqual([])
        }
        // the 90-day bars: a bar a day per service; today's incident said on hover and on keyboard focus,
        // inside the card (nothing wider than the screen), readable on the card
        expect(await page.locator('.service').first().locator('.day').count()).toBe(90)
        expect(await page.locator('.day').count()).toBe(180)
        const today = page.locator('.service').first().locator('.day').last()
        const tip = today.locator('.tip')
        const shown = async () =>
          tip.evaluate((el: any) => {
            const box = el.getBoundingClientRect()
            return { width: box.width, left: box.left, right: box.right, text: el.textContent }
          })
        expect((await shown()).width).toBeLessThanOrEqual(1)
        await today.hover()
        expect((await shown()).width).toBeGreaterThan(200)
        expect((await shown()).text).toContain('incidents: Card payments failing (major)')
        await page.mouse.move(0, 0)
        expect((await shown()).width).toBeLessThanOrEqual(1)
        // keyboard: Tab reaches the day (it has something to say), its text shows while it has focus
        await page.evaluate(() => document.activeElement?.blur())
        let focused = ''
        for (let i = 0; i < 30 && focused !== 'today'; i++) {
          await page.keyboard.press('Tab')
          focused = await page.evaluate(() =>
            document.activeElement?.closest('.service') && document.activeElement === document.querySelector('.service .day:last-child') ? 'today' : '',
          )
        }
        expect(focused).toBe('today')
        const box = await shown()
        expect(box.width).toBeGreaterThan(200)
        expect(box.left).toBeGreaterThanOrEqual(0)
        expect(box.right).toBeLessThanOrEqual(375)
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
        expect(
          contrast(await tip.evaluate((el: unknown) => getComputedStyle(el).color), await tip.evaluate((el: unknown) => getComputedStyle(el).backgroundColor)),
        ).toBeGreaterThanOrEqual(4.5)
        // quiet days (no runs, no incident) are no tab stops
        expect(await page.locator('.service').nth(1).locator('.day[tabindex]').count()).toBe(0)
        expect(await page.locator('.service').first().locator('.figure').textContent()).toBe('No data')
        expect(await page.locator('head meta[http-equiv="refresh"]').getAttribute('content')).toBe('60')
        expect(await page.locator('link[rel="alternate"][type="application/atom+xml"]').getAttribute('href')).toBe(
          `/status/acme-${theme.toLowerCase()}/feed.atom`,
        )
        await today.focus()
        await screenshot(page, shot)
        expect(errors).toEqual([])
      } finally {
        await context.close()
      }
    }, 120_000)
  }
})

describe.skipIf(!hasChromium)('dashboard in Chromium', () => {
  let shopId: string
  let brokenId: string

  beforeAll(async () => {
    const dnsCheck = (name: string, query: string, tags: string[]) => ({
      name,
      activated: false,
      tags,
      locations: ['eu-west-1', 'us-east-1'],
      request: {
        query,
        recordType: 'A',
        nameServer: '127.0.0.1',
        port: dns.port,
        assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }],
      },
    })
    shopId = (await created('/v1/checks/dns', dnsCheck('Shop DNS', 'shop.test', ['web']))).id
    brokenId = (await created('/v1/checks/dns', dnsCheck('Legacy DNS', 'broken.test', ['legacy']))).id
    await created('/v1/checks/icmp', { name: 'Edge ping', activated: false, tags: ['web'], request: { hostname: 'edge.test' }, heartbeat: {}, script: '' })
    // real runs: three sessions of the passing check, one of the failing one
    for (const id of [shopId, shopId, shopId, brokenId]) {
      const trigger = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
      const done = await api('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
      expect(done.status).toBe(200)
    }
  }, 120_000)

  it('log in, list and filter checks, read a chart, archive an error group, run a session, log out', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    try {
      const page = await context.newPage()
      const errors = watchErrors(page)

      // log in with the keyboard only
      await page.goto(`${server.url}/`)
      expect(await landmarks(page)).toEqual(['banner', 'main'])
      expect(await unreachableByKeyboard(page)).toEqual([])
      await screenshot(page, 'dashboard-login')
      await page.locator('#apiKey').focus()
      await page.keyboard.type(KEY_A)
      await page.keyboard.press('Enter')
      await page.locator('h1', { hasText: 'Checks' }).waitFor()
      await page.waitForLoadState('load')
      expect(page.url()).toBe(`${server.url}/`)
      const cookies = await context.cookies()
      expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([['monitors_session', true, 'Strict']])
      expect(cookies[0].value).not.toContain(KEY_A)

      // the check list: status, badge, locations as the API answers them
      const row = (name: string) => page.locator('tbody tr', { has: page.locator(`a:text-is("${name}")`) })
      expect(await row('Shop DNS').locator('td').nth(2).textContent()).toBe('passing · paused')
      expect(await row('Legacy DNS').locator('td').nth(2).textContent()).toBe('failing · paused')
      expect(await row('Shop DNS').locator('td').nth(5).textContent()).toBe('eu-west-1, us-east-1')
      expect(
        await row('Shop DNS')
          .locator('img')
          .evaluate((img: any) => img.naturalWidth),
      ).toBeGreaterThan(0)
      expect(await unreachableByKeyboard(page)).toEqual([])
      await screenshot(page, 'dashboard-checks')

      await page.selectOption('#filter-tag', 'web')
      await page.selectOption('#filter-type', 'DNS')
      await page.getByRole('button', { name: 'Filter' }).click()
      await page.waitForURL(/tag=web/)
      expect(await page.locator('tbody tr a').allTextContents()).toEqual(['Shop DNS'])

      // a check's page: the chart per location from the recorded runs
      await page.getByRole('link', { name: 'Shop DNS' }).click()
      await page.locator('#chart[data-drawn="true"] canvas').waitFor()
      const legend = await page.locator('#chart .u-legend').textContent()
      expect(legend).toContain('eu-west-1')
      expect(legend).toContain('us-east-1')
      const chartData = JSON.parse((await page.locator('#chart-data').textContent()) as string)
      expect(chartData.series.map((s: any) => s.values.filter((v: unknown) => v !== null).length)).toEqual([3, 3])
      // no failed run: nothing marked, and no location drawn in the failed runs' red
      expect(chartData.failed).toEqual([])
      expect(await page.locator('#chart').getAttribute('data-failed-marks')).toBe('0')
      expect(await redPixels(page)).toBe(0)
      expect(await page.locator('caption a', { hasText: 'Session' }).count()).toBe(3)
      expect(await landmarks(page)).toEqual(['banner', 'navigation', 'main'])
      expect(await unreachableByKeyboard(page)).toEqual([])
      await screenshot(page, 'dashboard-check-chart')

      // run now: a session starts, and its page shows its completion
      await page.getByRole('button', { name: 'Run now' }).click()
      await page.waitForURL(/\/dashboard\/sessions\//)
      await page.locator('[data-session-done="true"]').waitFor({ timeout: 30_000 })
      expect(await page.locator('[data-session-status]').getAttribute('data-session-status')).toBe('PASSED')
      const sessionId = page.url().split('/').pop() as string
      expect((await api('GET', `/v1/check-sessions/${sessionId}`)).json).toMatchObject({ checkId: shopId, status: 'PASSED' })
      expect(await unreachableByKeyboard(page)).toEqual([])
      await screenshot(page, 'dashboard-session')

      // the failing check's error group, archived from its button
      await page.goto(`${server.url}/dashboard/checks/${brokenId}`)
      const group = page.locator('tr[data-error-group-id]')
      expect(await group.count()).toBe(1)
      const groupId = (await group.getAttribute('data-error-group-id')) as string
      await group.getByRole('button', { name: /^Archive error/ }).click()
      await page.locator(`tr[data-error-group-id="${groupId}"][data-archived="true"]`).waitFor()
      expect((await api('GET', `/v1/error-groups/${groupId}`)).json).toMatchObject({ id: groupId, archiveForEver: true })
      expect(await unreachableByKeyboard(page)).toEqual([])
      await screenshot(page, 'dashboard-error-group-archived')

      await page.getByRole('button', { name: 'Log out' }).click()
      await page.locator('#apiKey').waitFor()
      expect(await context.cookies()).toEqual([])
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  }, 180_000)

  it("a heartbeat check's page: its ping URL to copy, its pings, no Run now", async () => {
    const check = await created('/v1/checks/heartbeat', { name: 'Nightly export', heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' } })
    expect((await fetch(check.heartbeat.pingUrl, { method: 'POST' })).status).toBe(200)
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    try {
      const page = await context.newPage()
      const errors = watchErrors(page)
      await page.goto(`${server.url}/`)
      await page.locator('#apiKey').fill(KEY_A)
      await page.keyboard.press('Enter')
      await page.locator('h1', { hasText: 'Checks' }).waitFor()
      await page.getByRole('link', { name: 'Nightly export' }).click()
      await page.locator('h1', { hasText: 'Nightly export' }).waitFor()
      expect(await page.locator('[data-ping-url]').textContent()).toBe(check.heartbeat.pingUrl)
      expect(await page.getByRole('button', { name: 'Run now' }).count()).toBe(0)
      expect(await page.getByText('Run now').count()).toBe(0)
      const rows = await page
        .locator('table', { has: page.locator('caption', { hasText: 'a ping is RECEIVED' }) })
        .locator('tbody tr')
        .allTextContents()
      expect(rows).toHaveLength(1)
      expect(rows[0]).toContain('RECEIVED')
      expect(rows[0]).toContain('PASSED')
      expect(await landmarks(page)).toEqual(['banner', 'navigation', 'main'])
      expect(await unreachableByKeyboard(page)).toEqual([])
      await screenshot(page, 'dashboard-heartbeat')
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  }, 120_000)

  it("a check group's page: its checks, and a public badge made with the keyboard, its address and Markdown for a README", async () => {
    const group = await created('/v1/check-groups', { name: 'Storefront group', locations: ['eu-west-1'] })
    await created('/v1/checks/dns', {
      name: 'Storefront member',
      activated: false,
      groupId: group.id,
      request: { query: 'shop.test', nameServer: '127.0.0.1', port: dns.port },
    })
    const context = await browser.newContext({ viewport: { width: 375, height: 812 } })
    try {
      const page = await context.newPage()
      const errors = watchErrors(page)
      await page.goto(`${server.url}/`)
      await page.locator('#apiKey').fill(KEY_A)
      await page.keyboard.press('Enter')
      await page.locator('h1', { hasText: 'Checks' }).waitFor()
      await page.getByRole('link', { name: 'Storefront group' }).click()
      await page.locator('h1', { hasText: 'Storefront group' }).waitFor()
      expect(await page.getByRole('link', { name: 'Storefront member' }).count()).toBe(1)
      expect(await page.locator('img[alt="badge of Storefront group"]').evaluate((img: any) => img.naturalWidth)).toBeGreaterThan(0)
      await page.getByRole('button', { name: 'Create public badge' }).focus()
      await page.keyboard.press('Enter')
      await page.locator('[data-public-badge]').waitFor()
      const url = await page.locator('[data-public-badge]').textContent()
      expect(url).toMatch(new RegExp(`^${server.url}/badges/[A-Za-z0-9_-]{32}\\.svg$`))
      expect(await page.locator('[data-markdown]').textContent()).toBe(`![Storefront group](${url})`)
      expect(await page.locator('img[alt="public badge of Storefront group"]').evaluate((img: any) => img.naturalWidth)).toBeGreaterThan(0)
      // the long address and Markdown wrap: nothing wider than the phone's screen
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
      expect(await landmarks(page)).toEqual(['banner', 'navigation', 'main'])
      expect(await unreachableByKeyboard(page)).toEqual([])
      await screenshot(page, 'dashboard-group')
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  }, 120_000)
})

describe.skipIf(!hasChromium)('dashboard as a wall screen in Chromium', () => {
  let wallId: string
  let memberId: string
  let groupId: number
  const exact = (iso: string) => `${new Date(iso).toISOString().replace('T', ' ').slice(0, 19)} UTC`

  beforeAll(async () => {
    dns.set('wall.test', 'A', { records: [{ type: 'A', data: '192.0.2.7' }] })
    const request = (query: string) => ({
      query,
      recordType: 'A',
      nameServer: '127.0.0.1',
      port: dns.port,
      assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }],
    })
    wallId = (await created('/v1/checks/dns', { name: 'Wall DNS', activated: false, locations: ['eu-west-1'], request: request('wall.test') })).id
    const group = await created('/v1/check-groups', { name: 'Wall group', locations: ['ap-south-1', 'us-west-1'] })
    groupId = group.id
    // no locations of its own: it runs in its group's
    memberId = (await created('/v1/checks/dns', { name: 'Wall member', activated: false, groupId, request: request('shop.test') })).id
    await runOnce(wallId)
    await runOnce(memberId)
  }, 60_000)

  it("the checks at 1920 px: the width used, Last run on one line, a group's locations; a failed run shows up by itself, without a reload, one request per interval", async () => {
    const context = await browser.newContext({ viewport: { width: 1920, height: 1080 } })
    try {
      const page = await context.newPage()
      const errors = watchErrors(page)
      await logIn(page)
      await page.goto(`${server.url}/?refresh=2`)
      expect(await page.locator('[data-refresh]').textContent()).toMatch(/^Updated \d\d:\d\d:\d\d UTC · refreshes every 2 s · Pause$/)

      // the width: the main column and the table span the screen, not a column in its middle
      expect(await page.locator('main .wrap').evaluate((el: any) => el.getBoundingClientRect().width)).toBeGreaterThan(0.95 * 1920)
      expect(await page.locator('table.checks').evaluate((el: any) => el.getBoundingClientRect().width)).toBeGreaterThan(0.9 * 1920)
      // Last run: one line each, relative, the exact time to the second in its tooltip
      const lines = await lineBoxes(page, 'td[data-last-run] time')
      expect(lines.length).toBeGreaterThanOrEqual(3)
      for (const line of lines) {
        expect(line.boxes, line.text).toBe(1)
        expect(line.height, line.text).toBeLessThan(line.lineHeight * 1.3)
      }
      const row = page.locator(`tr[data-check-id="${wallId}"]`)
      const status = (await api('GET', `/v1/check-statuses/${wallId}`)).json
      expect(await row.locator('td[data-last-run] time').textContent()).toMatch(/^(just now|\d+ s ago)$/)
      expect(await row.locator('td[data-last-run] time').getAttribute('title')).toBe(exact(status.updated_at ?? status.created_at))
      // a check of a group without locations of its own runs in the group's, and says so
      expect(await page.locator(`tr[data-check-id="${memberId}"] td[data-locations]`).textContent()).toBe('ap-south-1, us-west-1 (group)')
      expect(await row.locator('td[data-locations]').textContent()).toBe('eu-west-1')
      await screenshot(page, 'dashboard-wall-1920')

      // a failed run arrives: the page shows it by itself, its content swapped in place
      expect(await row.locator('td').nth(2).textContent()).toBe('passing · paused')
      const updated = (await page.locator('[data-updated]').getAttribute('datetime')) as string
      await page.evaluate(() => {
        ;(globalThis as any).keptAcrossRefreshes = true
      })
      const traffic = watchTraffic(page, `${server.url}/?refresh=2`)
      const started = Date.now()
      dns.set('wall.test', 'A', { rcode: 'SERVFAIL' })
      await runOnce(wallId)
      await row.locator('td.state-failing').waitFor({ timeout: 10_000 })
      expect(await row.locator('td').nth(2).textContent()).toBe('failing · paused')
      expect(Date.parse((await page.locator('[data-updated]').getAttribute('datetime')) as string)).toBeGreaterThan(Date.parse(updated))
      expect(await page.evaluate(() => (globalThis as any).keptAcrossRefreshes)).toBe(true)
      expect(traffic.navigations()).toBe(0)
      await page.waitForTimeout(2200)
      expectOnePerInterval(traffic.asked, 2000, Date.now() - started)
      // Pause: no request after it
      await page.getByRole('link', { name: 'Pause' }).click()
      await page.waitForURL(/refresh=off/)
      expect(await page.locator('[data-refresh]').textContent()).toMatch(/^Updated \d\d:\d\d:\d\d UTC · paused · Resume refreshing$/)
      expect(await page.locator('noscript').count()).toBe(0)
      const asked = traffic.asked.length
      await page.waitForTimeout(2200)
      expect(traffic.asked.length).toBe(asked)
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  }, 120_000)

  it("a check's chart at 1920 px marks its failed runs in red, and takes a new one in by itself", async () => {
    const context = await browser.newContext({ viewport: { width: 1920, height: 1080 } })
    try {
      const page = await context.newPage()
      const errors = watchErrors(page)
      await logIn(page)
      await page.goto(`${server.url}/dashboard/checks/${wallId}?refresh=2`)
      await page.locator('#chart[data-drawn="true"] canvas').waitFor()
      const failedOf = async () =>
        ((await api('GET', `/v1/check-results/${wallId}?limit=100&resultType=FINAL`)).json as any[]).filter((r) => r.status === 'FAILED')
      const failed = await failedOf()
      expect(failed).toHaveLength(1)
      const chart = JSON.parse((await page.locator('#chart-data').textContent()) as string)
      expect(chart.failed).toEqual([
        { x: Date.parse(failed[0].startedAt) / 1000, location: 'eu-west-1', status: 'FAILED', responseTime: failed[0].responseTime },
      ])
      expect(await page.locator('#chart').getAttribute('data-failed-marks')).toBe('1')
      expect(await redPixels(page)).toBeGreaterThan(20)
      expect(await page.locator('#chart-failed').textContent()).toContain('1 failed run among the last 100')
      expect(await page.locator('#chart').evaluate((el: any) => el.getBoundingClientRect().width)).toBeGreaterThan(0.9 * 1920)
      // the runs' times to the second
      expect(await page.locator('tr.failed-run time').first().textContent()).toBe(exact(failed[0].startedAt))

      const traffic = watchTraffic(page, `${server.url}/dashboard/checks/${wallId}?refresh=2`)
      await runOnce(wallId)
      await page.locator('#chart[data-failed-marks="2"]').waitFor({ timeout: 10_000 })
      expect(JSON.parse((await page.locator('#chart-data').textContent()) as string).failed).toHaveLength(2)
      expect(traffic.navigations()).toBe(0)
      await page.mouse.move(0, 0)
      await screenshot(page, 'dashboard-chart-failed-1920')
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  }, 120_000)

  it("on a phone, 375 px: the checks as cards, Last run on one line, a group and its locations, a check's page, nothing wider than the screen", async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 812 } })
    try {
      const page = await context.newPage()
      const errors = watchErrors(page)
      await logIn(page)
      expect(await pageWidth(page)).toBeLessThanOrEqual(375)
      // each row a card: label beside value, no table wider than the screen
      const row = page.locator(`tr[data-check-id="${wallId}"]`)
      expect(await row.evaluate((el: any) => getComputedStyle(el).display)).toBe('block')
      const box = await row.boundingBox()
      expect(box && box.x + box.width).toBeLessThanOrEqual(375)
      expect(await row.locator('td[data-last-run]').evaluate((el: any) => getComputedStyle(el, '::before').content)).toBe('"Last run"')
      for (const line of await lineBoxes(page, 'td[data-last-run] time')) {
        expect(line.boxes, line.text).toBe(1)
        expect(line.height, line.text).toBeLessThan(line.lineHeight * 1.3)
      }
      expect(await page.locator(`tr[data-check-id="${memberId}"] td[data-locations]`).textContent()).toBe('ap-south-1, us-west-1 (group)')
      expect(await unreachableByKeyboard(page)).toEqual([])
      await screenshot(page, 'dashboard-wall-375')

      // the group's page: its own locations, and each check's where it runs
      await page.goto(`${server.url}/dashboard/groups/${groupId}`)
      expect(await page.locator('[data-group-locations]').textContent()).toBe('Locations: ap-south-1, us-west-1')
      expect(await page.locator(`tr[data-check-id="${memberId}"] td[data-locations]`).textContent()).toBe('ap-south-1, us-west-1')
      expect(await page.locator(`tr[data-check-id="${memberId}"] td[data-last-run] time`).textContent()).toMatch(/ ago$|^just now$/)
      expect(await pageWidth(page)).toBeLessThanOrEqual(375)
      await screenshot(page, 'dashboard-group-375')

      // a check of the group: its locations, the group's
      await page.goto(`${server.url}/dashboard/checks/${memberId}`)
      expect(await page.locator('[data-locations]').textContent()).toMatch(
        /^Locations: ap-south-1, us-west-1 \(group\) · in check group Wall group · last run /,
      )
      await page.goto(`${server.url}/dashboard/checks/${wallId}`)
      await page.locator('#chart[data-drawn="true"] canvas').waitFor()
      expect(await page.locator('#chart').getAttribute('data-failed-marks')).toBe('2')
      expect(await pageWidth(page)).toBeLessThanOrEqual(375)
      await screenshot(page, 'dashboard-check-375')
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  }, 120_000)

  it('without JavaScript the list reloads itself at the interval (a meta refresh in noscript)', async () => {
    const context = await browser.newContext({ viewport: { width: 1920, height: 1080 }, javaScriptEnabled: false })
    try {
      const page = await context.newPage()
      await page.goto(`${server.url}/`)
      await page.locator('#apiKey').fill(KEY_A)
      await page.locator('button[type="submit"]', { hasText: 'Log in' }).click()
      await page.locator('h1', { hasText: 'Checks' }).waitFor()
      await page.goto(`${server.url}/?refresh=2`)
      const traffic = watchTraffic(page, `${server.url}/?refresh=2`)
      await page.waitForEvent('framenavigated', { timeout: 6000 })
      expect(traffic.navigations()).toBe(1)
      expect(page.url()).toBe(`${server.url}/?refresh=2`)
    } finally {
      await context.close()
    }
  }, 60_000)
})

describe.skipIf(!hasChromium)('status page of dependent services in Chromium', () => {
  beforeAll(async () => {
    const database = await created('/v1/status-pages/services', { name: 'Orders database' })
    const storefront = await created('/v1/status-pages/services', { name: 'Storefront API' })
    const dnsCheck = (name: string, serviceId: string, extra: Record<string, unknown> = {}) =>
      created('/v1/checks/dns', {
        name,
        activated: false,
        locations: ['eu-west-1'],
        ...extra,
        request: {
          query: 'broken.test',
          recordType: 'A',
          nameServer: '127.0.0.1',
          port: dns.port,
          assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }],
        },
        triggerIncident: { serviceId, severity: 'MAJOR', name: `${name} down`, description: '' },
      })
    const db = await dnsCheck('orders-db-primary', database.id)
    const app = await dnsCheck('storefront-api-probe', storefront.id, { dependsOn: [db.id] })
    await created('/v1/status-pages', {
      name: 'Acme orders',
      url: 'acme-orders',
      defaultTheme: 'AUTO',
      themeColors: { light: LIGHT, dark: DARK },
      showResponseTime: true,
      cards: [{ name: 'Orders', services: [{ id: database.id }, { id: storefront.id }] }],
    })
    // real runs: the database fails, then the storefront (its alerts held back: no incident)
    for (const id of [db.id, app.id]) {
      const trigger = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
      expect((await api('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)).status).toBe(200)
    }
  }, 120_000)

  for (const scheme of ['light', 'dark'] as const) {
    it(`says which service of the page a failing one is affected by, and each response time (${scheme}, 375 px, no script)`, async () => {
      const context = await browser.newContext({ viewport: { width: 375, height: 812 }, colorScheme: scheme, javaScriptEnabled: false })
      try {
        const page = await context.newPage()
        const errors = watchErrors(page)
        expect((await page.goto(`${server.url}/status/acme-orders`))?.status()).toBe(200)
        // in the card's order
        const database = page.locator('.service').nth(0)
        const storefront = page.locator('.service').nth(1)
        expect(await database.locator('> span').first().textContent()).toBe('Orders database')
        expect(await storefront.locator('> span').first().textContent()).toBe('Storefront API')
        expect(await storefront.locator('.affected').textContent()).toBe('Affected by Orders database')
        expect(await storefront.locator('.status-word').textContent()).toBe('Partial outage')
        expect(await database.locator('.affected').count()).toBe(0)
        expect(await database.locator('.status-word').textContent()).toBe('Major outage')
        for (const service of [storefront, database]) {
          expect(await service.locator('.response-time').textContent()).toMatch(/^Response time: \d+(\.\d)? ms average over the last 24 hours$/)
        }
        // no check's name on the public page
        expect(await page.content()).not.toContain('storefront-api-probe')
        // readable: the notes are body text on the card, at least 4.5:1 in this theme
        const colour = (el: any) => getComputedStyle(el).color
        const background = (el: any) => getComputedStyle(el.closest('.card')).backgroundColor
        for (const note of [storefront.locator('.affected'), storefront.locator('.response-time')]) {
          expect(contrast(await note.evaluate(colour), await note.evaluate(background))).toBeGreaterThanOrEqual(4.5)
          const box = await note.boundingBox()
          expect(box && box.x + box.width).toBeLessThanOrEqual(375)
        }
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
        expect(await landmarks(page)).toEqual(['banner', 'navigation', 'main', 'contentinfo'])
        expect(await unreachableByKeyboard(page)).toEqual([])
        await storefront.scrollIntoViewIfNeeded()
        await screenshot(page, `status-page-affected-${scheme}`)
        expect(errors).toEqual([])
      } finally {
        await context.close()
      }
    }, 120_000)
  }
})
