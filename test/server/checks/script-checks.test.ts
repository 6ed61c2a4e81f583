/**
 * Browser and multi-step checks end to end: the real server (runner on, SQLite file or
 * PostgreSQL) with Debian's Chromium, a small site on 127.0.0.1, the built CLI. Their routes
 * and rules, apply of BrowserCheck and MultiStepCheck constructs (the script bundled with the
 * file it imports), the server running them, a failing one's screenshot and trace served by the
 * asset route (404 for another account), a plan's per-file diff, and `monitors test`.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { hasChromium } from '../../helpers/browser.js'
import { makeProject, monitors, repo, STACK_LINE, writeFiles } from '../../helpers/cli.js'
import { startHttpServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { prepareTestRuntime } from '../../helpers/runtime.js'
import { KEY_A, KEY_B, caller, expect400, startTestServer, type Call } from '../helpers.js'

let dir: string
let site: HttpServerHandle
let server: LocalServer
let call: Call
let callB: Call

const PAGE = '<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1><a href="/cart">Cart</a></body></html>'

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-script-checks-'))
  site = await startHttpServer()
  site.route('/', { status: 200, headers: { 'content-type': 'text/html' }, body: PAGE })
  site.route('/api/orders', { status: 200, body: { orders: [{ id: 1 }] } })
  site.route('/api/orders/1', { status: 200, body: { id: 1 } })
  site.route('/cart', { status: 200, headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>Cart</title><h1>Your cart</h1>' })
  const runtimeCache = await prepareTestRuntime()
  process.env.MONITORS_RUNTIME_CACHE = runtimeCache
  server = await startTestServer({
    dbPath: join(dir, 'scripts.db'),
    runner: true,
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

const spec = (heading: string) => `import { test, expect } from '@playwright/test'
test('home page', async ({ page }) => {
  await page.goto(process.env.SITE + '/')
  await expect(page.locator('h1')).toHaveText(${JSON.stringify(heading)}, { timeout: 2000 })
})
`

const browserBody = (heading: string, extra: Record<string, unknown> = {}) => ({
  name: 'Shop home',
  activated: false,
  doubleCheck: false,
  script: spec(heading),
  scriptPath: 'checks/home.spec.ts',
  environmentVariables: [{ key: 'SITE', value: site.origin }],
  ...extra,
})

async function triggerAndWait(id: string, c: Call = call) {
  const trigger = await c('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
  expect(trigger.status, trigger.text).toBe(201)
  // a browser run takes seconds, longer on a loaded machine: asked again until it is done (408), for up to 3 minutes
  const deadline = Date.now() + 180_000
  for (;;) {
    const done = await c('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=30`)
    if (done.status === 408 && Date.now() < deadline) continue
    expect(done.status, done.text).toBe(200)
    return done.json
  }
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

async function finalResult(checkId: string) {
  const results = await call('GET', `/v1/check-results/${checkId}?resultType=FINAL`)
  expect(results.status, results.text).toBe(200)
  return results.json[0]
}

describe('browser and multi-step checks: routes and rules', () => {
  it('POST /v1/checks/browser and /multistep create (201) with script and dependencies; PUT replaces; another account is 404', async () => {
    const created = await call(
      'POST',
      '/v1/checks/browser',
      browserBody('Shop', { dependencies: [{ path: 'checks/lib/helper.ts', content: 'export const x = 1\n' }] }),
    )
    expect(created.status, created.text).toBe(201)
    expect(created.json).toMatchObject({
      checkType: 'BROWSER',
      frequency: 10,
      scriptPath: 'checks/home.spec.ts',
      dependencies: [{ path: 'checks/lib/helper.ts' }],
    })
    const read = await call('GET', `/v1/checks/${created.json.id}`)
    expect(read.json.script).toBe(spec('Shop'))
    expect((await callB('GET', `/v1/checks/${created.json.id}`)).status).toBe(404)
    expect((await callB('PUT', `/v1/checks/browser/${created.json.id}`, browserBody('Shop'))).status).toBe(404)
    const replaced = await call('PUT', `/v1/checks/browser/${created.json.id}`, browserBody('Shop!'))
    expect(replaced.status, replaced.text).toBe(200)
    expect(replaced.json.script).toBe(spec('Shop!'))
    const multi = await call('POST', '/v1/checks/multistep', {
      name: 'Orders',
      activated: false,
      script: "import { test } from '@playwright/test'\ntest('x', async () => {})\n",
    })
    expect(multi.status, multi.text).toBe(201)
    expect(multi.json.checkType).toBe('MULTI_STEP')
    expect((await call('DELETE', `/v1/checks/${created.json.id}`)).status).toBe(204)
    expect((await call('DELETE', `/v1/checks/${multi.json.id}`)).status).toBe(204)
  })

  it('refuses a missing script, a dependency outside the project, a sub-minute frequency and a multi-step check on a removed runtime (400 naming the field)', async () => {
    expect(expect400(await call('POST', '/v1/checks/browser', { name: 'x' }), 'payload')).toContain('script')
    const outside = await call('POST', '/v1/checks/browser', browserBody('Shop', { dependencies: [{ path: '../secrets.ts', content: 'x' }] }))
    expect(expect400(outside, 'payload')).toContain('dependencies.0.path')
    expect(outside.json.message).toContain('without "." or ".." segments')
    expect(expect400(await call('POST', '/v1/checks/browser', browserBody('Shop', { frequency: 0 })), 'payload')).toContain('frequency')
    expect(expect400(await call('POST', '/v1/checks/multistep', { name: 'x', script: 'x', runtimeId: '2022.10' }), 'payload')).toContain('runtimeId')
  })
})

describe.skipIf(!hasChromium)('browser and multi-step checks run by the server (Debian Chromium)', () => {
  it('a passing browser run is PASSED with its web vitals; a failing one keeps its screenshot and trace, served to its account only', async () => {
    const ok = await call('POST', '/v1/checks/browser', browserBody('Shop'))
    expect(ok.status, ok.text).toBe(201)
    const passed = await triggerAndWait(ok.json.id)
    expect(passed.status, JSON.stringify(passed)).toBe('PASSED')
    const good = await finalResult(ok.json.id)
    expect(good.status, good.error).toBe('PASSED')
    expect(good.result.details.kind).toBe('BROWSER')
    expect(good.result.details.artifacts.dir).toBeNull()
    expect(good.result.details.webVitals?.TTFB).toEqual(expect.any(Number))
    const analytics = await call('GET', `/v1/analytics/browser-checks/${ok.json.id}?metrics=responseTime,TTFB,consoleErrors`)
    expect(analytics.status, analytics.text).toBe(200)

    const bad = await call('POST', '/v1/checks/browser', browserBody('Shop!', { name: 'Shop home (wrong heading)' }))
    const failed = await triggerAndWait(bad.json.id)
    expect(failed.status).toBe('FAILED')
    const result = await finalResult(bad.json.id)
    expect(result.hasFailures).toBe(true)
    expect(result.error).toContain('toHaveText')
    const manifest = await call('GET', `/v1/check-results/${bad.json.id}/${result.id}/assets`)
    expect(manifest.status, manifest.text).toBe(200)
    const assets = manifest.json.assets as Array<{ type: string; name: string; url: string; contentType: string; source: Record<string, unknown> }>
    const shot = assets.find((a) => a.type === 'screenshot')
    const trace = assets.find((a) => a.type === 'trace')
    expect(shot, manifest.text).toBeDefined()
    expect(trace, manifest.text).toBeDefined()
    expect(shot?.source).toMatchObject({ type: 'check-result', checkId: bad.json.id, resultId: result.id, checkType: 'BROWSER' })
    const png = await fetch(shot!.url, { headers: { authorization: `Bearer ${KEY_A}`, 'x-checkly-account': 'acc-a' } })
    expect(png.status).toBe(200)
    expect(png.headers.get('content-type')).toBe('image/png')
    expect(
      Buffer.from(await png.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG')
    const zip = await fetch(trace!.url, { headers: { authorization: `Bearer ${KEY_A}` } })
    expect(zip.status).toBe(200)
    expect(
      Buffer.from(await zip.arrayBuffer())
        .subarray(0, 2)
        .toString(),
    ).toBe('PK')
    // another account: the result, its manifest and its files are 404 as missing ones
    expect((await callB('GET', `/v1/check-results/${bad.json.id}/${result.id}/assets`)).status).toBe(404)
    expect((await fetch(shot!.url, { headers: { authorization: `Bearer ${KEY_B}` } })).status).toBe(404)
    // the dashboard's result page: the screenshot inline, the trace offered for show-trace; another account's 404
    const cookieA = await logIn(KEY_A)
    const page = await fetch(`${server.url}/dashboard/results/${bad.json.id}/${result.id}`, { headers: { cookie: cookieA } })
    expect(page.status).toBe(200)
    const html = await page.text()
    const img = /<img src="([^"]+)"/.exec(html)?.[1]
    expect(img, html).toMatch(/^\/dashboard\/results\/.+\/assets\/screenshots\//)
    expect(html).toMatch(/<a href="[^"]+\/assets\/traces\/[^"]+\.zip" download data-trace>/)
    expect(html).toContain('npx playwright show-trace')
    const shown = await fetch(`${server.url}${img!.replace(/&amp;/g, '&')}`, { headers: { cookie: cookieA } })
    expect(shown.status).toBe(200)
    expect(shown.headers.get('content-type')).toBe('image/png')
    const cookieB = await logIn(KEY_B)
    expect((await fetch(`${server.url}/dashboard/results/${bad.json.id}/${result.id}`, { headers: { cookie: cookieB } })).status).toBe(404)
    expect((await fetch(`${server.url}${img!}`, { headers: { cookie: cookieB } })).status).toBe(404)
    // a name the manifest does not hold, or a way out of the folder
    expect((await call('GET', `/v1/check-results/${bad.json.id}/${result.id}/assets/scripts.db`)).status).toBe(404)
    expect((await call('GET', `/v1/check-results/${bad.json.id}/${result.id}/assets/..%2F..%2Fscripts.db`)).status).toBe(404)
  }, 240_000)

  it('apply creates a BrowserCheck (its script bundled with the file it imports) and a MultiStepCheck; the server runs both; a changed file is a per-file diff', async () => {
    const project = makeProject({
      'checks/home.check.ts': `import { BrowserCheck, MultiStepCheck } from 'monitors-as-code'
new BrowserCheck('home', { name: 'Home page', activated: false, code: { entrypoint: './home.spec.ts' }, environmentVariables: [{ key: 'SITE', value: ${JSON.stringify(site.origin)} }] })
new MultiStepCheck('orders', { name: 'Orders API', activated: false, code: { entrypoint: './orders.spec.ts' }, environmentVariables: [{ key: 'SITE', value: ${JSON.stringify(site.origin)} }] })
`,
      'checks/home.spec.ts': `import { test, expect } from '@playwright/test'\nimport { heading } from './lib/expected'\ntest('home', async ({ page }) => {\n  await page.goto(process.env.SITE + '/')\n  await expect(page.locator('h1')).toHaveText(heading)\n})\n`,
      'checks/lib/expected.ts': `export const heading = 'Shop'\n`,
      'checks/orders.spec.ts': `import { test, expect } from '@playwright/test'\ntest('orders', async ({ request }) => {\n  const answer = await request.get(process.env.SITE + '/api/orders')\n  expect(answer.status()).toBe(200)\n  expect((await answer.json()).orders).toHaveLength(1)\n})\n`,
    })
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A, MONITORING_ACCOUNT_ID: 'acc-a' }
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    const checks = (await call('GET', '/v1/checks?limit=100')).json as Array<Record<string, any>>
    const browser = checks.find((c) => c.name === 'Home page')
    const multi = checks.find((c) => c.name === 'Orders API')
    expect(browser).toMatchObject({
      checkType: 'BROWSER',
      scriptPath: 'checks/home.spec.ts',
      dependencies: [{ path: 'checks/lib/expected.ts', content: "export const heading = 'Shop'\n" }],
    })
    expect(multi).toMatchObject({ checkType: 'MULTI_STEP', scriptPath: 'checks/orders.spec.ts' })
    expect((await monitors(project, ['plan', '--detailed-exitcode'], env)).code).toBe(0)
    expect((await triggerAndWait(browser!.id)).status).toBe('PASSED')
    expect((await triggerAndWait(multi!.id)).status).toBe('PASSED')

    writeFiles(project, { 'checks/lib/expected.ts': `export const heading = 'Shop!'\n` })
    const plan = await monitors(project, ['plan', '--detailed-exitcode'], env)
    expect(plan.code, plan.output).toBe(2)
    expect(plan.stdout).toContain('dependencies[checks/lib/expected.ts].content:')
    expect(plan.stdout).toMatch(/- +\| export const heading = 'Shop'/)
    expect(plan.stdout).toMatch(/\+ +\| export const heading = 'Shop!'/)
  }, 240_000)

  it('monitors test runs them locally: exit 0 when they pass; exit 1 with the artifacts printed when one fails', async () => {
    const project = makeProject({
      'home.check.ts': `import { BrowserCheck } from 'monitors-as-code'
new BrowserCheck('home', { name: 'Home page', code: { entrypoint: './home.spec.ts' }, environmentVariables: [{ key: 'SITE', value: ${JSON.stringify(site.origin)} }] })
`,
      'home.spec.ts': spec('Shop'),
    })
    const ok = await monitors(project, ['test'])
    expect(ok.code, ok.output).toBe(0)
    expect(ok.stdout).toMatch(/browser-check:home "Home page".*PASSED/)
    writeFiles(project, { 'home.spec.ts': spec('Shop!') })
    const failed = await monitors(project, ['test'])
    expect(failed.code, failed.output).toBe(1)
    expect(failed.output).not.toMatch(STACK_LINE)
    expect(failed.stdout).toContain('Artifacts of browser-check:home: .monitors/test-results/browser-check-home')
    expect(failed.stdout).toMatch(/npx playwright show-trace \.monitors\/test-results\/browser-check-home\/traces\/.+\.zip/)
    const trace = /show-trace (\S+)/.exec(failed.stdout)![1]
    expect(readFileSync(join(project, trace)).subarray(0, 2).toString()).toBe('PK')
  }, 240_000)
})

describe.skipIf(!hasChromium)('examples/browser', () => {
  it('monitors test passes against the small shop; apply creates both checks and the server runs them', async () => {
    // under the test's folder, removed after the file: the in-process CLI remembers its compile cache there
    const project = mkdtempSync(join(dir, 'example-browser-'))
    cpSync(join(repo, 'examples', 'browser'), project, { recursive: true })
    mkdirSync(join(project, 'node_modules'))
    symlinkSync(repo, join(project, 'node_modules', 'monitors-as-code'), 'dir')
    process.env.SHOP_URL = site.origin
    try {
      const tested = await monitors(project, ['test'])
      expect(tested.code, tested.output).toBe(0)
      expect(tested.stdout).toMatch(/browser-check:shop-home "Shop home page".*PASSED/)
      expect(tested.stdout).toMatch(/multistep-check:orders-api "Orders API".*PASSED/)
      expect(tested.stdout).toMatch(/playwright-check:shop-suite "Shop smoke suite".*PASSED/)
      // another account than the tests above, whose checks have the same names
      const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_B, MONITORING_ACCOUNT_ID: 'acc-b' }
      const applied = await monitors(project, ['apply', '--yes'], env)
      expect(applied.code, applied.output).toBe(0)
      const checks = (await callB('GET', '/v1/checks?limit=100')).json as Array<Record<string, any>>
      for (const name of ['Shop home page', 'Orders API']) {
        const check = checks.find((c) => c.name === name)
        expect(check, name).toBeDefined()
        expect((await triggerAndWait(check!.id, callB)).status, name).toBe('PASSED')
      }
      expect((await monitors(project, ['destroy', '--yes'], env)).code).toBe(0)
    } finally {
      delete process.env.SHOP_URL
    }
  }, 300_000)
})

describe('import of script checks', () => {
  it('writes the scripts back as files beside the check file; the next plan is No changes.', async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_B, MONITORING_ACCOUNT_ID: 'acc-b' }
    const project = makeProject({
      'checks/shop.check.ts': `import { BrowserCheck, MultiStepCheck } from 'monitors-as-code'
new BrowserCheck('home', { name: 'Home page', activated: false, code: { entrypoint: './home.spec.ts' } })
new MultiStepCheck('inline', { name: 'Inline', activated: false, code: { content: "import { test } from '@playwright/test'\\ntest('x', async () => {})\\n" } })
`,
      'checks/home.spec.ts': `import { test } from '@playwright/test'\nimport { heading } from './lib/expected'\ntest('home', async () => { heading })\n`,
      'checks/lib/expected.ts': `export const heading = 'Shop'\n`,
    })
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    const other = makeProject({ 'keep.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('KEEP', { value: 'x' })\n` })
    expect((await monitors(other, ['apply', '--yes'], env)).code).toBe(0)
    const imported = await monitors(other, ['import', '--all'], env)
    expect(imported.code, imported.output).toBe(0)
    expect(imported.stdout).toContain('Wrote the scripts of its browser, multi-step and Playwright checks: checks/home.spec.ts, checks/lib/expected.ts.')
    expect(readFileSync(join(other, 'checks/home.spec.ts'), 'utf8')).toBe(readFileSync(join(project, 'checks/home.spec.ts'), 'utf8'))
    expect(readFileSync(join(other, 'checks/lib/expected.ts'), 'utf8')).toBe(`export const heading = 'Shop'\n`)
    const code = readFileSync(join(other, readdirSync(other).find((f) => f.startsWith('imported'))!), 'utf8')
    expect(code).toContain("code: { entrypoint: './checks/home.spec.ts' }")
    expect(code).toContain('new MultiStepCheck(')
    const plan = await monitors(other, ['plan', '--detailed-exitcode'], env)
    expect(plan.code, plan.output).toBe(0)
  }, 120_000)
})

describe('a script construct with a problem', () => {
  it("is reported as the loader's problem naming the file, the construct and the import", async () => {
    const project = makeProject({
      'bad.check.ts': `import { BrowserCheck, MultiStepCheck } from 'monitors-as-code'
new BrowserCheck('missing', { name: 'M', code: { entrypoint: './nope.spec.ts' } })
new BrowserCheck('pkg', { name: 'P', code: { entrypoint: './pkg.spec.ts' } })
// @ts-expect-error code is required
new MultiStepCheck('nocode', { name: 'N' })
`,
      'pkg.spec.ts': `import { test } from '@playwright/test'\nimport pad from 'left-pad'\ntest('x', async () => { pad })\n`,
    })
    const result = await monitors(project, ['validate'])
    expect(result.code).toBe(1)
    expect(result.output).not.toMatch(STACK_LINE)
    expect(result.output).toContain('bad.check.ts › BrowserCheck "missing" › code.entrypoint: file ./nope.spec.ts does not exist')
    expect(result.output).toMatch(/pkg\.spec\.ts:2 › BrowserCheck "pkg" › imports "left-pad", a package runtime 2025\.04 does not provide/)
    expect(result.output).toContain('bad.check.ts › MultiStepCheck "nocode" › code: is required')
    expect(existsSync(join(project, 'monitoring.lock.json'))).toBe(false)
  })
})
