/**
 * Playwright check suites end to end: the real server (runner on, SQLite file or PostgreSQL) with
 * Debian's Chromium, the small shop of examples/browser on 127.0.0.1, the built CLI. The routes
 * and rules of POST/PUT /v1/checks/playwright, the PlaywrightCheck of examples/browser applied
 * and run by the server, a failing variant's per-file plan, its screenshot and trace served and
 * shown on the dashboard, import writing the project back, and the loader's problems.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'
import { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { hasChromium } from '../../helpers/browser.js'
import { makeProject, monitors, repo, STACK_LINE, writeFiles } from '../../helpers/cli.js'
import { startHttpServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { prepareTestRuntime } from '../../helpers/runtime.js'
import { containment } from '../../../src/runner/script/jail.js'
import { zipBomb } from '../../helpers/zip-bomb.js'
import { KEY_A, KEY_B, caller, expect400, startTestServer, type Call } from '../helpers.js'

let dir: string
let site: HttpServerHandle
let server: LocalServer
let call: Call
let callB: Call

const PAGE = '<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1><a href="/cart">Cart</a></body></html>'

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-playwright-checks-'))
  site = await startHttpServer()
  site.route('/', { status: 200, headers: { 'content-type': 'text/html' }, body: PAGE })
  site.route('/api/orders', { status: 200, body: { orders: [{ id: 1 }] } })
  site.route('/cart', { status: 200, headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>Cart</title><h1>Your cart</h1>' })
  const runtimeCache = await prepareTestRuntime()
  process.env.MONITORS_RUNTIME_CACHE = runtimeCache
  server = await startTestServer({
    dbPath: join(dir, 'suites.db'),
    runner: true,
    playwrightSuites: true,
    privateTargets: 'allow',
    runtimeCache,
    scriptConcurrency: 1,
    schedulerOptions: { tickMs: 50 },
  })
  call = caller(server)
  callB = caller(server, KEY_B)
}, 180_000)
afterAll(async () => {
  await server?.close()
  await site?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function triggerAndWait(id: string, c: Call = call) {
  const trigger = await c('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
  expect(trigger.status, trigger.text).toBe(201)
  // a suite's run takes seconds, longer on a loaded machine: asked again until it is done (408), for up to 4 minutes
  const deadline = Date.now() + 240_000
  for (;;) {
    const done = await c('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=30`)
    if (done.status === 408 && Date.now() < deadline) continue
    expect(done.status, done.text).toBe(200)
    return done.json
  }
}

async function finalResult(checkId: string, c: Call = call) {
  const results = await c('GET', `/v1/check-results/${checkId}?resultType=FINAL&limit=1`)
  expect(results.status, results.text).toBe(200)
  return results.json[0]
}

async function logIn(key: string): Promise<string> {
  const answer = await fetch(`${server.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
    body: new URLSearchParams({ apiKey: key }).toString(),
  })
  expect(answer.status).toBe(303)
  return (answer.headers.get('set-cookie') ?? '').split(';')[0]
}

const CONFIG = "import { defineConfig } from '@playwright/test'\nexport default defineConfig({ testDir: './tests', projects: [{ name: 'desktop' }] })\n"
const suiteBody = (extra: Record<string, unknown> = {}) => ({
  name: 'Suite',
  activated: false,
  doubleCheck: false,
  files: [
    { path: 'playwright.config.ts', content: CONFIG },
    { path: 'tests/a.spec.ts', content: "import { test } from '@playwright/test'\ntest('a @smoke', async () => {})\n" },
  ],
  pwProjects: ['desktop'],
  pwTags: ['@smoke'],
  ...extra,
})

describe('Playwright checks: routes and rules', () => {
  it('POST /v1/checks/playwright creates (201) with its files and answers testCommand; PUT replaces; GET, list and DELETE as any check; another account is 404', async () => {
    const created = await call('POST', '/v1/checks/playwright', suiteBody())
    expect(created.status, created.text).toBe(201)
    expect(created.json).toMatchObject({
      checkType: 'PLAYWRIGHT',
      pwProjects: ['desktop'],
      pwTags: ['@smoke'],
      testCommand: 'npx playwright test --project "desktop" --grep "@smoke"',
    })
    expect(created.json.files).toHaveLength(2)
    const id = created.json.id
    expect((await call('GET', `/v1/checks/${id}`)).json).toMatchObject({ checkType: 'PLAYWRIGHT', name: 'Suite' })
    expect(((await call('GET', '/v1/checks?checkType=PLAYWRIGHT')).json as Array<{ id: string }>).map((c) => c.id)).toContain(id)
    const replaced = await call('PUT', `/v1/checks/playwright/${id}`, { ...created.json, name: 'Suite 2', pwTags: [] })
    expect(replaced.status, replaced.text).toBe(200)
    expect(replaced.json).toMatchObject({ name: 'Suite 2', testCommand: 'npx playwright test --project "desktop"' })
    expect((await callB('GET', `/v1/checks/${id}`)).status).toBe(404)
    expect((await callB('PUT', `/v1/checks/playwright/${id}`, suiteBody())).status).toBe(404)
    expect((await call('GET', `/v1/analytics/playwright-checks/${id}?metrics=responseTime,availability`)).status).toBe(200)
    expect((await callB('GET', `/v1/analytics/playwright-checks/${id}?metrics=responseTime`)).status).toBe(404)
    expect((await call('DELETE', `/v1/checks/${id}`)).status).toBe(204)
    expect((await call('GET', `/v1/checks/${id}`)).status).toBe(404)
  })

  it('refuses a config that is not among the files, a path out of the project, a file twice, another browser, no files and a binary file that is not base64 (400 naming the field)', async () => {
    expect(expect400(await call('POST', '/v1/checks/playwright', suiteBody({ playwrightConfigPath: 'pw.config.ts' })), 'payload')).toEqual([
      'playwrightConfigPath',
    ])
    expect(
      expect400(
        await call(
          'POST',
          '/v1/checks/playwright',
          suiteBody({ playwrightConfigPath: 'tests/pw.config.ts', files: [{ path: 'tests/a.spec.ts', content: 'x' }] }),
        ),
        'payload',
      ),
    ).toEqual(['playwrightConfigPath'])
    expect(
      expect400(
        await call(
          'POST',
          '/v1/checks/playwright',
          suiteBody({
            files: [
              { path: 'playwright.config.ts', content: CONFIG },
              { path: '../etc/passwd', content: 'x' },
            ],
          }),
        ),
        'payload',
      ),
    ).toEqual(['files.1.path'])
    expect(
      expect400(
        await call(
          'POST',
          '/v1/checks/playwright',
          suiteBody({
            files: [
              { path: 'playwright.config.ts', content: CONFIG },
              { path: 'playwright.config.ts', content: CONFIG },
            ],
          }),
        ),
        'payload',
      ),
    ).toEqual(['files.1.path'])
    const firefox = await call('POST', '/v1/checks/playwright', suiteBody({ browsers: ['firefox'] }))
    expect(expect400(firefox, 'payload')).toEqual(['browsers.0'])
    expect(firefox.text).toContain('only chromium runs here')
    expect(expect400(await call('POST', '/v1/checks/playwright', suiteBody({ files: [] })), 'payload')).toEqual(['files'])
    const notBase64 = await call(
      'POST',
      '/v1/checks/playwright',
      suiteBody({
        files: [
          { path: 'playwright.config.ts', content: CONFIG },
          { path: 'tests/shot.png', content: 'not base64!', encoding: 'base64' },
        ],
      }),
    )
    expect(expect400(notBase64, 'payload')).toEqual(['files.1.content'])
    expect(notBase64.text).toContain('is not base64')
  })
})

const root = process.getuid?.() === 0
if (!root)
  console.warn("playwright-checks.test.ts: a server that is not root runs no suite without --playwright-suites; the test of a suite's own user is skipped")

describe('a server without --playwright-suites', () => {
  it.skipIf(!root)(
    "run by root, runs a suite as a user of its own: its test cannot read the server's database nor its environment",
    async () => {
      // a folder other users may pass: what keeps the database from them is its own mode
      const open = mkdtempSync(join(dir, 'open-'))
      chmodSync(dir, 0o755)
      chmodSync(open, 0o755)
      const db = join(open, 'contained.db')
      // on PostgreSQL the server has no database file: a file of root's alone stands for it
      if (process.env.MONITORS_TEST_STORE === 'postgres') writeFileSync(db, 'secret', { mode: 0o600 })
      const plain = await startTestServer({
        dbPath: db,
        runner: true,
        privateTargets: 'allow',
        runtimeCache: process.env.MONITORS_RUNTIME_CACHE,
        schedulerOptions: { tickMs: 50 },
      })
      try {
        const c = caller(plain)
        const test = `import { test } from '@playwright/test'
import { readFileSync } from 'node:fs'
test('environ @smoke', async () => { readFileSync('/proc/${process.pid}/environ') })
test('database @smoke', async () => { readFileSync(${JSON.stringify(db)}) })
`
        const created = await c(
          'POST',
          '/v1/checks/playwright',
          suiteBody({
            files: [
              { path: 'playwright.config.ts', content: CONFIG },
              { path: 'tests/a.spec.ts', content: test },
            ],
          }),
        )
        expect(created.status, created.text).toBe(201)
        const done = await triggerAndWait(created.json.id, c)
        expect(done.status, JSON.stringify(done)).toBe('FAILED')
        const [result] = (await c('GET', `/v1/check-results/${created.json.id}?resultType=FINAL`)).json
        expect(result, result.error).toMatchObject({ hasFailures: true, hasErrors: false })
        const tests = result.result.details.tests as Array<{ title: string; status: string; error: { message: string } | null }>
        expect(tests.map((t) => [t.title, t.status])).toEqual([
          ['environ @smoke', 'failed'],
          ['database @smoke', 'failed'],
        ])
        // contained, neither is in the run's view (its own mount and PID namespaces); else the system refuses its user
        const refused = containment().available ? 'ENOENT: no such file or directory' : 'EACCES: permission denied'
        expect(tests[0].error?.message).toContain(`${refused}, open '/proc/${process.pid}/environ'`)
        expect(tests[1].error?.message).toContain(`${refused}, open '${db}'`)
      } finally {
        await plain.close()
      }
    },
    300_000,
  )

  it.skipIf(!root || !containment().available)(
    'run by root under --private-targets deny, runs a suite in a network of its own: its page to 127.0.0.1 is refused, the run hasErrors naming the policy',
    async () => {
      // two accounts' keys: deny by default, and suites still run (each in a network namespace)
      const shared = await startTestServer({
        dbPath: join(dir, 'shared.db'),
        runner: true,
        runtimeCache: process.env.MONITORS_RUNTIME_CACHE,
        schedulerOptions: { tickMs: 50 },
      })
      try {
        expect(shared.privateTargets.policy).toBe('deny')
        expect(shared.scripts).toMatchObject({ suites: true, scripts: true, containment: { available: true } })
        const c = caller(shared)
        const test = `import { test } from '@playwright/test'
test('inside @smoke', async ({ page }) => { await page.goto(${JSON.stringify(`${site.origin}/cart?from=deny`)}) })
`
        const created = await c(
          'POST',
          '/v1/checks/playwright',
          suiteBody({
            files: [
              { path: 'playwright.config.ts', content: CONFIG },
              { path: 'tests/a.spec.ts', content: test },
            ],
          }),
        )
        expect(created.status, created.text).toBe(201)
        const done = await triggerAndWait(created.json.id, c)
        expect(done.status, JSON.stringify(done)).toBe('FAILED')
        const [result] = (await c('GET', `/v1/check-results/${created.json.id}?resultType=FINAL`)).json
        expect(result, result.error).toMatchObject({ hasErrors: true })
        expect(result.error).toContain(
          'the sandbox refused: 127.0.0.1 is a loopback address (127.0.0.0/8): refused by the private-target policy (--private-targets deny)',
        )
        expect(site.requests.map((r) => r.path)).not.toContain('/cart?from=deny')
      } finally {
        await shared.close()
      }
    },
    300_000,
  )

  it("with --no-playwright-suites (or not root), fails a suite's run with hasErrors saying so, and runs nothing", async () => {
    const plain = await startTestServer({
      dbPath: join(dir, 'plain.db'),
      runner: true,
      privateTargets: 'allow',
      runtimeCache: process.env.MONITORS_RUNTIME_CACHE,
      schedulerOptions: { tickMs: 50 },
      ...(root ? { playwrightSuites: false } : {}),
    })
    try {
      const c = caller(plain)
      const created = await c('POST', '/v1/checks/playwright', suiteBody())
      expect(created.status, created.text).toBe(201)
      const trigger = await c('POST', '/v1/check-sessions/trigger', { target: { checkId: [created.json.id] } })
      const done = await c('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=30`)
      expect(done.status, done.text).toBe(200)
      const [result] = (await c('GET', `/v1/check-results/${created.json.id}?resultType=FINAL`)).json
      expect(result).toMatchObject({ hasErrors: true, status: 'FAILED' })
      expect(result.error).toContain('this server does not run Playwright check suites')
      expect(result.result.details.tests).toEqual([])
    } finally {
      await plain.close()
    }
  }, 120_000)
})

/** examples/browser in a folder of its own, `monitors-as-code` resolving to this repository. */
function exampleProject(): string {
  const project = mkdtempSync(join(dir, 'example-'))
  cpSync(join(repo, 'examples', 'browser'), project, { recursive: true })
  mkdirSync(join(project, 'node_modules'))
  symlinkSync(repo, join(project, 'node_modules', 'monitors-as-code'), 'dir')
  return project
}

