#!/usr/bin/env node
/**
 * bench/plan/figures: the CLI's own figures at one size, as `name: value` lines (bench/run.mjs
 * reads them; notes go to stderr). N DNS checks in 10 files are created on a local server in
 * this process (rate limit out of the way) and recorded in the lock file, then each command runs
 * as its own process, as a user runs it:
 *   plan.seconds / plan.peak_mib   `monitors plan` with no changes, warm compile cache: median wall time, peak RSS
 *   plan.cold_seconds              the same with an empty compile cache
 *   validate.seconds               `monitors validate`, warm
 *   version.seconds                `monitors --version`; node.seconds: `node -e 0` on this machine, the floor
 *   version_without_extra_ca.seconds, node_without_extra_ca.seconds
 *                                  the same two with NODE_EXTRA_CA_CERTS unset, when it is set (Node
 *                                  reads that file as it starts: 70 to 100 ms of every process here)
 *   help.seconds                   `monitors --help`
 *   edit.seconds / edit.peak_mib   `monitors plan` right after one check of one file (of 10) was edited, its
 *                                  name set to a new random value each run (a pull request: no memo can
 *                                  have seen it); the plan must show that one update
 *   edit_no_cache.seconds          the same edit cycle, planned with `--no-cache`
 * and `*.cpu_seconds` beside each: the CPU time (user + system) the process used, the figure to
 * compare on a machine other work shares. With --paired, also the plan against the reference's
 * parse (bench/reference/checkly.mjs) in alternated runs, one right after the other, so that a
 * slow spell of the machine weighs on both sides of a pair:
 *   paired.ratio / paired.cpu_ratio   median over the pairs of plan ÷ parse, wall and CPU time
 *   paired.edit_ratio / paired.edit_cpu_ratio   the same for the plan after an edit (its own edit each run)
 *   paired.edit_no_cache_cpu_ratio    the plan after an edit ÷ the same with --no-cache, CPU time
 *   paired.edit_peak_mib / paired.edit_no_cache_peak_mib / paired.parse_peak_mib   medians of peak RSS
 * With --before <checkout> (a built checkout of another version, its dist/ made: the version to
 * compare with), the paired edit runs take a fourth turn, that checkout's CLI planning its own
 * copy of the project (the same checks and lock, its own caches) after its own edit, against the
 * same server:
 *   paired.before_edit_ratio / paired.before_edit_cpu_ratio   its plan after an edit ÷ the parse
 *   paired.before_edit_peak_mib                              its median peak RSS
 *
 *   npm run build && node bench/plan/figures.mjs [--checks N] [--quick] [--runs R] [--paired [--paired-runs P] [--before DIR]]
 */
import { randomBytes } from 'node:crypto'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { seed, writeProject, FILES } from './fixture.mjs'
import { runProbed } from './probed.mjs'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const cli = join(repo, 'bin/monitors.cjs')
const args = process.argv.slice(2)
const value = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const n = Number(value('--checks', args.includes('--quick') ? 1000 : 10000))
const runs = Number(value('--runs', 3))
const pairedRuns = args.includes('--paired') ? Number(value('--paired-runs', 5)) : 0
const before = args.includes('--before') ? resolve(value('--before')) : undefined
if (before !== undefined && !existsSync(join(before, 'dist/cli/main.js'))) {
  console.error(`--before ${before}: no dist/ there (build that checkout first)`)
  process.exit(1)
}
if (!Number.isInteger(n) || n < 1 || !Number.isInteger(runs) || runs < 1) {
  console.error('--checks and --runs take whole numbers above 0')
  process.exit(1)
}
if (!existsSync(join(repo, 'dist/cli/main.js'))) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}
const figure = (name, text) => console.log(`${name}: ${text}`)
const note = (text) => console.error(`bench/plan: ${text}`)

const { startLocalServer } = await import(pathToFileURL(join(repo, 'dist/src/server/index.js')).href)
const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-figures-'))
const project = join(dir, 'project')
writeProject(repo, project, n)
const server = await startLocalServer({
  apiKeys: [{ key: 'bench-key', accountId: 'bench' }],
  rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
  log: false,
})
const env = {
  ...process.env,
  NO_COLOR: '1',
  MONITORING_API_URL: server.url,
  MONITORING_API_KEY: 'bench-key',
  MONITORING_ACCOUNT_ID: 'bench',
}
delete env.MONITORS_TIMING

