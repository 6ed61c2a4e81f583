#!/usr/bin/env node
// The server's own runner: 1,000 DNS checks at frequency 1 (one run a minute each) against a
// local DNS server (its own process, UDP on 127.0.0.1), on a temporary SQLite file.
//   1. steady: the real clock for BENCH_STEADY_SECONDS (default 70, more than one full minute):
//      runs per second and the scheduler's lag (run start − due time), p50 / p99;
//   2. capacity: the same checks with the clock BENCH_SPEED (default 60) times faster, so the
//      runs are due far faster than one runner can run them: the runs per second it sustains.
// Runs due before a phase starts (the backlog planned at start-up) are counted apart, and the
// lag is measured on runs due after the first BENCH_WARMUP_SECONDS (default 10) of a phase.
// Needs dist/ (npm run build).
import { spawn } from 'node:child_process'
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
const CHECKS = Number(process.env.BENCH_CHECKS ?? 1000)
const STEADY = Number(process.env.BENCH_STEADY_SECONDS ?? 70)
const CAPACITY = Number(process.env.BENCH_CAPACITY_SECONDS ?? 20)
const SPEED = Number(process.env.BENCH_SPEED ?? 60)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 10)
const key = 'bench-key-0123456789abcdef0123456789abcdef'
const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-runner-'))
const dbPath = join(dir, 'bench.db')

// the DNS server: every A question answered with one record
const dns = spawn(process.execPath, ['--input-type=module', '-e', `
  import { createSocket } from 'node:dgram'
  import { createRequire } from 'node:module'
  const require = createRequire(${JSON.stringify(join(root, 'package.json'))})
  const packet = require('dns-packet')
  const socket = createSocket('udp4')
  let answered = 0
  socket.on('message', (message, remote) => {
    const query = packet.decode(message)
    const q = query.questions[0]
    const response = packet.encode({ type: 'response', id: query.id, flags: packet.AUTHORITATIVE_ANSWER, questions: query.questions,
      answers: [{ type: 'A', name: q.name, ttl: 60, class: 'IN', data: '192.0.2.1' }] })
    answered++
    socket.send(response, remote.port, remote.address)
  })
  socket.bind(0, '127.0.0.1', () => process.stdout.write(socket.address().port + '\\n'))
  process.on('SIGTERM', () => { process.stderr.write('dns answered ' + answered + '\\n'); process.exit(0) })
`], { stdio: ['ignore', 'pipe', 'inherit'] })
const dnsPort = await new Promise((resolve) => {
  let out = ''
  dns.stdout.on('data', (chunk) => {
    out += chunk
    if (out.includes('\n')) resolve(Number(out.trim()))
  })
})

const { startLocalServer } = await import(pathToFileURL(entry).href)
const server = { apiKeys: [{ key, accountId: 'bench' }], rateLimit: { max: 1e9, timeWindowMs: 60_000 }, dbPath }

// the checks, written by a server that runs nothing
{
  const writer = await startLocalServer(server)
  for (let i = 0; i < CHECKS; i++) {
    const response = await fetch(`${writer.url}/v1/checks/dns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: `bench ${i}`, frequency: 1, doubleCheck: false,
        request: { query: `host-${i}.bench.test`, recordType: 'A', nameServer: '127.0.0.1', port: dnsPort },
      }),
    })
    if (response.status !== 201) throw new Error(`POST /v1/checks/dns: ${response.status} ${await response.text()}`)
  }
  await writer.close()
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

async function phase(name, seconds, speed) {
  const realStart = Date.now()
  const virtualStart = realStart
  const clock = speed === 1 ? Date.now : () => virtualStart + (Date.now() - realStart) * speed
  const lags = []
  let backlog = 0
  let started = 0
  const runner = await startLocalServer({
    ...server,
    runner: true,
    clock,
    schedulerOptions: {
      concurrency: CONCURRENCY,
      tickMs: 200,
      onRunStart: (run, startedAt) => {
        if (run.dueAt < virtualStart) backlog++
        else {
          started++
          // the lag once the start-up backlog has drained (runs due after the phase's first WARMUP seconds)
          if (run.dueAt >= virtualStart + WARMUP * 1000 * speed) lags.push((startedAt - run.dueAt) / speed)
        }
      },
    },
  })
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  const elapsed = (Date.now() - realStart) / 1000
  const completed = runner.completedRuns()
  await runner.close()
  lags.sort((a, b) => a - b)
  const due = Math.floor((elapsed * speed / 60) * CHECKS)
  console.log(`${name}: ${completed} runs completed in ${elapsed.toFixed(1)} s = ${(completed / elapsed).toFixed(1)} runs/s, ` +
    `${started} of them due during the phase (${(started / elapsed).toFixed(1)}/s; about ${due} were due, ${(due / elapsed).toFixed(1)}/s), ` +
    `${backlog} from the start-up backlog; ` +
    `lag (start − due, after ${WARMUP} s) p50 ${percentile(lags, 50).toFixed(0)} ms, p99 ${percentile(lags, 99).toFixed(0)} ms over ${lags.length} runs`)
}

console.log(`${CHECKS} DNS checks at frequency 1, one server runner (concurrency ${CONCURRENCY}), node ${process.version}`)
await phase('steady (real clock)', STEADY, 1)
await phase(`capacity (clock x${SPEED})`, CAPACITY, SPEED)
dns.kill('SIGTERM')
await new Promise((resolve) => dns.on('exit', resolve))
rmSync(dir, { recursive: true, force: true })
