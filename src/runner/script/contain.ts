/**
 * Containment of a Playwright check suite by the operating system (docs/scripts.md, "Playwright
 * check suites"): when the process that runs suites is root, each run gets a user of its own, a
 * uid and gid from a range no account of the machine uses, allocated to one run at a time (across
 * processes too: a lock file per uid). `playwright test`, its workers and Chromium run as that
 * user, which owns the run's folder and nothing else: the server's database, keys and other
 * runs' folders are closed to it. At the run's end every process whose real uid is the run's is
 * killed (a detached process that cleared its environment too), and the files it left in the
 * machine's shared temporary folders are removed; what the server keeps is copied back as root,
 * regular files only, once nothing of the run is left to change them.
 */
import {
  closeSync,
  constants,
  copyFileSync,
  fstatSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { alive } from './sandbox.js'

/** util-linux's setpriv (in every Debian): changes the ids and sets no_new_privs before it runs Node. */
export const SETPRIV = '/usr/bin/setpriv'

/** A range of uids (and the gids of the same numbers) runs are given, both ends included. */
export interface UidRange {
  first: number
  last: number
}

/** The range runs are given when none is set: far above the accounts a distribution makes. */
export const DEFAULT_UID_RANGE: UidRange = { first: 200000, last: 200999 }

/** The environment variable of the range (`200000-200999`, or `off`): the default of --script-uid-range. */
export const UID_RANGE_VARIABLE = 'MONITORS_SCRIPT_UID_RANGE'

/** Why `spec` is not a uid range (`FIRST-LAST`, or `off`); null when it is one. */
export function uidRangeProblem(spec: string): string | null {
  if (spec.trim() === 'off') return null
  const m = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(spec)
  if (!m) return `must be FIRST-LAST (e.g. 200000-200999) or off, got "${spec}"`
  const [first, last] = [Number(m[1]), Number(m[2])]
  if (first < 1000 || last > 4_294_967_294 || first > last) return `must be a range of uids from 1000 up to 4294967294, its first below its last, got "${spec}"`
  return null
}

/** `FIRST-LAST` as a range, `off` as 'off' (the spec is checked by uidRangeProblem first). */
export function parseUidRange(spec: string): UidRange | 'off' {
  if (spec.trim() === 'off') return 'off'
  const [first, last] = spec.split('-').map((s) => Number(s.trim()))
  return { first, last }
}

/**
 * The range this process gives suite runs: none when it is not root (it cannot change user) or
 * when containment is turned off; else the option, the environment's, or the default.
 */
export function effectiveUidRange(option?: UidRange | 'off' | null): UidRange | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null
  let range = option ?? null
  if (range === null) {
    const spec = process.env[UID_RANGE_VARIABLE]
    range = spec && uidRangeProblem(spec) === null ? parseUidRange(spec) : DEFAULT_UID_RANGE
  }
  return range === 'off' ? null : range
}

/** The ids of the machine's accounts and groups (/etc/passwd, /etc/group): never given to a run. */
function knownIds(): Set<number> {
  const ids = new Set<number>()
  for (const file of ['/etc/passwd', '/etc/group']) {
    try {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        const id = Number(line.split(':')[2])
        if (Number.isInteger(id)) ids.add(id)
      }
    } catch {
      /* none */
    }
  }
  return ids
}

/** A run's own user: release() gives its uid back once nothing of the run is left. */
export interface RunUser {
  uid: number
  gid: number
  release(): void
}

const taken = new Set<number>()

/** The folder of the uids' lock files: root's alone (a folder someone else made is refused). */
function lockFolder(): string {
  const base = statSafe('/run')?.isDirectory() ? '/run' : tmpdir()
  const dir = path.join(base, 'monitors-run-uids')
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const s = lstatSync(dir)
  if (!s.isDirectory() || s.uid !== 0 || (s.mode & 0o022) !== 0) throw new Error(`${dir} is not a folder of root's alone: remove it`)
  return dir
}

function statSafe(p: string) {
  try {
    return statSync(p)
  } catch {
    return null
  }
}

/** Takes uid `uid`'s lock file (a stale one, of a process that is gone, is taken over). */
function lockUid(dir: string, uid: number): boolean {
  const file = path.join(dir, String(uid))
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 })
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const owner = Number(readFileSync(file, 'utf8'))
      if (Number.isInteger(owner) && owner > 0 && alive(owner)) return false
      unlinkSync(file)
    }
  }
  return false
}

/**
 * A uid (and the gid of the same number) of `range` that no other run has, no account of the
 * machine names and no process runs as; null when every one is in use.
 */
export function allocateRunUser(range: UidRange): RunUser | null {
  const dir = lockFolder()
  const known = knownIds()
  const busy = new Set(processOwners().map((p) => p.uid))
  const size = range.last - range.first + 1
  const start = Math.floor(Math.random() * size)
  for (let i = 0; i < size; i++) {
    const uid = range.first + ((start + i) % size)
    if (taken.has(uid) || known.has(uid) || busy.has(uid)) continue
    if (!lockUid(dir, uid)) continue
    taken.add(uid)
    return {
      uid,
      gid: uid,
      release: () => {
        taken.delete(uid)
        rmSync(path.join(dir, String(uid)), { force: true })
      },
    }
  }
  return null
}

/**
 * Every live process with its real uid (the first of /proc/<pid>/status `Uid:`), but this one. A
 * zombie is not one: it runs nothing, holds no memory and cannot be killed, only waited for by
 * its parent; a run's sandbox that exits before its own child leaves that child to the machine's
 * init, which may wait for it a second later or, in a container without one, never.
 */
