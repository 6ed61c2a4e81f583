#!/usr/bin/env node
// The soak of a team deployment (docs/team.md), from this repository:
//   npm run build && npm run bench:soak -- --minutes N
// sets up a throwaway PostgreSQL, two `monitors server` processes behind a round-robin balancer
// (this process; it takes a server out while its /-/readiness fails, as docs/team.md says), a
// `monitors agent` for the private location (eu-central-1 stands for it) whose clock runs ahead
// (--agent-skew-ms),
// targets on loopback (bench/soak/targets.mjs), a generated project of --checks checks every
// minute in eu-west-1 and eu-central-1 (bench/soak/project.mjs) applied with `monitors apply`, and an
// API load of --api-rps requests a second through the balancer. The faults, at fixed shares of
// the run: PostgreSQL restarted (15 % and 60 %), server 1 killed (SIGKILL, 30 %; started again
// after 5 % of the run, 0.5–3 min), the agent killed (45 %; again after 3 %, 0.5–2 min), the
// flaky checks' target down (70 %, 5 minutes, at most 20 % of the run).
//
// Prints a row a minute (runs due, claimed, done and skipped in that minute; claim lag p50/p99;
// the backlog; 5xx answers of the load; CPU and memory of each process; database size; alerts;
// the load average), then the exactly-once verification: every due time of every check from
// the end of the apply to the last minute ran once (one FINAL result) or is counted as skipped
// (late, missed, maintenance; run_skips holds each skipped run once), every alert once (each
// flaky check one ALERT_FAILURE and one ALERT_RECOVERY, each delivery received once, none for
// the other checks), no lease left after the processes stop, no deadlock in PostgreSQL's log.
// Exit code 0 when all hold.
//
// Flags: --minutes N (60), --checks N (1000), --flaky N (20), --api-rps R (30), --pool-size N
// (the servers' --db-pool-size; default theirs), --agent-skew-ms MS (30000), --capacity-seconds S
// (then one server alone on the same database with its clock --speed times faster: the runs a
// minute it sustains; 0: skipped, the default), --speed X (10), --profile DIR (CPU profile of
// that server), --keep (the logs and the project are left in their folder).
// Needs PostgreSQL's server binaries (Debian: apt-get install postgresql) and dist/.
import { execFileSync, fork } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { createRequire } from 'node:module'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { AGENT_LOCATION, LOCATIONS, writeProject } from './project.mjs'
import { meter, startProcess, waitForOutput } from './procs.mjs'
import { collectSkipped, finalChecks, newTally, settle } from './verify.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const require = createRequire(join(root, 'package.json'))
const bin = join(root, 'bin', 'monitors.cjs')
const entry = join(root, 'dist', 'src', 'server', 'index.js')
if (!existsSync(entry)) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}
const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '60' },
    checks: { type: 'string', default: '1000' },
    flaky: { type: 'string', default: '20' },
    'api-rps': { type: 'string', default: '30' },
    'pool-size': { type: 'string' },
    'agent-skew-ms': { type: 'string', default: '30000' },
    'capacity-seconds': { type: 'string', default: '0' },
    speed: { type: 'string', default: '10' },
    profile: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
})
const number = (name, min, max) => {
  const n = Number(args[name])
  if (!Number.isFinite(n) || n < min || n > max) {
    console.error(`--${name} must be a number from ${min} to ${max} (got ${args[name]})`)
    process.exit(2)
  }
  return n
}
const MINUTES = number('minutes', 3, 24 * 60)
const CHECKS = Math.round(number('checks', 10, 100_000))
const FLAKY = Math.round(number('flaky', 0, CHECKS))
const RPS = number('api-rps', 0, 1000)
const SKEW = Math.round(number('agent-skew-ms', -3_600_000, 3_600_000))
const CAPACITY_S = number('capacity-seconds', 0, 3600)
const SPEED = number('speed', 1, 1000)
const POOL = args['pool-size'] === undefined ? undefined : String(Math.round(number('pool-size', 1, 1000)))
const KEY = 'soak-key-0123456789abcdef0123456789abcdef'
const ACCOUNT = 'soak'
const TOKEN = 'soak-metrics-token-0123456789abcdef'
const MINUTE = 60_000

