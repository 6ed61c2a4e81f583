/**
 * One process of `node <args>` with bench/plan/probe.cjs preloaded, as the benches time their
 * commands: resolves to its exit status, wall ms, the CPU ms and peak RSS KiB the probe recorded
 * (undefined when it wrote nothing), and its output (stdout and stderr together). The probe's file
 * is written in `probeDir`. `node`: another Node.js binary to run (the reference's, see
 * bench/reference/checkly.mjs).
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const PROBE = join(dirname(fileURLToPath(import.meta.url)), 'probe.cjs')

export async function runProbed(args, { cwd, env, probeDir, node = process.execPath }) {
  const probeFile = join(probeDir, `probe-${process.hrtime.bigint()}`)
  const started = process.hrtime.bigint()
  const child = spawn(node, ['--require', PROBE, ...args], { cwd, env: { ...env, MONITORS_BENCH_PROBE: probeFile } })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (d) => (output += d))
  child.stderr.setEncoding('utf8').on('data', (d) => (output += d))
  const status = await new Promise((done) => child.on('close', done))
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  const probe = existsSync(probeFile) ? JSON.parse(readFileSync(probeFile, 'utf8')) : {}
  return { status, ms, cpuMs: probe.cpuMs, rss: probe.maxRssKiB, output }
}
