import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { strFromU8, unzipSync } from 'fflate'
import { containment } from '../../../src/runner/script/jail.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runPlaywrightSuite } from '../../../src/runner/script/index.js'
import { hasChromium } from '../../helpers/browser.js'
import { prepareTestRuntime } from '../../helpers/runtime.js'

let cache: string
let work: string
let site: Server
let origin: string

beforeAll(async () => {
  cache = await prepareTestRuntime()
  work = mkdtempSync(join(tmpdir(), 'monitors-suite-test-'))
  site = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html')
    res.end('<!doctype html><title>Shop</title><h1>Shop</h1>')
  })
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
}, 180_000)

afterAll(async () => {
  await new Promise((r) => site?.close(r))
  if (work) rmSync(work, { recursive: true, force: true })
})

;(hasChromium ? it : it.skip)(
  "a Playwright check suite runs the project's selected tests with its config; failures keep their trace, secrets are scrubbed",
  async () => {
    const result = await runPlaywrightSuite(
      {
        name: 'suite',
        tags: ['@smoke'],
        environmentVariables: [
          { key: 'SITE', value: origin },
          { key: 'TOKEN', value: 'tok-secret-4711', secret: true },
        ],
        files: [
          {
            path: 'playwright.config.ts',
            content:
              "import { defineConfig } from '@playwright/test'\nexport default defineConfig({ testDir: './tests', use: { baseURL: process.env.SITE }, projects: [{ name: 'desktop' }] })\n",
          },
          { path: 'tests/title.ts', content: "export const title = 'Shop'\n" },
          {
            path: 'tests/home.spec.ts',
            content: `import { test, expect } from '@playwright/test'
import { title } from './title'
test('home @smoke', async ({ page }) => {
  const own = ['BROWSERSLIST_IGNORE_OLD_DATA', 'DEBUG_COLORS', 'FORCE_COLOR', 'PLAYWRIGHT_TEST'] // what Playwright's runner sets for its workers
  console.log('env', Object.keys(process.env).filter((k) => !own.includes(k) && !k.startsWith('PW') && !k.startsWith('TEST_')).sort().join(','), process.env.TOKEN)
  await page.goto('/?t=' + process.env.TOKEN)
  await expect(page).toHaveTitle(title)
})
test('broken @smoke', async ({ page }) => {
  await page.goto('/?t=' + process.env.TOKEN)
  await expect(page.locator('h1')).toHaveText('Nope', { timeout: 1000 })
})
test('not selected', async () => {})
`,
          },
        ],
      },
      { runtimeCache: cache, workDir: work, timeoutMs: 120_000 },
    )
    expect(result).toMatchObject({ checkType: 'PLAYWRIGHT', status: 'FAILED', hasFailures: true, hasErrors: false, failureKind: 'ASSERTION' })
    expect(result.details.tests.map((t) => [t.titlePath.join(' › '), t.status])).toEqual([
      ['desktop › home.spec.ts › home @smoke', 'passed'],
      ['desktop › home.spec.ts › broken @smoke', 'failed'],
    ])
    expect(result.error).toBe('desktop › home.spec.ts › broken @smoke: Error: expect(locator).toHaveText(expected) failed')
    // contained, the run's Node processes preload their route through the egress proxy (NODE_OPTIONS)
    expect(result.details.logs).toContain(
      containment().available ? 'env HOME,MONITORS,NODE_OPTIONS,PATH,SITE,TOKEN ********' : 'env HOME,MONITORS,PATH,SITE,TOKEN ********',
    )
    const trace = result.details.artifacts.files.find((f) => f.kind === 'trace')
    expect(trace?.name).toMatch(/broken.*\/trace\.zip$/)
    expect(result.details.artifacts.files.some((f) => f.kind === 'screenshot')).toBe(true)
    const texts = Object.values(unzipSync(readFileSync(join(result.details.artifacts.dir as string, trace!.name))))
      .map((c) => strFromU8(c))
      .join('\n')
    expect(texts).toContain('/?t=********')
    expect(texts).not.toContain('tok-secret-4711')
    expect(JSON.stringify(result)).not.toContain('tok-secret-4711')
  },
  180_000,
)

/** Processes of this machine whose command line holds `marker` (read from /proc). */
function processesWith(marker: string): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) pids.push(Number(name))
    } catch {
      /* gone */
    }
  }
  return pids
}

/** A one-project suite whose single test is `body`. */
const oneTest = (body: string) => ({
  name: 'contained',
  files: [
    {
      path: 'playwright.config.ts',
      content: "import { defineConfig } from '@playwright/test'\nexport default defineConfig({ testDir: './tests', timeout: 0 })\n",
    },
    {
      path: 'tests/t.spec.ts',
      content: `import { test } from '@playwright/test'\nimport { spawn } from 'node:child_process'\ntest('t', async () => {\n${body}\n})\n`,
    },
  ],
})