const pg = require('pg')
const { createJiti } = require('jiti')
const { startPostgresCluster } = await createJiti(import.meta.url).import(join(root, 'test', 'helpers', 'postgres-cluster.ts'))
const due = await import(pathToFileURL(join(root, 'dist', 'src', 'server', 'scheduler', 'due.js')).href)

const dir = mkdtempSync(join(tmpdir(), 'monitors-soak-'))
const note = (line) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const procs = new Set()
const cleanup = () => {
  for (const p of procs) if (p.alive()) p.child.kill('SIGKILL')
}
process.on('SIGINT', () => {
  cleanup()
  process.exit(130)
})

note(`soak: ${MINUTES} min, ${CHECKS} checks × ${LOCATIONS.length} locations every minute (${FLAKY} flaky), ${RPS} API requests/s; folder ${dir}`)
// log the waits for locks longer than deadlock_timeout (1 s): the convoys
const cluster = await startPostgresCluster(['log_lock_waits=on', 'max_connections=200'])
const admin = new pg.Client({ connectionString: cluster.url('postgres') })
await admin.connect()
await admin.query('CREATE DATABASE monitors')
await admin.end()
const dbUrl = cluster.url('monitors')
// whatever ends the bench (an error too), its processes and the cluster go with it (stop() is synchronous underneath)
process.on('exit', () => {
  cleanup()
  void cluster.stop()
})
const postmasterPid = () => {
  try {
    return Number(readFileSync(join(dirname(cluster.logFile), 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
  } catch {
    return undefined
  }
}

// ---- targets
const targets = startProcess('targets', process.execPath, [join(root, 'bench', 'soak', 'targets.mjs')], { dir, stdin: 'pipe' })
procs.add(targets)
const ports = JSON.parse((await waitForOutput(targets, /^(\{"dnsPort".*\})$/m))[1])
const targetCommand = async (command, answer) => {
  const before = targets.output().length
  targets.child.stdin.write(`${command}\n`)
  for (let i = 0; i < 200; i++) {
    const found = targets
      .output()
      .slice(before)
      .split('\n')
      .find((l) => l.startsWith(answer))
    if (found) return JSON.parse(found)
    await sleep(50)
  }
  throw new Error(`the targets did not answer ${command}`)
}

// ---- servers
const servers = []
let serverStarts = 0
async function startServer(slot) {
  const name = `server-${slot + 1}${serverStarts++ >= 2 ? `-again-${serverStarts}` : ''}`
  const p = startProcess(
    name,
    process.execPath,
    [
      bin,
      'server',
      '--db',
      dbUrl,
      '--port',
      '0',
      '--quiet',
      '--api-key',
      `${KEY}:${ACCOUNT}`,
      '--rate-limit',
      '100000000/60s',
      '--metrics-token',
      TOKEN,
      '--private-targets',
      'allow',
      ...(POOL ? ['--db-pool-size', POOL] : []),
    ],
    { dir, env: { ...process.env, NO_COLOR: '1' } },
  )
  procs.add(p)
  const url = (await waitForOutput(p, /listening on (http:\/\/\S+)/))[1]
  servers[slot] = { proc: p, url, healthy: true, meter: meter(() => p.child.pid) }
  return servers[slot]
}
await Promise.all([0, 1].map(startServer))
note(`servers at ${servers.map((s) => s.url).join(' and ')}`)

// ---- the balancer: round robin over the servers whose readiness passes
const windows = []
const inFault = (at) => windows.some((w) => at >= w.from && at <= (w.to ?? Infinity) + 30_000)
const readinessFailures = []
let turn = 0
const agentKeepAlive = new http.Agent({ keepAlive: true, maxSockets: 256 })
const forward = (target, req, body) =>
  new Promise((resolve, reject) => {
    const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers, agent: agentKeepAlive }, resolve)
    upstream.on('error', reject)
    upstream.end(body)
  })
const balancer = http.createServer(async (req, res) => {
  const chunks = []
  for await (const chunk of req) chunks.push(chunk)
  const body = Buffer.concat(chunks)
  for (let tries = 0; tries < servers.length * 2; tries++) {
    const server = servers[turn++ % servers.length]
    if (!server?.healthy) continue
    try {
      const answer = await forward(server.url, req, body)
      res.writeHead(answer.statusCode, answer.headers)
      answer.pipe(res)
      return
    } catch (error) {
      // a server that refuses connections is out until its readiness passes again; another
      // error (a connection dropped) tries the next server
      if (error.code === 'ECONNREFUSED') server.healthy = false
    }
  }
  res.writeHead(502, { 'content-type': 'text/plain' }).end('no server')
})
await new Promise((resolve) => balancer.listen(0, '127.0.0.1', resolve))
const lb = `http://127.0.0.1:${balancer.address().port}`
// as a balancer's health check: every 5 s, a 5 s timeout, out after 2 failures in a row, in after a pass
const takenOut = []
const probing = setInterval(() => {
  for (const server of servers) {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), 5000)
    const at = Date.now()
    fetch(`${server.url}/-/readiness`, { signal: controller.signal })
      .then(async (r) => {
        await r.text()
        if (r.status !== 200) throw new Error(String(r.status))
        server.failures = 0
        server.healthy = true
      })
      .catch((error) => {
        if (!server.proc.alive()) return
        server.failures = (server.failures ?? 0) + 1
        readinessFailures.push({ at, done: Date.now(), server: server.proc.name, why: String(error.message ?? error) })
        if (server.failures === 2) {
          server.healthy = false
          takenOut.push({ at, server: server.proc.name })
        }
      })
      .finally(() => clearTimeout(timer))
  }
}, 5000)

