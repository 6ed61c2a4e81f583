/**
 * The harness: runs INSIDE the sandboxed child process, bundled (by build.ts) together with the
 * check's script into one CommonJS file. It gives the script what `@playwright/test` gives a
 * test file (`test`, `test.step`, `test.describe`, hooks, `test.use`, `test.extend`, `expect`
 * and the `page` / `context` / `browser` / `request` fixtures), connected to the browser the
 * trusted parent launched, runs the tests one after the other and reports to the parent over
 * the IPC channel. It imports nothing but Node's built-ins: the runtime's packages come in
 * through `HarnessIO`, as absolute paths the bundle was built with.
 *
 * Nothing here is a security boundary: the child process is (Node's permission model, the
 * parent's limits and the parent's filtering proxy in front of the browser; see sandbox.ts).
 */
import type * as FS from 'node:fs'
import type * as OS from 'node:os'
import type * as PATH from 'node:path'
import { codeCacheDir, useCodeCache } from './code-cache.js'
import type { HarnessConfig, HarnessMessage, ScriptConsoleEntry, ScriptNetworkEntry, ScriptPage, ScriptStep, ScriptTest, WebVitals } from './protocol.js'

// biome-ignore lint/suspicious/noExplicitAny: the harness patches Playwright's and Node's objects in place, whose types it does not import
type Any = any

// CommonJS modules, patched below (the bundle is CommonJS; ES module namespaces are read-only)
const fs = require('node:fs') as typeof FS
const os = require('node:os') as typeof OS
const path = require('node:path') as typeof PATH

// --- the sandbox's prelude ------------------------------------------------------------------
// Node 20's permission model throws from fs.existsSync on a path it denies (later Node answers
// false): Playwright probes a few system paths as it loads (WSL markers), so a denied path is
// reported as absent. And os.tmpdir() points into the run's scratch folder (the cwd), the one
// place the script may write besides its artifacts.
{
  const existsSync = fs.existsSync
  ;(fs as Any).existsSync = (p: FS.PathLike): boolean => {
    try {
      return existsSync(p)
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_ACCESS_DENIED') return false
      throw error
    }
  }
  const scratch = process.cwd()
  ;(os as Any).tmpdir = () => scratch
}

export interface HarnessIO {
  /** `@playwright/test` of the runtime (its `expect`, `devices`, …). */
  loadTest(): Any
  /** `playwright-core` of the runtime (connect, request contexts). */
  loadCore(): Any
  /** Evaluates the check's script, which registers its tests. */
  loadScript(): unknown
  /** The runtime's code cache (code-cache.ts: read-only here) and the folder of the modules it holds. */
  codeCache?: { base: string; within: string }
}

// --- the test API -----------------------------------------------------------------------------

type FixtureFn = (fixtures: Record<string, unknown>, use: (value: unknown) => Promise<void>, info: TestInfo) => unknown
type Body = (fixtures: Record<string, Any>, info: TestInfo) => unknown

interface TestCase {
  kind: 'test'
  title: string
  body: Body | undefined
  suite: Suite
  only: boolean
  skip: string | false
  fail: boolean
  fixtures: Map<string, FixtureDef>
}
interface Suite {
  kind: 'suite'
  title: string
  parent: Suite | null
  entries: Array<TestCase | Suite>
  beforeAll: Body[]
  afterAll: Body[]
  beforeEach: Body[]
  afterEach: Body[]
  use: Record<string, unknown>
  only: boolean
  skip: string | false
  serial: boolean
}
interface FixtureDef {
  fn: FixtureFn | null
  value?: unknown
  scope: 'test' | 'worker'
}

class SkipSignal extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

function newSuite(title: string, parent: Suite | null): Suite {
  return {
    kind: 'suite',
    title,
    parent,
    entries: [],
    beforeAll: [],
    afterAll: [],
    beforeEach: [],
    afterEach: [],
    use: {},
    only: false,
    skip: false,
    serial: false,
  }
}

const root = newSuite('', null)
let current = root
let registering = true

interface TestInfo {
  title: string
  titlePath: string[]
  annotations: Array<{ type: string; description?: string }>
  errors: Array<{ message: string }>
  status: string
  timeout: number
  retry: number
  project: { name: string }
  outputDir: string
  attachments: Array<{ name: string; path?: string; contentType: string }>
  outputPath(...parts: string[]): string
  attach(name: string, options: { body?: string | Buffer; path?: string; contentType?: string }): Promise<void>
  setTimeout(ms: number): void
  slow(): void
  skip(condition?: unknown, reason?: string): void
  fixme(condition?: unknown, reason?: string): void
  fail(condition?: unknown, reason?: string): void
}

let currentInfo: TestInfo | null = null
let currentSteps: ScriptStep[] | null = null
let expectedToFail = false

function titlePath(suite: Suite): string[] {
  const out: string[] = []
  for (let s: Suite | null = suite; s; s = s.parent) if (s.title) out.unshift(s.title)
  return out
}

