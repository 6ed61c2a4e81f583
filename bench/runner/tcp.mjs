#!/usr/bin/env node
// Sub-minute TCP checks on the server's own runner: N TCP checks (default 1,000) at frequency 0
// with frequencyOffset S (default 10: a run every 10 seconds), one location, against a local TCP
// server (its own process, 127.0.0.1, answering `+PONG` to each line), on a temporary SQLite
// file; N / S runs due per second (100 at the defaults). The server runs in its own process
// (bench/runner/server.mjs, shared with bench/runner/run.mjs).
//   1. steady: the real clock for --seconds T (default 90). The window measured starts once the
//      start-up backlog is behind the runner and --warmup seconds (default 20) have passed.
//      Measured: runs per second sustained against those due, the scheduler's lag (run start −
//      due time) p50 / p99 / max, and the drift: the lag of the window's last 10 % of runs
//      against its first 10 % (a schedule that drifts grows its lag run after run).
//   2. capacity: the same checks with the clock --speed times faster (default x4: 400 runs due
//      per second at the defaults), more than one runner runs: the TCP runs per second one
//      server sustains (each a real connection, PING sent, +PONG read and asserted). The speed
//      stays low enough that a planner tick (1 s) is shorter than a period: a faster clock plans
//      each check once per tick and measures the planner, not the runner.
// Prints one `name: value` line per figure; notes go to stderr.
//
// Flags: --checks N, --every 10|20|30, --seconds T, --warmup S, --capacity-seconds S (0 skips
// the phase), --speed X, --concurrency C, --quick (300 checks, 40 s).
// Needs dist/ (npm run build).
import { fork, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const entry = join(root, 'dist', 'src', 'server', 'index.js')
if (!existsSync(entry)) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}

