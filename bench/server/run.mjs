#!/usr/bin/env node
// Throughput of the local Monitoring API: GET /v1/checks?limit=100 over 1,000 checks, and
// POST /v1/checks/dns. The server runs in its own process (from dist/, so run `npm run build`
// first) on a temporary SQLite file with the rate limit raised out of the way; autocannon
// drives it from this process.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import autocannon from 'autocannon'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const entry = join(root, 'dist', 'src', 'server', 'index.js')
if (!existsSync(entry)) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-'))
const key = 'bench-key-0123456789abcdef0123456789abcdef'

const child = spawn(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `
  const { startLocalServer } = await import(${JSON.stringify(pathToFileURL(entry).href)})
  const server = await startLocalServer({
    dbPath: ${JSON.stringify(join(dir, 'bench.db'))},
    apiKeys: [{ key: ${JSON.stringify(key)} }],
    rateLimit: { max: 1e9, timeWindowMs: 60000 },
  })
  process.stdout.write(server.url + '\\n')
  process.on('SIGTERM', () => server.close().then(() => process.exit(0)))
`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
)

const url = await new Promise((resolve, reject) => {
  let out = ''
  child.stdout.on('data', (chunk) => {
    out += chunk
    if (out.includes('\n')) resolve(out.trim())
  })
  child.on('exit', (code) => reject(new Error(`server exited with ${code}`)))
})

const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
const dnsCheck = (i) =>
  JSON.stringify({
    name: `bench check ${i}`,
    tags: ['bench', `group-${i % 10}`],
    locations: ['eu-west-1', 'us-east-1'],
    frequency: 5,
    request: { query: `host${i}.example.com`, recordType: 'A', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
  })

function run(title, options) {
  return new Promise((resolve, reject) => {
    autocannon({ url: `${url}${options.path}`, connections, duration: seconds, headers, ...options }, (error, result) => {
      if (error) return reject(error)
      const ok = result['2xx']
      const bad = result.non2xx + result.errors + result.timeouts
      console.log(
        `${title.padEnd(34)} ${Math.round(result.requests.average).toString().padStart(7)} req/s   p50 ${result.latency.p50} ms   p99 ${result.latency.p99} ms   (${ok} ok, ${bad} not ok)`,
      )
      resolve(result)
    })
  })
}

try {
  // seed 1,000 checks, 20 at a time
  for (let i = 0; i < 1000; i += 20) {
    await Promise.all(
      Array.from({ length: 20 }, (_, j) =>
        fetch(`${url}/v1/checks/dns`, { method: 'POST', headers, body: dnsCheck(i + j) }).then((r) => {
          if (r.status !== 201) throw new Error(`seeding failed: ${r.status}`)
          return r.arrayBuffer()
        }),
      ),
    )
  }
  const check = await fetch(`${url}/v1/checks?limit=100`, { headers })
  console.log(`server ${url}, ${check.headers.get('content-range')} checks seeded; ${connections} connections, ${seconds} s per run, node ${process.version}`)
  const reads = await run('GET /v1/checks?limit=100', { path: '/v1/checks?limit=100', method: 'GET' })
  const creates = await run('POST /v1/checks/dns', { path: '/v1/checks/dns', method: 'POST', body: dnsCheck(0) })
  const readRate = reads.requests.average
  const createRate = creates.requests.average
  console.log(`reads/s ${Math.round(readRate)} (target >= 3000): ${readRate >= 3000 ? 'met' : 'NOT met'}`)
  console.log(`creates/s ${Math.round(createRate)} (target >= 1000): ${createRate >= 1000 ? 'met' : 'NOT met'}`)
} finally {
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
  rmSync(dir, { recursive: true, force: true })
}
