#!/usr/bin/env node
// The bare loop bench/browser/run.mjs compares the server with: the same page visit as its
// browser checks (open the page, wait for its heading to read "Shop", click Buy, wait for
// "bought"), made by playwright-core alone in this process, C visits at a time, with nothing of
// the server's (no sandbox, no script process, no proxy, no trace, no result recorded):
//   --mode browser: a new Chromium per visit (launched, a context, a page, closed): the
//     isolation a server run has (a browser of its own)
//   --mode context: one Chromium for the whole loop, a new context per visit (closed after it)
// Warms up --warmup S seconds (visits that end then are not counted), then counts the visits
// that end in a window of --seconds S. Samples the resident memory of each Chromium process
// tree under this process every 2 s. Prints one JSON line on stdout: { runs, passed, minutes,
// browserRss: [...], loadStart, loadEnd }. Flags: --origin URL (the page, required), --core
// FILE (playwright-core's entry, required), --chromium FILE (default /usr/bin/chromium),
// --args JSON (Chromium's arguments), --concurrency C (default 1).
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { processes, processTree } from './proc-table.mjs'

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'browser' },
    concurrency: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '10' },
    origin: { type: 'string' },
    core: { type: 'string' },
    chromium: { type: 'string', default: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' },
    args: { type: 'string', default: '[]' },
  },
})
if (!values.origin || !values.core || !['browser', 'context'].includes(values.mode)) {
  console.error('usage: bare.mjs --mode browser|context --origin URL --core PLAYWRIGHT_CORE_ENTRY [--concurrency C] [--seconds S] [--warmup S]')
  process.exit(2)
}
const core = await import(pathToFileURL(values.core).href)
const chromium = core.chromium ?? core.default.chromium
const launchOptions = { executablePath: values.chromium, headless: true, args: JSON.parse(values.args) }
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

/** Each Chromium process tree under this process: its resident memory, summed. */
function browserTrees() {
  const all = processes()
  const { children, treeRss } = processTree(all)
  return (children.get(process.pid) ?? []).filter((pid) => /chrom/i.test(all.get(pid).name)).map(treeRss)
}

async function visit(browser) {
  const context = await browser.newContext()
  try {
    const page = await context.newPage()
    await page.goto(`${values.origin}/`)
    await page.locator('h1', { hasText: 'Shop' }).waitFor()
    await page.click('#buy')
    await page.locator('#out', { hasText: 'bought' }).waitFor()
  } finally {
    await context.close()
  }
}

const shared = values.mode === 'context' ? await chromium.launch(launchOptions) : null
const start = performance.now() + Number(values.warmup) * 1000
const end = start + Number(values.seconds) * 1000
let runs = 0
let passed = 0
let loadStart = null
async function worker() {
  while (performance.now() < end) {
    let ok = true
    try {
      if (shared) await visit(shared)
      else {
        const browser = await chromium.launch(launchOptions)
        try {
          await visit(browser)
        } finally {
          await browser.close()
        }
      }
    } catch (error) {
      ok = false
      console.error(`a visit failed: ${error.message.split('\n')[0]}`)
    }
    const at = performance.now()
    if (at >= start && at < end) {
      runs += 1
      if (ok) passed += 1
    }
  }
}
const browserRss = []
const sampler = setInterval(() => {
  if (performance.now() < start) return
  loadStart ??= loadavg()
  browserRss.push(...browserTrees())
}, 2000)
await Promise.all(Array.from({ length: Number(values.concurrency) }, worker))
clearInterval(sampler)
const loadEnd = loadavg()
await shared?.close()
console.log(
  JSON.stringify({
    mode: values.mode,
    concurrency: Number(values.concurrency),
    runs,
    passed,
    minutes: Number(values.seconds) / 60,
    browserRss,
    loadStart: loadStart ?? loadEnd,
    loadEnd,
  }),
)