function skipArgs(args: unknown[]): { skip: boolean; reason: string } {
  if (args.length === 0) return { skip: true, reason: '' }
  if (typeof args[0] === 'string' && args.length >= 1 && typeof args[1] !== 'function') return { skip: true, reason: args[0] }
  return { skip: Boolean(args[0]), reason: typeof args[1] === 'string' ? args[1] : '' }
}

function register(title: string, a: unknown, b: unknown, flags: { only?: boolean; skip?: string; fail?: boolean; fixtures: Map<string, FixtureDef> }): void {
  if (!registering) throw new Error('test() can only be called while the script is loading, not inside a test')
  const body = (typeof a === 'function' ? a : b) as Body | undefined
  current.entries.push({
    kind: 'test',
    title,
    body,
    suite: current,
    only: !!flags.only,
    skip: flags.skip ?? false,
    fail: !!flags.fail,
    fixtures: flags.fixtures,
  })
}

function makeTest(fixtures: Map<string, FixtureDef>): Any {
  const test: Any = (title: string, a: unknown, b?: unknown) => register(title, a, b, { fixtures })
  test.only = (title: string, a: unknown, b?: unknown) => register(title, a, b, { only: true, fixtures })
  test.skip = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && (typeof args[1] === 'function' || typeof args[2] === 'function')) {
      register(args[0], args[1], args[2], { skip: 'skipped', fixtures })
      return
    }
    if (registering && !currentInfo) {
      const { skip, reason } = skipArgs(args)
      if (skip) current.skip = reason || 'skipped'
      return
    }
    const { skip, reason } = skipArgs(args)
    if (skip) throw new SkipSignal(reason)
  }
  test.fixme = test.skip
  test.fail = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && (typeof args[1] === 'function' || typeof args[2] === 'function')) {
      register(args[0], args[1], args[2], { fail: true, fixtures })
      return
    }
    if (skipArgs(args).skip) expectedToFail = true
  }
  test.slow = () => undefined
  test.setTimeout = (ms: number) => {
    if (currentInfo) currentInfo.timeout = ms
  }
  test.info = () => {
    if (!currentInfo) throw new Error('test.info() can only be called while a test is running')
    return currentInfo
  }
  const describe: Any = (title: string | (() => void), fn?: () => void, flags: Partial<Suite> = {}) => {
    const body = (typeof title === 'function' ? title : fn) as () => void
    const suite = newSuite(typeof title === 'string' ? title : '', current)
    Object.assign(suite, flags)
    current.entries.push(suite)
    const parent = current
    current = suite
    try {
      body()
    } finally {
      current = parent
    }
  }
  describe.only = (t: Any, f?: Any) => describe(t, f, { only: true })
  describe.skip = (t: Any, f?: Any) => describe(t, f, { skip: 'skipped' })
  describe.fixme = describe.skip
  describe.serial = (t: Any, f?: Any) => describe(t, f, { serial: true })
  describe.serial.only = (t: Any, f?: Any) => describe(t, f, { serial: true, only: true })
  describe.parallel = (t: Any, f?: Any) => describe(t, f)
  describe.parallel.only = describe.only
  describe.configure = (options: { mode?: string } = {}) => {
    if (options.mode === 'serial') current.serial = true
  }
  test.describe = describe
  test.beforeAll = (a: unknown, b?: unknown) => void current.beforeAll.push((typeof a === 'function' ? a : b) as Body)
  test.afterAll = (a: unknown, b?: unknown) => void current.afterAll.push((typeof a === 'function' ? a : b) as Body)
  test.beforeEach = (a: unknown, b?: unknown) => void current.beforeEach.push((typeof a === 'function' ? a : b) as Body)
  test.afterEach = (a: unknown, b?: unknown) => void current.afterEach.push((typeof a === 'function' ? a : b) as Body)
  test.use = (options: Record<string, unknown>) => void Object.assign(current.use, options)
  test.step = step
  test.step.skip = async (title: string) => {
    currentSteps?.push({ title, status: 'skipped', duration: 0, error: null, steps: [] })
  }
  test.extend = (defs: Record<string, unknown>) => {
    const next = new Map(fixtures)
    for (const [name, def] of Object.entries(defs)) {
      if (Array.isArray(def)) {
        const [v, opts] = def as [unknown, { scope?: string; option?: boolean }]
        next.set(
          name,
          typeof v === 'function' ? { fn: v as FixtureFn, scope: opts?.scope === 'worker' ? 'worker' : 'test' } : { fn: null, value: v, scope: 'test' },
        )
      } else {
        next.set(name, typeof def === 'function' ? { fn: def as FixtureFn, scope: 'test' } : { fn: null, value: def, scope: 'test' })
      }
    }
    return makeTest(next)
  }
  Object.defineProperty(test, 'expect', { get: () => api.expect })
  return test
}