// ---- the project, applied as a team applies it
const project = join(dir, 'project')
writeProject(root, project, { count: CHECKS, flaky: FLAKY, ports })
const applyEnv = { ...process.env, NO_COLOR: '1', MONITORING_API_URL: lb, MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: ACCOUNT }
delete applyEnv.CI
const applyStarted = Date.now()
const apply = startProcess('apply', process.execPath, [bin, 'apply', '--yes', '--concurrency', '16'], { dir, env: applyEnv, cwd: project })
const applied = await new Promise((resolve) => apply.child.on('exit', resolve))
if (applied !== 0) throw new Error(`monitors apply exited ${applied}: ${apply.output().slice(-3000)}`)
note(`applied ${CHECKS} checks and a webhook channel in ${((Date.now() - applyStarted) / 1000).toFixed(1)} s`)
const db = new pg.Client({ connectionString: dbUrl })
await db.connect()
db.on('error', () => undefined)
let reader = db
/** A query on the bench's own connection, reopened after a PostgreSQL restart. */
async function q(text, values) {
  for (let attempt = 0; ; attempt++) {
    try {
      return (await reader.query(text, values)).rows
    } catch (error) {
      if (attempt >= 20) throw error
      await sleep(1000)
      try {
        reader = new pg.Client({ connectionString: dbUrl })
        reader.on('error', () => undefined)
        await reader.connect()
      } catch {
        // still restarting
      }
    }
  }
}
const db2 = { query: async (text, values) => ({ rows: await q(text, values) }) }
const checks = (await q('SELECT id, body FROM checks')).map((r) => JSON.parse(r.body))
const flakyIds = checks.filter((c) => /^Flaky /.test(c.name)).map((c) => c.id)

// ---- the agent, its clock ahead
const skewHook = pathToFileURL(join(root, 'bench', 'soak', 'skew-clock.mjs')).href
let agent
let agentStarts = 0
async function startAgent() {
  const p = startProcess(
    `agent${agentStarts++ ? `-again-${agentStarts}` : ''}`,
    process.execPath,
    [
      '--import',
      skewHook,
      bin,
      'agent',
      '--api-url',
      lb,
      '--api-key',
      KEY,
      '--account-id',
      ACCOUNT,
      '--locations',
      AGENT_LOCATION,
      '--agent-id',
      'office-1',
      '--lease',
      '30s',
      '--health-port',
      '0',
      '--concurrency',
      '50',
      '--poll-interval',
      '500ms',
    ],
    { dir, env: { ...process.env, NO_COLOR: '1', MONITORS_SOAK_CLOCK_SKEW_MS: String(SKEW) } },
  )
  procs.add(p)
  agent = { proc: p, meter: meter(() => p.child.pid) }
  await sleep(1000)
  if (!p.alive()) throw new Error(`the agent exited: ${p.output()}`)
}
await startAgent()

