#!/usr/bin/env node
/**
 * bench/apply: `monitors apply --concurrency 16` of N DNS/ICMP creates in 10 files against the
 * local server (its own process, a temporary SQLite file, the rate limit raised out of the
 * way), then the server's list reads/s and creates/s with those N checks stored.
 *
 *   npm run build && npm run bench:apply -- [--checks N] [--quick] [--seconds S] [--scheduler] [--cpu-prof DIR]
 *
 * --checks N   checks to create (default 10000); --quick: 1000
 * --seconds S  length of each autocannon run (default 5)
 * --scheduler  the server plans due runs as `monitors server` does (no runner: nothing is run)
 * --cpu-prof   write V8 CPU profiles of the CLI and of the server process into DIR
 *
 * Figures are printed as `name: value` lines (for npm run bench). Targets: the apply in
 * <= 20 s at 10,000 (>= 500 creates/s), >= 3,000 list reads/s and >= 1,000 creates/s.
 */
import { spawn } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import autocannon from 'autocannon'
import { writeProject } from '../plan/fixture.mjs'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const cli = join(repo, 'bin/monitors.cjs')
const entry = join(repo, 'dist', 'src', 'server', 'index.js')
if (!existsSync(entry)) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}

const args = process.argv.slice(2)
const flag = (name) => args.includes(name)
const value = (name, fallback) => {
  const at = args.indexOf(name)
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback
}
const n = Number(value('--checks', flag('--quick') ? 1000 : 10000))
if (!Number.isInteger(n) || n < 1) {
  console.error(`--checks must be a whole number above 0 (got ${value('--checks')})`)
  process.exit(1)
}
const seconds = Number(value('--seconds', process.env.BENCH_SECONDS ?? 5))
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const profileDir = value('--cpu-prof', undefined)
const FILES = 10
const key = 'bench-apply-key-0123456789abcdef0123'
const account = 'bench'

const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-apply-'))

// --- the project: N DNS and ICMP checks (one in five) in 10 files
writeProject(repo, dir, n, { files: FILES, projectName: 'bench-apply', icmpEvery: 5 })

// --- the server: its own process, so that the CLI and the server each have their CPU
const serverArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', resolve(profileDir), '--cpu-prof-name', 'server.cpuprofile'] : []
const server = spawn(
  process.execPath,
  [
    ...serverArgs,
    '--input-type=module',
    '-e',
    `
  const { startLocalServer } = await import(${JSON.stringify(pathToFileURL(entry).href)})
  const server = await startLocalServer({
    dbPath: ${JSON.stringify(join(dir, 'server.db'))},
    apiKeys: [{ key: ${JSON.stringify(key)}, accountId: ${JSON.stringify(account)} }],
    rateLimit: { max: 1e9, timeWindowMs: 60000 },
    scheduler: ${flag('--scheduler')},
    runner: false,
  })
  process.stdout.write(server.url + '\\n')
  // the CPU time this process has used so far, for each line read on stdin
  process.stdin.setEncoding('utf8').on('data', () => { const u = process.cpuUsage(); process.stdout.write('cpu ' + (u.user + u.system) / 1000 + '\\n') })
  process.on('SIGTERM', () => server.close().then(() => process.exit(0)))
`,
  ],
  { stdio: ['pipe', 'pipe', 'inherit'] },
)
let serverOut = ''
server.stdout.setEncoding('utf8').on('data', (chunk) => (serverOut += chunk))
const url = await new Promise((done, fail) => {
  const poll = setInterval(() => {
    if (!serverOut.includes('\n')) return
    clearInterval(poll)
    done(serverOut.split('\n')[0].trim())
  }, 10)
  server.on('exit', (code) => fail(new Error(`the server exited with ${code}`)))
})
/** CPU milliseconds the server process has used so far. */
async function serverCpuMs() {
  const seen = serverOut.length
  server.stdin.write('cpu?\n')
  for (let waited = 0; ; waited += 10) {
    const match = /cpu ([\d.]+)\n/.exec(serverOut.slice(seen))
    if (match) return Number(match[1])
    if (server.exitCode !== null || server.signalCode !== null || waited > 30_000) throw new Error('the server process did not answer (it exited?)')
    await new Promise((r) => setTimeout(r, 10))
  }
}
const env = { ...process.env, NO_COLOR: '1', MONITORING_API_URL: url, MONITORING_API_KEY: key, MONITORING_ACCOUNT_ID: account }
delete env.CI

/**
 * Runs the CLI as its own process, timed from spawn to exit. Its output goes to files, as in a
 * pipeline's log (a pipe read by this busy process would block the CLI's writes: Node writes to
 * pipes synchronously). With `MONITORS_BENCH_CPU`, the process's own CPU time is read at exit.
 */
async function monitors(command) {
  const nodeArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', resolve(profileDir), '--cpu-prof-name', `cli-${command[0]}.cpuprofile`] : []
  const cpuFile = join(dir, `cpu-${command[0]}.txt`)
  const cpuHook = `data:text/javascript,${encodeURIComponent(`import { writeFileSync } from 'node:fs'; process.on('exit', () => { const u = process.cpuUsage(); writeFileSync(${JSON.stringify(cpuFile)}, String((u.user + u.system) / 1000)) })`)}`
  const outFile = join(dir, `out-${command[0]}.txt`)
  const errFile = join(dir, `err-${command[0]}.txt`)
  const fds = [openSync(outFile, 'w'), openSync(errFile, 'w')]
  const started = process.hrtime.bigint()
  const child = spawn(process.execPath, [...nodeArgs, '--import', cpuHook, cli, ...command], { cwd: dir, env, stdio: ['ignore', fds[0], fds[1]] })
  const status = await new Promise((done) => child.on('close', done))
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  for (const fd of fds) closeSync(fd)
  const stdout = readFileSync(outFile, 'utf8')
  const stderr = readFileSync(errFile, 'utf8')
  const cpuMs = existsSync(cpuFile) ? Number(readFileSync(cpuFile, 'utf8')) : NaN
  if (status !== 0) {
    process.stderr.write(stdout.slice(-4000) + stderr.slice(-4000))
    throw new Error(`monitors ${command.join(' ')} exited ${status}`)
  }
  return { ms, cpuMs, stdout, stderr }
}

