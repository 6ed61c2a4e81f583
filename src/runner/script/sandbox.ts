/**
 * The child process a script runs in: Node's permission model (read: the bundle, the runtime,
 * the scratch and artifact folders; write: scratch and artifacts; no child processes, no
 * worker threads, no native addons, no inspector), an environment holding the check's
 * variables only, a V8 heap limit, and the parent's watch on its resident memory, the disk it
 * writes and the wall clock.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { lstatSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface SandboxPaths {
  bundle: string
  runtimeDir: string
  scratch: string
  artifacts: string
}

/** Node's flags for the child: its permissions and its heap. */
export function sandboxFlags(paths: SandboxPaths, heapLimitMb: number): string[] {
  return [
    '--experimental-permission',
    `--allow-fs-read=${paths.bundle}`,
    `--allow-fs-read=${paths.runtimeDir}`,
    `--allow-fs-read=${paths.scratch}`,
    `--allow-fs-read=${paths.artifacts}`,
    `--allow-fs-write=${paths.scratch}`,
    `--allow-fs-write=${paths.artifacts}`,
    `--max-old-space-size=${heapLimitMb}`,
    '--enable-source-maps',
    '--disable-warning=ExperimentalWarning',
  ]
}

/** `preload`: a file of the bundle run before the entry (`--require`), such as the network guard. */
export function spawnSandboxed(entry: string, paths: SandboxPaths, heapLimitMb: number, env: Record<string, string>, preload?: string): ChildProcess {
  return spawn(process.execPath, [...sandboxFlags(paths, heapLimitMb), ...(preload ? ['--require', preload] : []), entry], {
    cwd: paths.scratch,
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'json',
    // its own process group: a kill reaches whatever it may have started
    detached: true,
  })
}

const PAGE = 4096

interface ProcInfo {
  pid: number
  ppid: number
  pgrp: number
  rssBytes: number
}

/** Every process of the machine, from /proc (empty where there is no /proc). */
export function processTable(): ProcInfo[] {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return []
  }
  const out: ProcInfo[] = []
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      // the command sits in parentheses and may hold spaces: fields follow the last ')'
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out.push({ pid: Number(name), ppid: Number(rest[1]), pgrp: Number(rest[2]), rssBytes: Number(rest[21]) * PAGE })
    } catch {
      /* gone meanwhile */
    }
  }
  return out
}

/** `root` and its descendants (and the members of its process group). */
export function treeOf(root: number, table: ProcInfo[] = processTable()): ProcInfo[] {
  const byParent = new Map<number, ProcInfo[]>()
  for (const p of table) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p])
  const seen = new Set<number>()
  const out: ProcInfo[] = []
  const visit = (p: ProcInfo) => {
    if (seen.has(p.pid)) return
    seen.add(p.pid)
    out.push(p)
    for (const c of byParent.get(p.pid) ?? []) visit(c)
  }
  for (const p of table) if (p.pid === root || p.pgrp === root) visit(p)
  return out
}

/**
 * The memory `root` and its descendants use: their proportional set size (shared pages split
 * among the processes sharing them, as Chromium's processes do), or their resident size where
 * the kernel gives no PSS.
 */
export function treeMemory(root: number | undefined, table: ProcInfo[]): number {
  if (!root) return 0
  return treeOf(root, table).reduce((sum, p) => sum + (pss(p.pid) ?? p.rssBytes), 0)
}

function pss(pid: number): number | null {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))
    return m ? Number(m[1]) * 1024 : null
  } catch {
    return null
  }
}

/** Kills `root`'s process group and every descendant left (SIGKILL). */
export function killTree(root: number | undefined): void {
  if (!root) return
  const members = treeOf(root)
  try {
    process.kill(-root, 'SIGKILL')
  } catch {
    /* no such group */
  }
  for (const p of members) {
    try {
      process.kill(p.pid, 'SIGKILL')
    } catch {
      /* gone */
    }
  }
}

/**
 * Bytes of the files under `dir` (stops counting past `stopAt`). A symbolic link is not
 * followed (what it points to is not written there: a suite's `node_modules`, a link a script
 * made to `/`).
 */
export function folderBytes(dir: string, stopAt = Number.POSITIVE_INFINITY): number {
  let total = 0
  const walk = (d: string) => {
    let names: string[]
    try {
      names = readdirSync(d)
    } catch {
      return
    }
    for (const n of names) {
      if (total > stopAt) return
      const p = join(d, n)
      try {
        const s = lstatSync(p)
        if (s.isDirectory()) walk(p)
        else if (s.isFile()) total += s.size
      } catch {
        /* gone */
      }
    }
  }
  walk(dir)
  return total
}

/** Whether a process of that pid exists (one of another user answers EPERM: it exists). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
