#!/usr/bin/env node
/**
 * bench/startup: how long the CLI takes before and around a command, as `name: value` lines.
 * Each figure is the median of R runs, each its own process (as a user runs it): wall time and
 * CPU time (user + system; the figure to compare on a machine other work shares):
 *   node          `node -e 0`, the floor
 *   version       `monitors --version`
 *   help          `monitors --help`
 *   plan_help     `monitors plan --help`: a plan's command and engine loaded, nothing run
 * and, with --project DIR (a project whose target is set in the environment, e.g. by its env.sh):
 *   plan_start    `monitors plan`'s "timing: start" (MONITORS_TIMING=1): ms from process start to the command
 *   plan          the whole `monitors plan`
 * With --cli given more than once (another build's bin/monitors.cjs), the runs of each CLI
 * alternate, so that the others' figures see the same load; one block of figures per CLI.
 *
 *   npm run build && node bench/startup/run.mjs [--runs R] [--project DIR] [--cli bin/monitors.cjs]...
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const args = process.argv.slice(2)
const value = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const runs = Number(value('--runs', 5))
const project = value('--project', undefined)
const clis = args.flatMap((arg, i) => (arg === '--cli' ? [resolve(args[i + 1])] : []))
if (clis.length === 0) clis.push(join(repo, 'bin/monitors.cjs'))
const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-startup-'))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** One process under /usr/bin/time: wall ms, CPU ms, stderr. */
function timed(command, { cwd = repo, env = {} } = {}) {
  const out = join(dir, 'time')
  const run = spawnSync('/usr/bin/time', ['-o', out, '-f', '%e %U %S', ...command], { cwd, env: { ...process.env, ...env }, encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`${command.join(' ')} exited ${run.status}: ${run.stderr}`)
  const [wall, user, system] = readFileSync(out, 'utf8').trim().split('\n').at(-1).split(' ').map(Number)
  return { wall: wall * 1000, cpu: (user + system) * 1000, stderr: run.stderr }
}

const figures = (cli) => [
  ['node', ['node', '-e', '0']],
  ['version', ['node', cli, '--version']],
  ['help', ['node', cli, '--help']],
  ['plan_help', ['node', cli, 'plan', '--help']],
  ...(project ? [['plan', ['node', cli, 'plan'], { cwd: project, env: { MONITORS_TIMING: '1' } }]] : []),
]

try {
  const results = clis.map(() => new Map())
  for (let round = 0; round < runs; round++) {
    for (const [index, cli] of clis.entries()) {
      for (const [name, command, options] of figures(cli)) {
        const list = results[index].get(name) ?? []
        list.push(timed(command, options))
        results[index].set(name, list)
      }
    }
  }
  for (const [index, cli] of clis.entries()) {
    if (clis.length > 1) console.log(`# ${cli}`)
    for (const [name, list] of results[index]) {
      console.log(`${name}.seconds: ${(median(list.map((r) => r.wall)) / 1000).toFixed(3)}  cpu_seconds: ${(median(list.map((r) => r.cpu)) / 1000).toFixed(3)}`)
      if (name === 'plan') {
        const starts = list.map((r) => Number(/timing: start (\d+)ms/.exec(r.stderr)?.[1]))
        console.log(`plan_start.ms: ${median(starts)}  (runs: ${starts.join(', ')})`)
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
