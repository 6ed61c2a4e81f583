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
// Needs dist/ (npm run build) and Chromium (/usr/bin/chromium or $CHROMIUM_PATH).
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
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
  },
})
const runs = Number(values.runs)
const concurrency = Number(values.concurrency)
const { prepareRuntime, runScript } = await import(pathToFileURL(entry).href)
const { DEFAULT_RUNTIME_ID } = await import(pathToFileURL(join(root, 'dist', 'src', 'schema', 'index.js')).href)

console.error(`preparing runtime ${DEFAULT_RUNTIME_ID} in ${values.cache} (offline, from package-lock.json)`)
await prepareRuntime(DEFAULT_RUNTIME_ID, { cacheDir: values.cache, offline: true, fromLock: join(root, 'package-lock.json') })

const PAGE = `<!doctype html><html><head><title>Shop</title><style>body{font:16px sans-serif}</style></head>
<body><header><h1>Shop</h1></header><main><ul>${Array.from({ length: 40 }, (_, i) => `<li>item ${i}</li>`).join('')}</ul>
<button id="buy">Buy</button><p id="out"></p></main>
<script>document.getElementById('buy').onclick = () => { document.getElementById('out').textContent = 'bought' }</script></body></html>`
const site = createServer((req, res) => {
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
const work = mkdtempSync(join(tmpdir(), 'monitors-bench-scripts-'))
const durations = []
let passed = 0
let peakBrowser = 0
let peakScript = 0
let peakRun = 0
let next = 0
const failures = []
const started = performance.now()
async function worker() {
  while (next < runs) {
    next += 1
    const t = performance.now()
    const result = await runScript(
      { name: 'bench', checkType: 'BROWSER', script, scriptPath: 'bench.spec.ts', environmentVariables: [{ key: 'SITE', value: origin }] },
      { runtimeCache: values.cache, workDir: work, timeoutMs: 120_000, tracing: values.tracing, ...policy },
    )
    durations.push(performance.now() - t)
    if (result.status === 'PASSED') passed += 1
    else failures.push(result.error)
    const m = result.details.memory
    peakBrowser = Math.max(peakBrowser, m.peakBrowserRssBytes)
    peakScript = Math.max(peakScript, m.peakScriptRssBytes)
    peakRun = Math.max(peakRun, m.peakBrowserRssBytes + m.peakScriptRssBytes)
    if (result.details.artifacts.dir) rmSync(result.details.artifacts.dir, { recursive: true, force: true })
  }
}
await Promise.all(Array.from({ length: concurrency }, worker))
const wall = (performance.now() - started) / 1000
site.close()
rmSync(work, { recursive: true, force: true })
durations.sort((a, b) => a - b)
const q = (p) => durations[Math.min(durations.length - 1, Math.floor(p * durations.length))] / 1000
const mb = (b) => `${Math.round(b / 1024 / 1024)} MiB`
if (failures.length > 0) console.error(`failed runs: ${[...new Set(failures)].join(' | ')}`)
console.log(`runs: ${durations.length} (${passed} passed), concurrency ${concurrency}${values.deny ? ', private targets denied (the site an exception)' : ''}`)
console.log(`runs/minute: ${Math.round((durations.length / wall) * 60 * 10) / 10}`)
console.log(`run seconds p50 / p95: ${q(0.5).toFixed(1)} / ${q(0.95).toFixed(1)}`)
console.log(`memory per concurrent browser (peak): ${mb(peakBrowser)} browser, ${mb(peakScript)} script process`)
console.log(`memory per run (peak): ${mb(peakRun)}`)