// ---- the API load
const answers = []
let inFlight = 0
let dropped = 0
const ids = checks.map((c) => c.id)
const pick = (list) => list[Math.floor(Math.random() * list.length)]
const requests = [
  [30, () => ['GET', `/v1/checks?limit=100&page=${1 + Math.floor(Math.random() * Math.ceil(CHECKS / 100))}`]],
  [20, () => ['GET', `/v1/checks/${pick(ids)}`]],
  [10, () => ['GET', '/v1/check-statuses']],
  [15, () => ['GET', `/v1/check-results/${pick(ids)}?limit=10`]],
  [5, () => ['GET', `/v1/analytics/api-checks/${pick(flakyIds.length ? flakyIds : ids)}?quickRange=last24Hours&metrics=responseTime_avg`]],
  [5, () => ['GET', '/v1/scheduler/skipped-runs']],
  [10, () => ['POST', '/v1/variables', { key: `SOAK_${Math.floor(Math.random() * 1e9)}`, value: 'v' }]],
  [5, () => ['GET', '/v1/variables?limit=50']],
]
const weight = requests.reduce((n, [w]) => n + w, 0)
async function oneRequest() {
  let r = Math.random() * weight
  const [, make] = requests.find(([w]) => (r -= w) < 0) ?? requests[0]
  const [method, path, body] = make()
  const at = Date.now()
  try {
    const response = await fetch(`${lb}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const text = await response.text()
    // a request counts in a fault's window when it was sent or answered within it
    answers.push({
      at,
      done: Date.now(),
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      path,
      ms: Date.now() - at,
      ...(response.status >= 500 ? { why: text.slice(0, 120) } : {}),
    })
    // a variable written is deleted again (writes, without growing the account)
    if (method === 'POST' && response.status === 201)
      await fetch(`${lb}/v1/variables/${body.key}`, { method: 'DELETE', headers: { authorization: `Bearer ${KEY}` } }).then((d) => d.text())
    if (response.status >= 500 && !inFault(at) && !inFault(Date.now())) note(`${response.status} outside the faults: ${method} ${path}: ${text.slice(0, 200)}`)
  } catch (error) {
    answers.push({ at, done: Date.now(), status: 0, path, error: String(error) })
  }
}
const loadTimer =
  RPS > 0
    ? setInterval(() => {
        if (inFlight >= 64) {
          dropped++
          return
        }
        inFlight++
        void oneRequest().finally(() => inFlight--)
      }, 1000 / RPS)
    : undefined

// ---- the faults
const startedAt = Date.now()
const T = MINUTES * MINUTE
const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x))
const faults = [
  { at: 0.15 * T, name: 'PostgreSQL restarted', run: restartPostgres },
  { at: 0.3 * T, name: 'server 1 killed', run: async (w) => killServer(w, clamp(0.05 * T, 30_000, 180_000)) },
  { at: 0.45 * T, name: 'agent killed', run: async (w) => killAgent(w, clamp(0.03 * T, 30_000, 120_000)) },
  { at: 0.6 * T, name: 'PostgreSQL restarted', run: restartPostgres },
  { at: 0.7 * T, name: 'flaky target down', run: async (w) => targetDown(w, Math.min(5 * MINUTE, 0.2 * T)) },
]
async function restartPostgres(w) {
  cluster.stopServer('fast')
  await sleep(3000)
  cluster.startServer()
  w.to = Date.now()
}
async function killServer(w, downMs) {
  servers[0].proc.child.kill('SIGKILL')
  servers[0].healthy = false
  await sleep(downMs)
  await startServer(0)
  w.to = Date.now()
}
async function killAgent(w, downMs) {
  agent.proc.child.kill('SIGKILL')
  await sleep(downMs)
  await startAgent()
  w.to = Date.now()
}
async function targetDown(w, downMs) {
  await targetCommand('down', '{"down"')
  await sleep(downMs)
  await targetCommand('up', '{"up"')
  w.to = Date.now()
}
const faultRuns = faults.map((f) =>
  sleep(f.at).then(async () => {
    const w = { from: Date.now(), name: f.name }
    windows.push(w)
    note(`fault: ${f.name}`)
    try {
      await f.run(w)
    } catch (error) {
      note(`fault ${f.name} failed: ${error.stack ?? error}`)
      w.to = Date.now()
    }
    note(`fault over: ${f.name} (${((w.to - w.from) / 1000).toFixed(1)} s)`)
  }),
)

// ---- a row a minute
const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN)
const fixed = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '-')
const pgMeter = meter(postmasterPid, { tree: true })
const windowFrom = Date.now() + MINUTE
const tally = newTally()
const skippedSeen = new Map()
let settledTo = windowFrom
const rows = []
const header = 'min  due  claimed  done  skipped  lag p50/p99 s  backlog  5xx  cpu % s1/s2/agent/pg  MiB s1/s2/agent/pg  db MiB  alerts  load'
console.log(header)
for (const s of [...servers, agent]) s.meter.read()
pgMeter.read()
async function row(minute, from, to) {
  const [counts] = await q(
    `SELECT
      count(*) FILTER (WHERE due_at >= $1 AND due_at < $2)::int AS due,
      count(*) FILTER (WHERE claimed_at >= $1 AND claimed_at < $2)::int AS claimed,
      count(*) FILTER (WHERE state = 'done' AND done_at >= $1 AND done_at < $2)::int AS done,
      count(*) FILTER (WHERE state = 'skipped' AND skip_reason IN ('late', 'missed', 'maintenance') AND done_at >= $1 AND done_at < $2)::int AS skipped,
      count(*) FILTER (WHERE state = 'due' AND claim_seq = 0 AND due_at <= $2)::int AS backlog
    FROM check_runs WHERE session_id IS NULL`,
    [from, to],
  )
  const lags = (
    await q(`SELECT (claimed_at - due_at)::float8 AS lag FROM check_runs WHERE session_id IS NULL AND claimed_at >= $1 AND claimed_at < $2`, [from, to])
  )
    .map((r) => r.lag / 1000)
    .sort((a, b) => a - b)
  const [{ bytes }] = await q(`SELECT pg_database_size(current_database())::float8 AS bytes`)
  const [{ alerts }] = await q(`SELECT count(*)::int AS alerts FROM alert_notifications WHERE created_at >= $1 AND created_at < $2`, [
    new Date(from).toISOString(),
    new Date(to).toISOString(),
  ])
  const errors = answers.filter((a) => a.at >= from && a.at < to && (a.status >= 500 || a.status === 0)).length
  const m = [servers[0].meter.read(), servers[1].meter.read(), agent.meter.read(), pgMeter.read()]
  const line = {
    minute,
    ...counts,
    p50: pct(lags, 0.5),
    p99: pct(lags, 0.99),
    errors,
    faulted: windows.some((w) => w.from < to && (w.to ?? Infinity) + 30_000 >= from),
    cpu: m.map((x) => x.cpu),
    mib: m.map((x) => x.mib),
    dbMiB: bytes / 1048576,
    alerts,
    load: loadavg()[0],
  }
  rows.push(line)
  console.log(
    [
      String(minute).padStart(3),
      String(line.due).padStart(4),
      String(line.claimed).padStart(8),
      String(line.done).padStart(5),
      String(line.skipped).padStart(8),
      `${fixed(line.p50, 1)}/${fixed(line.p99, 1)}`.padStart(14),
      String(line.backlog).padStart(8),
      String(errors).padStart(4),
      line.cpu
        .map((c) => fixed(c))
        .join('/')
        .padStart(22),
      line.mib
        .map((c) => fixed(c))
        .join('/')
        .padStart(19),
      fixed(line.dbMiB).padStart(7),
      String(alerts).padStart(7),
      fixed(line.load, 1).padStart(5),
      line.faulted ? ' fault' : '',
    ].join(' '),
  )
}
for (let minute = 1; Date.now() - startedAt < T; minute++) {
  await sleep(startedAt + minute * MINUTE - Date.now())
  const to = Date.now()
  try {
    await row(minute, to - MINUTE, to)
    await collectSkipped(db2, skippedSeen)
    // due times older than 5 minutes are settled (done, or skipped), whatever happened since
    const settleTo = Math.floor((to - 5 * MINUTE) / MINUTE) * MINUTE
    if (settleTo > settledTo) {
      await settle(db2, due, checks, settledTo, settleTo, tally)
      settledTo = settleTo
    }
  } catch (error) {
    note(`minute ${minute}: ${error.stack ?? error}`)
  }
}

// ---- the end: the load stops, the last due times settle, the processes stop gracefully
const endedAt = Date.now()
clearInterval(loadTimer)
await Promise.all(faultRuns)
const lastDue = Math.floor((endedAt - MINUTE) / MINUTE) * MINUTE
note('load stopped; waiting 90 s for the last due runs to settle')
await sleep(90_000)
await collectSkipped(db2, skippedSeen)
if (lastDue > settledTo) await settle(db2, due, checks, settledTo, lastDue, tally)
const deliveries = (await targetCommand('stats', '{"deliveries"')).deliveries
// each server's /metrics at the end, for where its time went (store operations, pools)
for (const server of servers) {
  const text = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }).then(
    (r) => r.text(),
    () => '',
  )
  writeFileSync(join(dir, `${server.proc.name}.metrics.txt`), text)
  const slow = storeTimes(text)
    .slice(0, 6)
    .map((o) => `${o.operation} ${fixed(o.seconds)} s (${o.count}×)`)
    .join(', ')
  if (slow) note(`${server.proc.name}: store time ${slow}`)
}
clearInterval(probing)
for (const p of [agent.proc, ...servers.map((s) => s.proc)]) if (p.alive()) p.child.kill('SIGTERM')
await Promise.all([agent.proc, ...servers.map((s) => s.proc)].map((p) => (p.alive() ? new Promise((r) => p.child.once('exit', r)) : undefined)))
await collectSkipped(db2, skippedSeen)
const end = await finalChecks(db2, { flakyIds, deliveries, now: Date.now(), pgLog: readFileSync(cluster.logFile, 'utf8') })
balancer.close()

const faulted = (a) => inFault(a.at) || inFault(a.done)
const outside = answers.filter((a) => (a.status >= 500 || a.status === 0) && !faulted(a))
const inside = answers.filter((a) => (a.status >= 500 || a.status === 0) && faulted(a))
const inside503 = inside.filter((a) => a.status === 503)
const readyOutside = readinessFailures.filter((f) => !inFault(f.at) && !inFault(f.done))
const outOutside = takenOut.filter((t) => !inFault(t.at))
const lagsAll = rows
  .map((r) => r.p99)
  .filter(Number.isFinite)
  .sort((a, b) => a - b)
const quietRows = rows.filter((r) => !r.faulted && Number.isFinite(r.p99))
const lagsQuiet = quietRows.map((r) => r.p99).sort((a, b) => a - b)
const skippedRows = {}
for (const reason of skippedSeen.values()) skippedRows[reason] = (skippedRows[reason] ?? 0) + 1
const countedOnce = ['late', 'missed', 'maintenance'].every((r) => (end.counted[r] ?? 0) === (skippedRows[r] ?? 0))
const rssOf = (i) => rows.map((r) => r.mib[i]).filter(Number.isFinite)
const settledOk = tally.vanished === 0 && tally.lost === 0 && tally.doubled === 0 && tally.stuck === 0 && tally.skipped.other === 0
// (the other checks alert when their runs are degraded or fail, as on a machine too busy: their alerts are counted, not judged)
const alertsOk = end.twice === 0 && end.unrecovered === 0 && end.doubledNotifications === 0 && end.receivedTwice === 0 && end.received === end.flakyNotified
const verdict =
  settledOk &&
  countedOnce &&
  alertsOk &&
  end.runLeases === 0 &&
  end.deliveryLeases === 0 &&
  end.deadlocks === 0 &&
  outside.length === 0 &&
  readyOutside.length === 0

console.log('')
console.log(
  `soak: ${MINUTES} min, ${CHECKS} checks × ${LOCATIONS.length} locations every minute, ${RPS} requests/s (${answers.length} answered, ${dropped} not sent: 64 in flight), node ${process.version}`,
)
console.log(
  `  faults             ${windows.map((w) => `${w.name} at ${fixed((w.from - startedAt) / MINUTE, 1)} min (${fixed((w.to - w.from) / 1000)} s)`).join('; ')}`,
)
console.log(
  `  due runs checked   ${tally.expected} (due ${new Date(windowFrom).toISOString().slice(11, 16)}–${new Date(lastDue).toISOString().slice(11, 16)} UTC)`,
)
console.log(`  ran once           ${tally.ran}`)
console.log(
  `  skipped, counted   late ${tally.skipped.late}, missed ${tally.skipped.missed}, maintenance ${tally.skipped.maintenance}; other ${tally.skipped.other}`,
)
console.log(
  `  vanished / lost / doubled / still due   ${tally.vanished} / ${tally.lost} / ${tally.doubled} / ${tally.stuck}${tally.examples.length ? `: ${tally.examples.join('; ')}` : ''}`,
)
console.log(`  skips counted once ${countedOnce ? 'yes' : 'NO'}: run_skips ${JSON.stringify(end.counted)}, skipped rows seen ${JSON.stringify(skippedRows)}`)
console.log(
  `  alerts             ${end.notified} notifications, none twice for one run: ${end.doubledNotifications === 0 ? 'yes' : `NO (${end.doubledNotifications})`}; flaky checks alerted ${end.alerted}/${flakyIds.length}, twice ${end.twice}, not recovered ${end.unrecovered}; their deliveries received ${end.received} of ${end.flakyNotified} (twice ${end.receivedTwice}), ${JSON.stringify(end.statuses)}; other checks' notifications ${end.others} (degraded or failed runs)`,
)
console.log(`  leases left        runs ${end.runLeases}, deliveries ${end.deliveryLeases}`)
console.log(`  PostgreSQL log     deadlocks ${end.deadlocks}, lock waits over 1 s ${end.lockWaits}`)
console.log(
  `  5xx                outside the faults ${outside.length}; inside ${inside.length} (503 ${inside503.length}, with Retry-After ${inside503.filter((a) => a.retryAfter).length}); connection errors ${answers.filter((a) => a.status === 0).length}`,
)
const countsOf = (list) => {
  const counts = {}
  for (const a of list) {
    const key = `${a.status} ${a.why ?? a.error ?? ''}`.trim()
    counts[key] = (counts[key] ?? 0) + 1
  }
  return Object.entries(counts)
}
const breakdown = (list) =>
  countsOf(list)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([k, n]) => `${n} × ${k}`)
    .join('; ')
if (inside.length + outside.length > 0) console.log(`  5xx answers        outside: ${breakdown(outside) || 'none'}; inside: ${breakdown(inside) || 'none'}`)
console.log(
  `  readiness failed   outside the faults ${readyOutside.length}${
    readyOutside.length
      ? ` (${readyOutside
          .slice(0, 3)
          .map((f) => `${f.server}: ${f.why}`)
          .join('; ')})`
      : ''
  }, inside ${readinessFailures.length - readyOutside.length}; a server taken out by the balancer outside the faults ${outOutside.length} times`,
)
console.log(
  `  claim lag p99      per minute: median ${fixed(pct(lagsAll, 0.5), 1)} s, worst ${fixed(lagsAll.at(-1), 1)} s; outside the faults' minutes (${quietRows.length}): median ${fixed(pct(lagsQuiet, 0.5), 1)} s, worst ${fixed(lagsQuiet.at(-1), 1)} s, under 5 s in ${lagsQuiet.filter((x) => x < 5).length}`,
)
console.log(
  `  RSS MiB            server 2 first/last/max ${[rssOf(1)[0], rssOf(1).at(-1), Math.max(...rssOf(1))].map((x) => fixed(x)).join('/')}; agent ${[rssOf(2)[0], rssOf(2).at(-1)].map((x) => fixed(x)).join('/')}; PostgreSQL ${[rssOf(3)[0], rssOf(3).at(-1)].map((x) => fixed(x)).join('/')}`,
)
console.log(`  load average       mean ${fixed(rows.reduce((n, r) => n + r.load, 0) / Math.max(1, rows.length), 1)} (2 cores: shared with other work)`)
console.log(
  `  verdict            ${verdict ? 'HELD: every due run ran once or was counted, every alert once, no lease left, no deadlock, no 5xx outside the faults' : 'FAILED'}`,
)

/** The store operations of a /metrics text by the time they took in all. */
function storeTimes(text) {
  const out = []
  for (const line of text.split('\n')) {
    const sum = /^monitors_store_operation_duration_seconds_sum\{operation="([^"]+)"\} (\S+)$/.exec(line)
    if (sum) out.push({ operation: sum[1], seconds: Number(sum[2]), count: 0 })
    const count = /^monitors_store_operation_duration_seconds_count\{operation="([^"]+)"\} (\S+)$/.exec(line)
    if (count) {
      const o = out.find((x) => x.operation === count[1])
      if (o) o.count = Number(count[2])
    }
  }
  return out.sort((a, b) => b.seconds - a.seconds)
}