/** One process, asynchronously (the server answers from this one): wall ms, CPU ms, peak RSS KiB, output. */
async function timed(command, { extraEnv = {}, unset = [], cwd = project } = {}) {
  const childEnv = { ...env, ...extraEnv }
  for (const name of unset) delete childEnv[name]
  const run = await runProbed(command, { cwd, env: childEnv, probeDir: dir })
  if (run.status !== 0) throw new Error(`${command.join(' ')} exited ${run.status}:\n${run.output.slice(0, 2000)}`)
  return run
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const seconds = (ms) => (ms / 1000).toFixed(3)

/** Medians of `runs` runs: wall time, CPU time, peak RSS. */
async function measure(command, options = {}) {
  const all = []
  for (let r = 0; r < runs; r++) all.push(await timed(command, options))
  return { ms: median(all.map((r) => r.ms)), cpuMs: median(all.map((r) => r.cpuMs)), rss: median(all.map((r) => r.rss)), times: all.map((r) => r.ms) }
}

/**
 * One check of one file edited as a pull request would: check `dns-3` (in checks/batch-3) gets a
 * name no run had before. Resolves to the plan's run, which must show that one update.
 */
const edited = join(project, 'checks', 'batch-3.check.ts')
let original
async function editAndPlan(extra = [], { cwd = project, command = cli } = {}) {
  original ??= readFileSync(edited, 'utf8')
  const name = `DNS 3 ${randomBytes(6).toString('hex')}`
  const changed = original.replace("name: 'DNS 3',", `name: '${name}',`)
  if (changed === original) throw new Error(`${edited} holds no check named 'DNS 3'`)
  writeFileSync(join(cwd, 'checks', 'batch-3.check.ts'), changed)
  const run = await timed([command, 'plan', ...extra], { cwd })
  if (!/^Plan: 0 to create, 1 to update, 0 to delete\./m.test(run.output) || !run.output.includes(name)) {
    throw new Error(`the plan after editing dns-3 was expected to update it alone:\n${run.output.slice(0, 2000)}`)
  }
  return run
}

/** Medians of `runs` edit cycles (see editAndPlan). */
async function measureEdits(extra = []) {
  const all = []
  for (let r = 0; r < runs; r++) all.push(await editAndPlan(extra))
  return { ms: median(all.map((r) => r.ms)), cpuMs: median(all.map((r) => r.cpuMs)), rss: median(all.map((r) => r.rss)), times: all.map((r) => r.ms) }
}

/** `name.seconds` (wall) and `name.cpu_seconds` of a measure. */
function report(name, m) {
  figure(`${name}.seconds`, seconds(m.ms))
  figure(`${name}.cpu_seconds`, seconds(m.cpuMs))
}

try {
  note(`${n} checks in ${FILES} files, node ${process.version}, ${runs} runs each (median)`)
  figure(
    'load_average.start',
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' '),
  )
  const started = Date.now()
  await seed(repo, project, { baseUrl: server.url, apiKey: 'bench-key', accountId: 'bench' })
  note(`seeded the server and the lock in ${((Date.now() - started) / 1000).toFixed(1)} s`)

  const first = await timed([cli, 'plan'])
  if (!/^No changes\./m.test(first.output)) throw new Error(`the plan was expected to say "No changes.":\n${first.output.slice(0, 2000)}`)
  const plan = await measure([cli, 'plan'])
  report('plan', plan)
  figure('plan.peak_mib', Math.round(plan.rss / 1024))
  const cold = []
  for (let r = 0; r < runs; r++) {
    // the compile cache (src/project/loader.ts) emptied
    rmSync(join(project, 'node_modules', '.cache'), { recursive: true, force: true })
    cold.push((await timed([cli, 'plan'])).ms)
  }
  figure('plan.cold_seconds', seconds(median(cold)))
  report('validate', await measure([cli, 'validate']))
  report('version', await measure([cli, '--version']))
  report('node', await measure(['-e', '0']))
  if (process.env.NODE_EXTRA_CA_CERTS) {
    // Node reads that file of certificates as it starts, before any code runs: on a machine that
    // sets it, every command pays for it, `--version` most visibly
    const unset = ['NODE_EXTRA_CA_CERTS']
    report('version_without_extra_ca', await measure([cli, '--version'], { unset }))
    report('node_without_extra_ca', await measure(['-e', '0'], { unset }))
  }
  report('help', await measure([cli, '--help']))
  note(`plan runs: ${plan.times.map(seconds).join(', ')} s; cold: ${cold.map(seconds).join(', ')} s`)
  // the edit cycle: one first edit fills what a plan keeps, as a pull request's second push finds it
  await editAndPlan()
  const edit = await measureEdits()
  report('edit', edit)
  figure('edit.peak_mib', Math.round(edit.rss / 1024))
  const editNoCache = await measureEdits(['--no-cache'])
  report('edit_no_cache', editNoCache)
  figure('edit_no_cache.peak_mib', Math.round(editNoCache.rss / 1024))
  // the project as applied again, and a plan of it kept, for the paired plans of no change
  writeFileSync(edited, original)
  const back = await timed([cli, 'plan'])
  if (!/^No changes\./m.test(back.output))
    throw new Error(`the plan of the project as applied was expected to say "No changes.":\n${back.output.slice(0, 2000)}`)
  if (pairedRuns > 0) await paired()
  figure(
    'load_average.end',
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' '),
  )
} finally {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
}

