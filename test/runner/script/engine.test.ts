import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { strFromU8, unzipSync } from 'fflate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScript, secretForms, type ScriptCheck, type ScriptRunOptions } from '../../../src/runner/script/index.js'
import { buildRunBundle, bundleCache } from '../../../src/runner/script/build.js'
import { primeCodeCache } from '../../../src/runner/script/engine.js'
import { containment, jailCommand } from '../../../src/runner/script/jail.js'
import { DEFAULT_RUNTIME_ID, findRuntime } from '../../../src/schema/runtimes.js'
import { hasChromium } from '../../helpers/browser.js'
import { prepareTestRuntime } from '../../helpers/runtime.js'
import { waitFor } from '../../helpers/wait-for.js'

/*
 * The script engine end to end: real Chromium (Debian's), real sandboxed child processes, a
 * small site on 127.0.0.1. Each browser run starts a browser: the file keeps to a few.
 */

let cache: string
let work: string
let site: Server
let origin: string

const PAGE = `<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1><p id="p">hello</p>
<script>console.log('page loaded'); console.error('a page error message')</script></body></html>`

beforeAll(async () => {
  cache = await prepareTestRuntime()
  work = mkdtempSync(join(tmpdir(), 'monitors-script-test-'))
  site = createServer((req, res) => {
    if (req.url?.startsWith('/api/items')) {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ items: ['a', 'b'] }))
      return
    }
    res.setHeader('content-type', 'text/html')
    res.end(PAGE)
  })
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
}, 180_000)

afterAll(async () => {
  await new Promise((r) => site?.close(r))
  if (work) rmSync(work, { recursive: true, force: true })
})

function options(extra: ScriptRunOptions = {}): ScriptRunOptions {
  return { runtimeCache: cache, workDir: work, timeoutMs: 60_000, ...extra }
}

function check(script: string, extra: Partial<ScriptCheck> = {}): ScriptCheck {
  return {
    name: 'shop',
    checkType: 'BROWSER',
    script,
    scriptPath: 'checks/shop.spec.ts',
    environmentVariables: [{ key: 'SITE', value: origin }],
    ...extra,
  }
}

/** Processes that belong to runs under `dir`: their command line or environment names it. */
function processesUnder(dir: string): string[] {
  const found: string[] = []
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8')
      if (cmd.includes(dir) || env.includes(`MONITORS_RUN=${dir}`)) found.push(`${pid} ${cmd.replace(/\0/g, ' ').slice(0, 120)}`)
    } catch {
      /* gone */
    }
  }
  return found
}

const browserIt = hasChromium ? it : it.skip
const containedIt = hasChromium && containment().available ? it : it.skip

/** The processes whose command line holds `part` and, when given, whose environment holds `env` (any user's: the tests run as root). */
function processesWith(part: string, env?: string): number[] {
  const found: number[] = []
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(part)) continue
      if (env === undefined || readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(env)) found.push(Number(pid))
    } catch {
      /* gone */
    }
  }
  return found
}

