#!/usr/bin/env -S npx jiti
// Analytics over 30 days of results of 1,000 API checks: fills a temporary SQLite file through
// the rollup writer (the store's recordMany: the same rows as one result at a time, fewer
// writes), then starts the real server on it and times GET /v1/analytics/api-checks/{id}
// over HTTP for the queries a dashboard makes. Prints the figures; asserts nothing.
//   BENCH_CHECKS (1000), BENCH_DAYS (30), BENCH_FREQUENCY_MINUTES (10), BENCH_LOCATIONS (2),
//   BENCH_REQUESTS (20 per query). Run: npm run bench:analytics
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { openSqliteStore } from '../src/server/store/sqlite/index.js'
import { startLocalServer } from '../src/server/index.js'
import type { AnalyticsSample } from '../src/server/store/index.js'

const CHECKS = Number(process.env.BENCH_CHECKS ?? 1000)
const DAYS = Number(process.env.BENCH_DAYS ?? 30)
const FREQUENCY = Number(process.env.BENCH_FREQUENCY_MINUTES ?? 10)
const LOCATIONS = ['eu-west-1', 'us-east-1', 'ap-south-1', 'sa-east-1'].slice(0, Number(process.env.BENCH_LOCATIONS ?? 2))
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20)
const KEY = 'bench-key-0123456789abcdef0123456789abcdef'
const ACCOUNT = 'bench'
const MINUTE = 60_000

const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-analytics-'))
const dbPath = join(dir, 'bench.db')

/** A reproducible generator, so two runs fill the same figures. */
let seed = 42
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
  return seed / 2 ** 31
}
const ms = (value: number) => Math.round(value * 100) / 100

function sample(at: number, location: string): AnalyticsSample {
  const failed = random() < 0.03
  const dns = ms(1 + random() * 20)
  const tcp = ms(5 + random() * 40)
  const firstByte = ms(30 + random() * 300)
  const download = ms(random() * 50)
  const wait = ms(random() * 5)
  return {
    at,
    runLocation: location,
    statusCode: failed ? 503 : 200,
    status: failed ? 'failure' : 'success',
    retries: failed ? 1 : 0,
    values: { responseTime: ms(dns + tcp + firstByte + download + wait), dns, tcp, firstByte, download, wait },
  }
}

const end = Math.floor(Date.now() / MINUTE) * MINUTE
const start = end - DAYS * 1440 * MINUTE
const store = openSqliteStore(dbPath)
const ids: string[] = []
const fillStarted = performance.now()
let results = 0
for (let c = 0; c < CHECKS; c++) {
  const check = await store.checks.create(ACCOUNT, 'API', {
    name: `bench check ${c}`,
    tags: [],
    activated: true,
    muted: false,
    frequency: FREQUENCY,
    locations: LOCATIONS,
    request: { method: 'GET', url: `https://example.com/${c}` },
  })
  ids.push(check.id)
  const samples: AnalyticsSample[] = []
  const offset = (c % FREQUENCY) * MINUTE
  for (let at = start + offset; at < end; at += FREQUENCY * MINUTE) {
    for (const location of LOCATIONS) samples.push(sample(at + Math.floor(random() * 30_000), location))
  }
  await store.analytics.recordMany(ACCOUNT, check.id, samples)
  results += samples.length
  if ((c + 1) % 100 === 0) process.stderr.write(`  filled ${c + 1} checks, ${results.toLocaleString('en')} results\n`)
}
const fillSeconds = (performance.now() - fillStarted) / 1000
const rows = store.db.prepare('SELECT count(*) FROM analytics_rollups').pluck().get() as number

// the write path of a live result: one record() in its own transaction, as recordResult does,
// each into the current hour's row of a check (a row as large as the fill made them)
const WRITES = 2000
const writeStarted = performance.now()
for (let i = 0; i < WRITES; i++) {
  await store.transaction((tx) => tx.analytics.record(ACCOUNT, ids[i % ids.length], sample(end - MINUTE + (i % 60) * 1000, LOCATIONS[0])))
}
const writeMs = (performance.now() - writeStarted) / WRITES
await store.close()

const server = await startLocalServer({ dbPath, apiKeys: [{ key: KEY, accountId: ACCOUNT }], rateLimit: { max: 1_000_000, timeWindowMs: 60_000 } })
const target = ids[Math.floor(CHECKS / 2)]
const QUERIES: Array<[string, string]> = [
  ['30 days, one figure per metric', 'quickRange=last30Days&metrics=responseTime,availability,retries'],
  [
    '30 days, p50/p95/p99 and stddev of every phase',
    'quickRange=last30Days&metrics=responseTime_p50,responseTime_p95,responseTime_p99,responseTime_stddev,dns_p95,tcp_p95,firstByte_p95,download_p95,wait_p95,availability',
  ],
  [
    '30 days, daily buckets per location',
    'quickRange=last30Days&aggregationInterval=1440&groupBy=runLocation&metrics=responseTime,responseTime_p95,availability&limit=100',
  ],
  ['30 days, hourly buckets', 'quickRange=last30Days&aggregationInterval=60&metrics=responseTime,responseTime_max,availability&limit=100'],
  ['30 days, hourly buckets with p95', 'quickRange=last30Days&aggregationInterval=60&metrics=responseTime_p95&limit=100'],
  [
    '24 hours, 5-minute buckets by status code',
    'quickRange=last24Hours&aggregationInterval=5&groupBy=statusCode&metrics=responseTime,responseTime_p99&limit=100',
  ],
]

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]
console.log(`analytics bench: ${CHECKS} API checks × ${DAYS} days, a run every ${FREQUENCY} min from ${LOCATIONS.length} location(s)`)
console.log(
  `  fill: ${results.toLocaleString('en')} results → ${rows.toLocaleString('en')} rollup rows in ${fillSeconds.toFixed(1)} s; database ${(statSync(dbPath).size / 2 ** 20).toFixed(0)} MiB`,
)
console.log(`  live write: ${writeMs.toFixed(3)} ms per result (one record() in its own transaction)`)
console.log(
  `  GET /v1/analytics/api-checks/{id} over HTTP, ${REQUESTS} requests each (ms; cpu: this process, server and client, so unaffected by waiting for a core); load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${(await import('node:os')).availableParallelism()} cores:`,
)
for (const [label, query] of QUERIES) {
  const url = `${server.url}/v1/analytics/api-checks/${target}?${query}`
  const times: number[] = []
  const cpu: number[] = []
  let entries = 0
  for (let i = 0; i < REQUESTS + 2; i++) {
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    const response = await fetch(url, { headers: { authorization: `Bearer ${KEY}` } })
    const body = (await response.json()) as { series?: string[] }
    const used = process.cpuUsage(c0)
    if (response.status !== 200) throw new Error(`${label}: ${response.status} ${JSON.stringify(body)}`)
    // the first two warm the statement cache and the JIT
    if (i >= 2) {
      times.push(performance.now() - t0)
      cpu.push((used.user + used.system) / 1000)
    }
    entries = body.series?.length ?? 0
  }
  times.sort((a, b) => a - b)
  cpu.sort((a, b) => a - b)
  const f = (n: number) => n.toFixed(1).padStart(6)
  console.log(
    `    ${label.padEnd(50)} wall p50 ${f(percentile(times, 50))}  p95 ${f(percentile(times, 95))}  max ${f(times[times.length - 1])}  | cpu p50 ${f(percentile(cpu, 50))}  p95 ${f(percentile(cpu, 95))}  (${entries} entries)`,
  )
}
await server.close()
rmSync(dir, { recursive: true, force: true })