describe('a suite that misbehaves fails its run and leaves nothing behind', () => {
  it('a test that loops is stopped at the wall clock with its workers', async () => {
    const started = Date.now()
    const result = await runPlaywrightSuite(oneTest("  const marker = 'loop-marker-4711'\n  for (;;) { marker.length }"), {
      runtimeCache: cache,
      workDir: work,
      timeoutMs: 8_000,
    })
    expect(result).toMatchObject({ status: 'TIMED_OUT', timedOut: true })
    expect(result.error).toContain('exceeded its limit of 8 s')
    // generous: the machine is shared; a loop never stopped would take the whole minute of the test's deadline
    expect(Date.now() - started).toBeLessThan(50_000)
    expect(processesWith(work)).toEqual([])
  }, 90_000)

  it('processes a test spawns, even in a session of their own, are killed with the run', async () => {
    const marker = `spawn-marker-${process.pid}`
    const body = `  spawn('/bin/sh', ['-c', 'sleep 600; echo ${marker}'], { stdio: 'ignore' })\n  spawn('/bin/sh', ['-c', 'sleep 600; echo ${marker}'], { stdio: 'ignore', detached: true }).unref()\n  await new Promise((r) => setTimeout(r, 600_000))`
    const result = await runPlaywrightSuite(oneTest(body), { runtimeCache: cache, workDir: work, timeoutMs: 8_000 })
    expect(result).toMatchObject({ status: 'TIMED_OUT', timedOut: true })
    expect(processesWith(marker)).toEqual([])
  }, 90_000)

  it('a process a passing test leaves behind in a session of its own is killed when the run ends', async () => {
    const marker = `left-marker-${process.pid}`
    const body = `  spawn('/bin/sh', ['-c', 'sleep 600; echo ${marker}'], { stdio: 'ignore', detached: true }).unref()\n  await new Promise((r) => setTimeout(r, 1000))`
    const result = await runPlaywrightSuite(oneTest(body), { runtimeCache: cache, workDir: work, timeoutMs: 60_000 })
    expect(result.status, result.error ?? '').toBe('PASSED')
    expect(processesWith(marker)).toEqual([])
  }, 90_000)

  it('a test whose memory grows is stopped over the memory limit: the run hasErrors naming it', async () => {
    const body =
      "  const kept: string[] = []\n  for (;;) { kept.push('x'.repeat(1 << 20) + kept.length); if (kept.length % 16 === 0) await new Promise((r) => setTimeout(r, 1)) }"
    const result = await runPlaywrightSuite(oneTest(body), { runtimeCache: cache, workDir: work, timeoutMs: 60_000, memoryLimitMb: 400 })
    expect(result).toMatchObject({ hasErrors: true, status: 'FAILED' })
    expect(result.error).toMatch(/over the memory limit of 400 MB: the run was stopped/)
    expect(processesWith(work)).toEqual([])
  }, 90_000)

  it('a test that writes without end is stopped over the disk limit: the run hasErrors naming it', async () => {
    const body = `  const fs = await import('node:fs')
  const path = await import('node:path')
  const file = test.info().outputPath('big.bin')
  fs.mkdirSync(path.dirname(file), { recursive: true })
  for (;;) { fs.appendFileSync(file, Buffer.alloc(1 << 20)); await new Promise((r) => setTimeout(r, 5)) }`
    const result = await runPlaywrightSuite(oneTest(body), { runtimeCache: cache, workDir: work, timeoutMs: 60_000, diskLimitBytes: 16 * 1024 * 1024 })
    expect(result).toMatchObject({ hasErrors: true, status: 'FAILED' })
    expect(result.error).toMatch(/^the suite wrote [\d.]+ MB, over the disk limit of 16\.8 MB: the run was stopped$/)
    // stopped within a few seconds, not at the wall clock
    expect(result.responseTime).toBeLessThan(30_000)
    expect(processesWith(work)).toEqual([])
  }, 90_000)
})

describe('the JSON report of a suite', () => {
  const reporting = {
    name: 'reporting',
    environmentVariables: [{ key: 'TOKEN', value: 'rep-secret-9031', secret: true }],
    files: [
      { path: 'playwright.config.ts', content: "import { defineConfig } from '@playwright/test'\nexport default defineConfig({ testDir: './tests' })\n" },
      {
        path: 'tests/t.spec.ts',
        content:
          "import { test, expect } from '@playwright/test'\ntest('says the token', async () => {\n  console.log('token is', process.env.TOKEN)\n  expect(process.env.TOKEN).toBe('another')\n})\ntest('passes', async () => {})\n",
      },
    ],
  }

  it("is kept as report.json among the run's artifacts, scrubbed of the run's secrets", async () => {
    const result = await runPlaywrightSuite(reporting, { runtimeCache: cache, workDir: work, timeoutMs: 120_000 })
    expect(result).toMatchObject({ status: 'FAILED', hasFailures: true })
    const entry = result.details.artifacts.files.find((f) => f.name === 'report.json')
    expect(entry, JSON.stringify(result.details.artifacts)).toMatchObject({ kind: 'other', contentType: 'application/json' })
    const text = readFileSync(join(result.details.artifacts.dir as string, 'report.json'), 'utf8')
    expect(entry!.bytes).toBe(Buffer.byteLength(text))
    const report = JSON.parse(text) as { suites: Array<{ specs: Array<{ title: string }> }> }
    expect(report.suites[0].specs.map((s) => s.title)).toEqual(['says the token', 'passes'])
    expect(text).toContain('token is ********')
    expect(text).not.toContain('rep-secret-9031')
  }, 150_000)

  it('counts against the artifact limit: over it, it is dropped and listed as such', async () => {
    const result = await runPlaywrightSuite(reporting, { runtimeCache: cache, workDir: work, timeoutMs: 120_000, artifactLimitBytes: 200 })
    expect(result.details.artifacts.files.map((f) => f.name)).not.toContain('report.json')
    expect(result.details.artifacts.dropped.find((d) => d.name === 'report.json')?.reason).toMatch(/over the run's artifact limit/)
  }, 150_000)
})