describe('browser checks', () => {
  browserIt(
    "a passing script: its tests and steps, the page's web vitals, console and network, the files it imports",
    async () => {
      const result = await runScript(
        check(
          `import { test, expect } from '@playwright/test'
import { heading } from './lib/heading'
test.describe('shop', () => {
  test('home page', async ({ page }) => {
    await page.goto(process.env.SITE + '/')
    await test.step('heading', async () => {
      await expect(page.locator('h1')).toHaveText(heading)
    })
    console.log('checked', await page.title())
  })
})
`,
          { dependencies: [{ path: 'checks/lib/heading.ts', content: "export const heading = 'Shop'\n" }] },
        ),
        options(),
      )
      expect(result.error).toBeNull()
      expect(result).toMatchObject({ status: 'PASSED', hasFailures: false, hasErrors: false, checkType: 'BROWSER' })
      expect(result.details.tests).toEqual([
        expect.objectContaining({
          titlePath: ['shop', 'home page'],
          status: 'passed',
          steps: [expect.objectContaining({ title: 'heading', status: 'passed' })],
        }),
      ])
      expect(result.details.pages[0].url).toBe(`${origin}/`)
      expect(result.details.webVitals?.FCP).toBeGreaterThan(0)
      expect(result.details.webVitals?.TTFB).toBeGreaterThan(0)
      expect(result.details.webVitals?.CLS).toBe(0)
      expect(result.details.errors).toMatchObject({ consoleErrors: 1, networkErrors: 0, documentErrors: 0, userScriptErrors: 0 })
      expect(result.details.console.map((c) => [c.type, c.text])).toEqual([
        ['log', 'page loaded'],
        ['error', 'a page error message'],
      ])
      expect(result.details.network).toEqual([expect.objectContaining({ method: 'GET', url: `${origin}/`, status: 200, resourceType: 'document' })])
      expect(result.details.logs).toContain('checked Shop')
      expect(result.responseTime).toBeGreaterThan(0)
      // a passing run keeps no trace or screenshot by default, only its logs
      expect(result.details.artifacts.files.map((f) => f.kind).sort()).toEqual(['console', 'log', 'network'])
    },
    120_000,
  )

  browserIt(
    'a failing assertion fails the run and keeps a screenshot and the trace; secrets are scrubbed from everything kept',
    async () => {
      const secret = 'pa$$ w0rd/With+Special=Chars;é'
      const result = await runScript(
        check(
          `import { test, expect } from '@playwright/test'
test('account', async ({ page }) => {
  const secret = process.env.API_TOKEN
  console.log('using token ' + secret)
  await page.goto(process.env.SITE + '/account?token=' + encodeURIComponent(secret) + '&raw=' + encodeURI(secret))
  await page.setExtraHTTPHeaders({ Authorization: 'Bearer ' + process.env.PLAIN })
  await page.evaluate(async (s) => {
    console.log('page sees ' + s)
    await fetch('/api/items', { method: 'POST', body: JSON.stringify({ s, b64: btoa('user:' + unescape(encodeURIComponent(s))) }) })
  }, secret)
  await expect(page.locator('#p')).toHaveText('not ' + secret, { timeout: 1000 })
})
`,
          {
            environmentVariables: [
              { key: 'SITE', value: origin },
              { key: 'API_TOKEN', value: secret, secret: true },
              { key: 'PLAIN', value: 'plain-token-4711' },
            ],
          },
        ),
        options(),
      )
      expect(result).toMatchObject({ status: 'FAILED', hasFailures: true, hasErrors: false, failureKind: 'ASSERTION' })
      expect(result.error).toContain('account: expect(locator).toHaveText(expected) failed')
      expect(result.error).toContain('Expected: "not ********"')
      const kinds = result.details.artifacts.files.map((f) => f.kind)
      expect(kinds).toContain('screenshot')
      expect(kinds).toContain('trace')
      const dir = result.details.artifacts.dir as string
      const shot = result.details.artifacts.files.find((f) => f.kind === 'screenshot')!
      expect(readFileSync(join(dir, shot.name)).subarray(1, 4).toString()).toBe('PNG')

      const forms = secretForms(secret)
      expect(forms).toContain(encodeURIComponent(secret))
      expect(forms.some((f) => f.startsWith(Buffer.from(secret).toString('base64').slice(0, 8)))).toBe(true)
      const everything: string[] = [JSON.stringify(result)]
      for (const f of result.details.artifacts.files) {
        const data = readFileSync(join(dir, f.name))
        if (f.kind === 'trace') {
          const entries = unzipSync(data)
          expect(Object.keys(entries).some((n) => n.endsWith('.network'))).toBe(true)
          for (const [name, content] of Object.entries(entries)) if (!/\.(jpe?g|png)$/.test(name)) everything.push(strFromU8(content))
        } else if (f.kind !== 'screenshot') everything.push(data.toString('utf8'))
      }
      const all = everything.join('\n')
      // what the run did is there, without the secret in any of its forms
      expect(all).toContain('using token ********')
      expect(all).toContain('page sees ********')
      expect(all).toContain('/account?token=********')
      for (const form of forms) expect(all.includes(form), `found ${JSON.stringify(form)}`).toBe(false)
      // the Authorization header of traced requests is dropped whatever it holds
      expect(all).not.toContain('plain-token-4711')
      expect(all).toMatch(/"name":"Authorization","value":"\*{8}"|"authorization":"\*{8}"/i)
    },
    120_000,
  )

  browserIt(
    'a script that loops for ever is stopped at its limit: TIMED_OUT, and its browser is killed with it',
    async () => {
      const dir = mkdtempSync(join(work, 'loop-'))
      const result = await runScript(
        check(`import { test } from '@playwright/test'
test('spins', async ({ page }) => {
  await page.goto(process.env.SITE + '/')
  console.log('spinning')
  for (;;) {}
})
`),
        options({ workDir: dir, timeoutMs: 20_000 }),
      )
      expect(result.error).toContain('the run exceeded its limit of 20 s and was stopped')
      expect(result).toMatchObject({ status: 'TIMED_OUT', timedOut: true, hasFailures: true })
      expect(result.details.logs).toContain('spinning')
      expect(result.details.memory.peakBrowserRssBytes).toBeGreaterThan(0)
      // killed processes leave the process table within moments
      await waitFor(() => processesUnder(dir).length === 0, { intervalMs: 100, what: 'the killed processes to leave' }).catch(() => undefined)
      expect(processesUnder(dir)).toEqual([])
    },
    120_000,
  )

  containedIt(
    "a contained run starts its script's process while its browser starts, and a browser that cannot start leaves no process of the run",
    async () => {
      // a Chromium that takes its time to start: the script's process is up meanwhile
      const bin = mkdtempSync(join(tmpdir(), 'monitors-slow-chromium-'))
      chmodSync(bin, 0o755)
      const slow = join(bin, 'chromium')
      writeFileSync(slow, '#!/bin/sh\nsleep 1.93\nexec /usr/bin/chromium "$@"\n', { mode: 0o755 })
      try {
        const script = `import { test, expect } from '@playwright/test'\ntest('home', async ({ page }) => {\n  console.log('CWD=' + process.cwd())\n  await page.goto(process.env.SITE + '/')\n  await expect(page.locator('h1')).toHaveText('Shop')\n})\n`
        let overlapped = false
        const watch = setInterval(() => {
          if (processesWith('sleep\u00001.93').length > 0 && processesWith('/bundle/run.cjs', `SITE=${origin}`).length > 0) overlapped = true
        }, 50)
        const result = await runScript(check(script), options({ chromiumPath: slow })).finally(() => clearInterval(watch))
        expect(result.error).toBeNull()
        expect(result.status).toBe('PASSED')
        expect(overlapped).toBe(true)
        // the run's folder (its scratch folder is the script's working directory) is removed once the run has answered
        const scratch = /CWD=(\S+)/.exec(result.details.logs)?.[1] ?? ''
        expect(scratch).toMatch(/monitors-run-/)
        await waitFor(() => !existsSync(dirname(scratch)), { what: "the run's folder to be removed" })
        const failed = await runScript(check(script), options({ chromiumPath: join(bin, 'missing') }))
        expect(failed).toMatchObject({ hasErrors: true })
        expect(failed.error).toMatch(/^the browser could not be started: /)
        expect(processesWith('/bundle/run.cjs', `SITE=${origin}`)).toEqual([])
      } finally {
        rmSync(bin, { recursive: true, force: true })
      }
    },
    120_000,
  )

  browserIt(
    'the browser opens no file of the server: file: URLs are refused and the run fails',
    async () => {
      const db = join(work, 'server.db')
      writeFileSync(db, 'the server database')
      const result = await runScript(
        check(
          `import { test, expect } from '@playwright/test'
test('peeks', async ({ page }) => {
  await page.goto(process.env.SITE + '/')
  await page.evaluate((db) => { location.href = 'file://' + db }, process.env.DB).catch(() => undefined)
  await page.waitForTimeout(500)
  console.log('after the page navigated itself: ' + page.url() + ' ' + (await page.content()).includes('the server database'))
  await page.goto('file://' + process.env.DB)
  console.log(await page.content())
})
`,
          {
            environmentVariables: [
              { key: 'SITE', value: origin },
              { key: 'DB', value: db },
            ],
          },
        ),
        options(),
      )
      expect(result).toMatchObject({ status: 'FAILED', hasErrors: true, failureKind: 'RUNNER_ERROR' })
      expect(result.error).toContain(`the sandbox refused: navigation to file://${db} refused`)
      // Chromium itself refuses a web page's navigation to a file: URL
      expect(result.details.logs).toContain(`after the page navigated itself: ${origin}/ false`)
      expect(JSON.stringify(result)).not.toContain('the server database')
    },
    120_000,
  )
})