describe.skipIf(!hasChromium)('the PlaywrightCheck of examples/browser run by the server (Debian Chromium)', () => {
  it('apply creates it with its project; the server runs the selected tests; a failing variant is a per-file plan, FAILED, its screenshot and trace served and shown on the dashboard', async () => {
    const project = exampleProject()
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A, MONITORING_ACCOUNT_ID: 'acc-a', SHOP_URL: site.origin }
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    const checks = (await call('GET', '/v1/checks?checkType=PLAYWRIGHT&limit=100')).json as Array<Record<string, any>>
    const suite = checks.find((c) => c.name === 'Shop smoke suite')
    expect(suite).toMatchObject({ playwrightConfigPath: 'playwright.config.ts', pwProjects: ['desktop'], pwTags: ['@smoke'] })
    expect((suite!.files as Array<{ path: string }>).map((f) => f.path)).toEqual([
      'playwright.config.ts',
      'tests/cart.spec.ts',
      'tests/orders.spec.ts',
      'tests/shop.ts',
    ])

    const passed = await triggerAndWait(suite!.id)
    expect(passed.status, JSON.stringify(passed)).toBe('PASSED')
    const good = await finalResult(suite!.id)
    // the desktop project's tests tagged @smoke: two of the three
    expect((good.result.details.tests as Array<{ titlePath: string[]; status: string }>).map((t) => [t.titlePath.join(' › '), t.status])).toEqual([
      ['desktop › cart.spec.ts › the cart opens from the home page @smoke', 'passed'],
      ['desktop › orders.spec.ts › the orders API lists orders @smoke', 'passed'],
    ])
    expect(good.playwrightCheckResult).toMatchObject({ errors: [], playwrightTraceFiles: [], playwrightTestVideos: [] })
    // the JSON report is kept: listed with the result's assets, served to its account only, and on the dashboard
    const reportUrl = good.playwrightCheckResult.playwrightTestJsonReportFile as string
    expect(reportUrl).toMatch(new RegExp(`/v1/check-results/${suite!.id}/${good.id}/assets/report\\.json$`))
    const listed = (await call('GET', `/v1/check-results/${suite!.id}/${good.id}/assets`)).json.assets as Array<{
      name: string
      type: string
      contentType: string
    }>
    expect(listed.find((a) => a.name === 'report.json')).toMatchObject({ type: 'file', contentType: 'application/json' })
    const report = await fetch(reportUrl, { headers: { authorization: `Bearer ${KEY_A}` } })
    expect(report.status).toBe(200)
    expect(((await report.json()) as { suites: unknown[] }).suites.length).toBeGreaterThan(0)
    expect((await fetch(reportUrl, { headers: { authorization: `Bearer ${KEY_B}` } })).status).toBe(404)
    const goodPage = await (await fetch(`${server.url}/dashboard/results/${suite!.id}/${good.id}`, { headers: { cookie: await logIn(KEY_A) } })).text()
    expect(goodPage).toMatch(/href="[^"]+\/assets\/report\.json"/)
    const analytics = await call('GET', `/v1/analytics/playwright-checks/${suite!.id}?metrics=responseTime,availability`)
    expect(analytics.status, analytics.text).toBe(200)
    expect(analytics.json.checkType).toBe('PLAYWRIGHT')

    writeFiles(project, {
      'suite/tests/shop.ts': "/** What the shop's pages say: shared by the suite's tests. */\nexport const CART_HEADING = 'Your basket'\n",
    })
    const plan = await monitors(project, ['plan', '--detailed-exitcode'], env)
    expect(plan.code, plan.output).toBe(2)
    expect(plan.stdout).toContain('files[tests/shop.ts].content:')
    expect(plan.stdout).toMatch(/- +\| export const CART_HEADING = 'Your cart'/)
    expect(plan.stdout).toMatch(/\+ +\| export const CART_HEADING = 'Your basket'/)
    expect(plan.stdout).not.toContain('files[tests/orders.spec.ts]')
    expect((await monitors(project, ['apply', '--yes'], env)).code).toBe(0)

    const failed = await triggerAndWait(suite!.id)
    expect(failed.status).toBe('FAILED')
    const bad = await finalResult(suite!.id)
    expect(bad.hasFailures).toBe(true)
    expect(bad.error).toContain('desktop › cart.spec.ts › the cart opens from the home page @smoke')
    expect(bad.playwrightCheckResult.errors).toEqual([
      expect.objectContaining({ test: 'desktop › cart.spec.ts › the cart opens from the home page @smoke', status: 'failed' }),
    ])
    const [traceFile] = bad.playwrightCheckResult.playwrightTraceFiles as Array<{ url: string; filename: string }>
    expect(traceFile.filename).toBe('trace.zip')
    const zip = await fetch(traceFile.url, { headers: { authorization: `Bearer ${KEY_A}` } })
    expect(zip.status).toBe(200)
    expect(
      Buffer.from(await zip.arrayBuffer())
        .subarray(0, 2)
        .toString(),
    ).toBe('PK')
    expect((await fetch(traceFile.url, { headers: { authorization: `Bearer ${KEY_B}` } })).status).toBe(404)
    const manifest = await call('GET', `/v1/check-results/${suite!.id}/${bad.id}/assets`)
    const assets = manifest.json.assets as Array<{ type: string; source: Record<string, unknown> }>
    expect(assets.find((a) => a.type === 'screenshot')?.source, manifest.text).toMatchObject({ checkType: 'PLAYWRIGHT' })

    // the dashboard's result page: the screenshot inline, the trace offered for show-trace; another account's 404
    const page = await fetch(`${server.url}/dashboard/results/${suite!.id}/${bad.id}`, { headers: { cookie: await logIn(KEY_A) } })
    expect(page.status).toBe(200)
    const html = await page.text()
    const img = /<img src="([^"]+)"/.exec(html)?.[1]
    expect(img, html).toMatch(/^\/dashboard\/results\/.+\/assets\/test-results\/.+\.png/)
    expect(html).toMatch(/<a href="[^"]+\/assets\/test-results\/[^"]+\/trace\.zip" download data-trace>/)
    expect(html).toContain('npx playwright show-trace')
    const shown = await fetch(`${server.url}${img!.replace(/&amp;/g, '&')}`, { headers: { cookie: await logIn(KEY_A) } })
    expect(shown.headers.get('content-type')).toBe('image/png')
    expect((await fetch(`${server.url}/dashboard/results/${suite!.id}/${bad.id}`, { headers: { cookie: await logIn(KEY_B) } })).status).toBe(404)

    const destroyed = await monitors(project, ['destroy', '--yes'], env)
    expect(destroyed.code, destroyed.output).toBe(0)
    expect((await call('GET', `/v1/checks/${suite!.id}`)).status).toBe(404)
  }, 600_000)
})

