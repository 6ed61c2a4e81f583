/**
 * The VALUES of browser and multi-step check analytics, from real runs: the server's runner
 * (SQLite file or PostgreSQL) runs scripts in Debian's Chromium against pages on 127.0.0.1 with
 * known timings: a first byte held back 300 ms (TTFB), a 400 ms task on the main thread (TBT), a
 * block inserted above the content (CLS), console errors, an uncaught page error, a failed
 * request and a script that throws (the error counts of a failing run).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { hasChromium } from '../../helpers/browser.js'
import { startHttpServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { prepareTestRuntime } from '../../helpers/runtime.js'
import { seriesOf } from './analytics-helpers.js'
import { caller, expect400, startTestServer, type Call } from '../helpers.js'

let dir: string
let site: HttpServerHandle
let server: LocalServer
let call: Call
const html = { 'content-type': 'text/html' }

const SLOW = `<!doctype html><html><head><title>Slow</title></head><body><h1>Slow shop</h1>
<button id="work" onclick="const end = Date.now() + 400; while (Date.now() < end) {}; document.getElementById('done').textContent = 'done'">Work</button><p id="done"></p></body></html>`
const SHIFT = `<!doctype html><html><head><title>Shift</title><style>body{margin:0;font:16px sans-serif} p{height:40px;margin:0}</style></head><body>
<div id="top"></div><h1>Shifting shop</h1>${Array.from({ length: 20 }, (_, i) => `<p>line ${i}</p>`).join('')}
<script>setTimeout(() => { const d = document.createElement('div'); d.style.height = '300px'; d.textContent = 'banner'; document.getElementById('top').appendChild(d); document.body.dataset.shifted = '1' }, 300)</script></body></html>`
const BROKEN = `<!doctype html><html><head><title>Broken</title></head><body><h1>Broken shop</h1>
<script>console.error('first'); console.error('second'); setTimeout(() => { throw new Error('page broke') }, 10); fetch('/api/missing').then(() => { document.body.dataset.fetched = '1' })</script></body></html>`

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-script-analytics-'))
  site = await startHttpServer()
  site.route('/slow', { status: 200, headers: html, body: SLOW, delayBeforeHeadersMs: 300 })
  site.route('/shift', { status: 200, headers: html, body: SHIFT })
  site.route('/broken', { status: 200, headers: html, body: BROKEN })
  site.route('/api/missing', { status: 404, body: { error: 'missing' } })
  site.route('/api/slow', { status: 200, body: { ok: true }, delayBeforeHeadersMs: 300 })
  site.route('/first', { status: 200, headers: html, body: '<!doctype html><title>First</title><h1>First page</h1>' })
  site.route('/second', { status: 200, headers: html, body: '<!doctype html><title>Second</title><h1>Second page</h1>', delayBeforeHeadersMs: 1000 })
  const runtimeCache = await prepareTestRuntime()
  server = await startTestServer({
    dbPath: join(dir, 'analytics.db'),
    runner: true,
    privateTargets: 'allow',
    runtimeCache,
    scriptConcurrency: 1,
    schedulerOptions: { tickMs: 50 },
  })
  call = caller(server)
}, 180_000)
afterAll(async () => {
  await server?.close()
  await site?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function createCheck(route: 'browser' | 'multistep', name: string, body: string): Promise<string> {
  const script = `import { test, expect } from '@playwright/test'\n${body}\n`
  const created = await call('POST', `/v1/checks/${route}`, {
    name,
    activated: false,
    doubleCheck: false,
    script,
    scriptPath: 'checks/a.spec.ts',
    environmentVariables: [{ key: 'SITE', value: site.origin }],
  })
  expect(created.status, created.text).toBe(201)
  return created.json.id
}

/** Triggers one run and waits (up to 3 minutes on a loaded machine) until its result is recorded. */
async function runOnce(id: string): Promise<void> {
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
  expect(trigger.status, trigger.text).toBe(201)
  const deadline = Date.now() + 180_000
  for (;;) {
    const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=30`)
    if (done.status === 408 && Date.now() < deadline) continue
    expect(done.status, done.text).toBe(200)
    return
  }
}

/** One bucket over the whole test: every run of the check so far. */
async function figures(segment: string, id: string, metrics: string[]): Promise<Record<string, unknown>> {
  const from = Math.floor(Date.now() / 1000) - 3600
  const answer = await call('GET', `/v1/analytics/${segment}/${id}?from=${from}&to=${from + 7200}&aggregationInterval=43200&metrics=${metrics.join(',')}`)
  const series = seriesOf(answer)
  expect(series, answer.text).toHaveLength(1)
  return series[0]
}

describe.skipIf(!hasChromium)('browser check analytics from real runs (Debian Chromium)', () => {
  it('TTFB, FCP and LCP follow a first byte held back 300 ms; TBT a 400 ms task; no layout shift, no errors', async () => {
    const id = await createCheck(
      'browser',
      'Slow shop',
      `test('slow', async ({ page }) => {
  await page.goto(process.env.SITE + '/slow')
  await expect(page.locator('h1')).toHaveText('Slow shop')
  await page.click('#work')
  await expect(page.locator('#done')).toHaveText('done')
  await page.waitForTimeout(300)
})`,
    )
    await runOnce(id)
    await runOnce(id)
    const f = await figures('browser-checks', id, [
      'TTFB_min',
      'FCP_min',
      'LCP_min',
      'TBT_min',
      'CLS_max',
      'consoleErrors_sum',
      'networkErrors_sum',
      'userScriptErrors_sum',
      'documentErrors_sum',
      'availability',
      'responseTime_min',
    ])
    expect(f.availability, JSON.stringify(f)).toBe(100)
    expect(f.TTFB_min).toBeGreaterThanOrEqual(300)
    expect(f.FCP_min).toBeGreaterThanOrEqual(f.TTFB_min as number)
    expect(f.LCP_min).toBeGreaterThanOrEqual(f.FCP_min as number)
    // one task of at least 400 ms after the first paint: everything above 50 ms of it blocks
    expect(f.TBT_min).toBeGreaterThanOrEqual(350)
    const consoles = (await call('GET', `/v1/check-results/${id}?resultType=FINAL`)).json.map(
      (r: { result: { details: { console: unknown } } }) => r.result.details.console,
    )
    expect(f, JSON.stringify(consoles)).toMatchObject({
      CLS_max: 0,
      consoleErrors_sum: 0,
      networkErrors_sum: 0,
      userScriptErrors_sum: 0,
      documentErrors_sum: 0,
    })
    // the run lasts the page's 300 ms, the task's 400 ms and the wait's 300 ms at least
    expect(f.responseTime_min).toBeGreaterThanOrEqual(1000)
  }, 420_000)

  it('CLS counts a block inserted above the content', async () => {
    const id = await createCheck(
      'browser',
      'Shifting shop',
      `test('shift', async ({ page }) => {
  await page.goto(process.env.SITE + '/shift')
  await expect(page.locator('body')).toHaveAttribute('data-shifted', '1')
  await page.waitForTimeout(500)
})`,
    )
    await runOnce(id)
    const f = await figures('browser-checks', id, ['CLS', 'CLS_min', 'TTFB', 'availability'])
    expect(f.availability, JSON.stringify(f)).toBe(100)
    // the heading and twenty lines (most of the viewport) move down 300 px
    expect(f.CLS_min).toBeGreaterThan(0.1)
    expect(f.CLS).toBe(f.CLS_min)
    // a first byte not held back: measured (how fast depends on the machine's load)
    expect(f.TTFB).toBeGreaterThan(0)
  }, 240_000)

  it('a failing run counts its console, page, network and script errors; availability counts it as down', async () => {
    const id = await createCheck(
      'browser',
      'Broken shop',
      `test('broken', async ({ page }) => {
  await page.goto(process.env.SITE + '/broken')
  await expect(page.locator('body')).toHaveAttribute('data-fetched', '1')
  await page.waitForTimeout(200)
  throw new Error('the script broke')
})`,
    )
    await runOnce(id)
    await runOnce(id)
    const results = await call('GET', `/v1/check-results/${id}?resultType=FINAL`)
    expect(results.json.map((r: { hasErrors: boolean; hasFailures: boolean }) => r.hasErrors || r.hasFailures)).toEqual([true, true])
    const errors = results.json[0].result.details.errors
    const f = await figures('browser-checks', id, [
      'consoleErrors_sum',
      'consoleErrors',
      'networkErrors_sum',
      'userScriptErrors_sum',
      'documentErrors_sum',
      'availability',
      'TTFB_max',
    ])
    // two console.error calls and the browser's line about the page's failed request (not the one
    // about its own request for /favicon.ico, which the site answers 404 too)
    expect(errors.consoleErrors, JSON.stringify(results.json[0].result.details.console)).toBe(3)
    expect(results.json[0].result.details.console.map((c: { text: string }) => c.text)).toEqual(
      expect.arrayContaining([expect.stringMatching(/favicon|Failed to load/)]),
    )
    expect(f).toMatchObject({
      availability: 0,
      consoleErrors_sum: 2 * errors.consoleErrors,
      consoleErrors: errors.consoleErrors,
      networkErrors_sum: 2,
      userScriptErrors_sum: 2,
      documentErrors_sum: 2,
    })
    // a failing run's page still has its vitals
    expect(f.TTFB_max).toBeGreaterThan(0)
  }, 420_000)
})

describe.skipIf(!hasChromium)('browser check analytics grouped by page (groupBy=pageIndex)', () => {
  it("a run opening two pages gives a series per page: the second page's first byte held back 1000 ms, the first's not", async () => {
    const id = await createCheck(
      'browser',
      'Two pages',
      `test('two pages', async ({ page, context }) => {
  await page.goto(process.env.SITE + '/first')
  await expect(page.locator('h1')).toHaveText('First page')
  const second = await context.newPage()
  await second.goto(process.env.SITE + '/second')
  await expect(second.locator('h1')).toHaveText('Second page')
  await page.waitForTimeout(200)
})`,
    )
    await runOnce(id)
    await runOnce(id)
    const from = Math.floor(Date.now() / 1000) - 3600
    const metrics = ['TTFB_min', 'TTFB_max', 'FCP_min', 'availability', 'retries', 'responseTime_min', 'consoleErrors_sum']
    const answer = await call(
      'GET',
      `/v1/analytics/browser-checks/${id}?from=${from}&to=${from + 7200}&aggregationInterval=43200&groupBy=pageIndex&metrics=${metrics.join(',')}`,
    )
    const series = seriesOf(answer)
    expect(
      series.map((s) => s.pageIndex),
      answer.text,
    ).toEqual([0, 1])
    const [first, second] = series
    expect(second.TTFB_min, answer.text).toBeGreaterThanOrEqual(1000)
    expect(first.TTFB_max, answer.text).toBeLessThan(second.TTFB_min as number)
    expect(second.FCP_min).toBeGreaterThanOrEqual(second.TTFB_min as number)
    // both runs opened both pages: each page's runs are the check's, error counts are not per page
    const whole = await figures('browser-checks', id, ['TTFB_min', 'TTFB_max', 'responseTime_min'])
    for (const page of series) expect(page).toMatchObject({ availability: 100, retries: 0, responseTime_min: whole.responseTime_min, consoleErrors_sum: null })
    // without groupBy, a run's vitals are its first page's
    expect(whole).toMatchObject({ TTFB_min: first.TTFB_min, TTFB_max: first.TTFB_max })
    // run by run (a percentile, sub-hour buckets): the same pages, the same figures
    const exact = await call(
      'GET',
      `/v1/analytics/browser-checks/${id}?from=${from}&to=${from + 7200}&aggregationInterval=5&groupBy=pageIndex&metrics=TTFB_p99,TTFB_min`,
    )
    const buckets = seriesOf(exact)
    for (const [index, page] of [first, second].entries()) {
      const mins = buckets.filter((b) => b.pageIndex === index).map((b) => b.TTFB_min as number)
      expect(Math.min(...mins), exact.text).toBe(page.TTFB_min)
    }
    expect(buckets.filter((b) => b.pageIndex === 1).every((b) => (b.TTFB_p99 as number) >= 1000)).toBe(true)
  }, 420_000)

  it('other check types answer groupBy=pageIndex with a 400 naming groupBy', async () => {
    const id = await createCheck('multistep', 'No pages', `test('x', async () => {})`)
    const answer = await call('GET', `/v1/analytics/multistep-checks/${id}?metrics=responseTime&groupBy=pageIndex`)
    expect(expect400(answer, 'query')).toEqual(['groupBy'])
    expect(answer.json.message).toContain('runLocation')
  })
})

describe.skipIf(!hasChromium)('multi-step check analytics from real runs', () => {
  it('responseTime is the run time (an API answering after 300 ms), availability counts a failing run', async () => {
    const id = await createCheck(
      'multistep',
      'Orders API',
      `test('orders', async ({ request }) => {
  const answer = await request.get(process.env.SITE + '/api/slow')
  expect(answer.status()).toBe(Number(process.env.EXPECTED ?? 200))
})`,
    )
    await runOnce(id)
    const put = await call('PUT', `/v1/checks/multistep/${id}`, {
      name: 'Orders API',
      activated: false,
      doubleCheck: false,
      scriptPath: 'checks/a.spec.ts',
      script: (await call('GET', `/v1/checks/${id}`)).json.script,
      environmentVariables: [
        { key: 'SITE', value: site.origin },
        { key: 'EXPECTED', value: '201' },
      ],
    })
    expect(put.status, put.text).toBe(200)
    await runOnce(id)
    const f = await figures('multistep-checks', id, ['responseTime_min', 'availability', 'retries'])
    expect(f.availability, JSON.stringify(f)).toBe(50)
    expect(f.responseTime_min).toBeGreaterThanOrEqual(300)
    expect(f.retries).toBe(0)
    const vitals = await call('GET', `/v1/analytics/multistep-checks/${id}?metrics=TTFB`)
    expect(vitals.status).toBe(400)
    expect(vitals.json.message).toContain('"TTFB" is not a metric of MULTI_STEP checks: use responseTime')
  }, 420_000)
})
