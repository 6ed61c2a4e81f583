/**
 * A Playwright check suite run by root runs as a user of its own (src/runner/script/contain.ts):
 * the server's files and processes are closed to it, everything it started is killed by its uid
 * when it ends, two runs at once get two users, and what it leaves is read back without
 * following its links. These tests need root (CI runs as root); elsewhere they are skipped,
 * saying so.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runPlaywrightSuite } from '../../../src/runner/script/index.js'
import { processesOf, reapUser } from '../../../src/runner/script/contain.js'
import { containment } from '../../../src/runner/script/jail.js'
import { DEFAULT_RUNTIME_ID } from '../../../src/schema/index.js'
import { startHttpServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { prepareTestRuntime } from '../../helpers/runtime.js'

const root = process.getuid?.() === 0
if (!root) console.warn('suite-user.test.ts: skipped, not root: a suite gets a user of its own only when the runner is root')

let cache: string
let work: string
let secret: string

beforeAll(async () => {
  if (!root) return
  cache = await prepareTestRuntime()
  work = mkdtempSync(join(tmpdir(), 'monitors-suite-user-'))
  // what a server's database looks like: root's own, mode 0600, in a folder others may pass
  chmodSync(work, 0o755)
  secret = join(work, 'server.db')
  writeFileSync(secret, 'SQLite format 3 secret-4711', { mode: 0o600 })
}, 180_000)

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

/** A one-project suite whose single test is `body` (`fs`, `spawn` and `test` in scope). */
const oneTest = (body: string, title = 't', fixtures = '{}') => ({
  name: 'contained',
  files: [
    {
      path: 'playwright.config.ts',
      content: "import { defineConfig } from '@playwright/test'\nexport default defineConfig({ testDir: './tests', timeout: 0 })\n",
    },
    {
      path: 'tests/t.spec.ts',
      content: `import { test } from '@playwright/test'\nimport * as fs from 'node:fs'\nimport { spawn } from 'node:child_process'\ntest(${JSON.stringify(title)}, async (${fixtures}, testInfo) => {\n${body}\n})\n`,
    },
  ],
})

/** Processes of this machine whose command line holds `marker`. */
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