describe('an archive a run leaves', () => {
  it("a 1 MB zip that inflates to 1 GiB is dropped off the server's thread: its memory stays put, its probes answer, the result says why", async () => {
    const test = `import { test } from '@playwright/test'
import { writeFileSync } from 'node:fs'
import zlib from 'node:zlib'
const zipBomb = ${zipBomb.toString()}
test('leaves a zip bomb @smoke', async ({}, testInfo) => { writeFileSync(testInfo.outputPath('bomb.zip'), zipBomb(zlib, 1024, 'trace.trace')) })
`
    const created = await call(
      'POST',
      '/v1/checks/playwright',
      suiteBody({
        name: 'Bomb',
        files: [
          { path: 'playwright.config.ts', content: CONFIG },
          { path: 'tests/a.spec.ts', content: test },
        ],
      }),
    )
    expect(created.status, created.text).toBe(201)
    // the server is this process: its memory and the stalls of its thread, sampled all along, and its
    // health probe asked again and again by a thread of its own (which a stalled server keeps waiting)
    const baseline = process.memoryUsage().rss
    let peak = baseline
    let last = performance.now()
    let stall = 0
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
      stall = Math.max(stall, performance.now() - last)
      last = performance.now()
    }, 20)
    const prober = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads')
let stop = false
parentPort.on('message', () => { stop = true })
;(async () => {
  let slowest = 0, probes = 0
  while (!stop) {
    const started = performance.now()
    await (await fetch(workerData)).text()
    slowest = Math.max(slowest, performance.now() - started)
    probes++
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  parentPort.postMessage({ slowest, probes })
})()`,
      { eval: true, workerData: `${server.url}/-/liveness` },
    )
    const probed = new Promise<{ slowest: number; probes: number }>((resolve) => prober.once('message', resolve))
    try {
      const done = await triggerAndWait(created.json.id)
      expect(done.status, JSON.stringify(done)).toBe('PASSED')
    } finally {
      clearInterval(sampler)
      prober.postMessage('stop')
    }
    const { slowest, probes } = await probed
    await prober.terminate()
    console.log(
      `zip bomb run: RSS ${Math.round(baseline / 1e6)} MB before, ${Math.round(peak / 1e6)} MB at most (+${Math.round((peak - baseline) / 1e6)} MB); the longest stall of the server's thread ${Math.round(stall)} ms; ${probes} liveness probes, the slowest ${Math.round(slowest)} ms`,
    )
    const result = await finalResult(created.json.id)
    const dropped = result.result.details.artifacts.dropped as Array<{ name: string; reason: string; bytes: number }>
    expect(dropped).toEqual([
      {
        name: expect.stringMatching(/^test-results\/.+\/bomb\.zip$/),
        kind: 'trace',
        bytes: expect.any(Number),
        reason: 'an archive past the limits of unpacking is not kept: its entry trace.trace inflates to more than 200 times its compressed size (a zip bomb?)',
      },
    ])
    expect(dropped[0].bytes).toBeGreaterThan(1_000_000)
    expect(dropped[0].bytes).toBeLessThan(1_200_000)
    expect(peak - baseline).toBeLessThan(200 * 1e6)
    // before, the archive was unpacked on this thread: +1.1 GB, a 6 s stall and a probe kept waiting as long
    expect(stall).toBeLessThan(1500)
    expect(slowest).toBeLessThan(1500)
    expect(probes).toBeGreaterThan(10)
  }, 300_000)
})

