#!/usr/bin/env node
// Browser check runs one machine sustains: N browser scripts (default 24), C at a time
// (default 2), each the whole engine's run (runtime check, bundle, Chromium launched behind
// the proxy, the sandboxed child, a page opened and asserted on, the trace stopped, the
// artifacts kept), against a small site served by this process on 127.0.0.1.
// Prints one `name: value` line per figure; notes go to stderr:
//   runs: completed runs, and how many passed
//   runs/minute: completed runs per minute of wall time
//   run seconds p50 / p95: one run's duration
//   memory per concurrent browser (peak): the largest memory (PSS) one run's browser used,
//     and the largest its sandboxed script process used, as the watchdog saw them
//   memory per run (peak): the two together
// Flags: --runs N, --concurrency C, --tracing on|retain-on-failure|off (default
// retain-on-failure, what a scheduled run does), --cache DIR (a prepared runtime cache;
// default test-results/runtimes, prepared offline from package-lock.json when missing),
// --deny (the runs under the private-target policy deny, the site an allowed target: the
// script's process loads the network guard and Chromium goes out through the egress proxy).
// --paired: the cost of the containment (src/runner/script/jail.ts): browser and multi-step
// runs, batches of --runs each (default 8), contained and not (MONITORS_CONTAINMENT=off) in
// turn, --rounds times (default 2, the order alternating: ABBA); prints runs/minute of each
// kind both ways, their ratio, and the load average (/proc/loadavg) as it began and ended.
// Needs dist/ (npm run build) and Chromium (/usr/bin/chromium or $CHROMIUM_PATH).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const entry = join(root, 'dist', 'src', 'runner', 'script', 'index.js')
if (!existsSync(entry)) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '24' },
    concurrency: { type: 'string', default: '2' },
    tracing: { type: 'string', default: 'retain-on-failure' },
    cache: { type: 'string', default: join(root, 'test-results', 'runtimes') },
    deny: { type: 'boolean', default: false },
    paired: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '2' },
  },
})
const runs = Number(values.paired && process.argv.every((a) => !a.startsWith('--runs')) ? 8 : values.runs)
const concurrency = Number(values.concurrency)
const { prepareRuntime, runScript } = await import(pathToFileURL(entry).href)
const { DEFAULT_RUNTIME_ID } = await import(pathToFileURL(join(root, 'dist', 'src', 'schema', 'index.js')).href)

console.error(`preparing runtime ${DEFAULT_RUNTIME_ID} in ${values.cache} (offline, from package-lock.json)`)
await prepareRuntime(DEFAULT_RUNTIME_ID, { cacheDir: values.cache, offline: true, fromLock: join(root, 'package-lock.json') })

const PAGE = `<!doctype html><html><head><title>Shop</title><style>body{font:16px sans-serif}</style></head>
<body><header><h1>Shop</h1></header><main><ul>${Array.from({ length: 40 }, (_, i) => `<li>item ${i}</li>`).join('')}</ul>
<button id="buy">Buy</button><p id="out"></p></main>
<script>document.getElementById('buy').onclick = () => { document.getElementById('out').textContent = 'bought' }</script></body></html>`
const site = createServer((_req, res) => {
  res.setHeader('content-type', 'text/html')
  res.end(PAGE)
})
await new Promise((r) => site.listen(0, '127.0.0.1', r))
const origin = `http://127.0.0.1:${site.address().port}`

const policy = values.deny ? { privateTargets: 'deny', allowedTargets: [`127.0.0.1:${site.address().port}`] } : {}
const script = `import { test, expect } from '@playwright/test'
test('buy', async ({ page }) => {
  await page.goto(process.env.SITE + '/')
  await expect(page.locator('h1')).toHaveText('Shop')
  await page.click('#buy')
  await expect(page.locator('#out')).toHaveText('bought')
})
`
const multiStep = `import { test, expect } from '@playwright/test'
test('get', async ({ request }) => {
  const answer = await request.get(process.env.SITE + '/')
  expect(answer.status()).toBe(200)
  expect(await answer.text()).toContain('Shop')
})
`
const work = mkdtempSync(join(tmpdir(), 'monitors-bench-scripts-'))

