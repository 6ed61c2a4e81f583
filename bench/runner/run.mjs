#!/usr/bin/env node
// The server's own runner at scale: N DNS checks (default 10,000) at frequency 1, each run in L
// locations in parallel (default 2): N × L / 60 runs due per second (333 at the defaults),
// against a local DNS server (its own process, UDP on 127.0.0.1), on a temporary SQLite file.
// The server runs in its own process (bench/runner/server.mjs) so that its CPU is measured
// alone (and profiled with --profile).
//   1. steady: the real clock for --minutes M (default 5; 1 with --quick). The server starts
//      with the runs due in the last minute (the start-up backlog: every check, since their due
//      times spread over the minute) and runs them first, oldest first. The window measured
//      starts once it has caught up (a run due after the start began within 1 s of its due
//      time) and --warmup seconds (default 30, 20 with --quick) have passed; when it has not
//      caught up with a minute (or a third of the time) left, the rest is measured anyway.
//      Measured: runs per second sustained, the scheduler's lag (run start − due time)
//      p50 / p99 / max, runs skipped (nobody claimed them within their grace), the server
//      process's CPU (100 % = one core; and CPU ms per run, which does not depend on what else
//      the machine runs), results stored per second, and the database's growth (the day's
//      full rows, one per check and location, apart: a fresh server writes them in its first
//      minutes; the size after a day adds them once).
//   2. storage: a simulated hour (--storage-minutes, default 60) with the clock faster so that
//      runs fall due at most ~400 a second (x12 at 1,000 checks in 2 locations; x1 at 10,000,
//      which then takes an hour; --storage-speed sets it): the bytes the database grew by (its
//      pages in use, check_runs apart: done runs are kept 10 minutes), per result stored, once
//      the server has caught up and in a window within one UTC day (see storageClockStart), and
//      where they went, table by table (bench/runner/storage.mjs). Then the same on PostgreSQL
//      (bench/runner/storage-postgres.mjs: a throwaway cluster, the same checks, the server run
//      until it has caught up, then the same simulated time; --skip-postgres leaves it out;
//      PostgreSQL's figure is measured again once the window's hours are packed, as the prune
//      packs them an hour later: compact rows into blocks, analytics deltas into their rollups),
//      and both figures side by side (PostgreSQL's once packed); and on PostgreSQL the rows updated
//      and deleted in the window per result, table by table (pg_stat_user_tables: each one a dead
//      row version for autovacuum).
//   3. capacity: the same checks with the clock --speed times faster: the runs
//      fall due far faster than one runner can run them; the runs per second it sustains.
//      Default speed: runs due about 1,000 per second.
// Prints one `name: value` line per figure (other tools parse them); notes go to stderr.
//
// Flags: --checks N, --locations L (1-4), --minutes M, --warmup S, --quick (1,000 checks,
// 1 minute), --capacity-seconds S (0 skips the phase), --speed X, --concurrency C,
// --storage-minutes M (simulated; 0 skips the phase), --storage-speed X, --skip-postgres, --retention DAYS,
// --fail-rate R (0-1: that share of DNS answers is SERVFAIL, so runs fail at random, default 0), --profile DIR (CPU profile of the server process into DIR), --keep (the
// database file is left, for a look at where its bytes go).
// Needs dist/ (npm run build).
import { fork, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { breakdown, perResult } from './storage.mjs'
import { benchCluster, packAsPrune, postgresReader } from './storage-postgres.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const entry = join(root, 'dist', 'src', 'server', 'index.js')
if (!existsSync(entry)) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}
const require = createRequire(join(root, 'package.json'))
const Database = require('better-sqlite3')