describe('import of a Playwright check', () => {
  it('writes its project back into a folder of its own, never over a different file; the next plan is No changes.', async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_B, MONITORING_ACCOUNT_ID: 'acc-b' }
    const source = exampleProject()
    expect((await monitors(source, ['apply', '--yes'], { ...env, SHOP_URL: site.origin })).code).toBe(0)
    const other = makeProject({ 'keep.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('KEEP', { value: 'x' })\n` })
    expect((await monitors(other, ['apply', '--yes'], env)).code).toBe(0)
    // a different file where the suite's config would go: nothing is written
    writeFiles(other, { 'shop-smoke-suite/playwright.config.ts': '// mine\n' })
    const refused = await monitors(other, ['import', '--all'], env)
    expect(refused.code, refused.output).not.toBe(0)
    expect(refused.output).toContain('shop-smoke-suite/playwright.config.ts already exists with other content')
    expect(readFileSync(join(other, 'shop-smoke-suite/playwright.config.ts'), 'utf8')).toBe('// mine\n')
    rmSync(join(other, 'shop-smoke-suite'), { recursive: true })

    const imported = await monitors(other, ['import', '--all'], env)
    expect(imported.code, imported.output).toBe(0)
    expect(imported.stdout).toContain('shop-smoke-suite/tests/cart.spec.ts')
    for (const f of ['playwright.config.ts', 'tests/cart.spec.ts', 'tests/orders.spec.ts', 'tests/shop.ts']) {
      expect(readFileSync(join(other, 'shop-smoke-suite', f), 'utf8'), f).toBe(readFileSync(join(source, 'suite', f), 'utf8'))
    }
    const code = readFileSync(join(other, readdirSync(other).find((f) => f.startsWith('imported'))!), 'utf8')
    expect(code).toContain('new PlaywrightCheck(')
    expect(code).toContain("playwrightConfigPath: './shop-smoke-suite/playwright.config.ts'")
    const plan = await monitors(other, ['plan', '--detailed-exitcode'], env)
    expect(plan.code, plan.output).toBe(0)
  }, 180_000)
})