describe('multi-step checks', () => {
  it('run the request fixture without a browser: requests and steps are recorded', async () => {
    const result = await runScript(
      check(
        `import { test, expect } from '@playwright/test'
test('items api', async ({ request }) => {
  const response = await request.get(process.env.SITE + '/api/items')
  expect(response.status()).toBe(200)
  const body = await response.json()
  await test.step('two items', async () => {
    expect(body.items).toHaveLength(2)
  })
})
`,
        { checkType: 'MULTI_STEP' },
      ),
      options(),
    )
    expect(result.error).toBeNull()
    expect(result).toMatchObject({ status: 'PASSED', checkType: 'MULTI_STEP' })
    expect(result.details.tests[0].steps.map((s) => [s.title, s.status])).toEqual([['two items', 'passed']])
    expect(result.details.network).toEqual([expect.objectContaining({ method: 'GET', url: `${origin}/api/items`, status: 200, page: null })])
    expect(result.details.memory.peakBrowserRssBytes).toBe(0)
  }, 60_000)

  it('keep the trace of a failed test, its Authorization headers dropped though the run has no secret', async () => {
    const result = await runScript(
      check(
        `import { test, expect } from '@playwright/test'
test('items api', async ({ request }) => {
  const response = await request.get(process.env.SITE + '/api/items', { headers: { Authorization: 'Bearer ' + process.env.PLAIN } })
  expect((await response.json()).items).toHaveLength(3)
})
`,
        {
          checkType: 'MULTI_STEP',
          environmentVariables: [
            { key: 'SITE', value: origin },
            { key: 'PLAIN', value: 'plain-token-0815' },
          ],
        },
      ),
      options(),
    )
    expect(result).toMatchObject({ status: 'FAILED', hasFailures: true, hasErrors: false })
    expect(result.error).toBe('items api: expect(received).toHaveLength(expected) Expected length: 3 Received length: 2')
    const trace = result.details.artifacts.files.find((f) => f.kind === 'trace')
    expect(trace?.name).toBe('traces/1-items-api-api.zip')
    const texts = Object.values(unzipSync(readFileSync(join(result.details.artifacts.dir as string, trace!.name))))
      .map((c) => strFromU8(c))
      .join('\n')
    expect(texts).toContain(`${origin}/api/items`)
    expect(texts).not.toContain('plain-token-0815')
  }, 60_000)

  it("see the check's variables only, the service variable, and CI=true for a test session", async () => {
    const script = `import { test, expect } from '@playwright/test'
test('env', async () => {
  console.log(JSON.stringify(Object.keys(process.env).sort()), process.env.MONITORS, process.env.CI, process.env.MONITORS_SECRET_KEY)
})
`
    const vars = [
      { key: 'SITE', value: origin },
      { key: 'MONITORS_SECRET_KEY', value: 'prefix-makes-me-secret' },
    ]
    const session = await runScript(check(script, { checkType: 'MULTI_STEP', environmentVariables: vars }), options({ testSession: true }))
    expect(session.status).toBe('PASSED')
    expect(session.details.logs).toContain('["CI","MONITORS","MONITORS_SECRET_KEY","SITE"] true true ********')
    const scheduled = await runScript(check(script, { checkType: 'MULTI_STEP', environmentVariables: vars }), options())
    expect(scheduled.details.logs).toContain('["MONITORS","MONITORS_SECRET_KEY","SITE"] true undefined ********')
  }, 60_000)
})