/** The plan and the reference's parse in alternated pairs (which one goes first alternates too). */
async function paired() {
  const { prepareReference, ReferenceSkipped } = await import(pathToFileURL(join(repo, 'bench/reference/checkly.mjs')).href)
  let reference
  try {
    reference = await prepareReference(n)
  } catch (error) {
    if (!(error instanceof ReferenceSkipped)) throw error
    note(`no paired runs: ${error.message}`)
    return
  }
  try {
    // the first parse fills what checkly caches between runs, as the plan's cache is warm
    const warm = await reference.timed()
    if (warm.error) return note(`no paired runs: ${warm.error}`)
    const pairs = []
    for (let r = 0; r < pairedRuns; r++) {
      let plan
      let parse
      if (r % 2 === 0) {
        plan = await timed([cli, 'plan'])
        parse = await reference.timed()
      } else {
        parse = await reference.timed()
        plan = await timed([cli, 'plan'])
      }
      if (parse.error) return note(`paired runs stopped: ${parse.error}`)
      pairs.push({ plan, parse })
    }
    figure('paired.reference', `checkly ${reference.version}`)
    figure('paired.ratio', median(pairs.map((p) => p.plan.ms / p.parse.ms)).toFixed(2))
    figure('paired.cpu_ratio', median(pairs.map((p) => p.plan.cpuMs / p.parse.cpuMs)).toFixed(2))
    note(`paired runs, plan / parse: ${pairs.map((p) => `${seconds(p.plan.ms)} / ${seconds(p.parse.ms)} s`).join(', ')}`)
    // the other checkout's copy of the project: the same files and lock, its own caches, its first edit planned
    const other = before === undefined ? undefined : { cwd: join(dir, 'project-before'), command: join(before, 'bin/monitors.cjs') }
    if (other) {
      writeProject(before, other.cwd, n)
      copyFileSync(join(project, 'monitoring.lock.json'), join(other.cwd, 'monitoring.lock.json'))
      await editAndPlan([], other)
    }
    // the edit cycle, each run its own edit: the plan, the same with --no-cache, and the parse (and the other checkout's plan), in turns
    const triples = []
    for (let r = 0; r < pairedRuns; r++) {
      const order = [
        ['edit', () => editAndPlan()],
        ['noCache', () => editAndPlan(['--no-cache'])],
        ['parse', () => reference.timed()],
      ]
      if (other) order.push(['before', () => editAndPlan([], other)])
      const turn = [...order.slice(r % order.length), ...order.slice(0, r % order.length)]
      const triple = {}
      for (const [name, run] of turn) triple[name] = await run()
      if (triple.parse.error) return note(`paired edit runs stopped: ${triple.parse.error}`)
      triples.push(triple)
    }
    figure('paired.edit_ratio', median(triples.map((t) => t.edit.ms / t.parse.ms)).toFixed(2))
    figure('paired.edit_cpu_ratio', median(triples.map((t) => t.edit.cpuMs / t.parse.cpuMs)).toFixed(2))
    figure('paired.edit_no_cache_cpu_ratio', median(triples.map((t) => t.edit.cpuMs / t.noCache.cpuMs)).toFixed(2))
    figure('paired.edit_peak_mib', Math.round(median(triples.map((t) => t.edit.rss)) / 1024))
    figure('paired.edit_no_cache_peak_mib', Math.round(median(triples.map((t) => t.noCache.rss)) / 1024))
    figure('paired.parse_peak_mib', Math.round(median(triples.map((t) => t.parse.rss)) / 1024))
    if (other) {
      figure('paired.before_edit_ratio', median(triples.map((t) => t.before.ms / t.parse.ms)).toFixed(2))
      figure('paired.before_edit_cpu_ratio', median(triples.map((t) => t.before.cpuMs / t.parse.cpuMs)).toFixed(2))
      figure('paired.before_edit_peak_mib', Math.round(median(triples.map((t) => t.before.rss)) / 1024))
      note(
        `paired edit runs, cpu of this plan / the other checkout's: ${triples.map((t) => `${seconds(t.edit.cpuMs)} / ${seconds(t.before.cpuMs)} s`).join(', ')}`,
      )
    }
    note(
      `paired edit runs, cpu of plan / --no-cache / parse: ${triples.map((t) => `${seconds(t.edit.cpuMs)} / ${seconds(t.noCache.cpuMs)} / ${seconds(t.parse.cpuMs)} s`).join(', ')}`,
    )
  } finally {
    reference.cleanup()
  }
}