async function step<T>(title: string, body: () => T | Promise<T>, options: { box?: boolean; timeout?: number } = {}): Promise<T> {
  const record: ScriptStep = { title, status: 'passed', duration: 0, error: null, steps: [] }
  const parent = currentSteps
  parent?.push(record)
  const started = performance.now()
  const tracings = activeTracings()
  for (const t of tracings) await t.group?.(title).catch(() => undefined)
  currentSteps = record.steps
  try {
    const run = Promise.resolve().then(body)
    return options.timeout ? await withTimeout(run, options.timeout, `step "${title}" timed out after ${options.timeout} ms`) : await run
  } catch (error) {
    record.status = 'failed'
    record.error = errorText(error)
    throw error
  } finally {
    currentSteps = parent
    record.duration = Math.round(performance.now() - started)
    for (const t of tracings) await t.groupEnd?.().catch(() => undefined)
  }
}

/** What the script's `import … from '@playwright/test'` resolves to. */
export const api: Any = { test: makeTest(new Map()) }
api.default = api.test

// --- running ---------------------------------------------------------------------------------

let config: HarnessConfig
let core: Any
let browserPromise: Promise<Any> | null = null
const tracingsInUse = new Set<Any>()
const consoleEntries: ScriptConsoleEntry[] = []
const networkEntries: ScriptNetworkEntry[] = []
const pages: ScriptPage[] = []
const counts = { consoleErrors: 0, networkErrors: 0, userScriptErrors: 0, documentErrors: 0 }
const dropped = { console: 0, network: 0 }
const runStart = performance.now()
/** when the run's budget ends, on this process's timer (set when the config arrives) */
let deadline = Infinity

function send(message: HarnessMessage): void {
  process.send?.(message)
}

function activeTracings(): Any[] {
  return [...tracingsInUse]
}

function errorText(error: unknown): { message: string; stack?: string } {
  if (error instanceof Error) return { message: stripAnsi(error.message), stack: error.stack ? stripAnsi(error.stack) : undefined }
  return { message: String(error) }
}

function stripAnsi(text: string): string {
  return text.replace(/\u001b\[[0-9;]*m/g, '')
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise,
    new Promise<never>((_r, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(message), { name: 'TimeoutError', harnessTimeout: true })), Math.max(0, ms))
    }),
  ]).finally(() => clearTimeout(timer))
}

/** The access the sandbox refused, when `error` is Node's permission error. */
function violation(error: unknown): { permission: string; resource: string } | null {
  const e = error as { code?: string; permission?: string; resource?: string; message?: string }
  if (e && e.code === 'ERR_ACCESS_DENIED') return { permission: e.permission ?? 'unknown', resource: e.resource ?? '' }
  if (e && e.code === 'ERR_DLOPEN_DISABLED') return { permission: 'Addons', resource: '' }
  return null
}

function reportViolation(error: unknown): void {
  const v = violation(error)
  if (v) send({ t: 'violation', permission: v.permission, resource: v.resource })
}

async function browser(): Promise<Any> {
  if (config.checkType === 'MULTI_STEP') {
    throw new Error('a multi-step check has no browser: use the request fixture (or write a browser check to drive a page)')
  }
  if (!config.wsEndpoint) throw new Error('no browser was started for this run')
  browserPromise ??= core.chromium.connect(config.wsEndpoint, { timeout: 30_000 })
  return browserPromise
}

const VITALS_SCRIPT = `(() => {
  if (window.__monitorsVitals) return;
  const v = window.__monitorsVitals = { fcp: null, lcp: null, cls: 0, tasks: [] };
  const observe = (type, fn) => { try { new PerformanceObserver((l) => l.getEntries().forEach(fn)).observe({ type, buffered: true }) } catch (e) {} };
  observe('paint', (e) => { if (e.name === 'first-contentful-paint') v.fcp = e.startTime });
  observe('largest-contentful-paint', (e) => { v.lcp = e.renderTime || e.loadTime || e.startTime });
  observe('layout-shift', (e) => { if (!e.hadRecentInput) v.cls += e.value });
  observe('longtask', (e) => { v.tasks.push([e.startTime, e.duration]) });
})()`

async function readVitals(page: Any): Promise<WebVitals | null> {
  try {
    return await withTimeout(
      page.evaluate(() => {
        const w = globalThis as Any
        const v = w.__monitorsVitals
        if (!v) return null
        const nav = w.performance.getEntriesByType('navigation')[0]
        const fcp = v.fcp
        const tbt = (v.tasks as Array<[number, number]>).filter(([start]) => fcp === null || start >= fcp).reduce((sum, [, d]) => sum + Math.max(0, d - 50), 0)
        return { FCP: fcp, LCP: v.lcp, CLS: v.cls, TBT: tbt, TTFB: nav && nav.responseStart > 0 ? nav.responseStart : null }
      }),
      2000,
      'vitals timed out',
    )
  } catch {
    return null
  }
}

