#!/usr/bin/env node
/**
 * bench/reference/checkly: the hosted service's own CLI (the `checkly` npm package) parsing the
 * same N DNS checks in 10 files as Checkly constructs (DnsMonitor), with no network and no diff:
 * the figure the plan is compared with. Prints `name: value` lines (bench/run.mjs reads them).
 *
 * The package is installed with `npm install --no-save checkly@latest` into a folder of the
 * temporary directory (kept between runs: MONITORS_BENCH_CHECKLY_DIR names another one), never
 * into this project; MONITORS_BENCH_CHECKLY_VERSION asks for another version. When that version
 * needs a newer Node.js than the one running (checkly 9 needs 22), the Node.js of that major
 * version is installed beside it from the npm registry (the `node-<platform>-<arch>` package,
 * which holds the binary) and the parse runs with it: the reference is the CLI as its users run
 * it today, not the last version this Node.js can run. Its commands that parse (`checkly test --list`, `deploy --preview`) first ask the
 * service for the account and its runtimes, so the parse is timed the way they run it, without
 * those requests: its config loader, `parseProject` and `project.validate`, in a process of their
 * own. When the package cannot be installed or run, prints `reference.skipped: <why>` and exits 0.
 *
 *   node bench/reference/checkly.mjs [--checks N] [--quick] [--runs R]
 *
 * `prepareReference(n)` does the same set-up for another bench script (bench/plan/figures.mjs
 * times the plan and this parse in alternation, for a ratio a slow spell of the machine does
 * not skew).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { runProbed } from '../plan/probed.mjs'

const FILES = 10
const note = (text) => console.error(`bench/reference: ${text}`)

/** Why the reference cannot be measured here (printed as `reference.skipped`). */
export class ReferenceSkipped extends Error {}

/**
 * Installs checkly when it is missing and writes the project of `n` checks. Resolves to its
 * version (and the Node.js it runs on), `timed()` (one parse in a process of its own: wall ms, CPU ms, peak RSS KiB) and
 * `cleanup()`; throws ReferenceSkipped when the package cannot be installed.
 */
