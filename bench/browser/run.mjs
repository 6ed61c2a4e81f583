#!/usr/bin/env node
// Browser checks through the real server: `monitors server` (the built CLI, its own process, a
// SQLite file, its runner on) runs B browser checks at frequency 1 (more runs due than it can
// run: full load) beside D DNS checks at frequency 1 against a DNS server of this bench, all on
// 127.0.0.1. Measured once with the default --script-concurrency, once with it raised (--raised C).
// Per configuration, over the measured window (after a warm-up), one `name: value` line each:
//   browser runs/minute: browser results the server recorded per minute of the window (with
//     B checks due every minute, more than it runs: what it sustains, not what was asked)
//   browser runs due/minute: B, for comparison
//   browser runs passed: how many of them passed (a failing run still counts as a run)
//   concurrent browsers (peak): chromium process trees under the server at once
//   memory per concurrent browser, RSS mean / peak: the resident memory of one chromium process
//     tree (the browser and its renderer, GPU and utility processes, summed), sampled every 2 s
//   script process RSS mean / peak: the sandboxed Node.js process that drives one browser
//   server RSS mean / peak: the server process itself
//   dns runs started / due: the DNS runs that started in the window, against those due in it
//     (fewer: runs started late into the next minute, or skipped)
//   dns lag p50 / max: a 1-minute DNS check's run start minus its due time (from the results'
//     startedAt and the check's fixed phase, so a lag of a minute or more is not told apart),
//     with the browsers at full load
//   load average (1 min) start / end: /proc/loadavg as the window began and ended
// Beside each configuration, in the same invocation and at the same concurrency (unless
// --bare 0): the bare loop (bare.mjs: playwright-core alone making the same page visit against
// the same page, its own process) for --bare S seconds, (a) with a new browser per visit, (b)
// with one browser and a new context per visit; then the lines
//   bare (a) browser per run / (b) context per run, runs/minute, memory per concurrent run
//   server ÷ bare (a) / server ÷ bare (b): the server's runs/minute over the bare loop's
// Flags: --browsers B (default 40: more runs due a minute than 2 cores run, at either concurrency), --dns D (default 6), --minutes M (window, default 3),
// --warmup S (default 45), --raised C (default 4; 0 measures the default only), --bare S (default 60; 0: no bare loop),
// --cache DIR (a prepared runtime cache; default test-results/runtimes, prepared offline from
// package-lock.json when missing), --suites (Playwright check suites in place of the browser
// checks: each a project of one config and the same test, run by `playwright test`; the figures'
// names say "suite"; as root each run is a user of its own). Needs dist/ (npm run build) and Chromium.
import { spawn } from 'node:child_process'
import { createSocket } from 'node:dgram'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { availableParallelism, tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { processes, processTree } from './proc-table.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const entry = join(root, 'dist', 'src', 'runner', 'script', 'index.js')
if (!existsSync(entry)) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}
const { values } = parseArgs({
  options: {
    browsers: { type: 'string', default: '40' },
    dns: { type: 'string', default: '6' },
    minutes: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '45' },
    raised: { type: 'string', default: '4' },
    cache: { type: 'string', default: join(root, 'test-results', 'runtimes') },
    suites: { type: 'boolean', default: false },
    bare: { type: 'string', default: '60' },
  },
})
const SUITES = values.suites
const KIND = SUITES ? 'suite' : 'browser'
const BROWSERS = Number(values.browsers)
const DNS_CHECKS = Math.min(10, Number(values.dns))
const WINDOW_MS = Number(values.minutes) * 60_000
const WARMUP_MS = Number(values.warmup) * 1000
const RAISED = Number(values.raised)
const BARE_SECONDS = Number(values.bare)
const note = (line) => process.stderr.write(`${line}\n`)
const print = (name, value) => console.log(`${name}: ${value}`)
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

