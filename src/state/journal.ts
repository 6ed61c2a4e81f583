import { closeSync, fdatasync, fsyncSync, openSync, readFileSync, unlinkSync, write } from 'node:fs'
import { dirname } from 'node:path'
import type { LockEntry, LockFile, PendingCreate } from './lock.js'
import { UserError } from '../errors.js'

/**
 * The apply's journal: an append-only file beside the lock (`monitoring.lock.json.journal`),
 * one line per change of the lock an operation makes (a pending create before its POST, the
 * entry recorded after it, a removal, a rename). An apply writes the whole lock once when it
 * starts and once when it ends (the fold); in between, each change costs one line, flushed to
 * disk before the operation goes on, and lines of operations finishing together share one flush
 * (group commit). So the cost of recording an operation does not grow with the lock.
 *
 * A process killed mid-apply leaves the lock as it was when the apply started plus the journal;
 * any command that reads the lock replays the journal onto it (see `readLock`), and folds it into
 * the lock file when no apply is running. A torn tail (a line a killed writer did not finish) is
 * ignored: a change is acted on only once its line is on disk, so a torn line's change never
 * reached the service (a pending create's POST had not been sent) or is still covered by the
 * pending create written before it.
 *
 * Every line sets keys to values and never depends on what the lock holds, so replaying a
 * journal twice (a fold killed between writing the lock and removing the journal) gives the same
 * lock as replaying it once.
 */
export interface JournalLine {
  /** `${kind}:${logicalId}` */
  k: string
  /** The lock entry: set (an object) or removed (null); untouched when absent. */
  r?: LockEntry | null
  /** The pending create: set (an object) or settled (null); untouched when absent. */
  p?: PendingCreate | null
  /** A rename: the entry's former key, removed (its pending create is left as it is). */
  from?: string
}

export const journalPath = (lockPath: string) => `${lockPath}.journal`

class JournalError extends UserError {}

/** Applies one line to a lock (in place). */
export function applyLine(lock: LockFile, line: JournalLine): void {
  if (line.from !== undefined) delete lock.resources[line.from]
  if (line.r === null) delete lock.resources[line.k]
  else if (line.r !== undefined) lock.resources[line.k] = line.r
  if (line.p === null) {
    if (lock.pending) delete lock.pending[line.k]
  } else if (line.p !== undefined) {
    ;(lock.pending ??= {})[line.k] = line.p
  }
  if (lock.pending && Object.keys(lock.pending).length === 0) delete lock.pending
}

/**
 * The lines of a journal file; undefined when there is none. Lines after the last good one that
 * do not parse are a torn tail and are ignored; a broken line followed by good ones is not
 * something a killed writer leaves, and is refused.
 */
export function readJournal(path: string): JournalLine[] | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new JournalError(`Cannot read the lock journal ${path}: ${(error as Error).message}`)
  }
  const lines: JournalLine[] = []
  let broken: number | undefined
  const raw = text.split('\n')
  for (let i = 0; i < raw.length; i++) {
    const source = raw[i]
    if (source.trim() === '') continue
    let line: JournalLine | undefined
    try {
      const parsed = JSON.parse(source) as JournalLine
      if (parsed && typeof parsed === 'object' && typeof parsed.k === 'string') line = parsed
    } catch {
      // torn or broken: decided by what follows
    }
    if (!line) {
      broken ??= i + 1
      continue
    }
    if (broken !== undefined) {
      throw new JournalError(
        `The lock journal ${path} has a broken line ${broken} followed by good ones: it was not written by monitors, or was edited. ` +
          'Restore it, or remove it and run plan (creates it recorded as pending may then be planned again).',
      )
    }
    lines.push(line)
  }
  return lines
}

/** Replays the journal beside `lockPath` onto `lock` (in place); the number of lines replayed, 0 without a journal. */
export function replayJournal(lock: LockFile, lockPath: string): number {
  const lines = readJournal(journalPath(lockPath))
  if (!lines) return 0
  for (const line of lines) applyLine(lock, line)
  return lines.length
}

/** Removes the journal (after its lines are in the lock file); gone already is fine. */
export function removeJournal(lockPath: string): void {
  try {
    unlinkSync(journalPath(lockPath))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new JournalError(`Cannot remove the lock journal ${journalPath(lockPath)}: ${(error as Error).message}`)
    }
  }
}

/**
 * The writer: `append` resolves once the line is on disk. Lines appended while a flush is under
 * way go to disk together in the next one: one write and one fdatasync for all of them.
 */
export class JournalWriter {
  private fd: number | undefined
  private queued: string[] = []
  private waiting: Array<{ resolve: () => void; reject: (error: Error) => void }> = []
  private flushing = false
  /** Flushes to disk so far (for tests and reports). */
  flushes = 0
  private failure: Error | undefined

  /** Starts an empty journal beside `lockPath` (one left by a crash must have been folded first). */
  constructor(readonly lockPath: string) {
    const path = journalPath(lockPath)
    try {
      this.fd = openSync(path, 'w')
      // the new file's name on disk, once: lines flushed later must not belong to a lost file
      syncDirectory(dirname(path))
    } catch (error) {
      throw new JournalError(`Cannot write the lock journal ${path}: ${(error as Error).message}`)
    }
  }

  /**
   * Queues a line without waiting for it: it goes to disk with the next flush, before any line
   * appended after it (one file, written in order). For a change that a line already on disk
   * covers should this one be lost (a create's result: its pending create finds it again). A
   * failure to write it is thrown by `close`.
   */
  appendLater(line: JournalLine): void {
    this.append(line).catch((error: Error) => {
      this.failure ??= error
    })
  }

  append(...lines: JournalLine[]): Promise<void> {
    if (this.fd === undefined) return Promise.reject(new JournalError(`The lock journal ${journalPath(this.lockPath)} is closed`))
    for (const line of lines) this.queued.push(`${JSON.stringify(line)}\n`)
    const done = new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }))
    if (!this.flushing) void this.flush()
    return done
  }

  private async flush(): Promise<void> {
    this.flushing = true
    while (this.queued.length > 0 && this.fd !== undefined) {
      const text = this.queued.join('')
      const waiting = this.waiting
      this.queued = []
      this.waiting = []
      try {
        await writeAll(this.fd, Buffer.from(text))
        await new Promise<void>((resolve, reject) => fdatasync(this.fd!, (error) => (error ? reject(error) : resolve())))
        this.flushes++
        for (const w of waiting) w.resolve()
      } catch (error) {
        const failure = new JournalError(`Cannot write the lock journal ${journalPath(this.lockPath)}: ${(error as Error).message}`)
        for (const w of waiting) w.reject(failure)
      }
    }
    this.flushing = false
  }

  /** Waits for lines still being flushed, then closes the file (the journal stays until folded). */
  async close(): Promise<void> {
    while (this.flushing) await new Promise((resolve) => setImmediate(resolve))
    if (this.fd !== undefined) {
      closeSync(this.fd)
      this.fd = undefined
    }
    if (this.failure) throw this.failure
  }
}

function writeAll(fd: number, buffer: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const next = (offset: number) =>
      write(fd, buffer, offset, buffer.length - offset, null, (error, written) => {
        if (error) return reject(error)
        if (offset + written < buffer.length) next(offset + written)
        else resolve()
      })
    next(0)
  })
}

function syncDirectory(dir: string): void {
  let fd: number | undefined
  try {
    fd = openSync(dir, 'r')
    fsyncSync(fd)
  } catch {
    // not supported on this platform: the lines themselves are still flushed
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}
