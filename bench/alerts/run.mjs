#!/usr/bin/env node
// Alert deliveries: how fast the server's worker empties its outbox. BENCH_DELIVERIES (default
// 1000) webhook deliveries are written into the outbox at once (by a second store on the file,
// as another process would), and a webhook receiver in its own process answers 200 after
// BENCH_RECEIVER_DELAY_MS (default 0, then 50). Prints deliveries per second for each delay,
// with the worker's default concurrency (8) unless BENCH_CONCURRENCY says otherwise.
// BENCH_DB=postgres://… runs it on that PostgreSQL database instead of a temporary SQLite file.
// Needs dist/ (npm run build).
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const entry = join(root, 'dist', 'src', 'server', 'index.js')
if (!existsSync(entry)) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}
const N = Number(process.env.BENCH_DELIVERIES ?? 1000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8)
const DELAYS = process.env.BENCH_RECEIVER_DELAY_MS ? [Number(process.env.BENCH_RECEIVER_DELAY_MS)] : [0, 50]
const key = 'bench-key-0123456789abcdef0123456789abcdef'

const { startLocalServer, openStore } = await import(pathToFileURL(entry).href)

function startReceiver(delayMs) {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    import { createServer } from 'node:http'
    let count = 0
    const server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        if (req.url === '/count') return res.end(String(count))
        count++
        setTimeout(() => res.end('ok'), ${delayMs})
      })
    })
    server.listen(0, '127.0.0.1', () => console.log(server.address().port))
  `,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  return new Promise((resolve) => child.stdout.once('data', (d) => resolve({ child, url: `http://127.0.0.1:${String(d).trim()}` })))
}

for (const delay of DELAYS) {
  const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-alerts-'))
  const dbPath = process.env.BENCH_DB ?? join(dir, 'bench.db')
  const receiver = await startReceiver(delay)
  const server = await startLocalServer({
    dbPath,
    apiKeys: [{ key, accountId: 'bench' }],
    rateLimit: { max: 1e9, timeWindowMs: 60_000 },
    alerts: { concurrency: CONCURRENCY },
  })
  try {
    const created = await fetch(`${server.url}/v1/checks/dns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench', activated: false, request: { query: 'bench.test' } }),
    }).then((r) => r.json())
    const store = await openStore(dbPath)
    const event = { id: randomUUID(), alertType: 'ALERT_FAILURE', checkId: created.id, checkName: 'bench' }
    const deliveries = Array.from({ length: N }, () => ({
      notificationId: randomUUID(),
      checkId: created.id,
      alertType: 'ALERT_FAILURE',
      channelType: 'WEBHOOK',
      channel: { name: 'bench', url: `${receiver.url}/hook`, method: 'POST' },
      event,
      status: 'PENDING',
      reason: null,
      dueAt: Date.now(),
    }))
    const began = performance.now()
    await store.alertDeliveries.enqueue('bench', deliveries)
    await store.close()
    for (;;) {
      const count = Number(await fetch(`${receiver.url}/count`).then((r) => r.text()))
      if (count >= N) break
      await new Promise((r) => setTimeout(r, 20))
    }
    const seconds = (performance.now() - began) / 1000
    console.log(`receiver delay ${delay} ms, concurrency ${CONCURRENCY}: ${N} deliveries in ${seconds.toFixed(2)} s = ${(N / seconds).toFixed(0)} per second`)
  } finally {
    await server.close()
    receiver.child.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}