describe.skipIf(!root)('a Playwright check suite run by root runs as a user of its own', () => {
  it("its test cannot read the server's database file nor the environment of the server's process (not in its sandbox; permission denied where it has none)", async () => {
    const body = `  const id = fs.readFileSync('/proc/self/status', 'utf8').split('\\n').filter((l) => /^(Uid|Gid|Groups|NoNewPrivs):/.test(l)).join(' | ')
  console.log('ids', id)
  let environ = 'read'
  try { fs.readFileSync('/proc/${process.pid}/environ') } catch (e) { environ = (e as Error).message }
  console.log('environ', environ)
  fs.readFileSync(${JSON.stringify(secret)}, 'utf8')`
    const result = await runPlaywrightSuite(oneTest(body, 'reads the database'), { runtimeCache: cache, workDir: work, timeoutMs: 120_000 })
    expect(result.status, result.error ?? '').toBe('FAILED')
    expect(result.hasErrors, result.error ?? '').toBe(false)
    // contained, neither is in the run's view (its own mount and PID namespaces); else the system refuses its user
    const refused = containment().available ? 'ENOENT: no such file or directory' : 'EACCES: permission denied'
    expect(result.error).toMatch(new RegExp(`reads the database: Error: ${refused}, open '.*server\\.db'`))
    expect(JSON.stringify(result)).not.toContain('secret-4711')
    expect(result.details.logs).toMatch(new RegExp(`environ ${refused}, open '/proc/\\d+/environ'`))
    const ids = /ids Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+) \| Gid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+) \| Groups:(.*)/.exec(result.details.logs)
    expect(ids, result.details.logs).not.toBeNull()
    // real, effective, saved and file-system uid and gid all the run's; no supplementary group (root's 0 least of all)
    expect(new Set(ids!.slice(1, 9)).size).toBe(1)
    expect(Number(ids![1])).toBeGreaterThanOrEqual(200000)
    expect(ids![9].replace(/\|.*/, '').trim()).toBe('')
    // started through setpriv (util-linux, in every Debian): a setuid program the run starts gains nothing
    expect(result.details.logs).toMatch(/NoNewPrivs:\s+1/)
  }, 180_000)

  it('a detached process that cleared its environment is killed when the run ends; files it left in /tmp are removed', async () => {
    const marker = `31${process.pid}`
    const left = join(tmpdir(), `monitors-left-${process.pid}`)
    const body = `  spawn('/bin/sh', ['-c', 'exec env -i /bin/sleep ${marker}'], { detached: true, stdio: 'ignore' }).unref()
  fs.writeFileSync(${JSON.stringify(left)}, 'left behind')
  await new Promise((r) => setTimeout(r, 1000))`
    const result = await runPlaywrightSuite(oneTest(body), { runtimeCache: cache, workDir: work, timeoutMs: 120_000 })
    expect(result.status, result.error ?? result.details.logs).toBe('PASSED')
    expect(processesWith(`sleep\0${marker}`)).toEqual([])
    expect(existsSync(left)).toBe(false)
  }, 180_000)

  it('two runs at once get two different users', async () => {
    const body = "  console.log('uid=' + process.getuid() + ';')\n  await new Promise((r) => setTimeout(r, 1500))"
    const [a, b] = await Promise.all([0, 1].map(() => runPlaywrightSuite(oneTest(body), { runtimeCache: cache, workDir: work, timeoutMs: 120_000 })))
    const uidOf = (logs: string) => Number(/uid=(\d+);/.exec(logs)?.[1])
    expect(a.status, a.error ?? '').toBe('PASSED')
    expect(b.status, b.error ?? '').toBe('PASSED')
    expect(uidOf(a.details.logs)).toBeGreaterThanOrEqual(200000)
    expect(uidOf(b.details.logs)).toBeGreaterThanOrEqual(200000)
    expect(uidOf(a.details.logs)).not.toBe(uidOf(b.details.logs))
  }, 180_000)

  it('a link the run left among its results to a file of the server is not kept as an artifact', async () => {
    const body = `  fs.mkdirSync(testInfo.outputDir, { recursive: true })
  fs.symlinkSync(${JSON.stringify(secret)}, testInfo.outputPath('leak.txt'))
  fs.writeFileSync(testInfo.outputPath('note.txt'), 'mine')
  await testInfo.attach('leak', { path: testInfo.outputPath('leak.txt') }).catch(() => undefined)`
    const result = await runPlaywrightSuite(oneTest(body), { runtimeCache: cache, workDir: work, timeoutMs: 120_000 })
    expect(result.status, result.error ?? '').toBe('PASSED')
    const dir = result.details.artifacts.dir as string
    expect(result.details.artifacts.files.map((f) => f.name)).toContainEqual(expect.stringMatching(/note\.txt$/))
    expect(result.details.artifacts.files.map((f) => f.name)).not.toContainEqual(expect.stringMatching(/leak\.txt$/))
    const texts = result.details.artifacts.files.map((f) => readFileSync(join(dir, f.name), 'latin1')).join('\n')
    expect(texts).not.toContain('secret-4711')
    rmSync(dir, { recursive: true, force: true })
  }, 180_000)

  it('a runtime cache other users cannot read fails the run with hasErrors naming the folder and what to do', async () => {
    const closed = join(work, 'closed')
    mkdirSync(closed, { mode: 0o700 })
    chmodSync(closed, 0o700)
    symlinkSync(join(cache, DEFAULT_RUNTIME_ID), join(closed, DEFAULT_RUNTIME_ID), 'dir')
    const result = await runPlaywrightSuite(oneTest('  console.log(1)'), { runtimeCache: closed, workDir: work, timeoutMs: 60_000 })
    expect(result).toMatchObject({ hasErrors: true, status: 'FAILED' })
    expect(result.error).toContain(`the runtime cache ${closed} cannot be read by the run's own user: ${closed} is closed to other users (mode 0700)`)
    expect(result.error).toContain('--runtime-cache or MONITORS_RUNTIME_CACHE')
  }, 60_000)

  it("Chromium runs as the run's user: a page opens, a file of the server's does not", async () => {
    const body = `  await page.setContent('<title>ok</title>')
  console.log('title=' + await page.title())
  const opened = await page.goto('file://${secret}').then(() => page.content(), (e) => 'refused ' + String(e.message).split('\\n')[0])
  console.log('file=' + opened)`
    const result = await runPlaywrightSuite(oneTest(body, 't', '{ page }'), { runtimeCache: cache, workDir: work, timeoutMs: 120_000 })
    expect(result.status, `${result.error}\n${result.details.logs}`).toBe('PASSED')
    expect(result.details.logs).toContain('title=ok')
    // its Chromium is the run's user's too: a file of the server's stays closed to it
    expect(result.details.logs).toMatch(
      containment().available ? /file=refused page\.goto: net::ERR_FILE_NOT_FOUND/ : /file=refused page\.goto: net::ERR_ACCESS_DENIED/,
    )
    expect(JSON.stringify(result)).not.toContain('secret-4711')
  }, 180_000)
})