/** A PNG of one colour (RGB, 8 bits), made here: a screenshot baseline of a box of that colour. */
function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    return c >>> 0
  })
  const crc = (data: Buffer) => {
    let c = 0xffffffff
    for (const byte of data) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8)
    return (c ^ 0xffffffff) >>> 0
  }
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
    const out = Buffer.alloc(body.length + 8)
    out.writeUInt32BE(data.length, 0)
    body.copy(out, 4)
    out.writeUInt32BE(crc(body), body.length + 4)
    return out
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8)
  const row = Buffer.concat([Buffer.from([0]), ...Array.from({ length: width }, () => Buffer.from(rgb))])
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

describe.skipIf(!hasChromium)('a suite with binary files (a screenshot baseline, bytes that are not UTF-8)', () => {
  it('carries them in base64, byte for byte, into the run (toHaveScreenshot against the baseline); a plan says "binary file changed (N bytes)"; import writes the same bytes back; No changes after', async () => {
    const png = solidPng(40, 40, [0, 170, 0])
    const raw = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0xe2, 0x82, 0x0a, 0x89])
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')
    const project = makeProject({
      'shots.check.ts':
        "import { PlaywrightCheck } from 'monitors-as-code'\nnew PlaywrightCheck('shots', { name: 'Binary files', activated: false, playwrightConfigPath: './suite/playwright.config.ts', include: ['fixtures/**', 'tests/__screenshots__/**'] })\n",
      'suite/playwright.config.ts':
        "import { defineConfig } from '@playwright/test'\nexport default defineConfig({ testDir: './tests', snapshotPathTemplate: '{testDir}/__screenshots__/{arg}{ext}', projects: [{ name: 'desktop' }] })\n",
      'suite/tests/bytes.spec.ts': `import { test, expect } from '@playwright/test'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
const read = (file: string) => readFileSync(join(test.info().project.testDir, '..', file))
test('the files are the bytes sent', () => {
  expect(createHash('sha256').update(read('fixtures/raw.bin')).digest('hex')).toBe(${JSON.stringify(sha(raw))})
  expect(createHash('sha256').update(read('tests/__screenshots__/box.png')).digest('hex')).toBe(${JSON.stringify(sha(png))})
  expect(read('fixtures/notes.txt').toString('utf8')).toBe('café ☕\\n')
})
test('the box looks like its baseline', async ({ page }) => {
  await page.setContent('<body style="margin:0"><div id="box" style="width:40px;height:40px;background:#00aa00"></div></body>')
  await expect(page.locator('#box')).toHaveScreenshot('box.png')
})
`,
      'suite/fixtures/notes.txt': 'café ☕\n',
    })
    mkdirSync(join(project, 'suite/tests/__screenshots__'))
    writeFileSync(join(project, 'suite/tests/__screenshots__/box.png'), png)
    writeFileSync(join(project, 'suite/fixtures/raw.bin'), raw)
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A, MONITORING_ACCOUNT_ID: 'acc-a' }
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    // the create shows a binary file by its size, never its base64
    expect(applied.stdout).toContain(`content: binary file (${png.length} bytes)`)
    expect(applied.stdout).not.toContain(png.toString('base64').slice(0, 40))

    const suite = ((await call('GET', '/v1/checks?checkType=PLAYWRIGHT&limit=100')).json as Array<Record<string, any>>).find((c) => c.name === 'Binary files')!
    const files = new Map((suite.files as Array<{ path: string; content: string; encoding?: string }>).map((f) => [f.path, f]))
    expect(files.get('tests/__screenshots__/box.png')).toEqual({ path: 'tests/__screenshots__/box.png', content: png.toString('base64'), encoding: 'base64' })
    expect(files.get('fixtures/raw.bin')).toEqual({ path: 'fixtures/raw.bin', content: raw.toString('base64'), encoding: 'base64' })
    // a text file stays text (readable diffs)
    expect(files.get('fixtures/notes.txt')).toEqual({ path: 'fixtures/notes.txt', content: 'café ☕\n' })
    expect(files.get('tests/bytes.spec.ts')?.encoding).toBeUndefined()

    const done = await triggerAndWait(suite.id)
    const result = await finalResult(suite.id)
    expect(done.status, JSON.stringify(result.result.details.tests)).toBe('PASSED')
    expect((result.result.details.tests as Array<{ title: string; status: string }>).map((t) => [t.title, t.status])).toEqual([
      ['the files are the bytes sent', 'passed'],
      ['the box looks like its baseline', 'passed'],
    ])
    expect((await monitors(project, ['plan', '--detailed-exitcode'], env)).code).toBe(0)

    // a new baseline and a new binary file: their sizes, not their bytes
    const wider = solidPng(48, 40, [0, 170, 0])
    writeFileSync(join(project, 'suite/tests/__screenshots__/box.png'), wider)
    writeFileSync(join(project, 'suite/fixtures/extra.bin'), Buffer.from([0xff, 0x00, 0xfe]))
    const plan = await monitors(project, ['plan', '--detailed-exitcode'], env)
    expect(plan.code, plan.output).toBe(2)
    expect(plan.stdout).toContain(`files[tests/__screenshots__/box.png].content: binary file changed (${wider.length} bytes)`)
    expect(plan.stdout).toContain('files[fixtures/extra.bin]: binary file added (3 bytes)')
    expect(plan.stdout).not.toContain(wider.toString('base64').slice(0, 40))

    // import into another project: the same bytes written back, and its next plan is No changes
    // and a suite made through the API naming no config (Playwright's default playwright.config.ts):
    // imported as code, which names its config, it plans No changes as well
    const bare = await call('POST', '/v1/checks/playwright', suiteBody({ name: 'No config named' }))
    expect(bare.status, bare.text).toBe(201)
    expect(bare.json.playwrightConfigPath ?? null).toBeNull()
    const other = makeProject({ 'keep.check.ts': '// the imported checks go beside this file\n' })
    const imported = await monitors(other, ['import', '--all'], env)
    expect(imported.code, imported.output).toBe(0)
    expect(readFileSync(join(other, 'binary-files/tests/__screenshots__/box.png')).equals(png)).toBe(true)
    expect(readFileSync(join(other, 'binary-files/fixtures/raw.bin')).equals(raw)).toBe(true)
    expect(readFileSync(join(other, 'binary-files/fixtures/notes.txt'), 'utf8')).toBe('café ☕\n')
    expect(readFileSync(join(other, 'imported.check.ts'), 'utf8')).toContain("playwrightConfigPath: './no-config-named/playwright.config.ts'")
    const again = await monitors(other, ['plan', '--detailed-exitcode'], env)
    expect(again.code, again.output).toBe(0)
    expect((await call('DELETE', `/v1/checks/${bare.json.id}`)).status).toBe(204)
    expect((await monitors(project, ['destroy', '--yes'], env)).code).toBe(0)
  }, 600_000)
})