// ---- capacity: one server alone, its clock faster than the runs
if (CAPACITY_S > 0) await capacity()
async function capacity() {
  const execArgv = args.profile ? ['--cpu-prof', '--cpu-prof-dir', args.profile] : []
  const child = fork(join(root, 'bench', 'runner', 'server.mjs'), [entry], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const answer = (name) => new Promise((resolve) => child.on('message', (m) => m[name] !== undefined && resolve(m[name])))
  await answer('loaded')
  child.send({ start: { dbPath: dbUrl, key: 'capacity-key-0123456789abcdef01234567', speed: SPEED, retentionDays: 30 } })
  await answer('ready')
  await sleep(20_000)
  child.send({ mark: true })
  await answer('marked')
  const before = (await q(`SELECT count(*)::int AS n FROM run_skips`))[0].n
  await sleep(CAPACITY_S * 1000)
  child.send({ stop: true })
  const s = await answer('stopped')
  const [skips] = await q(`SELECT coalesce(sum(skipped), 0)::int AS n FROM run_skips`)
  console.log('')
  console.log(
    `capacity: one server on PostgreSQL, the clock x${SPEED} (${fixed((CHECKS * LOCATIONS.length * SPEED) / 60)} runs due a second), ${CAPACITY_S} s measured`,
  )
  console.log(
    `  runs a second      ${fixed(s.completed / s.elapsed, 1)} (${fixed((s.completed / s.elapsed) * 60)} a minute of real time), lag p50 ${fixed(s.lagP50)} ms, p99 ${fixed(s.lagP99)} ms (clock ms / ${SPEED})`,
  )
  console.log(
    `  server CPU         ${fixed(s.cpuPercent)} % of a core, ${fixed(s.cpuMsPerRun, 2)} ms a run; RSS ${fixed(s.rssMiB)} MiB; skip counts rows ${before} → ${skips.n}`,
  )
  if (args.profile) {
    // the profile is written as the server exits, after its answer
    if (child.exitCode === null) await Promise.race([new Promise((resolve) => child.once('exit', resolve)), sleep(30_000)])
    const file = readdirSync(args.profile)
      .filter((f) => f.endsWith('.cpuprofile'))
      .sort()
      .at(-1)
    if (file)
      console.log(execFileSync(process.execPath, [join(root, 'bench', 'runner', 'profile-summary.mjs'), join(args.profile, file), '20'], { encoding: 'utf8' }))
  }
}

await reader.end().catch(() => undefined)
cleanup()
if (args.keep) writeFileSync(join(dir, 'postgresql.log'), readFileSync(cluster.logFile))
await cluster.stop()
if (args.keep) note(`logs and project kept in ${dir}`)
else rmSync(dir, { recursive: true, force: true })
process.exit(verdict ? 0 : 1)