describe('the sandbox', () => {
  const multiStep = (script: string, vars: Array<{ key: string; value: string }> = []) =>
    check(`import { test, expect } from '@playwright/test'\n${script}`, {
      checkType: 'MULTI_STEP',
      environmentVariables: [{ key: 'SITE', value: origin }, ...vars],
    })

  it('denies reading a file outside the bundle, the runtime and the scratch folder: the run fails with hasErrors', async () => {
    const db = join(work, 'monitors.db')
    writeFileSync(db, 'secret rows')
    const result = await runScript(
      multiStep(
        `import { readFileSync } from 'node:fs'
test('reads', async () => { console.log(readFileSync(process.env.DB, 'utf8')) })`,
        [{ key: 'DB', value: db }],
      ),
      options(),
    )
    expect(result).toMatchObject({ status: 'FAILED', hasErrors: true })
    expect(result.error).toBe(`the sandbox refused: FileSystemRead ${db}`)
    expect(JSON.stringify(result)).not.toContain('secret rows')
  }, 60_000)

  browserIt(
    'a browser check cannot read a file of the server through its browser: no file: page, frame, fetch, request or window (Chromium refuses them from web pages; the proxy refuses file: navigations)',
    async () => {
      const db = join(work, 'browser-secret.db')
      writeFileSync(db, 'secret-rows-4711')
      const file = `file://${db}`
      const script = `import { test } from '@playwright/test'
const FILE = ${JSON.stringify(file)}
test('reads', async ({ context }) => {
  const found: Record<string, string> = {}
  // each on a page of its own (a page whose frame was refused a file may be closed by the browser)
  const attempt = async (name: string, f: (page: import('@playwright/test').Page) => Promise<unknown>) => {
    const page = await context.newPage()
    await page.goto(process.env.SITE + '/')
    const limit = new Promise((_, ko) => setTimeout(() => ko(new Error('no answer in 5 s')), 5000))
    try { found[name] = String(await Promise.race([f(page), limit])) } catch (e) { found[name] = 'refused: ' + String((e as Error).message).split('\\n')[0] }
  }
  const frames = (page: import('@playwright/test').Page) => Promise.all(page.frames().map((f) => f.content().catch((e) => String(e).split('\\n')[0]))).then((c) => c.join(' '))
  await attempt('fetch', (page) => page.evaluate((u) => fetch(u).then((r) => r.text()), FILE))
  await attempt('xhr', (page) => page.evaluate((u) => new Promise((ok, ko) => { const x = new XMLHttpRequest(); x.open('GET', u); x.onload = () => ok(x.responseText); x.onerror = () => ko(new Error('xhr failed')); x.send() }), FILE))
  await attempt('iframe', async (page) => { await page.setContent('<iframe src="' + FILE + '"></iframe>'); await page.waitForTimeout(500); return frames(page) })
  await attempt('location', async (page) => { await page.evaluate((u) => { location.href = u }, FILE).catch(() => undefined); await page.waitForTimeout(500); return page.url() + ' ' + await page.content() })
  await attempt('window', async (page) => { const [popup] = await Promise.all([context.waitForEvent('page', { timeout: 2000 }).catch(() => null), page.evaluate((u) => { window.open(u) }, FILE)]); await page.waitForTimeout(500); return popup ? popup.url() + ' ' + await popup.content() : 'no window' })
  await attempt('data-iframe', async (page) => { await page.goto('data:text/html,<iframe src="' + FILE + '"></iframe>'); await page.waitForTimeout(500); return frames(page) })
  await attempt('goto', (page) => page.goto(FILE).then(() => page.content()))
  await attempt('view-source', (page) => page.goto('view-source:' + FILE).then(() => page.content()))
  console.log('FOUND ' + JSON.stringify(found))
})
`
      const result = await runScript(check(script), options())
      const found = JSON.parse(/FOUND (.*)/.exec(result.details.logs)?.[1] ?? '{}') as Record<string, string>
      expect(Object.keys(found), result.details.logs).toEqual(['fetch', 'xhr', 'iframe', 'location', 'window', 'data-iframe', 'goto', 'view-source'])
      expect(JSON.stringify(result)).not.toContain('secret-rows-4711')
      expect(found.fetch).toMatch(/^refused: .*Failed to fetch/)
      expect(found.xhr).toMatch(/^refused: .*xhr failed/)
      // a refused frame stays empty (Chromium: "Not allowed to load local resource"); a page stays on its own origin
      expect(found.location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ /)
      expect(found.window).not.toMatch(/^file:/)
      expect(found.goto).toMatch(/^refused: .*navigation to file:.* refused/)
      expect(found['view-source']).toMatch(/^refused: .*navigation to view-source:file:.* refused/)
      expect(result.details.violations).toHaveLength(2)
    },
    120_000,
  )

  it("the runtime's code cache is written by the runner, outside the sandbox, and only read inside it: a script cannot change an entry or add one", async () => {
    const runtimeDir = join(cache, DEFAULT_RUNTIME_ID)
    await primeCodeCache(runtimeDir, 512)
    const base = join(runtimeDir, '.v8-code-cache')
    const folder = join(base, readdirSync(base).find((n) => n.endsWith('-heap-512')) ?? 'none')
    const files = readdirSync(folder).filter((n) => n !== 'complete')
    expect(files.length).toBeGreaterThan(1)
    const entry = join(folder, files[0])
    const before = readFileSync(entry)
    expect(statSync(entry).mode & 0o777).toBe(0o644)
    expect(statSync(entry).uid).toBe(process.getuid?.())
    const result = await runScript(
      multiStep(
        `import { writeFileSync, appendFileSync } from 'node:fs'
test('writes', async () => {
  const tried = []
  for (const write of [() => appendFileSync(process.env.ENTRY, 'x'), () => writeFileSync(process.env.FOLDER + '/0000', 'x')]) {
    try { write(); tried.push('written') } catch (e) { tried.push(e.code) }
  }
  console.log('tried', tried.join(' '))
})`,
        [
          { key: 'ENTRY', value: entry },
          { key: 'FOLDER', value: folder },
        ],
      ),
      options(),
    )
    // refused by the permission model (a refusal the script catches leaves no trace), and behind it by the read-only mount
    expect(result.details.logs).toContain('tried ERR_ACCESS_DENIED ERR_ACCESS_DENIED')
    expect(readFileSync(entry).equals(before)).toBe(true)
    expect(existsSync(join(folder, '0000'))).toBe(false)
    if (containment().available) {
      // the kernel's wall alone, without the permission model: the runtime, the cache in it, is mounted read-only in a run's sandbox
      const [command, args] = jailCommand('/bin/sh', ['-c', `echo x >> '${entry}' 2>&1; touch '${folder}/0000' 2>&1; true`], {
        user: null,
        readOnly: [runtimeDir],
        writable: [],
        tmpBytes: 1 << 20,
        shmBytes: 1 << 20,
        cwd: '/',
      })
      const ran = spawnSync(command, args, { encoding: 'utf8' })
      const said = ran.stdout + ran.stderr
      expect(said.match(/Read-only file system/g)).toHaveLength(2)
      expect(readFileSync(entry).equals(before)).toBe(true)
      expect(existsSync(join(folder, '0000'))).toBe(false)
    }
  }, 60_000)

  it('denies starting a process', async () => {
    const marker = join(work, 'spawned')
    const result = await runScript(
      multiStep(`import { execSync } from 'node:child_process'
test('spawns', async () => { execSync('touch ${marker}') })`),
      options(),
    )
    expect(result).toMatchObject({ status: 'FAILED', hasErrors: true })
    expect(result.error).toContain('the sandbox refused: ChildProcess')
    expect(existsSync(marker)).toBe(false)
  }, 60_000)

  it('stops a script that allocates without end (its heap, and memory outside it), and the caller carries on', async () => {
    const heap = await runScript(
      multiStep(`test('grows', async () => { const a = []; for (;;) a.push(new Array(1e5).fill(Math.random())) })`),
      options({ heapLimitMb: 64 }),
    )
    expect(heap).toMatchObject({ status: 'FAILED', hasErrors: true })
    expect(heap.error).toBe('the script ran out of memory (its heap limit is 64 MB)')
    const buffers = await runScript(
      multiStep(`test('buffers', async () => { const a = []; for (;;) { a.push(Buffer.alloc(20e6, 1)); await new Promise((r) => setTimeout(r, 20)) } })`),
      options({ memoryLimitMb: 400 }),
    )
    expect(buffers).toMatchObject({ status: 'FAILED', hasErrors: true })
    // the watchdog's sum, or (contained) the kernel's limit on the process (RLIMIT_DATA), whichever comes first
    expect(buffers.error).toMatch(
      /^(the script and its browser used [\d.]+ MB|a process of the run was refused memory), over the memory limit of 400 MB: the run was stopped$/,
    )
  }, 90_000)
})

