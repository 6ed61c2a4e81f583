import { randomBytes } from 'node:crypto'
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname } from 'node:path'
import { UserError } from '../errors.js'

/** What `.monitors/apply.lock` records about the apply that holds it. */
export interface ApplyLockHolder {
  pid: number
  host: string
  startedAt: string
  command: string
  token: string
}

export class ApplyLockError extends UserError {
  constructor(
    message: string,
    readonly holder?: ApplyLockHolder,
  ) {
    super(message)
  }
}

export interface HeldApplyLock {
  readonly file: string
  /** Whether a lock left by a dead process was taken over. */
  readonly tookOver?: ApplyLockHolder
  release(): void
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function readHolder(file: string): ApplyLockHolder | undefined {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as ApplyLockHolder
    return typeof value.pid === 'number' && typeof value.host === 'string' ? value : undefined
  } catch {
    return undefined
  }
}

/** A lock whose holder is known dead: on this host, and its pid no longer runs. */
function isStale(file: string, holder: ApplyLockHolder | undefined): boolean {
  if (!holder) {
    // unreadable: a holder killed between creating and writing the file; give a live writer 5 s
    try {
      return Date.now() - statSync(file).mtimeMs > 5000
    } catch {
      return true
    }
  }
  return holder.host === hostname() && holder.pid !== process.pid && !processAlive(holder.pid)
}

function describe(holder: ApplyLockHolder): string {
  return `pid ${holder.pid} on ${holder.host}, started ${holder.startedAt}: ${holder.command}`
}

function tryCreate(file: string, holder: ApplyLockHolder): boolean {
  let fd: number
  try {
    fd = openSync(file, 'wx', 0o644)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
  try {
    writeSync(fd, `${JSON.stringify(holder, null, 2)}\n`)
  } finally {
    closeSync(fd)
  }
  return true
}

/**
 * Takes the apply lock of a checkout, so two applies never run at once. With timeoutMs 0 a
 * held lock is refused at once; otherwise it waits for the holder to finish. A lock left by a
 * process that is gone (kill -9, a crashed CI runner on this host) is detected and taken over.
 */
export async function acquireApplyLock(file: string, options: { timeoutMs: number; command: string; pollMs?: number }): Promise<HeldApplyLock> {
  mkdirSync(dirname(file), { recursive: true })
  const me: ApplyLockHolder = {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    command: options.command,
    token: randomBytes(8).toString('hex'),
  }
  const deadline = Date.now() + options.timeoutMs
  let tookOver: ApplyLockHolder | undefined
  for (;;) {
    if (tryCreate(file, me)) break
    const holder = readHolder(file)
    if (isStale(file, holder)) {
      // move the stale file aside atomically: of two processes taking over, one rename wins
      const aside = `${file}.stale-${me.token}`
      try {
        renameSync(file, aside)
        unlinkSync(aside)
        tookOver = holder
      } catch {
        /* another process took it over first; loop and look again */
      }
      continue
    }
    if (Date.now() >= deadline) {
      const who = holder ? describe(holder) : 'a process that is still starting'
      throw new ApplyLockError(
        options.timeoutMs === 0
          ? `another apply holds ${file} (${who}). Wait for it to finish, or pass --lock-timeout 5m to wait for it.`
          : `another apply still holds ${file} after waiting ${Math.round(options.timeoutMs / 1000)} s (${who}).`,
        holder,
      )
    }
    await new Promise((r) => setTimeout(r, Math.min(options.pollMs ?? 250, Math.max(10, deadline - Date.now()))))
  }
  let released = false
  const release = () => {
    if (released) return
    released = true
    process.removeListener('exit', release)
    const holder = readHolder(file)
    if (holder?.token === me.token) {
      try {
        unlinkSync(file)
      } catch {
        /* already gone */
      }
    }
  }
  process.on('exit', release)
  return { file, tookOver, release }
}

/** Parses `--lock-timeout`: plain seconds, or a number with ms, s, m or h. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(text.trim())
  if (!match) return undefined
  const n = Number(match[1])
  const unit = match[2] ?? 's'
  return Math.round(n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit]!)
}