/** N runs of `kind`, C at a time: their durations, passes, failures and peaks, and the wall time. */
async function batch(kind) {
  const durations = []
  const failures = []
  const peaks = { browser: 0, script: 0, run: 0 }
  let passed = 0
  let next = 0
  const started = performance.now()
  async function worker() {
    while (next < runs) {
      next += 1
      const t = performance.now()
      const result = await runScript(
        {
          name: 'bench',
          checkType: kind,
          script: kind === 'BROWSER' ? script : multiStep,
          scriptPath: 'bench.spec.ts',
          environmentVariables: [{ key: 'SITE', value: origin }],
        },
        { runtimeCache: values.cache, workDir: work, timeoutMs: 120_000, tracing: values.tracing, ...policy },
      )
      durations.push(performance.now() - t)
      if (result.status === 'PASSED') passed += 1
      else failures.push(result.error)
      const m = result.details.memory
      peaks.browser = Math.max(peaks.browser, m.peakBrowserRssBytes)
      peaks.script = Math.max(peaks.script, m.peakScriptRssBytes)
      peaks.run = Math.max(peaks.run, m.peakBrowserRssBytes + m.peakScriptRssBytes)
      if (result.details.artifacts.dir) rmSync(result.details.artifacts.dir, { recursive: true, force: true })
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  durations.sort((a, b) => a - b)
  return { durations, failures, peaks, passed, wall: (performance.now() - started) / 1000 }
}

const q = (durations, p) => durations[Math.min(durations.length - 1, Math.floor(p * durations.length))] / 1000
const mb = (b) => `${Math.round(b / 1024 / 1024)} MiB`
const perMinute = (b) => Math.round((b.durations.length / b.wall) * 60 * 10) / 10

if (values.paired) {
  const { containment, forgetContainment } = await import(pathToFileURL(join(root, 'dist', 'src', 'runner', 'script', 'jail.js')).href)
  const mode = (contained) => {
    if (contained) delete process.env.MONITORS_CONTAINMENT
    else process.env.MONITORS_CONTAINMENT = 'off'
    forgetContainment()
    const held = containment()
    if (contained && !held.available) throw new Error(`this machine cannot contain runs: ${held.problem}`)
  }
  const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  console.log(`load average at start: ${load()}`)
  for (const kind of ['BROWSER', 'MULTI_STEP']) {
    const seen = { true: [], false: [] }
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const contained of round % 2 === 0 ? [true, false] : [false, true]) {
        mode(contained)
        const b = await batch(kind)
        seen[contained].push(b)
        if (b.failures.length > 0) console.error(`failed runs: ${[...new Set(b.failures)].join(' | ')}`)
        console.log(
          `${kind} ${contained ? 'contained  ' : 'uncontained'} round ${round + 1}: ${perMinute(b)} runs/minute, ${b.passed}/${b.durations.length} passed, p50 ${q(b.durations, 0.5).toFixed(1)} s, peak ${mb(b.peaks.run)} per run`,
        )
      }
    }
    const total = (list) => ({ runs: list.reduce((n, b) => n + b.durations.length, 0), wall: list.reduce((n, b) => n + b.wall, 0) })
    const [a, b] = [total(seen.true), total(seen.false)]
    const [ra, rb] = [(a.runs / a.wall) * 60, (b.runs / b.wall) * 60]
    console.log(`${kind} runs/minute contained / uncontained: ${ra.toFixed(1)} / ${rb.toFixed(1)} (ratio ${(ra / rb).toFixed(2)})`)
  }
  console.log(`load average at end: ${load()}`)
  delete process.env.MONITORS_CONTAINMENT
  site.close()
  rmSync(work, { recursive: true, force: true })
  process.exit(0)
}

const b = await batch('BROWSER')
site.close()
rmSync(work, { recursive: true, force: true })
if (b.failures.length > 0) console.error(`failed runs: ${[...new Set(b.failures)].join(' | ')}`)
console.log(
  `runs: ${b.durations.length} (${b.passed} passed), concurrency ${concurrency}${values.deny ? ', private targets denied (the site an exception)' : ''}`,
)
console.log(`runs/minute: ${perMinute(b)}`)
console.log(`run seconds p50 / p95: ${q(b.durations, 0.5).toFixed(1)} / ${q(b.durations, 0.95).toFixed(1)}`)
console.log(`memory per concurrent browser (peak): ${mb(b.peaks.browser)} browser, ${mb(b.peaks.script)} script process`)
console.log(`memory per run (peak): ${mb(b.peaks.run)}`)
