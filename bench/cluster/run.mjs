#!/usr/bin/env node
// Several servers and agents on one PostgreSQL database, with a server and an agent killed
// (SIGKILL) half-way: 2 `monitors server --no-runner` processes behind a small round-robin
// load balancer (this process), 3 `monitors agent` processes (eu-west-1; us-east-1; both), and
// CLUSTER_CHECKS DNS checks at frequency 1 (a run a minute, locations in turn) against a DNS
// server of this process, for CLUSTER_SECONDS. Then the database is read back:
// - every due time of every check in the measured window has exactly one run row, done, with
//   exactly one FINAL result (counted per check and location): the exactly-once verdict;
// - no FINAL result belongs to a run that is not done, none is doubled;
// - every API answer of a prober (lists and reads, through the balancer) was right.
// Needs PostgreSQL's server binaries (Debian: apt-get install postgresql) and `npm run build`.
// Defaults are the issue's scale test: CLUSTER_CHECKS=2000 CLUSTER_SECONDS=300.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import http from 'node:http'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createJiti } from 'jiti'
import pg from 'pg'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const bin = join(root, 'bin', 'monitors.cjs')
if (!existsSync(join(root, 'dist', 'cli', 'main.js'))) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}
const CHECKS = Number(process.env.CLUSTER_CHECKS ?? 2000)
const SECONDS = Number(process.env.CLUSTER_SECONDS ?? 300)
const LEASE_S = 10
const KEY = 'cluster-key-0123456789abcdef0123456789abcdef'
const ACCOUNT = 'cluster'
const LOCATIONS = ['eu-west-1', 'us-east-1']

const jiti = createJiti(import.meta.url)
const { startPostgresCluster } = await jiti.import(join(root, 'test', 'helpers', 'postgres-cluster.ts'))
const { startDnsServer } = await jiti.import(join(root, 'test', 'helpers', 'dns-server.ts'))

const log = (line) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const children = new Set()

// the key in the environment, as docs/server.md says to give it (never in the arguments)
function start(name, args) {
  const env = { ...process.env, NO_COLOR: '1', MONITORING_SERVER_API_KEYS: `${KEY}:${ACCOUNT}`, MONITORING_API_KEY: KEY }
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env })
  children.add(child)
  let output = ''
  child.stdout.on('data', (chunk) => (output = (output + chunk).slice(-20_000)))
  child.stderr.on('data', (chunk) => (output = (output + chunk).slice(-20_000)))
  child.on('exit', () => children.delete(child))
  return { name, child, output: () => output }
}

async function cleanup() {
  for (const child of children) child.kill('SIGKILL')
}
process.on('SIGINT', () => void cleanup().then(() => process.exit(130)))