function processOwners(): Array<{ pid: number; uid: number }> {
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return []
  }
  const out: Array<{ pid: number; uid: number }> = []
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8')
      if (/^State:\s+Z/m.test(status)) continue
      const m = /^Uid:\s+(\d+)/m.exec(status)
      if (m) out.push({ pid: Number(name), uid: Number(m[1]) })
    } catch {
      /* gone */
    }
  }
  return out
}

/** The processes whose real uid is `uid`. */
export function processesOf(uid: number): number[] {
  return processOwners()
    .filter((p) => p.uid === uid)
    .map((p) => p.pid)
}

/**
 * Kills every process whose real uid is `uid` (SIGKILL), again until none is left (one forking
 * meanwhile): a setuid program it ran keeps its real uid, a detached one that cleared its
 * environment too. Answers how many were left after the last round (0 when all are gone).
 */
export function killUser(uid: number): number {
  for (let round = 0; round < 50; round++) {
    const pids = processesOf(uid)
    if (pids.length === 0) return 0
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        /* gone */
      }
    }
  }
  return processesOf(uid).length
}

/**
 * killUser without holding the event loop: a round of SIGKILL to every process whose real uid is
 * `uid`, then a pause while they die, until none is left (at most `withinMs`). Answers how many
 * were left.
 */
export async function reapUser(uid: number, withinMs = 10_000): Promise<number> {
  const until = performance.now() + withinMs
  for (;;) {
    const pids = processesOf(uid)
    if (pids.length === 0 || performance.now() > until) return pids.length
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        /* gone */
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The memory of every process of `uid`: their proportional set size, else their resident size. */
export function userMemory(uid: number): number {
  let total = 0
  for (const pid of processesOf(uid)) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
      const m = /^Pss:\s+(\d+) kB/m.exec(rollup) ?? /^Rss:\s+(\d+) kB/m.exec(rollup)
      total += m ? Number(m[1]) * 1024 : 0
    } catch {
      /* gone */
    }
  }
  return total
}

/** Gives `dir` and everything in it to `uid`/`gid` (symbolic links themselves, never their targets). */
export function giveTree(dir: string, uid: number, gid: number): void {
  lchownSync(dir, uid, gid)
  const s = lstatSync(dir)
  if (!s.isDirectory()) return
  for (const name of readdirSync(dir)) giveTree(path.join(dir, name), uid, gid)
}

/**
 * Copies the regular files and folders under `from` into `to` as this process's (root's) own
 * files; only files `uid` owns with one link, so a symbolic link the run made (to a server's
 * file) is never followed and a hard link to a file not its own is left out; devices, pipes and
 * sockets too. Called once no process of the run is left (nothing changes under it meanwhile).
 */
export function copyBack(from: string, to: string, uid: number): void {
  mkdirSync(to, { recursive: true })
  let names: string[]
  try {
    names = readdirSync(from)
  } catch {
    return
  }
  for (const name of names) {
    const source = path.join(from, name)
    if (lstatSync(source).isDirectory()) copyBack(source, path.join(to, name), uid)
    else copyRunFile(source, path.join(to, name), uid)
  }
}

/**
 * Copies one file of a run's folder: a regular file (of `uid`, with one link, when the run had a
 * user of its own; null: any), never through a link; false when it is not one (or is gone).
 */
export function copyRunFile(source: string, target: string, uid: number | null): boolean {
  let s
  try {
    s = lstatSync(source)
  } catch {
    return false
  }
  if (!s.isFile() || (uid !== null && (s.uid !== uid || s.nlink !== 1))) return false
  const fd = openSync(source, constants.O_RDONLY | constants.O_NOFOLLOW)
  try {
    if (!fstatSync(fd).isFile()) return false
  } finally {
    closeSync(fd)
  }
  copyFileSync(source, target)
  return true
}

/** A file of the run's folder read as root without following a link (null: none, or not a regular file). */
export function readRunFile(file: string): string | null {
  let fd: number
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch {
    return null
  }
  try {
    const s = fstatSync(fd)
    if (!s.isFile()) return null
    const buffer = Buffer.alloc(s.size)
    let read = 0
    while (read < s.size) {
      const n = readSync(fd, buffer, read, s.size - read, read)
      if (n === 0) break
      read += n
    }
    return buffer.subarray(0, read).toString('utf8')
  } finally {
    closeSync(fd)
  }
}

/** Removes what `uid` left at the top of the machine's shared, writable folders (/tmp, /var/tmp, /dev/shm). */
export function removeLeftFiles(uid: number): void {
  for (const dir of new Set([tmpdir(), '/tmp', '/var/tmp', '/dev/shm'])) {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      continue
    }
    for (const name of names) {
      try {
        if (lstatSync(path.join(dir, name)).uid === uid) rmSync(path.join(dir, name), { recursive: true, force: true })
      } catch {
        /* gone */
      }
    }
  }
}

/**
 * The first folder on the way to `target` that another user cannot pass (no `x` for others),
 * or `target` itself when others cannot read it (`r`, and `x` for a folder); null when they can.
 */
export function closedToOthers(target: string): { path: string; mode: string } | null {
  const resolved = path.resolve(target)
  const parts = resolved.split(path.sep).filter(Boolean)
  for (let i = 0; i <= parts.length; i++) {
    const here = path.sep + parts.slice(0, i).join(path.sep)
    const s = statSafe(here)
    if (!s) return null
    const last = i === parts.length
    const need = last ? (s.isDirectory() ? 0o005 : 0o004) : 0o001
    if ((s.mode & need) !== need) return { path: here, mode: (s.mode & 0o777).toString(8).padStart(4, '0') }
  }
  return null
}
