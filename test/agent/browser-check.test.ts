/**
 * `monitors agent` runs a failing browser check of a triggered session with Debian's Chromium,
 * uploads its screenshot and trace with the result, and the server serves them from the
 * result's asset route; the check's secret variable reaches the script on the agent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium } from '../helpers/browser.js'
import { startHttpServer, type HttpServerHandle } from '../helpers/http-server.js'
import { prepareTestRuntime } from '../helpers/runtime.js'
import { caller, type Call } from '../server/helpers.js'
import { spawnAgent } from './helpers.js'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'

const KEY = 'agent-browser-key-0123456789abcdef01'
let server: LocalServer
let site: HttpServerHandle
let api: Call
let runtimeCache: string

beforeAll(async () => {
  site = await startHttpServer()
  site.route('/', { status: 200, headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>Shop</title><h1>Shop</h1>' })
  runtimeCache = await prepareTestRuntime()
  server = await startLocalServer({
    port: 0,
    dbPath: ':memory:',
    apiKeys: [{ key: KEY, accountId: 'agent-browser' }],
    scheduler: true,
    runner: false,
    schedulerOptions: { tickMs: 200 },
  })
  api = caller({ url: server.url }, KEY)
}, 180_000)
afterAll(async () => {
  await server?.close()
  await site?.close()
})

describe.skipIf(!hasChromium)('agent and browser checks (Debian Chromium)', () => {
  it("uploads a failing run's screenshot and trace with its result; the server serves them", async () => {
    const check = await api('POST', '/v1/checks/browser', {
      name: 'Shop home',
      activated: false,
      doubleCheck: false,
      locations: ['eu-west-2'],
      script: `import { test, expect } from '@playwright/test'
test('home', async ({ page }) => {
  expect(process.env.SHOP_TOKEN).toBe('agent-secret-481')
  await page.goto(process.env.SITE + '/')
  await expect(page.locator('h1')).toHaveText('Shop!', { timeout: 2000 })
})
`,
      environmentVariables: [
        { key: 'SITE', value: site.origin },
        { key: 'SHOP_TOKEN', value: 'agent-secret-481', secret: true },
      ],
    })
    expect(check.status, check.text).toBe(201)
    const agent = spawnAgent(['--locations', 'eu-west-2', '--health-port', '0', '--poll-interval', '200ms'], {
      MONITORING_API_URL: server.url,
      MONITORING_API_KEY: KEY,
      MONITORS_RUNTIME_CACHE: runtimeCache,
    })
    try {
      await agent.healthPort()
      const trigger = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })
      let done
      for (const deadline = Date.now() + 180_000; ; ) {
        done = await api('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=30`)
        if (done.status !== 408 || Date.now() > deadline) break
      }
      expect(done.status, done.text).toBe(200)
      expect(done.json.status).toBe('FAILED')
      const result = (await api('GET', `/v1/check-results/${check.json.id}?resultType=FINAL`)).json[0]
      // the secret reached the script (its first expect passed): the failure is the heading's
      expect(result.error).toContain('toHaveText')
      expect(result.error).not.toContain('agent-secret-481')
      const manifest = await api('GET', `/v1/check-results/${check.json.id}/${result.id}/assets`)
      expect(manifest.status, manifest.text).toBe(200)
      const types = (manifest.json.assets as Array<{ type: string }>).map((a) => a.type)
      expect(types).toContain('screenshot')
      expect(types).toContain('trace')
      const shot = (manifest.json.assets as Array<{ type: string; url: string }>).find((a) => a.type === 'screenshot')!
      const png = await fetch(shot.url, { headers: { authorization: `Bearer ${KEY}` } })
      expect(png.status).toBe(200)
      expect(
        Buffer.from(await png.arrayBuffer())
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG')
      expect(agent.output()).not.toContain('was not uploaded')
    } finally {
      agent.child.kill('SIGTERM')
      await agent.exited
    }
  }, 240_000)

  it('runs a failing Playwright check suite and uploads its screenshot and trace with the result', async () => {
    const check = await api('POST', '/v1/checks/playwright', {
      name: 'Shop suite',
      activated: false,
      doubleCheck: false,
      locations: ['eu-west-2'],
      files: [
        {
          path: 'playwright.config.ts',
          content: "import { defineConfig } from '@playwright/test'\nexport default defineConfig({ testDir: './tests', use: { baseURL: process.env.SITE } })\n",
        },
        {
          path: 'tests/home.spec.ts',
          content:
            "import { test, expect } from '@playwright/test'\ntest('home', async ({ page }) => {\n  await page.goto('/')\n  await expect(page.locator('h1')).toHaveText('Shop!', { timeout: 2000 })\n})\n",
        },
      ],
      environmentVariables: [{ key: 'SITE', value: site.origin }],
    })
    expect(check.status, check.text).toBe(201)
    const agent = spawnAgent(['--locations', 'eu-west-2', '--health-port', '0', '--poll-interval', '200ms'], {
      MONITORING_API_URL: server.url,
      MONITORING_API_KEY: KEY,
      MONITORS_RUNTIME_CACHE: runtimeCache,
    })
    try {
      await agent.healthPort()
      const trigger = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })
      let done
      for (const deadline = Date.now() + 180_000; ; ) {
        done = await api('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=30`)
        if (done.status !== 408 || Date.now() > deadline) break
      }
      expect(done.status, done.text).toBe(200)
      expect(done.json.status).toBe('FAILED')
      const result = (await api('GET', `/v1/check-results/${check.json.id}?resultType=FINAL`)).json[0]
      expect(result.error).toContain('home.spec.ts › home')
      const [trace] = result.playwrightCheckResult.playwrightTraceFiles as Array<{ url: string }>
      const zip = await fetch(trace.url, { headers: { authorization: `Bearer ${KEY}` } })
      expect(zip.status).toBe(200)
      expect(
        Buffer.from(await zip.arrayBuffer())
          .subarray(0, 2)
          .toString(),
      ).toBe('PK')
      const manifest = await api('GET', `/v1/check-results/${check.json.id}/${result.id}/assets`)
      expect((manifest.json.assets as Array<{ type: string }>).map((a) => a.type)).toContain('screenshot')
      expect(agent.output()).not.toContain('was not uploaded')
    } finally {
      agent.child.kill('SIGTERM')
      await agent.exited
    }
  }, 240_000)
})