describe.skipIf(!root)("a run's uid after the run", () => {
  it("is free once only a zombie of it is left (a dead process its parent, here a sleep of root's, never waits for): reaped at once, not after a wait", async () => {
    const uid = 200998
    // root's shell starts a process of the uid that exits at once, then becomes a sleep that never waits for it
    const parent = spawn('/bin/sh', ['-c', `/usr/bin/setpriv --reuid=${uid} --regid=${uid} --clear-groups /bin/true & exec /bin/sleep 5`], { stdio: 'ignore' })
    try {
      const zombie = async () => {
        for (let i = 0; i < 100; i++) {
          for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
            try {
              const status = readFileSync(`/proc/${name}/status`, 'utf8')
              if (/^State:\s+Z/m.test(status) && new RegExp(`^Uid:\\s+${uid}\\s`, 'm').test(status)) return Number(name)
            } catch {
              /* gone */
            }
          }
          await new Promise((r) => setTimeout(r, 20))
        }
        return null
      }
      expect(await zombie(), 'a zombie of the uid').not.toBeNull()
      expect(processesOf(uid)).toEqual([])
      const started = Date.now()
      expect(await reapUser(uid, 2_000)).toBe(0)
      expect(Date.now() - started).toBeLessThan(500)
    } finally {
      parent.kill('SIGKILL')
    }
  })
})

// the run's sandbox (jail.ts): bubblewrap, and a kernel that gives it the namespaces (not a container without them)
const namespaces = root && containment().available
if (root && !namespaces)
  console.warn(`suite-user.test.ts: the network-namespace tests are skipped: this machine gives runs no sandbox (${containment().problem})`)

describe.skipIf(!namespaces)('under the private-target policy deny, a network of its own', () => {
  let site: HttpServerHandle
  beforeAll(async () => {
    site = await startHttpServer()
    site.route('/page', { headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>inside</title><p id="p">internal page</p>' })
    site.route('/api', { body: { ok: true } })
    site.route('/node', { body: { ok: true } })
  })
  afterAll(async () => {
    await site?.close()
  })
  const body = `  const page1 = await page.goto(process.env.SITE + '/page').then((r) => String(r?.status()), (e) => 'failed')
  console.log('page=' + page1 + ' ' + (await page.locator('#p').textContent({ timeout: 1000 }).catch(() => 'none')))
  console.log('api=' + await request.get(process.env.SITE + '/api').then((r) => String(r.status()), () => 'failed'))
  console.log('node=' + await fetch(process.env.SITE + '/node').then((r) => String(r.status), (e) => 'failed ' + (e.cause?.code ?? e.message)))`
  const suite = () => ({ ...oneTest(body, 'inside', '{ page, request }'), environmentVariables: [{ key: 'SITE', value: site.origin }] })

  it("its browser, API requests and Node's own fetch go out through the egress proxy, which refuses loopback; the run fails with hasErrors", async () => {
    const result = await runPlaywrightSuite(suite(), { runtimeCache: cache, workDir: work, timeoutMs: 120_000, privateTargets: 'deny' })
    expect(result.hasErrors, `${result.error}\n${result.details.logs}`).toBe(true)
    expect(result.error).toContain(
      'the sandbox refused: 127.0.0.1 is a loopback address (127.0.0.0/8): refused by the private-target policy (--private-targets deny)',
    )
    expect(result.details.logs).toContain('page=403 none')
    expect(result.details.logs).toMatch(/api=(403|failed)/)
    // Node's HTTP clients in the run's processes go through the proxy too
    expect(result.details.logs).toMatch(/node=failed ERR_TARGET_REFUSED/)
    expect(site.requests).toEqual([])
  }, 180_000)

  it("an exception lets the browser, the API requests and Node's own fetch through the proxy", async () => {
    const result = await runPlaywrightSuite(suite(), {
      runtimeCache: cache,
      workDir: work,
      timeoutMs: 120_000,
      privateTargets: 'deny',
      allowedTargets: [`127.0.0.1:${site.port}`],
    })
    expect(result.status, `${result.error}\n${result.details.logs}`).toBe('PASSED')
    expect(result.details.logs).toContain('page=200 internal page')
    expect(result.details.logs).toContain('api=200')
    expect(result.details.logs).toContain('node=200')
    expect(site.requests.map((r) => r.path)).toEqual(expect.arrayContaining(['/api', '/page', '/node']))
  }, 180_000)
})

it.runIf(!root)('(skipped: the per-run user of Playwright check suites needs root)', () => {
  expect(root).toBe(false)
})