const headers = { authorization: `Bearer ${key}`, 'x-service-account': account, 'content-type': 'application/json' }
const dnsBody = JSON.stringify({
  name: 'bench create',
  tags: ['bench', 'group-1'],
  locations: ['eu-west-1', 'us-east-1'],
  frequency: 5,
  request: { query: 'bench.example.com', recordType: 'A', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
})

function cannon(options) {
  return new Promise((done, fail) => {
    autocannon({ url: `${url}${options.path}`, connections, duration: seconds, headers, ...options }, (error, result) => {
      if (error) return fail(error)
      done(result)
    })
  })
}

/**
 * Issue 27's second figure: the server's CPU for a full read of the check list, page after page
 * (100 a page) following its `Link: rel="next"` (keyset) and by page numbers, right after the
 * apply (the checks stored are the n applied). Linear in the checks means the CPU ÷ checks stays
 * the same from 1,000 to 10,000 (OFFSET paging grew with exponent ~1.27). Each page is read
 * once: the server's page cache answers only a page read again.
 */
async function listReads() {
  const readAll = async (byKeyset) => {
    const before = await serverCpuMs()
    let path = '/v1/checks?limit=100&page=1'
    let pages = 0
    while (path) {
      const res = await fetch(`${url}${path}`, { headers })
      if (!res.ok) throw new Error(`GET ${path}: ${res.status}`)
      const items = await res.json()
      pages++
      const next = res.headers.get('link')?.match(/<([^>]+)>;\s*rel="next"/)?.[1]
      path = byKeyset ? next : items.length === 100 ? `/v1/checks?limit=100&page=${pages + 1}` : undefined
    }
    return { ms: (await serverCpuMs()) - before, pages }
  }
  const keyset = await readAll(true)
  const offset = await readAll(false)
  figure('list.pages', keyset.pages)
  figure('list.keyset_full_read_cpu_ms', keyset.ms.toFixed(0))
  figure('list.keyset_cpu_us_per_check', ((keyset.ms * 1000) / n).toFixed(1))
  figure('list.offset_full_read_cpu_ms', offset.ms.toFixed(0))
  figure('list.offset_cpu_us_per_check', ((offset.ms * 1000) / n).toFixed(1))
}

const figure = (name, text) => console.log(`${name}: ${text}`)

try {
  console.log(
    `bench/apply: ${n} checks in ${FILES} files, server ${url} (its own process, rate limit raised), node ${process.version}, ${connections} connections and ${seconds} s per server run`,
  )
  const serverBefore = await serverCpuMs()
  const applied = await monitors(['apply', '--yes', '--concurrency', '16'])
  const serverApply = (await serverCpuMs()) - serverBefore
  const created = (applied.stdout.match(/^\+ \S+ \S+ created/gm) ?? []).length
  if (created !== n) throw new Error(`apply created ${created} checks, expected ${n}`)
  const perSecond = n / (applied.ms / 1000)
  figure('apply.checks', n)
  figure('apply.seconds', (applied.ms / 1000).toFixed(2))
  figure('apply.creates_per_second', Math.round(perSecond))
  // CPU time, less sensitive than the wall time to a machine busy with other work
  figure('apply.cli_cpu_seconds', (applied.cpuMs / 1000).toFixed(2))
  figure('apply.server_cpu_ms_per_create', (serverApply / n).toFixed(3))
  figure('apply.lock_bytes', statSync(join(dir, 'monitoring.lock.json')).size)

  await listReads()
  const reads = await cannon({ path: '/v1/checks?limit=100', method: 'GET' })
  const readsStored = await fetch(`${url}/v1/checks?limit=1`, { headers }).then((r) => r.headers.get('content-range'))
  const creates = await cannon({ path: '/v1/checks/dns', method: 'POST', body: dnsBody })
  const readRate = reads.requests.average
  const createRate = creates.requests.average
  figure('server.checks_stored', readsStored?.split('/')[1] ?? '?')
  figure('server.list_reads_per_second', `${Math.round(readRate)} (p99 ${reads.latency.p99} ms, ${reads.non2xx + reads.errors + reads.timeouts} not ok)`)
  figure('server.creates_per_second', `${Math.round(createRate)} (p99 ${creates.latency.p99} ms, ${creates.non2xx + creates.errors + creates.timeouts} not ok)`)

  const met = (ok) => (ok ? 'met' : 'NOT met')
  const applyGoal = n >= 10000 ? perSecond >= 500 && applied.ms <= 20000 : perSecond >= 500
  figure('target.apply', `${met(applyGoal)} (>= 500 creates/s${n >= 10000 ? ', <= 20 s at 10,000' : ''})`)
  figure('target.list_reads', `${met(readRate >= 3000)} (>= 3000/s)`)
  figure('target.creates', `${met(createRate >= 1000)} (>= 1000/s)`)
} finally {
  if (server.exitCode === null && server.signalCode === null) {
    server.kill('SIGTERM')
    await new Promise((done) => server.once('exit', done))
  }
  rmSync(dir, { recursive: true, force: true })
}
