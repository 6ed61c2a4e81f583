#!/usr/bin/env node
/**
 * npm run bench: every figure of the performance goals side by side, at 1,000 and 10,000
 * checks (--quick: 1,000 only), in one table `what | 1,000 | 10,000 | goal`.
 *
 * Each figure comes from a bench script run as its own process, which prints `name: value`
 * lines (notes go to stderr, shown as they come):
 *   bench/plan/figures.mjs       plan with no changes (time, peak RSS, cold cache), validate, --version, --help
 *   bench/reference/checkly.mjs  the hosted service's CLI parsing the same checks (skipped with a note when it cannot be installed)
 *   bench/apply/run.mjs          apply of all creates; the server's list reads/s and creates/s with the checks stored
 *   bench/runner/run.mjs         the server's runner at that scale: runs/s, scheduler lag, storage growth
 * A script that is missing or fails leaves its cells empty and a note under the table; the
 * figures no row shows are listed after it.
 *
 *   npm run build && npm run bench [-- --quick] [--only plan,reference,apply,runner] [--runs R] [--no-paired]
 * With both plan and reference, the plan script also times the plan and the reference's parse in
 * alternated pairs (its --paired): the ratio row then has a second line, the median over the pairs.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const value = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
const quick = args.includes('--quick')
const SIZES = quick ? [1000] : [1000, 10000]
const runs = value('--runs')
const only = value('--only')
  ?.split(',')
  .map((s) => s.trim())
// the plan and the reference's parse in alternated pairs too, for the ratio (see bench/plan/figures.mjs)
const paired = (!only || (only.includes('plan') && only.includes('reference'))) && !args.includes('--no-paired')

if (!existsSync(join(repo, 'dist/cli/main.js'))) {
  console.error('dist/ is missing: run "npm run build" first')
  process.exit(1)
}

/** The bench scripts, and their arguments at one size. */
const SOURCES = {
  plan: { script: 'bench/plan/figures.mjs', args: (n) => ['--checks', String(n), ...(runs ? ['--runs', runs] : []), ...(paired ? ['--paired'] : [])] },
  reference: { script: 'bench/reference/checkly.mjs', args: (n) => ['--checks', String(n), ...(runs ? ['--runs', runs] : [])] },
  apply: { script: 'bench/apply/run.mjs', args: (n) => ['--checks', String(n), ...(quick ? ['--quick'] : [])] },
  // the storage phase (a simulated hour) at 1,000 only: at 10,000 the runner keeps up with x1 only, an hour of real time
  runner: {
    script: 'bench/runner/run.mjs',
    args: (n) => ['--checks', String(n), ...(quick ? ['--quick'] : ['--minutes', '3']), ...(n >= 10000 ? ['--storage-minutes', '0'] : [])],
  },
}

const num = (text) => (text === undefined ? undefined : Number.parseFloat(text))
/** `0.85 s (cpu 0.80 s)`: wall time, and the CPU time the process used (what to compare on a shared machine). */
const timeCell = (f, name, wall = `${name}.seconds`, cpu = `${name}.cpu_seconds`) =>
  f[wall] && `${Number(f[wall]).toFixed(2)} s${f[cpu] ? ` (cpu ${Number(f[cpu]).toFixed(2)})` : ''}`
const ratio = (a, b) => (num(a) && num(b) ? (num(a) / num(b)).toFixed(2) : undefined)