function round(v: number | null, digits = 0): number | null {
  if (v === null || !Number.isFinite(v)) return null
  const f = 10 ** digits
  return Math.round(v * f) / f
}

function since(): number {
  return performance.now() - runStart
}

function addConsole(entry: ScriptConsoleEntry): void {
  if (consoleEntries.length >= config.maxConsoleEntries) dropped.console += 1
  else consoleEntries.push(entry)
}
function addNetwork(entry: ScriptNetworkEntry): void {
  if (networkEntries.length >= config.maxNetworkEntries) dropped.network += 1
  else networkEntries.push(entry)
}

function watchPage(page: Any, testIndex: number): ScriptPage {
  const record: ScriptPage = { index: pages.length, testIndex, url: page.url(), webVitals: null }
  pages.push(record)
  const started = new Map<Any, number>()
  page.on('framenavigated', (frame: Any) => {
    if (frame === page.mainFrame()) record.url = frame.url()
  })
  page.on('console', (m: Any) => {
    const type = m.type()
    const loc = m.location?.() ?? {}
    // the browser's own request for /favicon.ico is not the page's: headless Chromium logs its
    // 404 as an error a browser's console never shows; listed, not counted (docs/scripts.md)
    const favicon = /^Failed to load resource/.test(String(m.text())) && /\/favicon\.ico$/.test(String(loc.url ?? ''))
    if (type === 'error' && !favicon) counts.consoleErrors += 1
    addConsole({
      time: since(),
      page: record.index,
      type,
      text: String(m.text()).slice(0, 4000),
      location: loc.url ? `${loc.url}:${loc.lineNumber ?? 0}` : null,
    })
  })
  page.on('pageerror', (error: Any) => {
    counts.documentErrors += 1
    addConsole({ time: since(), page: record.index, type: 'pageerror', text: String(error?.message ?? error).slice(0, 4000), location: null })
  })
  page.on('request', (r: Any) => started.set(r, performance.now()))
  const done = async (r: Any, failure: string | null) => {
    const start = started.get(r) ?? performance.now()
    started.delete(r)
    let status: number | null = null
    try {
      status = failure ? null : ((await r.response())?.status() ?? null)
    } catch {
      status = null
    }
    if (failure || (status !== null && status >= 400)) counts.networkErrors += 1
    addNetwork({
      time: start - runStart,
      page: record.index,
      method: r.method(),
      url: r.url(),
      resourceType: r.resourceType(),
      status,
      failure,
      duration: performance.now() - start,
    })
  }
  page.on('requestfinished', (r: Any) => void done(r, null))
  page.on('requestfailed', (r: Any) => void done(r, r.failure()?.errorText ?? 'failed'))
  return record
}

function instrumentRequest(request: Any): void {
  // get(), post() and the others call fetch(): each request is seen once, there
  for (const method of ['fetch']) {
    const original = request[method]
    if (typeof original !== 'function') continue
    request[method] = async function (this: Any, url: Any, options: Any) {
      const start = performance.now()
      const verb = method === 'fetch' ? (options?.method ?? (typeof url === 'object' && url?.method?.()) ?? 'GET') : method.toUpperCase()
      const target = typeof url === 'string' ? url : (url?.url?.() ?? String(url))
      try {
        const response = await original.call(this, url, options)
        const status = response.status()
        if (status >= 400) counts.networkErrors += 1
        addNetwork({
          time: start - runStart,
          page: null,
          method: String(verb).toUpperCase(),
          url: response.url?.() ?? target,
          resourceType: 'fetch',
          status,
          failure: null,
          duration: performance.now() - start,
        })
        return response
      } catch (error) {
        counts.networkErrors += 1
        addNetwork({
          time: start - runStart,
          page: null,
          method: String(verb).toUpperCase(),
          url: target,
          resourceType: 'fetch',
          status: null,
          failure: errorText(error).message.split('\n')[0],
          duration: performance.now() - start,
        })
        throw error
      }
    }
  }
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 60) || 'test'
  )
}

/** Parameter names a fixture function or test body destructures from its first argument. */
export function fixtureNames(fn: unknown): string[] {
  if (typeof fn !== 'function') return []
  const src = Function.prototype.toString.call(fn)
  const open = src.indexOf('(')
  const arrow = src.indexOf('=>')
  let i = open
  if (open < 0 || (arrow >= 0 && arrow < open)) return []
  i += 1
  while (i < src.length && /\s/.test(src[i])) i++
  if (src[i] !== '{') return []
  let depth = 0
  let start = i + 1
  const names: string[] = []
  const push = (part: string) => {
    const name = part.trim().split(/[:=]/)[0].trim()
    if (name && !name.startsWith('...')) names.push(name)
  }
  for (; i < src.length; i++) {
    const c = src[i]
    if (c === '{' || c === '[' || c === '(') depth++
    else if (c === '}' || c === ']' || c === ')') {
      depth--
      if (depth === 0) {
        push(src.slice(start, i))
        break
      }
    } else if (c === ',' && depth === 1) {
      push(src.slice(start, i))
      start = i + 1
    }
  }
  return names
}