const { values: args } = parseArgs({
  options: {
    checks: { type: 'string' },
    every: { type: 'string', default: '10' },
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    'capacity-seconds': { type: 'string' },
    speed: { type: 'string', default: '4' },
    concurrency: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
})
const number = (name, value, min, max) => {
  const n = Number(value)
  if (!Number.isFinite(n) || n < min || n > max) {
    console.error(`--${name} must be a number from ${min} to ${max}, got ${value}`)
    process.exit(2)
  }
  return n
}
const CHECKS = Math.round(number('checks', args.checks ?? (args.quick ? 300 : 1000), 1, 100_000))
const EVERY = number('every', args.every, 10, 30)
if (![10, 20, 30].includes(EVERY)) {
  console.error(`--every must be 10, 20 or 30 (the spec's sub-minute offsets), got ${args.every}`)
  process.exit(2)
}
const SECONDS = number('seconds', args.seconds ?? (args.quick ? 40 : 90), 15, 3600)
const WARMUP = number('warmup', args.warmup ?? (args.quick ? 10 : 20), 0, SECONDS - 10)
const CAPACITY = number('capacity-seconds', args['capacity-seconds'] ?? (args.quick ? 10 : 20), 0, 600)
const SPEED = number('speed', args.speed, 2, 1000)
const CONCURRENCY = args.concurrency === undefined ? undefined : Math.round(number('concurrency', args.concurrency, 1, 1024))

const key = 'bench-key-0123456789abcdef0123456789abcdef'
const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-tcp-'))
const dbPath = join(dir, 'bench.db')
const note = (line) => process.stderr.write(`${line}\n`)
const print = (name, value) => console.log(`${name}: ${value}`)
const fixed = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// the TCP server: `+PONG` to every line, the connection left open for the client to close
const tcp = spawn(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `
  import { createServer } from 'node:net'
  let answered = 0
  const server = createServer((socket) => {
    socket.on('error', () => {})
    socket.on('data', () => { answered++; socket.write('+PONG\\r\\n') })
  })
  server.maxConnections = 100000
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => process.stdout.write(server.address().port + '\\n'))
  process.on('SIGTERM', () => { process.stderr.write('tcp server answered ' + answered + ' lines\\n'); process.exit(0) })
`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
)
const tcpPort = await new Promise((resolve) => {
  let out = ''
  tcp.stdout.on('data', (chunk) => {
    out += chunk
    if (out.includes('\n')) resolve(Number(out.trim()))
  })
})

// the checks, written by a server that runs nothing
{
  const { startLocalServer } = await import(pathToFileURL(entry).href)
  const writer = await startLocalServer({ apiKeys: [{ key, accountId: 'bench' }], rateLimit: { max: 1e9, timeWindowMs: 60_000 }, dbPath })
  let next = 0
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = next++; i < CHECKS; i = next++) {
        const response = await fetch(`${writer.url}/v1/checks/tcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            name: `bench ${i}`,
            frequency: 0,
            frequencyOffset: EVERY,
            doubleCheck: false,
            locations: ['eu-west-1'],
            request: {
              hostname: '127.0.0.1',
              port: tcpPort,
              data: 'PING\r\n',
              assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: '+PONG' }],
            },
          }),
        })
        if (response.status !== 201) throw new Error(`POST /v1/checks/tcp: ${response.status} ${await response.text()}`)
      }
    }),
  )
  await writer.close()
}

/** The server process of bench/runner/run.mjs: started, marked (the window begins), stopped. */
async function serverProcess(speed) {
  const child = fork(join(root, 'bench', 'runner', 'server.mjs'), [entry], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const waiting = new Map()
  child.on('message', (message) => {
    for (const name of Object.keys(message)) {
      waiting.get(name)?.(message[name])
      waiting.delete(name)
    }
  })
  const answer = (name) => new Promise((resolve) => waiting.set(name, resolve))
  await answer('loaded')
  child.send({ start: { dbPath, key, speed, concurrency: CONCURRENCY } })
  await answer('ready')
  return {
    status: () => {
      child.send({ status: true })
      return answer('status')
    },
    mark: () => {
      child.send({ mark: true })
      return answer('marked')
    },
    stop: async () => {
      child.send({ stop: true })
      const summary = await answer('stopped')
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve()))
      return summary
    },
  }
}

const due = CHECKS / EVERY
note(
  `${CHECKS} TCP checks every ${EVERY} s (frequency 0, frequencyOffset ${EVERY}), ${fixed(due)} runs due per second; one server runner ` +
    `(concurrency ${CONCURRENCY ?? 'the default'}), node ${process.version}; steady ${SECONDS} s (warm-up ${WARMUP} s), capacity ${CAPACITY} s at x${SPEED}`,
)
print('checks', CHECKS)
print('every s', EVERY)
print('due runs/s', fixed(due))

// 1. steady, real clock
{
  const server = await serverProcess(1)
  const begun = Date.now()
  for (;;) {
    await sleep(1000)
    const { caughtUp } = await server.status()
    const now = Date.now()
    if (now - begun >= (SECONDS - 10) * 1000 || (caughtUp !== null && now - begun >= Math.max(WARMUP, caughtUp + 2) * 1000)) break
  }
  await server.mark()
  await sleep(Math.max(10_000, begun + SECONDS * 1000 - Date.now()))
  const s = await server.stop()
  print('steady seconds', fixed(s.elapsed))
  print('sustained runs/s', fixed(s.completed / s.elapsed))
  print('lag p50 ms', fixed(s.lagP50, 0))
  print('lag p99 ms', fixed(s.lagP99, 0))
  print('lag max ms', fixed(s.lagMax, 0))
  print('lag runs', s.lagCount)
  print('drift ms (lag p50 of the last 10 % − of the first 10 %)', fixed(s.driftMs, 0))
  print('server cpu %', fixed(s.cpuPercent, 0))
  print('server cpu ms per run', fixed(s.cpuMsPerRun, 2))
}

// 2. capacity, fast clock
if (CAPACITY > 0) {
  const server = await serverProcess(SPEED)
  await sleep(3000)
  await server.mark()
  await sleep(CAPACITY * 1000)
  const s = await server.stop()
  print(`capacity TCP runs/s (clock x${SPEED})`, fixed(s.completed / s.elapsed))
  print('capacity server cpu %', fixed(s.cpuPercent, 0))
  print('capacity server cpu ms per run', fixed(s.cpuMsPerRun, 2))
}

tcp.kill('SIGTERM')
await new Promise((resolve) => tcp.on('exit', resolve))
rmSync(dir, { recursive: true, force: true })