/** Rows of the table: which figures each cell shows; `goal` as the issue states it. */
const ROWS = [
  {
    what: '`apply --concurrency 16` of all creates',
    names: ['apply.seconds', 'apply.creates_per_second'],
    cell: (f) => f['apply.seconds'] && `${Number(f['apply.seconds']).toFixed(1)} s (${f['apply.creates_per_second']}/s)`,
    goal: '10,000 in ≤ 20 s (≥ 500/s)',
  },
  {
    what: 'server list reads/s, the checks stored',
    names: ['server.list_reads_per_second'],
    cell: (f) => f['server.list_reads_per_second'],
    goal: '≥ 3,000/s',
  },
  { what: 'server creates/s, the checks stored', names: ['server.creates_per_second'], cell: (f) => f['server.creates_per_second'], goal: '≥ 1,000/s' },
  {
    what: 'full list read (100 a page, by keyset), server CPU ÷ checks',
    names: ['list.keyset_cpu_us_per_check', 'list.keyset_full_read_cpu_ms', 'list.pages'],
    cell: (f) =>
      f['list.keyset_cpu_us_per_check'] && `${f['list.keyset_cpu_us_per_check']} µs (${f['list.keyset_full_read_cpu_ms']} ms, ${f['list.pages']} pages)`,
    goal: 'linear: the same ÷ checks at 1,000 and 10,000',
  },
  {
    what: 'the same by page numbers (OFFSET)',
    names: ['list.offset_cpu_us_per_check', 'list.offset_full_read_cpu_ms'],
    cell: (f) => f['list.offset_cpu_us_per_check'] && `${f['list.offset_cpu_us_per_check']} µs (${f['list.offset_full_read_cpu_ms']} ms)`,
    goal: '',
  },
  {
    what: '`plan`, no changes',
    names: ['plan.seconds', 'plan.cpu_seconds', 'plan.peak_mib'],
    cell: (f) => f['plan.seconds'] && `${timeCell(f, 'plan')}, ${f['plan.peak_mib']} MiB`,
    goal: '≤ 1.0 s, ≤ 150 MiB at 10,000',
  },
  {
    what: '`plan`, no changes, empty compile cache',
    names: ['plan.cold_seconds'],
    cell: (f) => f['plan.cold_seconds'] && `${Number(f['plan.cold_seconds']).toFixed(2)} s`,
    goal: '',
  },
  { what: '`validate`', names: ['validate.seconds', 'validate.cpu_seconds'], cell: (f) => timeCell(f, 'validate'), goal: '' },
  {
    what: "hosted service's CLI, parse only (reference)",
    names: ['reference.parse_seconds', 'reference.parse_cpu_seconds', 'reference.parse_peak_mib', 'reference.version'],
    cell: (f) =>
      f['reference.parse_seconds'] && `${timeCell(f, '', 'reference.parse_seconds', 'reference.parse_cpu_seconds')}, ${f['reference.parse_peak_mib']} MiB`,
    goal: '',
  },
  {
    what: '`plan` ÷ reference parse, wall (cpu)',
    names: [],
    cell: (f) =>
      ratio(f['plan.seconds'], f['reference.parse_seconds']) &&
      `${ratio(f['plan.seconds'], f['reference.parse_seconds'])} (${ratio(f['plan.cpu_seconds'], f['reference.parse_cpu_seconds']) ?? '?'})`,
    goal: '≤ 0.50',
  },
  {
    what: 'the same, median of paired runs',
    names: ['paired.ratio', 'paired.cpu_ratio'],
    cell: (f) => f['paired.ratio'] && `${f['paired.ratio']} (${f['paired.cpu_ratio'] ?? '?'})`,
    goal: '≤ 0.50; cpu ≤ 0.40 at 10,000 (issue 27)',
  },
  { what: '`monitors --version`', names: ['version.seconds', 'version.cpu_seconds'], cell: (f) => timeCell(f, 'version'), goal: '≤ 0.12 s' },
  { what: '`node -e 0` on this machine (the floor)', names: ['node.seconds', 'node.cpu_seconds'], cell: (f) => timeCell(f, 'node'), goal: '' },
  {
    what: '`monitors --version`, NODE_EXTRA_CA_CERTS unset',
    names: ['version_without_extra_ca.seconds', 'version_without_extra_ca.cpu_seconds'],
    cell: (f) => timeCell(f, 'version_without_extra_ca'),
    goal: '≤ 0.12 s',
    onlyWhenMeasured: true,
  },
  {
    what: '`node -e 0`, NODE_EXTRA_CA_CERTS unset',
    names: ['node_without_extra_ca.seconds', 'node_without_extra_ca.cpu_seconds'],
    cell: (f) => timeCell(f, 'node_without_extra_ca'),
    goal: '',
    onlyWhenMeasured: true,
  },
  { what: '`monitors --help`', names: ['help.seconds', 'help.cpu_seconds'], cell: (f) => timeCell(f, 'help'), goal: '' },
  {
    what: 'runner: runs/s sustained (due)',
    names: ['sustained runs/s', 'due runs/s'],
    cell: (f) => f['sustained runs/s'] && `${f['sustained runs/s']} (${f['due runs/s'] ?? '?'} due)`,
    goal: '333/s: 10,000 at frequency 1 in 2 locations',
  },
  { what: "runner: scheduler's lag p99", names: ['lag p99 ms'], cell: (f) => f['lag p99 ms'] && `${f['lag p99 ms']} ms`, goal: '< 2,000 ms' },
  // the figure's own name has a `|`, which would split a Markdown table's cell
  {
    what: 'runner: bytes stored per result, SQLite / PostgreSQL (a simulated hour)',
    names: ['storage bytes per result, sqlite | postgres', 'storage bytes per result'],
    cell: (f) => (f['storage bytes per result, sqlite | postgres'] ?? f['storage bytes per result'])?.replace(' | ', ' / '),
    goal: '≤ 60 B (SQLite, indexes included)',
  },
  {
    what: 'runner: database after a day',
    names: ['db size after a day GiB'],
    cell: (f) => f['db size after a day GiB'] && `${f['db size after a day GiB']} GiB`,
    goal: 'within what docs/server.md states',
  },
]