describe('a PlaywrightCheck with a problem', () => {
  it('is reported by the loader naming the file, the construct and the field or the import; nothing is sent', async () => {
    const project = makeProject({
      'bad.check.ts': `import { PlaywrightCheck } from 'monitors-as-code'
new PlaywrightCheck('noconfig', { name: 'A', playwrightConfigPath: './nope.config.ts' })
new PlaywrightCheck('project', { name: 'B', playwrightConfigPath: './suite/playwright.config.ts', pwProjects: ['mobile'] })
new PlaywrightCheck('pkg', { name: 'C', playwrightConfigPath: './pkg/playwright.config.ts' })
new PlaywrightCheck('empty', { name: 'D', playwrightConfigPath: './empty/playwright.config.ts' })
`,
      'suite/playwright.config.ts': CONFIG,
      'suite/tests/a.spec.ts': "import { test } from '@playwright/test'\ntest('a', async () => {})\n",
      'pkg/playwright.config.ts': CONFIG,
      'pkg/tests/a.spec.ts': "import { test } from '@playwright/test'\nimport pad from 'left-pad'\ntest('a', async () => { pad })\n",
      'empty/playwright.config.ts': CONFIG,
    })
    const result = await monitors(project, ['validate'])
    expect(result.code).toBe(1)
    expect(result.output).not.toMatch(STACK_LINE)
    expect(result.output).toContain('bad.check.ts › PlaywrightCheck "noconfig" › playwrightConfigPath: file ./nope.config.ts does not exist')
    expect(result.output).toContain(
      'bad.check.ts › PlaywrightCheck "project" › pwProjects.0: names no project of suite/playwright.config.ts (got "mobile"; its projects: "desktop")',
    )
    expect(result.output).toMatch(/pkg\/tests\/a\.spec\.ts:2 › PlaywrightCheck "pkg" › imports "left-pad", a package runtime 2025\.04 does not provide/)
    expect(result.output).toContain('bad.check.ts › PlaywrightCheck "empty" › playwrightConfigPath: empty/playwright.config.ts finds no test file')
    expect(existsSync(join(project, 'monitoring.lock.json'))).toBe(false)
  })
})