interface TestState {
  index: number
  test: TestCase
  info: TestInfo
  failed: boolean
  contexts: Any[]
  requests: Any[]
  record: ScriptTest
}

function contextOptions(test: TestCase | null, suite: Suite): Record<string, unknown> {
  const chain: Suite[] = []
  for (let s: Suite | null = test ? test.suite : suite; s; s = s.parent) chain.unshift(s)
  const merged: Record<string, unknown> = {}
  for (const s of chain) Object.assign(merged, s.use)
  return merged
}

const CONTEXT_KEYS = [
  'acceptDownloads',
  'baseURL',
  'bypassCSP',
  'colorScheme',
  'deviceScaleFactor',
  'extraHTTPHeaders',
  'geolocation',
  'hasTouch',
  'httpCredentials',
  'ignoreHTTPSErrors',
  'isMobile',
  'javaScriptEnabled',
  'locale',
  'offline',
  'permissions',
  'proxy',
  'reducedMotion',
  'screen',
  'serviceWorkers',
  'storageState',
  'timezoneId',
  'userAgent',
  'viewport',
]

function pick(options: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(options).filter(([k]) => keys.includes(k)))
}

function builtinFixtures(state: TestState | null, suite: Suite): Map<string, FixtureDef> {
  const use = contextOptions(state?.test ?? null, suite)
  const tracing = async (owner: Any) => {
    const t = owner.tracing
    if (!t || config.tracing === 'off') return
    try {
      await t.start({ screenshots: true, snapshots: true, sources: false, title: state?.record.title })
      tracingsInUse.add(t)
    } catch {
      /* tracing is best effort: a run without a trace is still a run */
    }
  }
  const defs: Array<[string, FixtureDef]> = [
    ['browserName', { fn: null, value: 'chromium', scope: 'worker' }],
    ['playwright', { fn: null, value: core, scope: 'worker' }],
    ['baseURL', { fn: null, value: use.baseURL, scope: 'test' }],
    ['browser', { fn: async (_f, useIt) => useIt(await browser()), scope: 'worker' }],
    [
      'context',
      {
        scope: 'test',
        fn: async (_f, useIt) => {
          const b = await browser()
          const context = await b.newContext({ ...pick(use, CONTEXT_KEYS), ...((use.contextOptions as object) ?? {}) })
          await context.addInitScript(VITALS_SCRIPT).catch(() => undefined)
          for (const p of context.pages()) watchPage(p, state?.index ?? -1)
          context.on('page', (p: Any) => watchPage(p, state?.index ?? -1))
          if (use.actionTimeout) context.setDefaultTimeout(use.actionTimeout)
          if (use.navigationTimeout) context.setDefaultNavigationTimeout(use.navigationTimeout)
          await tracing(context)
          state?.contexts.push(context)
          await useIt(context)
        },
      },
    ],
    ['page', { scope: 'test', fn: async ({ context }, useIt) => useIt(await (context as Any).newPage()) }],
    [
      'request',
      {
        scope: 'test',
        fn: async (_f, useIt) => {
          const request = await core.request.newContext(
            pick(use, ['baseURL', 'extraHTTPHeaders', 'httpCredentials', 'ignoreHTTPSErrors', 'proxy', 'storageState', 'userAgent']),
          )
          instrumentRequest(request)
          await tracing(request)
          state?.requests.push(request)
          await useIt(request)
        },
      },
    ],
  ]
  return new Map(defs)
}

/** Sets up the fixtures `names` need, runs `body` with them, tears them down in reverse. */
async function withFixtures(
  names: string[],
  defs: Map<string, FixtureDef>,
  info: TestInfo,
  body: (values: Record<string, unknown>) => Promise<void>,
  teardownFirst?: () => Promise<void>,
): Promise<void> {
  const values: Record<string, unknown> = {}
  const teardowns: Array<() => Promise<void>> = []
  const setting = new Set<string>()
  const setup = async (name: string): Promise<void> => {
    if (name in values) return
    const def = defs.get(name)
    if (!def) {
      if (name === 'testInfo') return
      throw new Error(
        `unknown fixture "${name}": the harness provides page, context, browser, request, browserName, baseURL, playwright and those given to test.extend()`,
      )
    }
    if (setting.has(name)) throw new Error(`fixture "${name}" depends on itself`)
    setting.add(name)
    if (!def.fn) {
      values[name] = def.value
      return
    }
    const deps: Record<string, unknown> = {}
    for (const dep of fixtureNames(def.fn)) {
      await setup(dep)
      deps[dep] = values[dep]
    }
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    let provided!: (v: unknown) => void
    const value = new Promise<unknown>((r) => (provided = r))
    const running = Promise.resolve(
      def.fn(
        deps,
        async (v) => {
          provided(v)
          await released
        },
        info,
      ),
    )
    const result = await Promise.race([
      value.then((v) => ({ v })),
      running.then(() => {
        throw new Error(`fixture "${name}" returned without calling use()`)
      }),
    ])
    values[name] = result.v
    teardowns.push(async () => {
      release()
      await running
    })
  }
  try {
    for (const name of names) await setup(name)
    await body(values)
  } finally {
    if (teardownFirst) await teardownFirst().catch(() => undefined)
    let firstError: unknown = null
    for (const t of teardowns.reverse()) {
      try {
        await t()
      } catch (error) {
        firstError ??= error
      }
    }
    // a teardown's error is the fixture's error, as in Playwright: it wins over the body's
    // biome-ignore lint/correctness/noUnsafeFinally: on purpose, see above
    if (firstError) throw firstError
  }
}