/** Runs one script at one size: its `name: value` lines, or why there are none. */
function runScript(source, n) {
  const { script, args: argsOf } = SOURCES[source]
  if (!existsSync(join(repo, script))) return Promise.resolve({ missing: `${script} is not in this checkout` })
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(repo, script), ...argsOf(n)], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] })
    const figures = {}
    let tail = ''
    let rest = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      rest += chunk
      const lines = rest.split('\n')
      rest = lines.pop()
      for (const line of lines) take(line)
    })
    const take = (line) => {
      process.stderr.write(`  [${source} ${n}] ${line}\n`)
      const match = /^([^:]+):\s+(.+)$/.exec(line.trim())
      if (match) figures[match[1].trim()] = match[2].trim()
    }
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      process.stderr.write(chunk.replace(/^(?=.)/gm, `  [${source} ${n}] `))
      tail = (tail + chunk).slice(-600)
    })
    child.on('close', (code) => {
      if (rest) take(rest)
      done(code === 0 ? { figures } : { figures, failed: `${script} exited ${code}: ${tail.trim().split('\n').slice(-2).join(' / ')}` })
    })
  })
}

const started = Date.now()
const loadBefore = loadavg()
const results = {}
const notes = []
for (const source of Object.keys(SOURCES)) {
  if (only && !only.includes(source)) continue
  for (const n of SIZES) {
    process.stderr.write(`bench: ${SOURCES[source].script} at ${n.toLocaleString('en-US')} checks\n`)
    const result = await runScript(source, n)
    results[`${source}:${n}`] = result
    if (result.missing) {
      notes.push(`${source}: ${result.missing}`)
      break
    }
    if (result.failed) notes.push(`${source} at ${n.toLocaleString('en-US')}: ${result.failed}`)
    if (result.figures?.['reference.skipped']) notes.push(`reference at ${n.toLocaleString('en-US')} skipped: ${result.figures['reference.skipped']}`)
  }
}

const figuresAt = (n) => Object.assign({}, ...Object.keys(SOURCES).map((s) => results[`${s}:${n}`]?.figures ?? {}))
const pad = (cells, widths) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
const header = ['what', ...SIZES.map((n) => n.toLocaleString('en-US')), 'goal']
// the rows of figures measured only on some machines (NODE_EXTRA_CA_CERTS set) are left out elsewhere
const body = ROWS.map((row) => [row, [row.what, ...SIZES.map((n) => row.cell(figuresAt(n)) ?? '—'), row.goal]])
  .filter(([row, cells]) => !row.onlyWhenMeasured || cells.slice(1, -1).some((cell) => cell !== '—'))
  .map(([, cells]) => cells)
const widths = header.map((_, i) => Math.max(3, ...[header, ...body].map((r) => r[i].length)))

const cores = cpus().length
console.log(
  `monitors bench, node ${process.version}, ${cores} cores, load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')} at the start and ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} at the end, ${Math.round((Date.now() - started) / 1000)} s`,
)
console.log('')
console.log(pad(header, widths))
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`)
for (const row of body) console.log(pad(row, widths))
const version = figuresAt(SIZES[0])['reference.version']
if (version) notes.unshift(`reference: ${version}, parsing the same checks as DnsMonitor constructs (config, parse, validate; no network, no diff)`)
if (notes.length > 0) {
  console.log('')
  for (const line of notes) console.log(`- ${line}`)
}
// figures no row shows, so that nothing a script measured is lost
const shown = new Set(ROWS.flatMap((row) => row.names))
const others = []
for (const [key, result] of Object.entries(results)) {
  for (const [name, text] of Object.entries(result.figures ?? {})) {
    if (!shown.has(name) && name !== 'reference.skipped') others.push(`${key.replace(':', ' at ')}: ${name}: ${text}`)
  }
}
if (others.length > 0) {
  console.log('')
  console.log('Other figures:')
  for (const line of others) console.log(`  ${line}`)
}