const asRoot = process.getuid?.() === 0
if (!asRoot)
  console.warn(
    'test/server/checks/playwright-checks.test.ts: not root, so `monitors test` of a suite as a user of its own is not tested here (CI runs as root)',
  )

describe.skipIf(!hasChromium || !asRoot)('monitors test of a PlaywrightCheck, run by root', () => {
  const project = () =>
    makeProject({
      'uid.check.ts':
        "import { PlaywrightCheck } from 'monitors-as-code'\nnew PlaywrightCheck('uid', { name: 'Uid', playwrightConfigPath: './suite/playwright.config.ts' })\n",
      'suite/playwright.config.ts': CONFIG,
      'suite/tests/uid.spec.ts': "import { test, expect } from '@playwright/test'\ntest('runs as root', async () => { expect(process.getuid?.()).toBe(0) })\n",
    })

  it("runs the project's own suite as the user running it (a CI container's root), unless MONITORS_SCRIPT_UID_RANGE names a range", {
    timeout: 180_000,
  }, async () => {
    const dir = project()
    const own = await monitors(dir, ['test'], { MONITORS_RUNTIME_CACHE: process.env.MONITORS_RUNTIME_CACHE })
    expect(own.code, own.output).toBe(0)
    const contained = await monitors(dir, ['test'], { MONITORS_RUNTIME_CACHE: process.env.MONITORS_RUNTIME_CACHE, MONITORS_SCRIPT_UID_RANGE: '200000-200999' })
    expect(contained.code, contained.output).toBe(1)
    expect(contained.output).toContain('runs as root')
  })
})