function isAssertion(error: unknown): boolean {
  const e = error as { matcherResult?: unknown; name?: string; message?: string }
  return !!e && (e.matcherResult !== undefined || /^expect(\.\w+)?\(/.test(stripAnsi(e.message ?? '')) || e.name === 'AssertionError')
}

function makeInfo(test: TestCase | null, title: string, index: number): TestInfo {
  const outDir = path.join(process.cwd(), 'test-output', String(index))
  const info: TestInfo = {
    title,
    titlePath: test ? [...titlePath(test.suite), test.title] : [title],
    annotations: [],
    errors: [],
    status: 'passed',
    timeout: config.testTimeoutMs,
    retry: 0,
    project: { name: 'chromium' },
    outputDir: outDir,
    attachments: [],
    outputPath: (...parts: string[]) => {
      fs.mkdirSync(outDir, { recursive: true })
      return path.join(outDir, ...parts)
    },
    attach: async (name, options) => {
      const dir = path.join(config.artifactsDir, 'attachments')
      fs.mkdirSync(dir, { recursive: true })
      const file = path.join(
        dir,
        `${index}-${slug(name)}${path.extname(options.path ?? '') || (options.contentType?.includes('json') ? '.json' : options.contentType?.startsWith('image/png') ? '.png' : '.txt')}`,
      )
      if (options.path) fs.copyFileSync(options.path, file)
      else fs.writeFileSync(file, options.body ?? '')
      info.attachments.push({ name, path: file, contentType: options.contentType ?? 'application/octet-stream' })
    },
    setTimeout: (ms) => {
      info.timeout = ms
    },
    slow: () => undefined,
    skip: (...args: unknown[]) => api.test.skip(...args),
    fixme: (...args: unknown[]) => api.test.skip(...args),
    fail: (...args: unknown[]) => api.test.fail(...args),
  }
  return info
}

async function saveArtifacts(state: TestState): Promise<void> {
  const base = `${state.index + 1}-${slug(state.record.title)}`
  const keepTrace = config.tracing === 'on' || (config.tracing === 'retain-on-failure' && state.failed)
  let shot = 0
  for (const context of state.contexts) {
    for (const page of context.pages()) {
      const record = pages.find((p) => p.testIndex === state.index && p.url === page.url() && p.webVitals === null)
      const vitals = await readVitals(page)
      if (record && vitals)
        record.webVitals = { FCP: round(vitals.FCP), LCP: round(vitals.LCP), CLS: round(vitals.CLS, 4), TBT: round(vitals.TBT), TTFB: round(vitals.TTFB) }
      if (state.failed) {
        shot += 1
        const file = path.join(config.artifactsDir, 'screenshots', `${base}-failure${shot > 1 ? `-${shot}` : ''}.png`)
        await withTimeout(page.screenshot({ path: file, timeout: 5000 }), 6000, 'screenshot timed out').catch(() => undefined)
      }
    }
  }
  const stop = async (owner: Any, suffix: string) => {
    const t = owner.tracing
    if (!t || !tracingsInUse.has(t)) return
    tracingsInUse.delete(t)
    const file = path.join(config.artifactsDir, 'traces', `${base}${suffix}.zip`)
    await withTimeout(keepTrace ? t.stop({ path: file }) : t.stop(), 15_000, 'trace timed out').catch(() => undefined)
  }
  for (const [i, context] of state.contexts.entries()) await stop(context, i === 0 ? '' : `-${i + 1}`)
  for (const [i, request] of state.requests.entries()) await stop(request, i === 0 ? '-api' : `-api-${i + 1}`)
}

function remaining(): number {
  return deadline - performance.now()
}

async function runTest(test: TestCase, index: number, serialFailed: boolean): Promise<ScriptTest> {
  const title = test.title
  const record: ScriptTest = { title, titlePath: [...titlePath(test.suite), title], status: 'passed', duration: 0, error: null, steps: [] }
  const skipReason = test.skip || suiteSkip(test.suite) || (serialFailed ? 'a previous test of its serial group failed' : false)
  if (skipReason || !test.body) {
    record.status = 'skipped'
    return record
  }
  const info = makeInfo(test, title, index)
  const state: TestState = { index, test, info, failed: false, contexts: [], requests: [], record }
  const defs = new Map([...builtinFixtures(state, test.suite), ...test.fixtures])
  const chain: Suite[] = []
  for (let s: Suite | null = test.suite; s; s = s.parent) chain.unshift(s)
  const beforeEach = chain.flatMap((s) => s.beforeEach)
  const afterEach = chain.reverse().flatMap((s) => s.afterEach)
  const needed = new Set<string>()
  for (const fn of [...beforeEach, test.body, ...afterEach]) for (const n of fixtureNames(fn)) needed.add(n)
  currentInfo = info
  currentSteps = record.steps
  expectedToFail = test.fail
  const started = performance.now()
  send({ t: 'test-begin', index, title })
  let error: unknown = null
  try {
    const limit = Math.min(info.timeout > 0 ? info.timeout : Infinity, remaining())
    await withTimeout(
      withFixtures(
        [...needed],
        defs,
        info,
        async (values) => {
          let bodyError: unknown = null
          try {
            for (const hook of beforeEach) await hook(values, info)
            await test.body!(values, info)
          } catch (e) {
            bodyError = e
          }
          for (const hook of afterEach) {
            try {
              await hook(values, info)
            } catch (e) {
              bodyError ??= e
            }
          }
          if (bodyError && !(bodyError instanceof SkipSignal)) state.failed = !expectedToFail
          if (bodyError) throw bodyError
        },
        async () => {
          // before the fixtures close: failure screenshots, traces, web vitals
          state.failed ||= info.errors.length > 0
          await saveArtifacts(state)
        },
      ),
      Number.isFinite(limit) ? limit : 2 ** 31 - 1,
      `test "${title}" timed out after ${Math.round(Number.isFinite(limit) ? limit : 0)} ms`,
    )
  } catch (e) {
    error = e
  }
  if (error && (error as { harnessTimeout?: boolean }).harnessTimeout && !state.failed) {
    // the test itself hangs: its fixtures are still open; keep what can be kept
    state.failed = true
    await withTimeout(saveArtifacts(state), 20_000, 'artifacts timed out').catch(() => undefined)
  }
  record.duration = Math.round(performance.now() - started)
  currentInfo = null
  currentSteps = null
  if (error instanceof SkipSignal) {
    record.status = 'skipped'
  } else if (error) {
    reportViolation(error)
    const timedOut = (error as { harnessTimeout?: boolean }).harnessTimeout === true
    record.status = timedOut ? 'timedOut' : 'failed'
    record.error = { ...errorText(error), kind: timedOut ? 'timeout' : isAssertion(error) ? 'assertion' : 'error' }
    if (!isAssertion(error)) counts.userScriptErrors += 1
    if (expectedToFail && !timedOut) {
      record.status = 'passed'
      record.error = null
    }
  } else if (expectedToFail) {
    record.status = 'failed'
    record.error = { message: `test "${title}" is marked test.fail() but passed`, kind: 'assertion' }
  }
  return record
}

function suiteSkip(suite: Suite): string | false {
  for (let s: Suite | null = suite; s; s = s.parent) if (s.skip) return s.skip
  return false
}

function hasOnly(suite: Suite): boolean {
  return suite.only || suite.entries.some((e) => (e.kind === 'test' ? e.only : hasOnly(e)))
}

function filterOnly(suite: Suite, inOnly: boolean): void {
  suite.entries = suite.entries.filter((e) => {
    if (e.kind === 'test') return inOnly || e.only
    if (inOnly || e.only || hasOnly(e)) {
      filterOnly(e, inOnly || e.only)
      return true
    }
    return false
  })
}

async function runHooks(hooks: Body[], suite: Suite, label: string, results: ScriptTest[]): Promise<boolean> {
  for (const hook of hooks) {
    const info = makeInfo(null, label, results.length)
    const defs = builtinFixtures(null, suite)
    defs.delete('page')
    defs.delete('context')
    const record: ScriptTest = { title: label, titlePath: [...titlePath(suite), label], status: 'passed', duration: 0, error: null, steps: [] }
    currentInfo = info
    currentSteps = record.steps
    const started = performance.now()
    try {
      await withTimeout(
        withFixtures(fixtureNames(hook), defs, info, async (values) => void (await hook(values, info))),
        Math.max(0, remaining()),
        `${label} timed out`,
      )
    } catch (error) {
      reportViolation(error)
      record.status = 'failed'
      record.error = { ...errorText(error), kind: isAssertion(error) ? 'assertion' : 'error' }
      counts.userScriptErrors += isAssertion(error) ? 0 : 1
      record.duration = Math.round(performance.now() - started)
      results.push(record)
      send({ t: 'test-end', test: record })
      return false
    } finally {
      currentInfo = null
      currentSteps = null
    }
  }
  return true
}

async function runSuite(suite: Suite, results: ScriptTest[]): Promise<void> {
  const tests = () => suite.entries.some((e) => e.kind === 'test' || (e.kind === 'suite' && e.entries.length > 0))
  if (!tests()) return
  const skipped = suiteSkip(suite)
  const ok = skipped ? true : await runHooks(suite.beforeAll, suite, 'beforeAll hook', results)
  let serialFailed = !ok
  for (const entry of suite.entries) {
    if (entry.kind === 'suite') {
      await runSuite(entry, results)
      continue
    }
    if (remaining() <= 0) {
      results.push({ title: entry.title, titlePath: [...titlePath(suite), entry.title], status: 'skipped', duration: 0, error: null, steps: [] })
      continue
    }
    const record = await runTest(entry, results.length, serialFailed || !ok)
    results.push(record)
    send({ t: 'test-end', test: record })
    if ((suite.serial || !ok) && (record.status === 'failed' || record.status === 'timedOut')) serialFailed = true
  }
  if (!skipped) await runHooks(suite.afterAll, suite, 'afterAll hook', results)
}

/** The runtime's Playwright, loaded (or why it could not be). */
type Loaded = { core: Any; real: Any } | { error: string }

function loadPlaywright(io: HarnessIO): Loaded {
  try {
    return { core: io.loadCore(), real: io.loadTest() }
  } catch (error) {
    return { error: errorText(error).message }
  }
}

/**
 * Entry point, called by the bundle once it is loaded. The runtime's Playwright is loaded at
 * once, while the runner may still be starting the browser; the config (the browser's
 * endpoint among it) comes once it is up, and the run starts then.
 */
export function main(io: HarnessIO): void {
  let loaded: Loaded | null = null
  process.once('message', (message: HarnessConfig) => {
    config = message
    deadline = performance.now() + message.budgetMs
    void run(io, loaded ?? loadPlaywright(io))
  })
  if (io.codeCache) useCodeCache(codeCacheDir(io.codeCache.base), io.codeCache.within)
  loaded = loadPlaywright(io)
}

async function run(io: HarnessIO, loaded: Loaded): Promise<void> {
  const results: ScriptTest[] = []
  let loadError: { message: string; stack?: string } | null = null
  process.on('uncaughtException', (error) => {
    counts.userScriptErrors += 1
    reportViolation(error)
    addConsole({ time: since(), page: null, type: 'uncaught', text: errorText(error).message.slice(0, 4000), location: null })
  })
  process.on('unhandledRejection', (error) => {
    counts.userScriptErrors += 1
    reportViolation(error)
    addConsole({ time: since(), page: null, type: 'unhandledrejection', text: errorText(error).message.slice(0, 4000), location: null })
  })
  let playwrightVersion: string | null = null
  try {
    if ('error' in loaded) throw new Error(loaded.error)
    core = loaded.core
    // contained, the script's API requests (the request fixture, playwright.request) go out through the egress proxy
    const proxy = config.requestProxy
    if (proxy) {
      const newContext = core.request.newContext.bind(core.request)
      core.request.newContext = (options: Record<string, unknown> = {}) => newContext({ ...options, proxy: { server: proxy } })
    }
    const real = loaded.real
    for (const [k, v] of Object.entries(real)) if (k !== 'test' && k !== 'default' && !(k in api)) api[k] = v
    api.expect = real.expect
    try {
      playwrightVersion = (core as Any)._version ?? null
    } catch {
      playwrightVersion = null
    }
  } catch (error) {
    send({ t: 'fatal', message: `the runtime's Playwright could not be loaded: ${errorText(error).message}` })
    process.exit(70)
  }
  try {
    io.loadScript()
  } catch (error) {
    reportViolation(error)
    counts.userScriptErrors += 1
    loadError = errorText(error)
  }
  registering = false
  if (!loadError) {
    if (hasOnly(root)) filterOnly(root, false)
    const count = (s: Suite): number => s.entries.reduce((n, e) => n + (e.kind === 'test' ? 1 : count(e)), 0)
    if (count(root) === 0) loadError = { message: 'the script registered no test: write it with test() from @playwright/test' }
    else await runSuite(root, results)
  }
  const browserInstance = browserPromise ? await browserPromise.catch(() => null) : null
  await browserInstance?.close().catch(() => undefined)
  send({
    t: 'result',
    loadError,
    tests: results,
    pages,
    console: consoleEntries,
    network: networkEntries,
    counts,
    dropped,
    playwrightVersion,
  })
  // a script may leave handles open (timers, sockets): the run is over once it has reported
  setTimeout(() => process.exit(0), 50).unref()
  process.disconnect?.()
}
