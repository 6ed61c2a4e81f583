#!/usr/bin/env node
// The Prometheus output of one server with 100 checks: starts the server (from dist/, so run
// `npm run build` first) in this process on a temporary SQLite file with its own runner, creates
// 100 API checks of a local HTTP server (one in ten answering 500, one in ten slow enough to be
// degraded), runs each once, then scrapes GET /metrics with the operator's metrics token and
// prints its size, its series and a sample. BENCH_CHECKS changes the number of checks.
import { createServer } from 'node:http'
import { mkdtempSync, rmSync, existsSync } from 'node:fs'
import { tmpdir, loadavg } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const entry = join(root, 'dist', 'src', 'server', 'index.js')
if (!existsSync(entry)) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}
const count = Number(process.env.BENCH_CHECKS ?? 100)
const dir = mkdtempSync(join(tmpdir(), 'monitors-metrics-'))
const key = 'bench-key-0123456789abcdef0123456789abcdef'
const token = 'bench-metrics-token-0123456789abcdef'

const target = createServer((request, response) => {
  const n = Number(new URL(request.url, 'http://x').searchParams.get('n'))
  const answer = () => {
    response.writeHead(n % 10 === 3 ? 500 : 200, { 'content-type': 'text/plain' })
    response.end('ok')
  }
  if (n % 10 === 7) setTimeout(answer, 120)
  else answer()
})
await new Promise((resolve) => target.listen(0, '127.0.0.1', resolve))
const origin = `http://127.0.0.1:${target.address().port}`

const { startLocalServer } = await import(pathToFileURL(entry).href)
const server = await startLocalServer({
  dbPath: join(dir, 'metrics.db'),
  apiKeys: [{ key, accountId: 'acc-shop' }],
  rateLimit: { max: 1e9, timeWindowMs: 60_000 },
  runner: true,
  alerts: false,
  privateTargets: 'allow',
  metricsToken: token,
})
const call = async (method, path, body) => {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return text ? JSON.parse(text) : undefined
}

try {
  const ids = []
  for (let n = 0; n < count; n++) {
    const check = await call('POST', '/v1/checks/api', {
      name: `Shop endpoint ${String(n).padStart(3, '0')}`,
      activated: false,
      degradedResponseTime: 100,
      maxResponseTime: 5000,
      request: { method: 'GET', url: `${origin}/health?n=${n}`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    })
    ids.push(check.id)
  }
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: ids } })
  for (const session of trigger.sessions) {
    for (let tries = 0; tries < 10; tries++) {
      const done = await call('GET', `/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=30`)
      if (done?.status !== 'RUNNING') break
    }
  }

  const began = performance.now()
  const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
  const text = await response.text()
  const ms = performance.now() - began
  const lines = text.split('\n').filter(Boolean)
  const samples = lines.filter((l) => !l.startsWith('#'))
  const families = lines.filter((l) => l.startsWith('# TYPE ')).length
  const perFamily = new Map()
  for (const line of samples) {
    const name = line.split(/[{ ]/)[0]
    perFamily.set(name, (perFamily.get(name) ?? 0) + 1)
  }
  console.log(
    `GET /metrics of one server with ${count} checks (operator token), load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}:`,
  )
  console.log(`  ${Buffer.byteLength(text)} bytes, ${lines.length} lines, ${families} families, ${samples.length} samples, answered in ${ms.toFixed(1)} ms`)
  console.log('  samples per name:')
  for (const [name, n] of [...perFamily].sort((a, b) => b[1] - a[1])) console.log(`    ${String(n).padStart(5)} ${name}`)
  const first = ids[3]
  console.log("\nSample (the families of one failing check, then the server's own):\n")
  const shown = lines.filter((l) =>
    l.startsWith('#')
      ? /monitors_check_(status|up|runs_total|phase_duration_seconds|response_time_seconds) /.test(l) ||
        /monitors_(scheduler_run_lag_seconds|http_requests_total|alert_deliveries) /.test(l)
      : l.includes(first) || /^monitors_(scheduler_run_lag_seconds_(sum|count)|http_requests_total\{method="POST")/.test(l),
  )
  console.log(shown.join('\n'))
} finally {
  await server.close()
  await new Promise((resolve) => target.close(resolve))
  rmSync(dir, { recursive: true, force: true })
}