log(`starting PostgreSQL; ${CHECKS} checks at frequency 1 for ${SECONDS} s; 2 servers, 3 agents`)
const cluster = await startPostgresCluster()
const dns = await startDnsServer()
dns.set('cluster.test', 'A', { records: [{ type: 'A', data: '192.0.2.10' }] })
let exitCode = 1
try {
  const admin = new pg.Client({ connectionString: cluster.url('postgres') })
  await admin.connect()
  await admin.query('CREATE DATABASE monitors')
  await admin.end()
  const db = cluster.url('monitors')

  // two servers started at the same moment on the empty database (the migrations run once)
  const servers = [0, 1].map((n) => start(`server ${n + 1}`, ['server', '--db', db, '--port', '0', '--no-runner', '--quiet', '--rate-limit', '100000000/60s']))
  const urls = await Promise.all(
    servers.map(async (s) => {
      for (let i = 0; i < 600; i++) {
        const url = /listening on (http:\/\/\S+)/.exec(s.output())?.[1]
        if (url) return url
        if (s.child.exitCode !== null) break
        await sleep(50)
      }
      throw new Error(`${s.name} did not start: ${s.output()}`)
    }),
  )
  const alive = urls.map(() => true)

  // the load balancer: round robin over the servers that accept connections
  let turn = 0
  const forward = (target, req, body) =>
    new Promise((resolve, reject) => {
      const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, resolve)
      upstream.on('error', reject)
      upstream.end(body)
    })
  const balancer = http.createServer(async (req, res) => {
    const chunks = []
    for await (const chunk of req) chunks.push(chunk)
    const body = Buffer.concat(chunks)
    for (let tries = 0; tries < urls.length * 2; tries++) {
      const index = turn++ % urls.length
      if (!alive[index]) continue
      try {
        const answer = await forward(urls[index], req, body)
        res.writeHead(answer.statusCode, answer.headers)
        answer.pipe(res)
        return
      } catch {
        // a server that refuses or drops the connection is out until the next probe
        alive[index] = false
        setTimeout(() => (alive[index] = servers[index].child.exitCode === null), 2000)
      }
    }
    res.writeHead(502).end()
  })
  await new Promise((resolve) => balancer.listen(0, '127.0.0.1', resolve))
  const lb = `http://127.0.0.1:${balancer.address().port}`
  const api = async (method, path, body) => {
    const response = await fetch(`${lb}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const text = await response.text()
    return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : undefined }
  }

  log(`servers ${urls.join(' and ')} behind ${lb}; creating ${CHECKS} checks`)
  const ids = []
  for (let i = 0; i < CHECKS; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, CHECKS - i) }, (_, j) =>
        api('POST', '/v1/checks/dns', {
          name: `cluster ${i + j}`,
          frequency: 1,
          locations: LOCATIONS,
          doubleCheck: false,
          tags: ['cluster'],
          request: { query: 'cluster.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
          retryStrategy: { type: 'NO_RETRIES' },
        }),
      ),
    )
    for (const answer of batch) {
      if (answer.status !== 201) throw new Error(`create: ${answer.status} ${JSON.stringify(answer.json)}`)
      ids.push(answer.json.id)
    }
  }
  const agentArgs = (id, locations) => [
    'agent',
    '--api-url',
    lb,
    '--account-id',
    ACCOUNT,
    '--locations',
    locations.join(','),
    '--agent-id',
    id,
    '--lease',
    `${LEASE_S}s`,
    '--health-port',
    '0',
    '--concurrency',
    '50',
    '--poll-interval',
    '500ms',
  ]
  const agents = [
    start('agent eu', agentArgs('agent-eu', ['eu-west-1'])),
    start('agent us', agentArgs('agent-us', ['us-east-1'])),
    start('agent both', agentArgs('agent-both', LOCATIONS)),
  ]
  const startedAt = Date.now()
  // the measured window: due times from a little after the start to a minute before the end
  // (runs due later may still be in flight, or waiting for a dead claimer's lease)
  const windowFrom = startedAt + 10_000
  const windowTo = startedAt + SECONDS * 1000 - 60_000
  log(`agents started; measuring due times from +10 s to +${SECONDS - 60} s`)

  // the prober: lists and reads through the balancer all along
  const probes = { total: 0, wrong: 0, failures: [] }
  let probing = true
  const prober = (async () => {
    while (probing) {
      const page = 1 + Math.floor(Math.random() * Math.ceil(CHECKS / 100))
      try {
        const list = await api('GET', `/v1/checks?limit=100&page=${page}`)
        const expected = Math.min(100, CHECKS - (page - 1) * 100)
        const range = list.headers.get('content-range') ?? ''
        probes.total++
        if (list.status !== 200 || list.json.length !== expected || !range.endsWith(`/${CHECKS}`)) {
          probes.wrong++
          probes.failures.push(`list page ${page}: ${list.status} ${range}`)
        }
        const id = ids[Math.floor(Math.random() * ids.length)]
        const one = await api('GET', `/v1/checks/${id}`)
        probes.total++
        if (one.status !== 200 || one.json.id !== id) {
          probes.wrong++
          probes.failures.push(`get ${id}: ${one.status}`)
        }
      } catch (error) {
        probes.total++
        probes.wrong++
        probes.failures.push(String(error))
      }
      await sleep(200)
    }
  })()

  await sleep((SECONDS * 1000) / 2)
  servers[0].child.kill('SIGKILL')
  agents[0].child.kill('SIGKILL')
  const killedAt = Date.now()
  log(`SIGKILL: ${servers[0].name} and ${agents[0].name} (${agents[1].name} and ${agents[2].name} serve on, ${agents[2].name} alone in eu-west-1)`)
  await sleep(startedAt + SECONDS * 1000 - Date.now())
  probing = false
  await prober
  for (const agent of agents.slice(1)) agent.child.kill('SIGTERM')
  await sleep(3000)
  servers[1].child.kill('SIGTERM')
  await sleep(1000)
  balancer.close()

  // ---- reading the database back
  const client = new pg.Client({ connectionString: db })
  await client.connect()
  const q = async (text, values) => (await client.query(text, values)).rows
  const { dueIndexAt, dueTime, locationsFor } = await jiti.import(join(root, 'src', 'server', 'scheduler', 'due.ts'))
  const checks = (await q('SELECT id, body FROM checks')).map((r) => JSON.parse(r.body))
  // a full result's run id is "<run row id>.<claim>"; a compact one (result_runs) is its check's
  // and location's run done when it was created (a run's done_at is its result's creation time)
  const everyFinal = `SELECT split_part(run_id, '.', 1) AS run, extract(epoch FROM started_at::timestamptz) * 1000 AS started_ms
      FROM check_results WHERE result_type = 'FINAL'
    UNION ALL
    SELECT r.id, (c.created - c.made - c.dur)::float8 FROM result_runs c JOIN checks k ON k.seq = c.chk
      JOIN result_locations l ON l.id = c.loc
      LEFT JOIN check_runs r ON r.check_id = k.id AND r.location = l.name AND r.done_at = c.created AND r.state = 'done'`
  const finalsOf = `SELECT run, count(*)::int AS finals, min(started_ms)::float8 AS started_ms FROM (${everyFinal}) u GROUP BY 1`
  const runs = await q(`SELECT r.id, r.check_id, r.location, r.due_at::float8 AS due_at, r.state, r.claim_seq,
      coalesce(f.finals, 0) AS finals, f.started_ms
    FROM check_runs r LEFT JOIN (${finalsOf}) f ON f.run = r.id WHERE r.session_id IS NULL`)
  const byKey = new Map(runs.map((r) => [`${r.check_id}|${r.location}|${r.due_at}`, r]))
  let expected = 0
  let exactlyOnce = 0
  let missing = 0
  let doubled = 0
  let skipped = 0
  const perCheckLocation = new Map()
  const lags = []
  for (const check of checks) {
    for (let k = dueIndexAt(check, windowFrom) + 1; dueTime(check, k) <= windowTo; k++) {
      for (const location of locationsFor(check, k)) {
        expected++
        const key = `${check.id}|${location}`
        const counts = perCheckLocation.get(key) ?? { expected: 0, ran: 0 }
        counts.expected++
        const run = byKey.get(`${check.id}|${location}|${dueTime(check, k)}`)
        if (!run || run.finals === 0) {
          missing++
          if (run?.state === 'skipped') skipped++
        } else if (run.finals > 1) doubled++
        else if (run.state === 'done') {
          exactlyOnce++
          counts.ran++
          lags.push(run.started_ms - run.due_at)
        }
        perCheckLocation.set(key, counts)
      }
    }
  }
  const [orphans] = await q(`SELECT count(*)::int AS n FROM (${everyFinal}) u
    WHERE u.run IS NULL OR NOT EXISTS (SELECT 1 FROM check_runs r WHERE r.id = u.run AND r.state = 'done')`)
  const [doubles] = await q(`SELECT count(*)::int AS n FROM (SELECT run FROM (${everyFinal}) u WHERE run IS NOT NULL GROUP BY 1 HAVING count(*) > 1) d`)
  const [reclaimed] = await q(`SELECT count(*)::int AS n FROM check_runs WHERE claim_seq > 1`)
  const [totals] = await q(`SELECT count(*)::int AS runs, count(*) FILTER (WHERE state = 'done')::int AS done,
    (SELECT count(*)::int FROM (${everyFinal}) u) AS finals FROM check_runs`)
  const [migrations] = await q('SELECT count(*)::int AS n, max(version) AS v FROM schema_migrations')
  await client.end()
  const pairsOk = [...perCheckLocation.values()].filter((c) => c.ran === c.expected).length
  lags.sort((a, b) => a - b)
  const pct = (p) => (lags.length ? lags[Math.min(lags.length - 1, Math.floor(lags.length * p))] : NaN)
  const verdict = missing === 0 && doubled === 0 && orphans.n === 0 && doubles.n === 0 && probes.wrong === 0

  console.log('')
  console.log(
    `scale test: ${CHECKS} checks at frequency 1, ${SECONDS} s, 2 servers + 3 agents on one PostgreSQL; SIGKILL of a server and an agent at +${Math.round((killedAt - startedAt) / 1000)} s`,
  )
  console.log(`  migrations applied      ${migrations.n} (schema ${migrations.v}), once, by two servers starting together`)
  console.log(`  due runs in the window  ${expected} (${perCheckLocation.size} check × location pairs)`)
  console.log(`  ran exactly once        ${exactlyOnce}; pairs with every due run run once: ${pairsOk}/${perCheckLocation.size}`)
  console.log(`  missing / doubled       ${missing} (${skipped} skipped as stale) / ${doubled}`)
  console.log(
    `  all rows: runs ${totals.runs}, done ${totals.done}, FINAL results ${totals.finals}; results of no done run ${orphans.n}; runs with two FINAL results ${doubles.n}`,
  )
  console.log(`  runs claimed again after a lease expired: ${reclaimed.n}`)
  console.log(`  start after due time    p50 ${pct(0.5)} ms, p95 ${pct(0.95)} ms, max ${lags.at(-1)} ms`)
  console.log(`  API answers (prober)    ${probes.total}, wrong ${probes.wrong}${probes.failures.length ? `: ${probes.failures.slice(0, 5).join('; ')}` : ''}`)
  console.log(`  verdict                 ${verdict ? 'EXACTLY ONCE: every due run ran once, no result lost or doubled, every answer right' : 'FAILED'}`)
  exitCode = verdict ? 0 : 1
} catch (error) {
  console.error(`cluster bench failed: ${error instanceof Error ? error.stack : error}`)
} finally {
  await cleanup()
  await dns.close()
  await cluster.stop()
}
process.exit(exitCode)