const { prepareRuntime, resolveInRuntime, CHROMIUM_ARGS } = await import(pathToFileURL(entry).href)
const { defaultScriptConcurrency } = await import(pathToFileURL(join(root, 'dist', 'src', 'runner', 'index.js')).href)
const { DEFAULT_RUNTIME_ID } = await import(pathToFileURL(join(root, 'dist', 'src', 'schema', 'index.js')).href)
note(`preparing runtime ${DEFAULT_RUNTIME_ID} in ${values.cache} (offline, from package-lock.json)`)
await prepareRuntime(DEFAULT_RUNTIME_ID, { cacheDir: values.cache, offline: true, fromLock: join(root, 'package-lock.json') })

// the site the browser checks open, and the DNS server the DNS checks ask, both on loopback
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
const packet = createRequire(join(root, 'package.json'))('dns-packet')
const dns = createSocket('udp4')
dns.on('message', (message, remote) => {
  const query = packet.decode(message)
  const q = query.questions[0]
  dns.send(
    packet.encode({
      type: 'response',
      id: query.id,
      flags: packet.AUTHORITATIVE_ANSWER,
      questions: query.questions,
      answers: [{ type: 'A', name: q.name, ttl: 60, class: 'IN', data: '192.0.2.1' }],
    }),
    remote.port,
    remote.address,
  )
})
await new Promise((r) => dns.bind(0, '127.0.0.1', r))
const dnsPort = dns.address().port

const script = `import { test, expect } from '@playwright/test'
test('buy', async ({ page }) => {
  await page.goto(process.env.SITE + '/')
  await expect(page.locator('h1')).toHaveText('Shop')
  await page.click('#buy')
  await expect(page.locator('#out')).toHaveText('bought')
})
`
// frequencyOffset n at frequency 1: due at second 6n of every minute (src/server/scheduler/due.ts)
const DNS_OFFSETS = [1, 3, 5, 7, 9, 10, 2, 4, 6, 8].slice(0, DNS_CHECKS)
const phaseMs = (offset) => (offset * 6000) % 60_000

/** Under the server: each chromium tree's RSS, each script process's, and the server's own. */
function sample(serverPid) {
  const all = processes()
  const { children, treeRss } = processTree(all)
  const browsers = []
  const scripts = []
  const walk = (pid) => {
    for (const c of children.get(pid) ?? []) {
      const p = all.get(c)
      if (/chrom/i.test(p.name)) browsers.push(treeRss(c))
      else {
        if (p.name === 'node' || p.name === 'MainThread') scripts.push(p.rss)
        walk(c)
      }
    }
  }
  walk(serverPid)
  return { browsers, scripts, server: all.get(serverPid)?.rss ?? 0 }
}