export async function prepareReference(n) {
  const skip = (why) => {
    throw new ReferenceSkipped(why.replace(/\s+/g, ' ').trim().slice(0, 300))
  }
  // --- the package, installed once into a folder of its own
  const wanted = process.env.MONITORS_BENCH_CHECKLY_VERSION ?? 'latest'
  const home = process.env.MONITORS_BENCH_CHECKLY_DIR ?? join(tmpdir(), `monitors-bench-checkly-${wanted.replace(/[^\w.-]/g, '_')}`)
  const dist = join(home, 'node_modules/checkly/dist')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const install = (specs) => {
    mkdirSync(home, { recursive: true })
    if (!existsSync(join(home, 'package.json'))) writeFileSync(join(home, 'package.json'), '{ "name": "monitors-bench-reference", "private": true }\n')
    note(`installing ${specs.join(' ')} into ${home} (npm install --no-save)`)
    const run = spawnSync(npm, ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', ...specs], {
      cwd: home,
      encoding: 'utf8',
      timeout: 600_000,
    })
    if (run.error || run.status !== 0) skip(`npm install ${specs.join(' ')} failed: ${run.error?.message ?? run.stderr ?? `exit ${run.status}`}`)
  }
  if (!existsSync(join(dist, 'services/project-parser.js'))) {
    install([`checkly@${wanted}`])
    if (!existsSync(join(dist, 'services/project-parser.js'))) skip('the installed checkly has no services/project-parser.js (another layout)')
  }
  const manifest = JSON.parse(readFileSync(join(home, 'node_modules/checkly/package.json'), 'utf8'))
  const version = manifest.version
  // the Node.js it needs: `>=22.13.0` names the major version to run it with
  const needs = Number(/(\d+)\./.exec(manifest.engines?.node ?? '')?.[1] ?? 0)
  let node = process.execPath
  if (needs > Number(process.versions.node.split('.')[0])) {
    const binary = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`
    node = join(home, 'node_modules', binary, 'bin', process.platform === 'win32' ? 'node.exe' : 'node')
    if (!existsSync(node)) install([`checkly@${version}`, `${binary}@${needs}`])
    if (!existsSync(node)) skip(`checkly ${version} needs Node.js ${needs}, and ${binary}@${needs} brought no bin/node`)
  }
  const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()

  // --- the project: the same checks as bench/plan/fixture.mjs, as DnsMonitor constructs
  const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-reference-'))
  symlinkSync(join(home, 'node_modules'), join(dir, 'node_modules'), 'dir')
  writeFileSync(
    join(dir, 'checkly.config.ts'),
    `import { defineConfig } from 'checkly'
export default defineConfig({ projectName: 'bench', logicalId: 'bench', checks: { checkMatch: '**/__checks__/**/*.check.ts', locations: ['eu-west-1', 'us-east-1'], tags: ['bench'] } })
`,
  )
  mkdirSync(join(dir, '__checks__'))
  for (let f = 0; f < FILES; f++) {
    const lines = [`import { DnsMonitor, DnsAssertionBuilder } from 'checkly/constructs'`, '']
    for (let i = f; i < n; i += FILES) {
      lines.push(`new DnsMonitor('dns-${i}', {
  name: 'DNS ${i}',
  request: { recordType: 'A', query: 'host-${i}.example.com', assertions: [DnsAssertionBuilder.responseCode().equals('NOERROR')] },
  frequency: ${[1, 5, 10, 15, 30][i % 5]},
  tags: ['team-${i % 7}'],
})`)
    }
    writeFileSync(join(dir, '__checks__', `batch-${f}.check.ts`), `${lines.join('\n')}\n`)
  }
  // what `checkly test` does before its first request for a session: load the config, parse, validate
  const parse = join(dir, 'parse.mjs')
  writeFileSync(
    parse,
    `
const at = (path) => import(${JSON.stringify(pathToFileURL(dist).href)} + '/' + path)
const { loadChecklyConfig } = await at('services/checkly-config-loader.js')
const { parseProject } = await at('services/project-parser.js')
const { Diagnostics } = await at('constructs/index.js')
const { config, constructs } = await loadChecklyConfig(process.cwd())
const project = await parseProject({
  directory: process.cwd(), projectLogicalId: config.logicalId, projectName: config.projectName, includeTestOnlyChecks: true,
  checkMatch: config.checks?.checkMatch, ignoreDirectoriesMatch: config.checks?.ignoreDirectoriesMatch, checkDefaults: config.checks,
  browserCheckDefaults: config.checks?.browserChecks, availableRuntimes: {}, defaultRuntimeId: '2025.04', checklyConfigConstructs: constructs,
})
const diagnostics = new Diagnostics()
await project.validate(diagnostics)
if (diagnostics.isFatal()) { console.error(diagnostics.observations.map((o) => o.title + ': ' + o.message).join('\\n')); process.exit(1) }
console.log(Object.keys(project.data.check ?? {}).length)
`,
  )

  async function timed() {
    const run = await runProbed([parse], { cwd: dir, env: process.env, probeDir: dir, node })
    const out = run.output
    if (run.status !== 0) return { error: `the parse exited ${run.status}: ${out.slice(0, 300)}` }
    if (Number(out.trim()) !== n) return { error: `the parse found ${out.trim()} checks, not ${n}` }
    return { ms: run.ms, cpuMs: run.cpuMs, rss: run.rss }
  }

  return { version: `${version} on Node.js ${nodeVersion}`, timed, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const args = process.argv.slice(2)
  const value = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
  const n = Number(value('--checks', args.includes('--quick') ? 1000 : 10000))
  const runs = Number(value('--runs', 3))
  const figure = (name, text) => console.log(`${name}: ${text}`)
  let reference
  try {
    reference = await prepareReference(n)
  } catch (error) {
    if (!(error instanceof ReferenceSkipped)) throw error
    figure('reference.skipped', error.message)
    process.exit(0)
  }
  try {
    note(`checkly ${reference.version}: ${n} DnsMonitor checks in ${FILES} files, ${runs} runs (median)`)
    const all = []
    for (let r = 0; r < runs + 1; r++) {
      const run = await reference.timed()
      if (run.error) {
        figure('reference.skipped', run.error.replace(/\s+/g, ' ').trim().slice(0, 300))
        process.exit(0)
      }
      // the first run fills what checkly caches between runs, as the plan's figures are warm
      if (r > 0) all.push(run)
    }
    figure('reference.version', `checkly ${reference.version}`)
    figure('reference.parse_seconds', (median(all.map((r) => r.ms)) / 1000).toFixed(3))
    figure('reference.parse_cpu_seconds', (median(all.map((r) => r.cpuMs)) / 1000).toFixed(3))
    figure('reference.parse_peak_mib', Math.round(median(all.map((r) => r.rss)) / 1024))
    note(`parse runs: ${all.map((r) => (r.ms / 1000).toFixed(3)).join(', ')} s`)
  } finally {
    reference.cleanup()
  }
}