const { values: args } = parseArgs({
  options: {
    checks: { type: 'string' },
    locations: { type: 'string', default: '2' },
    minutes: { type: 'string' },
    warmup: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'capacity-seconds': { type: 'string' },
    speed: { type: 'string' },
    concurrency: { type: 'string' },
    retention: { type: 'string' },
    'storage-minutes': { type: 'string' },
    'storage-speed': { type: 'string' },
    profile: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'skip-postgres': { type: 'boolean', default: false },
    'fail-rate': { type: 'string', default: '0' },
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
const CHECKS = Math.round(number('checks', args.checks ?? process.env.BENCH_CHECKS ?? (args.quick ? 1000 : 10_000), 1, 1e6))
const LOCATIONS = Math.round(number('locations', args.locations, 1, 4))
const MINUTES = number('minutes', args.minutes ?? (args.quick ? 1 : 5), 0.25, 24 * 60)
const WARMUP = number('warmup', args.warmup ?? (args.quick ? 20 : 30), 0, MINUTES * 60 - 5)
const CAPACITY = number('capacity-seconds', args['capacity-seconds'] ?? (args.quick ? 10 : 20), 0, 3600)
// the capacity phase's clock: runs due about 1,000 per second (x30 at 1,000 checks in 2 locations, x3 at 10,000)
const SPEED = number('speed', args.speed ?? Math.min(60, Math.max(2, Math.round(1000 / ((CHECKS * LOCATIONS) / 60)))), 2, 1000)
const CONCURRENCY = args.concurrency === undefined ? undefined : Math.round(number('concurrency', args.concurrency, 1, 1024))
const STORAGE_MINUTES = number('storage-minutes', args['storage-minutes'] ?? 60, 0, 24 * 60)
const STORAGE_SPEED = number('storage-speed', args['storage-speed'] ?? Math.max(1, Math.floor(400 / ((CHECKS * LOCATIONS) / 60))), 1, 1000)
const RETENTION = args.retention === undefined ? undefined : number('retention', args.retention, 0.0001, 10_000)
// the share of DNS answers that are SERVFAIL (chosen at random per query): runs that fail, a flapping target
const FAIL_RATE = number('fail-rate', args['fail-rate'], 0, 1)
const PROFILE = args.profile === undefined ? undefined : resolve(args.profile)
const REGIONS = ['eu-west-1', 'us-east-1', 'ap-south-1', 'sa-east-1'].slice(0, LOCATIONS)

const key = 'bench-key-0123456789abcdef0123456789abcdef'
const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-runner-'))
const dbPath = join(dir, 'bench.db')
const note = (line) => process.stderr.write(`${line}\n`)
const print = (name, value) => console.log(`${name}: ${value}`)

// the DNS server: every A question answered with one record (or, at --fail-rate, SERVFAIL)
const dns = spawn(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `
  import { createSocket } from 'node:dgram'
  import { createRequire } from 'node:module'
  const require = createRequire(${JSON.stringify(join(root, 'package.json'))})
  const packet = require('dns-packet')
  const socket = createSocket('udp4')
  let answered = 0
  socket.on('message', (message, remote) => {
    const query = packet.decode(message)
    const q = query.questions[0]
    const fail = Math.random() < ${FAIL_RATE}
    const response = packet.encode({ type: 'response', id: query.id, flags: packet.AUTHORITATIVE_ANSWER | (fail ? 2 : 0), questions: query.questions,
      answers: fail ? [] : [{ type: 'A', name: q.name, ttl: 60, class: 'IN', data: '192.0.2.1' }] })
    answered++
    socket.send(response, remote.port, remote.address)
  })
  socket.bind(0, '127.0.0.1', () => process.stdout.write(socket.address().port + '\\n'))
  process.on('SIGTERM', () => { process.stderr.write('dns server answered ' + answered + ' queries\\n'); process.exit(0) })
`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
)
const dnsPort = await new Promise((resolve) => {
  let out = ''
  dns.stdout.on('data', (chunk) => {
    out += chunk
    if (out.includes('\n')) resolve(Number(out.trim()))
  })
})

/** The checks, written into the database at `location` by a server that runs nothing. */
async function writeChecks(location) {
  const { startLocalServer } = await import(pathToFileURL(entry).href)
  const writer = await startLocalServer({ apiKeys: [{ key, accountId: 'bench' }], rateLimit: { max: 1e9, timeWindowMs: 60_000 }, dbPath: location })
  const started = Date.now()
  let next = 0
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = next++; i < CHECKS; i = next++) {
        const response = await fetch(`${writer.url}/v1/checks/dns`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            name: `bench ${i}`,
            frequency: 1,
            doubleCheck: false,
            locations: REGIONS,
            runParallel: true,
            request: { query: `host-${i}.bench.test`, recordType: 'A', nameServer: '127.0.0.1', port: dnsPort },
          }),
        })
        if (response.status !== 201) throw new Error(`POST /v1/checks/dns: ${response.status} ${await response.text()}`)
      }
    }),
  )
  await writer.close()
  note(`${CHECKS} checks created in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}
await writeChecks(dbPath)

/** The server process: started, then marked (the measured window begins), then stopped. */
async function serverProcess(speed, location = dbPath, virtualStart = undefined) {
  const execArgv = PROFILE ? ['--cpu-prof', '--cpu-prof-dir', PROFILE] : []
  const child = fork(join(root, 'bench', 'runner', 'server.mjs'), [entry], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const waiting = new Map()
  child.on('message', (message) => {
    for (const name of Object.keys(message)) {
      waiting.get(name)?.(message[name])
      waiting.delete(name)
    }
  })
  const failed = new Map()
  child.once('exit', (code) => {
    for (const [name, reject] of failed) reject(new Error(`the server process exited (${code}) before "${name}"`))
  })
  const answer = (name) =>
    new Promise((resolve, reject) => {
      waiting.set(name, (value) => {
        failed.delete(name)
        resolve(value)
      })
      failed.set(name, reject)
    })
  await answer('loaded')
  child.send({ start: { dbPath: location, key, speed, concurrency: CONCURRENCY, retentionDays: RETENTION, virtualStart } })
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

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** What the database holds: bytes in use (pages not free), of which check_runs (bounded: done runs are kept 10 minutes). */
function measureDb(reader) {
  const pageSize = reader.pragma('page_size', { simple: true })
  const used = (reader.pragma('page_count', { simple: true }) - reader.pragma('freelist_count', { simple: true })) * pageSize
  const names = reader.prepare(`SELECT name FROM sqlite_schema WHERE tbl_name = 'check_runs' AND type IN ('table', 'index')`).pluck().all()
  const runBytes = reader
    .prepare(`SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (SELECT value FROM json_each(?))`)
    .pluck()
    .get(JSON.stringify(names))
  const runRows = reader.prepare(`SELECT count(*) FROM check_runs`).pluck().get()
  // full and compact rows draw their seq from check_results' counter
  const results = reader.prepare(`SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'check_results'), 0)`).pluck().get()
  const skipped = reader.prepare(`SELECT count(*) FROM check_runs WHERE state = 'skipped'`).pluck().get()
  // full rows (with their indexes): here the day's first run of each check and location (none fails)
  const fullNames = reader.prepare(`SELECT name FROM sqlite_schema WHERE tbl_name = 'check_results' AND type IN ('table', 'index')`).pluck().all()
  const fullBytes = reader
    .prepare(`SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (SELECT value FROM json_each(?))`)
    .pluck()
    .get(JSON.stringify(fullNames))
  const full = reader.prepare(`SELECT count(*) FROM check_results`).pluck().get()
  return { used, runBytes, runRows, results, skipped, fullBytes, full }
}

const fileSize = () => [dbPath, `${dbPath}-wal`].reduce((sum, f) => sum + (existsSync(f) ? statSync(f).size : 0), 0)
const MiB = 1024 * 1024
const fixed = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a')

const due = (CHECKS * LOCATIONS) / 60
note(
  `${CHECKS} DNS checks at frequency 1 in ${LOCATIONS} location(s), ${fixed(due)} runs due per second; one server runner ` +
    `(concurrency ${CONCURRENCY ?? 'the default'}), node ${process.version}; steady ${MINUTES} min (warm-up ${WARMUP} s), capacity ${CAPACITY} s at x${SPEED}`,
)
print('checks', CHECKS)
print('locations', LOCATIONS)
print('due runs/s', fixed(due))

// 1. steady, real clock
{
  const server = await serverProcess(1)
  const reader = new Database(dbPath, { readonly: true, fileMustExist: true })
  const begun = Date.now()
  const latest = begun + Math.max(WARMUP * 1000, MINUTES * 60_000 - Math.max(60_000, MINUTES * 20_000))
  for (;;) {
    await sleep(1000)
    const { caughtUp } = await server.status()
    const now = Date.now()
    if (now >= latest || (caughtUp !== null && now - begun >= Math.max(WARMUP, caughtUp + 5) * 1000)) break
  }
  const before = measureDb(reader)
  const markedAt = Date.now()
  await server.mark()
  await sleep(Math.max(5000, begun + MINUTES * 60_000 - Date.now()))
  const after = measureDb(reader)
  const window = (Date.now() - markedAt) / 1000
  reader.close()
  const s = await server.stop()
  const resultsPerSecond = (after.results - before.results) / window
  // check_runs holds the runs of the last 10 minutes (pruned): bounded, so left out of the growth;
  // so are the full rows, one per check and location a day, which a fresh server writes in its
  // first minutes (charged to a few minutes they would count 20 times over): added once below
  const kept = (m) => m.used - m.runBytes - m.fullBytes
  const growth = (kept(after) - kept(before)) / window
  const bytesPerResult = after.results - before.results > 0 ? (growth * window) / (after.results - before.results) : NaN
  const runsSteady = after.runRows > 0 ? (after.runBytes / after.runRows) * due * 600 : 0
  const fullRowsADay = after.full > 0 ? (after.fullBytes / after.full) * CHECKS * LOCATIONS : 0
  const day = kept(before) + growth * 86_400 + fullRowsADay + runsSteady
  print('steady seconds', fixed(window))
  print('sustained runs/s', fixed(s.completed / s.elapsed))
  print('lag p50 ms', fixed(s.lagP50, 0))
  print('lag p99 ms', fixed(s.lagP99, 0))
  print('lag max ms', fixed(s.lagMax, 0))
  print('lag runs', s.lagCount)
  print('skipped runs', after.skipped - before.skipped)
  print('start-up backlog runs', s.backlog)
  print('backlog drained s', fixed(s.backlogDrainedAfter))
  print('caught up after s', s.caughtUpAfter === null ? 'never' : fixed(s.caughtUpAfter))
  print('server cpu %', fixed(s.cpuPercent, 0))
  print('server cpu ms per run', fixed(s.cpuMsPerRun, 2))
  print('server rss MiB', fixed(s.rssMiB, 0))
  print('results stored/s', fixed(resultsPerSecond))
  print('db bytes per result', fixed(bytesPerResult, 0))
  print('db full rows a day MiB', fixed(fullRowsADay / MiB, 0))
  print('db growth per hour MiB', fixed((growth * 3600) / MiB, 0))
  print('db size after a day GiB', fixed(day / (MiB * 1024), 2))
  print('db file MiB', fixed(fileSize() / MiB, 0))
}

// 2. storage: a simulated hour
if (STORAGE_MINUTES > 0) {
  note(`storage: ${STORAGE_MINUTES} simulated minutes at x${STORAGE_SPEED} (${fixed((STORAGE_MINUTES * 60) / STORAGE_SPEED, 0)} s)`)
  const server = await serverProcess(STORAGE_SPEED, dbPath, storageClockStart())
  await caughtUp(server)
  const reader = new Database(dbPath, { readonly: true, fileMustExist: true })
  const before = breakdown(reader)
  await server.mark()
  await sleep((STORAGE_MINUTES * 60_000) / STORAGE_SPEED)
  const s = await server.stop()
  const growth = perResult(before, breakdown(reader))
  reader.close()
  print('storage simulated minutes', STORAGE_MINUTES)
  print(`storage runs/s (clock x${STORAGE_SPEED})`, fixed(s.completed / s.elapsed))
  print('storage results', growth.results)
  print('storage results kept in full', growth.full)
  print('storage bytes per result', fixed(growth.perResult, 1))
  for (const t of growth.tables) {
    if (Math.abs(t.perResult) >= 0.05) print(`storage bytes per result, ${t.name}${t.bounded ? ' (bounded, not counted)' : ''}`, fixed(t.perResult, 1))
  }
  print('storage GiB a day at the steady load', fixed((growth.perResult * due * 86_400) / (MiB * 1024), 2))
  const onPostgres = args['skip-postgres'] ? undefined : await postgresStorage()
  print('storage bytes per result, sqlite | postgres', `${fixed(growth.perResult, 1)} | ${onPostgres === undefined ? 'n/a' : fixed(onPostgres, 1)}`)
}

/**
 * Where the storage phase's clock starts. The first result of a UTC day of each check and
 * location is kept in full and opens the day's table: a day's cost, which a measured window
 * that crosses midnight would charge to one simulated hour (24 times over). Now when the window
 * (and a minute of catching up) ends before midnight; else just after the next midnight, the
 * day's first rows then written while the server catches up, before the window is measured.
 */
function storageClockStart() {
  const day = 86_400_000
  const now = Date.now()
  const end = now + STORAGE_MINUTES * 60_000 + 60_000 * STORAGE_SPEED
  return Math.floor(end / day) === Math.floor(now / day) ? now : (Math.floor(now / day) + 1) * day + 60_000
}

/** Waits until the server has run its start-up backlog (at most two minutes), then ten seconds more. */
async function caughtUp(server) {
  const begun = Date.now()
  for (let done = null; done === null && Date.now() - begun < 120_000; ) {
    await sleep(1000)
    done = (await server.status()).caughtUp
  }
  await sleep(10_000)
}

/**
 * The storage phase on PostgreSQL: the same checks in a throwaway cluster's database, the
 * server run until it has caught up with its start-up backlog (as the SQLite database had its
 * steady phase first), then the same simulated time measured. Bytes per result, or undefined.
 */
async function postgresStorage() {
  const cluster = await benchCluster()
  if (!cluster.url) {
    note(`storage on PostgreSQL skipped: ${cluster.why}`)
    return undefined
  }
  try {
    await writeChecks(cluster.url)
    const clockStart = storageClockStart()
    const realStart = Date.now()
    const server = await serverProcess(STORAGE_SPEED, cluster.url, clockStart)
    await caughtUp(server)
    const reader = await postgresReader(cluster.url)
    const before = await reader.read()
    const writesBefore = await reader.writes()
    await server.mark()
    await sleep((STORAGE_MINUTES * 60_000) / STORAGE_SPEED)
    const s = await server.stop()
    // the server's backends have exited: their statistics are all reported
    const writesAfter = await reader.writes()
    // the server's clock when it stopped (never behind the real one)
    const virtualNow = Math.max(realStart, clockStart) + (Date.now() - realStart) * STORAGE_SPEED
    const growth = perResult(before, await reader.read())
    // once the window's hours have ended, the prune packs them (compact rows into blocks, analytics deltas into rollups)
    await packAsPrune(cluster.url, virtualNow + 3_600_000 + 3 * 60_000)
    const packed = perResult(before, await reader.read())
    await reader.close()
    print(`storage postgres runs/s (clock x${STORAGE_SPEED})`, fixed(s.completed / s.elapsed))
    print('storage postgres results', growth.results)
    print('storage postgres results kept in full', growth.full)
    print('storage postgres bytes per result', fixed(growth.perResult, 1))
    for (const t of growth.tables) {
      if (Math.abs(t.perResult) >= 0.05)
        print(`storage postgres bytes per result, ${t.name}${t.bounded ? ' (bounded, not counted)' : ''}`, fixed(t.perResult, 1))
    }
    // rows updated or deleted in the window, per result: each a dead row version for autovacuum
    for (const [name, after] of Object.entries(writesAfter)) {
      const was = writesBefore[name] ?? { updated: 0, deleted: 0 }
      for (const kind of ['updated', 'deleted']) {
        const n = after[kind] - was[kind]
        if (n > 0) print(`storage postgres rows ${kind} per result, ${name}`, fixed(n / growth.results, 3))
      }
    }
    print('storage postgres bytes per result, hours packed', fixed(packed.perResult, 1))
    for (const t of packed.tables) {
      if (Math.abs(t.perResult) >= 0.05)
        print(`storage postgres bytes per result, hours packed, ${t.name}${t.bounded ? ' (bounded, not counted)' : ''}`, fixed(t.perResult, 1))
    }
    return packed.perResult
  } finally {
    await cluster.stop()
  }
}

// 3. capacity, fast clock
if (CAPACITY > 0) {
  const server = await serverProcess(SPEED)
  await sleep(3000)
  await server.mark()
  await sleep(CAPACITY * 1000)
  const s = await server.stop()
  print(`capacity runs/s (clock x${SPEED})`, fixed(s.completed / s.elapsed))
  print('capacity server cpu %', fixed(s.cpuPercent, 0))
  print('capacity server cpu ms per run', fixed(s.cpuMsPerRun, 2))
}

if (PROFILE) note(`CPU profiles of the server process: ${PROFILE}`)
dns.kill('SIGTERM')
await new Promise((resolve) => dns.on('exit', resolve))
if (args.keep) note(`database kept: ${dbPath}`)
else rmSync(dir, { recursive: true, force: true })