async function startServer(dir, concurrency) {
  const key = 'bench-browser-key-0123456789abcdef'
  const args = [
    join(root, 'bin', 'monitors.cjs'),
    'server',
    '--port',
    '0',
    '--db',
    join(dir, 'server.db'),
    '--quiet',
    '--private-targets',
    'allow',
    '--runtime-cache',
    values.cache,
    '--rate-limit',
    '100000/60s',
    ...(concurrency ? ['--script-concurrency', String(concurrency)] : []),
  ]
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', MONITORING_SERVER_API_KEYS: `${key}:bench` },
  })
  // interrupted, the bench stops its server (which closes its browsers) before it exits
  const stop = () => {
    child.kill('SIGTERM')
    child.on('exit', () => process.exit(130))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  child.on('exit', () => {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  })
  let output = ''
  const url = await new Promise((resolve, reject) => {
    const seen = (chunk) => {
      output += chunk
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) resolve(match[1])
    }
    child.stdout.on('data', seen)
    child.stderr.on('data', seen)
    child.on('exit', (code) => reject(new Error(`the server exited (${code}):\n${output}`)))
  })
  const call = async (method, path, body) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    })
    const text = await response.text()
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`)
    return text ? JSON.parse(text) : null
  }
  return { child, url, call, output: () => output }
}

async function createChecks(call) {
  const browserIds = []
  const dnsChecks = []
  for (let i = 0; i < BROWSERS; i++) {
    const common = { name: `bench ${KIND} ${i}`, frequency: 1, doubleCheck: false, environmentVariables: [{ key: 'SITE', value: origin }] }
    const check = SUITES
      ? await call('POST', '/v1/checks/playwright', {
          ...common,
          files: [
            { path: 'playwright.config.ts', content: "import { defineConfig } from '@playwright/test'\nexport default defineConfig({ testDir: './tests' })\n" },
            { path: 'tests/bench.spec.ts', content: script },
          ],
        })
      : await call('POST', '/v1/checks/browser', { ...common, script, scriptPath: 'bench.spec.ts' })
    browserIds.push(check.id)
  }
  for (const offset of DNS_OFFSETS) {
    const check = await call('POST', '/v1/checks/dns', {
      name: `bench dns ${offset}`,
      frequency: 1,
      frequencyOffset: offset,
      doubleCheck: false,
      request: { query: `host-${offset}.bench.test`, recordType: 'A', nameServer: '127.0.0.1', port: dnsPort },
    })
    dnsChecks.push({ id: check.id, phase: phaseMs(offset) })
  }
  return { browserIds, dnsChecks }
}

/** The FINAL results of a check that stopped (browser) or started (DNS) inside the window. */
async function resultsIn(call, checkId, from, to, field) {
  const results = await call('GET', `/v1/check-results/${checkId}?resultType=FINAL&limit=100`)
  return results.filter((r) => {
    const at = Date.parse(r[field])
    return at >= from && at < to
  })
}

const stats = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
  return { n: sorted.length, mean: sorted.reduce((s, x) => s + x, 0) / Math.max(1, sorted.length), p50: at(0.5), max: sorted[sorted.length - 1] }
}
const mib = (b) => (Number.isFinite(b) ? `${Math.round(b / 1048576)} MiB` : '-')

async function measure(label, concurrency) {
  const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-browser-'))
  const server = await startServer(dir, concurrency)
  try {
    const { browserIds, dnsChecks } = await createChecks(server.call)
    note(`${label}: ${browserIds.length} ${KIND} and ${dnsChecks.length} DNS checks created on ${server.url}; warming up ${WARMUP_MS / 1000} s`)
    await new Promise((r) => setTimeout(r, WARMUP_MS))
    const from = Date.now()
    const loadStart = loadavg()
    const samples = []
    while (Date.now() < from + WINDOW_MS) {
      samples.push(sample(server.child.pid))
      await new Promise((r) => setTimeout(r, 2000))
    }
    const to = Date.now()
    const loadEnd = loadavg()
    // runs that stopped just before `to` are recorded a moment later
    await new Promise((r) => setTimeout(r, 3000))
    const browserRuns = (await Promise.all(browserIds.map((id) => resultsIn(server.call, id, from, to, 'stoppedAt')))).flat()
    const lags = (
      await Promise.all(
        dnsChecks.map(async ({ id, phase }) =>
          (
            await resultsIn(server.call, id, from, to, 'startedAt')
          ).map((r) => {
            const started = Date.parse(r.startedAt)
            return started - (Math.floor((started - phase) / 60_000) * 60_000 + phase)
          }),
        ),
      )
    ).flat()
    // the DNS runs due in the window (each check at its phase of every minute), against those recorded
    const dnsDue = dnsChecks.reduce(
      (n, { phase }) =>
        n +
        Array.from({ length: Math.ceil(WINDOW_MS / 60_000) + 1 }, (_, k) => Math.floor((from - phase) / 60_000) * 60_000 + phase + k * 60_000).filter(
          (t) => t >= from && t < to,
        ).length,
      0,
    )
    return { label, concurrency, from, to, loadStart, loadEnd, browserRuns, lags, samples, dnsDue }
  } finally {
    server.child.kill('SIGTERM')
    await new Promise((r) => (server.child.exitCode === null ? server.child.on('exit', r) : r()))
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The bare loop (bare.mjs) in `mode` at `concurrency`, its own process, against the same page: its figures. */
async function bare(mode, concurrency) {
  const core = resolveInRuntime(join(values.cache, DEFAULT_RUNTIME_ID), 'playwright-core')
  const args = [
    join(root, 'bench', 'browser', 'bare.mjs'),
    '--mode',
    mode,
    '--concurrency',
    String(concurrency),
    '--seconds',
    String(BARE_SECONDS),
    '--warmup',
    '10',
    '--origin',
    origin,
    '--core',
    core,
    '--args',
    JSON.stringify(CHROMIUM_ARGS),
  ]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk) => (out += chunk))
  const code = await new Promise((r) => child.on('exit', r))
  if (code !== 0) throw new Error(`the bare loop (${mode}) exited with ${code}`)
  return JSON.parse(out.trim().split('\n').pop())
}

function reportBare(label, b) {
  const rss = stats(b.browserRss)
  // one browser serves every concurrent visit of (b): its tree's memory per visit
  const perRun = b.mode === 'context' ? rss.mean / b.concurrency : rss.mean
  print(`bare (${label}) runs/minute`, (b.runs / b.minutes).toFixed(1))
  print(`bare (${label}) runs passed`, `${b.passed} of ${b.runs}`)
  print(
    `bare (${label}) memory per concurrent run, RSS mean (browser tree${b.mode === 'context' ? ` ÷ ${b.concurrency}` : ''}) / peak tree`,
    `${mib(perRun)} / ${mib(rss.max)}`,
  )
  print(`bare (${label}) load average (1 5 15 min) start / end`, `${b.loadStart} / ${b.loadEnd}`)
}

function report(m) {
  const minutes = (m.to - m.from) / 60_000
  const passed = m.browserRuns.filter((r) => !r.hasFailures && !r.hasErrors).length
  const perBrowser = stats(m.samples.flatMap((s) => s.browsers))
  const perScript = stats(m.samples.flatMap((s) => s.scripts))
  const serverRss = stats(m.samples.map((s) => s.server))
  const lag = stats(m.lags)
  console.log(`\n${m.label} (--script-concurrency ${m.concurrency ?? `default: ${defaultScriptConcurrency()}`}), ${minutes.toFixed(1)} min window`)
  print(`${KIND} runs/minute`, (m.browserRuns.length / minutes).toFixed(1))
  print(`${KIND} runs due/minute`, BROWSERS)
  print(`${KIND} runs passed`, `${passed} of ${m.browserRuns.length}`)
  print('concurrent browsers (peak)', Math.max(0, ...m.samples.map((s) => s.browsers.length)))
  print('memory per concurrent browser, RSS mean / peak', `${mib(perBrowser.mean)} / ${mib(perBrowser.max)}`)
  print('script process RSS mean / peak', `${mib(perScript.mean)} / ${mib(perScript.max)}`)
  print('server RSS mean / peak', `${mib(serverRss.mean)} / ${mib(serverRss.max)}`)
  print('dns runs started / due', `${lag.n} / ${m.dnsDue}`)
  print('dns lag p50 / max', lag.n === 0 ? 'no DNS run in the window' : `${Math.round(lag.p50)} ms / ${Math.round(lag.max)} ms`)
  print('memory per concurrent run (browser tree + script process), RSS mean', mib(perBrowser.mean + perScript.mean))
  print('load average (1 5 15 min) start / end', `${m.loadStart} / ${m.loadEnd}`)
  if (!m.bare) return
  const server = m.browserRuns.length / minutes
  const [a, b] = m.bare
  reportBare('a: browser per run', a)
  reportBare('b: context per run', b)
  print('server ÷ bare (a: browser per run)', (server / (a.runs / a.minutes)).toFixed(2))
  print('server ÷ bare (b: context per run)', (server / (b.runs / b.minutes)).toFixed(2))
}

note(`${availableParallelism()} cores, Node.js ${process.version}, load average ${loadavg()}`)
const runs = [['default', undefined], ...(RAISED > 0 ? [['raised', RAISED]] : [])]
try {
  for (const [label, concurrency] of runs) {
    const level = concurrency ?? defaultScriptConcurrency()
    let pair = null
    if (BARE_SECONDS > 0) {
      note(`${label}: the bare loop at concurrency ${level}, ${BARE_SECONDS} s a browser per run, then ${BARE_SECONDS} s a context per run`)
      pair = [await bare('browser', level), await bare('context', level)]
    }
    report({ ...(await measure(label, concurrency)), bare: pair })
  }
} finally {
  site.close()
  dns.close()
}
