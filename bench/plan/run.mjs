#!/usr/bin/env node
/**
 * bench/plan: generates N DNS checks (default 1,000) in 10 files, applies them to a local
 * server, then measures the process wall time of `monitors validate` and of `monitors plan`
 * with no changes, cold (empty transpile cache) and warm, and counts the list requests.
 *
 *   npm run build && npm run bench:plan -- [N] [--runs 3]
 *
 * Targets: plan of 1,000 unchanged checks under 1.0 s warm and 1.5 s cold, and at most
 * ceil(N/100) list requests per resource type.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FILES, writeProject } from './fixture.mjs'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const cli = join(repo, 'bin/monitors.cjs')
const args = process.argv.slice(2)
const runsAt = args.indexOf('--runs')
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 3
const n = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== '--runs') ?? 1000)

const { startLocalServer } = await import(join(repo, 'dist/src/server/index.js'))

// --- the project
const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-plan-'))
writeProject(repo, dir, n)

// --- the server (no rate limit in the way of seeding)
const requests = []
const server = await startLocalServer({
  apiKeys: [{ key: 'bench-key', accountId: 'bench' }],
  rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
  log: (line) => requests.push(line),
})
const env = { ...process.env, NO_COLOR: '1', MONITORING_API_URL: server.url, MONITORING_API_KEY: 'bench-key', MONITORING_ACCOUNT_ID: 'bench' }

/** Runs the CLI as its own process (asynchronously: the server answers from this one). */
async function cliRun(command, extraEnv = {}) {
  const started = process.hrtime.bigint()
  const child = spawn(process.execPath, [cli, ...command], { cwd: dir, env: { ...env, ...extraEnv } })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d))
  const status = await new Promise((done) => child.on('close', done))
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  const result = { status, stdout, stderr }
  if (result.status !== 0) {
    process.stderr.write(result.stdout + result.stderr)
    throw new Error(`monitors ${command.join(' ')} exited ${result.status}`)
  }
  return { ms, stdout: result.stdout, stderr: result.stderr }
}

try {
  console.log(`bench/plan: ${n} checks in ${FILES} files (${dir})`)
  const seed = await cliRun(['apply', '--yes', '--concurrency', '16'])
  console.log(`seeded with apply in ${(seed.ms / 1000).toFixed(2)} s`)

  // an empty compile cache (node_modules/.cache/monitors-as-code, see src/project/loader.ts)
  const coldEnv = () => {
    rmSync(join(dir, 'node_modules', '.cache'), { recursive: true, force: true })
    return {}
  }
  const measure = async (label, command, cold) => {
    const times = []
    for (let r = 0; r < runs; r++) times.push((await cliRun(command, cold ? coldEnv() : {})).ms)
    times.sort((a, b) => a - b)
    const median = times[Math.floor(times.length / 2)]
    console.log(`${label.padEnd(24)} median ${(median / 1000).toFixed(3)} s   (runs: ${times.map((t) => (t / 1000).toFixed(3)).join(', ')})`)
    return median
  }
  await cliRun(['validate']) // fill the warm cache
  const results = {
    validateCold: await measure('validate, cold cache', ['validate'], true),
    validateWarm: await measure('validate, warm cache', ['validate'], false),
    planCold: await measure('plan, cold cache', ['plan'], true),
    planWarm: await measure('plan, warm cache', ['plan'], false),
  }

  if (process.env.MONITORS_TIMING) {
    for (const command of ['validate', 'plan']) {
      const run = await cliRun([command], coldEnv())
      console.log(`phases of a cold ${command}:\n${run.stderr}`)
    }
  }
  requests.length = 0
  const plan = await cliRun(['plan'])
  if (!/^No changes\./m.test(plan.stdout)) throw new Error(`plan was expected to say "No changes.":\n${plan.stdout.slice(0, 2000)}`)
  const lists = {}
  for (const line of requests) {
    const match = /\bGET (\/v1\/[a-z-]+(?:\/services)?)/.exec(line)
    if (match) lists[match[1]] = (lists[match[1]] ?? 0) + 1
  }
  const allowed = Math.ceil(n / 100)
  console.log(
    `list requests of one plan: ${Object.entries(lists)
      .map(([p, c]) => `${p} ${c}`)
      .join(', ')} (allowed per type: ${allowed})`,
  )
  const ok = results.planWarm < 1000 && results.planCold < 1500 && Object.values(lists).every((c) => c <= allowed)
  console.log(ok ? 'targets met: plan < 1.0 s warm, < 1.5 s cold, list requests within ceil(N/100)' : 'TARGETS MISSED')
  process.exitCode = ok ? 0 : 1
} finally {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
}