describe('artifacts and runtimes', () => {
  it("keep at most the run's limit, and say what was dropped", async () => {
    const result = await runScript(
      check(
        `import { test } from '@playwright/test'
import { writeFileSync } from 'node:fs'
test('shots', async () => { for (const n of [1, 2, 3]) writeFileSync('shot-' + n + '.png', Buffer.alloc(40_000, n)) })
`,
        { checkType: 'MULTI_STEP' },
      ),
      options({ artifactLimitBytes: 100_000 }),
    )
    expect(result.status).toBe('PASSED')
    const { files, dropped, totalBytes, dir } = result.details.artifacts
    expect(totalBytes).toBeLessThanOrEqual(100_000)
    expect(files.map((f) => f.name)).toEqual(['screenshots/script/shot-1.png', 'screenshots/script/shot-2.png'])
    expect(dropped).toEqual([{ name: 'screenshots/script/shot-3.png', kind: 'screenshot', bytes: 40_000, reason: "over the run's artifact limit of 100 kB" }])
    expect(existsSync(join(dir as string, 'screenshots/script/shot-3.png'))).toBe(false)
    expect(JSON.parse(readFileSync(join(dir as string, 'manifest.json'), 'utf8')).dropped).toEqual(dropped)
  }, 60_000)

  it('a run on a runtime that is not prepared fails with hasErrors naming it; a removed runtime too', async () => {
    const script = `import { test } from '@playwright/test'\ntest('x', async () => {})`
    const unprepared = await runScript(check(script, { runtimeId: '2024.09' }), options())
    expect(unprepared).toMatchObject({ status: 'FAILED', hasErrors: true, failureKind: 'RUNNER_ERROR' })
    expect(unprepared.error).toBe(
      `runtime 2024.09 is not prepared here: its packages are not in ${join(cache, '2024.09')}; prepare it with: monitors runtimes prepare 2024.09 --cache-dir ${cache}`,
    )
    const removed = await runScript(check(script, { runtimeId: '2022.10' }), options())
    expect(removed.error).toBe('runtime 2022.10 was removed on 2024-10-31: choose runtime 2025.04')
  })

  it("a bundle is built once for the same files: built again, the answer is the one kept; another file's content builds anew", async () => {
    const runtime = findRuntime(DEFAULT_RUNTIME_ID)!
    const dir = join(cache, DEFAULT_RUNTIME_ID)
    const files = {
      script: `import { test } from '@playwright/test'\nimport { n } from './n'\ntest('x', async () => { console.log(n) })\n`,
      scriptPath: 'a.spec.ts',
      dependencies: [{ path: 'n.ts', content: "export const n = 'first-build-word'\n" }],
    }
    const first = await buildRunBundle(files, runtime, dir)
    const hits = bundleCache.hits
    const again = await buildRunBundle({ ...files, dependencies: [{ path: 'n.ts', content: "export const n = 'first-build-word'\n" }] }, runtime, dir)
    expect(again).toEqual(first)
    expect(bundleCache.hits).toBe(hits + 1)
    const other = await buildRunBundle({ ...files, dependencies: [{ path: 'n.ts', content: "export const n = 'second-build-word'\n" }] }, runtime, dir)
    expect(bundleCache.hits).toBe(hits + 1)
    expect(other.ok && other.code).toContain('second-build-word')
    expect(first.ok && first.code).toContain('first-build-word')
    expect(first.ok && first.code).not.toContain('second-build-word')
  })

  it('a script importing a package its runtime lacks, or a file it was not given, fails to build with hasErrors', async () => {
    const pkg = await runScript(check(`import { test } from '@playwright/test'\nimport pad from 'left-pad'\ntest('x', async () => { pad('a', 2) })`), options())
    expect(pkg).toMatchObject({ hasErrors: true })
    expect(pkg.error).toContain('the script could not be built: checks/shop.spec.ts: imports "left-pad", a package runtime 2025.04 does not provide')
    const file = await runScript(check(`import { test } from '@playwright/test'\nimport { x } from './gone'\ntest('x', async () => { x() })`), options())
    expect(file.error).toBe('the script could not be built: checks/shop.spec.ts: imports "./gone", which is not among the check\'s files (checks/shop.spec.ts)')
  })
})
