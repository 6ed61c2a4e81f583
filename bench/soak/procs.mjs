// The soak's processes: started with their output in files (a pipe read by the busy bench would
// block their writes), found by a line of that output, and measured from /proc (CPU since the
// last reading, resident memory; PostgreSQL as its postmaster and every backend).
import { spawn } from 'node:child_process'
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const TICKS = 100 // USER_HZ: /proc's CPU times are in 1/100 s on Linux

export function startProcess(name, command, args, { env = process.env, dir, stdin = 'ignore', cwd } = {}) {
  const file = join(dir, `${name.replace(/\W+/g, '-')}.log`)
  const fd = openSync(file, 'a')
  const child = spawn(command, args, { env, cwd, stdio: [stdin, fd, fd] })
  closeSync(fd)
  return {
    name,
    child,
    file,
    output: () => (existsSync(file) ? readFileSync(file, 'utf8') : ''),
    alive: () => child.exitCode === null && child.signalCode === null,
  }
}

/** Waits until the process's output matches `pattern`: answers the match (rejects when it exits first, or after `ms`). */
export async function waitForOutput(proc, pattern, ms = 60_000) {
  const deadline = Date.now() + ms
  for (;;) {
    const match = pattern.exec(proc.output())
    if (match) return match
    if (!proc.alive()) throw new Error(`${proc.name} exited (${proc.child.exitCode ?? proc.child.signalCode}): ${proc.output().slice(-2000)}`)
    if (Date.now() > deadline) throw new Error(`${proc.name} did not print ${pattern} within ${ms / 1000} s: ${proc.output().slice(-2000)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

function stat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    // fields[0] is the state (3rd field): utime is the 14th field, stime 15th, cutime 16th, cstime 17th, ppid 4th
    return { ppid: Number(fields[1]), cpu: Number(fields[11]) + Number(fields[12]), children: Number(fields[13]) + Number(fields[14]) }
  } catch {
    return undefined
  }
}

function memoryKiB(pid, field) {
  try {
    const file = field === 'Pss' ? `/proc/${pid}/smaps_rollup` : `/proc/${pid}/status`
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field === 'Pss' ? 'Pss' : 'VmRSS'}:`))
    return line ? Number(line.split(/\s+/)[1]) : 0
  } catch {
    return 0
  }
}

/** The processes whose parent is `pid`. */
function childrenOf(pid) {
  const out = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    if (stat(entry)?.ppid === pid) out.push(Number(entry))
  }
  return out
}

/**
 * A meter of one process (or of a process and its children: PostgreSQL). `read()` answers its
 * CPU % (100 = one core) since the last read and its memory in MiB (RSS; PSS summed over a
 * process tree, so shared buffers count once).
 */
export function meter(pidOf, { tree = false } = {}) {
  let last
  return {
    read() {
      const pid = pidOf()
      if (!pid) return { cpu: NaN, mib: NaN }
      const pids = tree ? [pid, ...childrenOf(pid)] : [pid]
      // a tree's CPU: the live processes', plus what its ended children used (the postmaster's cutime)
      const own = stat(pid)
      if (!own) return { cpu: NaN, mib: NaN }
      let ticks = own.cpu + (tree ? own.children : 0)
      if (tree) for (const child of pids.slice(1)) ticks += stat(child)?.cpu ?? 0
      const kib = pids.reduce((n, p) => n + memoryKiB(p, tree ? 'Pss' : 'VmRSS'), 0)
      const now = Date.now()
      const cpu = last && last.pid === pid ? ((ticks - last.ticks) / TICKS / ((now - last.at) / 1000)) * 100 : NaN
      last = { pid, ticks, at: now }
      return { cpu, mib: kib / 1024 }
    },
  }
}
