/**
 * The artifacts of browser and multi-step runs (screenshots, traces, console and network logs),
 * kept as files in a folder the server owns: `<root>/<day>/<account>/<result id>/<name>`, the
 * day being the UTC date the result stopped. A result's manifest (`details.artifacts.files`, in
 * the database with the result) says what is there; files are served only through it, for the
 * account that owns the result (src/server/routes/assets.ts). They expire with the results: a
 * day's folder goes when every result of that day is past the retention.
 *
 * Several servers sharing a PostgreSQL database must share this folder too (a network volume),
 * or a result recorded by one is served without its files by the other.
 */
import { randomUUID } from 'node:crypto'
import {
  chmodSync,
  cpSync,
  createWriteStream,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { IncomingMessage } from 'node:http'
import type { RunStore } from './store/index.js'
import { systemClock } from '../runner/clock.js'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'

/** What one run may keep (the spec's agent upload limit). */
export const RUN_ARTIFACT_LIMIT_BYTES = 150 * 1000 * 1000

const DAY = /^\d{4}-\d{2}-\d{2}$/

/** Why an artifact's name is not a relative path of the manifest's form, or null. */
export function artifactNameProblem(name: string): string | null {
  if (name === '' || name.length > 500) return 'must be 1 to 500 characters'
  if (name.includes('\\') || name.includes('\0') || name.startsWith('/')) return 'must be a relative path with "/" between folders'
  if (name.split('/').some((s) => s === '' || s === '.' || s === '..')) return 'must not hold empty, "." or ".." segments'
  return null
}

export class ArtifactStore {
  /** A store in a temporary folder removed by `close()` (a server whose database is in memory). */
  static temporary(): ArtifactStore {
    return new ArtifactStore(mkdtempSync(path.join(tmpdir(), 'monitors-server-artifacts-')), true)
  }

  constructor(
    readonly root: string,
    private readonly owned = false,
  ) {
    // the results' files are the accounts' own: closed to the machine's other users (a suite's run among them)
    mkdirSync(root, { recursive: true, mode: 0o700 })
    const mode = statSync(root).mode & 0o777
    if (mode & 0o007) chmodSync(root, mode & ~0o007)
  }

  /** The folder of one result's artifacts. */
  folder(account: string, resultId: string, stoppedAt: string): string {
    const day = stoppedAt.slice(0, 10)
    if (!DAY.test(day)) throw new Error(`not a date: ${stoppedAt}`)
    return path.join(this.root, day, encodeURIComponent(account), encodeURIComponent(resultId))
  }

  /** Moves a run's artifact folder (the runner's) to the result's place; the source is gone afterwards. */
  keepFolder(account: string, resultId: string, stoppedAt: string, from: string): void {
    if (!existsSync(from)) return
    const to = this.folder(account, resultId, stoppedAt)
    mkdirSync(path.dirname(to), { recursive: true })
    rmSync(to, { recursive: true, force: true })
    try {
      renameSync(from, to)
    } catch {
      // another file system (a temporary folder on tmpfs): copied, then removed
      cpSync(from, to, { recursive: true })
      rmSync(from, { recursive: true, force: true })
    }
  }

  /** Writes uploaded files (an agent's) as the result's artifacts. */
  keepFiles(account: string, resultId: string, stoppedAt: string, files: ReadonlyArray<{ name: string; content: Buffer }>): void {
    const to = this.folder(account, resultId, stoppedAt)
    for (const file of files) {
      if (artifactNameProblem(file.name)) continue
      const target = path.join(to, ...file.name.split('/'))
      mkdirSync(path.dirname(target), { recursive: true })
      writeFileSync(target, file.content)
    }
  }

  /** The file of an artifact named in the manifest, or undefined when it is not on disk. */
  file(account: string, resultId: string, stoppedAt: string, name: string): string | undefined {
    if (artifactNameProblem(name)) return undefined
    const target = path.join(this.folder(account, resultId, stoppedAt), ...name.split('/'))
    try {
      return statSync(target).isFile() ? target : undefined
    } catch {
      return undefined
    }
  }

  /** Removes the days whose every result stopped before `before` (ISO date-time): they were pruned. */
  prune(before: string): number {
    const cutoff = before.slice(0, 10)
    let removed = 0
    for (const day of readdirSync(this.root)) {
      if (DAY.test(day) && day < cutoff) {
        rmSync(path.join(this.root, day), { recursive: true, force: true })
        removed++
      }
    }
    return removed
  }

  close(): void {
    if (this.owned) rmSync(this.root, { recursive: true, force: true })
  }
}

/** Folder of the files agents upload before posting a run's result (kept while the run's lease is held). */
const STAGING = '.staging'
/** Uploads being received, outside every run's folder until they are whole. */
const INCOMING = '.incoming'

function folderBytes(dir: string): number {
  let total = 0
  let entries
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return 0
  }
  for (const entry of entries) {
    const p = path.join(dir, entry.name)
    try {
      total += entry.isDirectory() ? folderBytes(p) : lstatSync(p).size
    } catch {
      /* gone */
    }
  }
  return total
}

/** Why an upload was refused: the HTTP status it answers and what it says. */
export class UploadRefused extends Error {
  constructor(
    readonly status: 409 | 413,
    message: string,
  ) {
    super(message)
  }
}

/**
 * The artifacts agents upload before a run's result, by account and run: streamed to a file of
 * the incoming folder, counted as they come (the run's 150 MB, and the account's cap on every
 * run's staged bytes, which counts the uploads still coming in this process too), then moved
 * into the run's folder. The result adopts them; a run whose lease is no longer held loses them.
 */
export class StagedUploads {
  /** bytes being received per account, in this process */
  private readonly incoming = new Map<string, number>()

  constructor(
    private readonly store: ArtifactStore,
    private readonly accountLimitBytes = Number.POSITIVE_INFINITY,
  ) {}

  private accountDir(account: string): string {
    return path.join(this.store.root, STAGING, encodeURIComponent(account))
  }

  private dir(account: string, runId: string): string {
    return path.join(this.accountDir(account), encodeURIComponent(runId))
  }

  /** Bytes already uploaded for a run. */
  bytes(account: string, runId: string): number {
    return folderBytes(this.dir(account, runId))
  }

  /** Bytes staged for every run of the account, with what this process is receiving for it now. */
  accountBytes(account: string): number {
    return folderBytes(this.accountDir(account)) + (this.incoming.get(account) ?? 0)
  }

  /**
   * Writes one file of a run's result (`index` 0) or of its n-th retried attempt (`index` n)
   * from `source`, a stream counted as it comes (or bytes already read), replacing a file of the
   * same name. Past the run's limit or the account's, an UploadRefused(413) and nothing is kept.
   */
  async put(account: string, runId: string, index: number, name: string, source: IncomingMessage | Buffer, length?: number): Promise<void> {
    const target = path.join(this.dir(account, runId), String(index), ...name.split('/'))
    const replaced = existsSync(target) ? lstatSync(target).size : 0
    const runRoom = RUN_ARTIFACT_LIMIT_BYTES - (this.bytes(account, runId) - replaced)
    // on disk once; what this process is receiving for the account (this upload too), at each piece
    const kept = folderBytes(this.accountDir(account)) - replaced
    const announced = Buffer.isBuffer(source) ? source.length : length
    // a length said up front is judged before a byte is read
    if (announced !== undefined && announced > runRoom) throw this.overRun(runId)
    if (announced !== undefined && kept + (this.incoming.get(account) ?? 0) + announced > this.accountLimitBytes) throw this.overAccount(account)
    const incoming = path.join(this.store.root, STAGING, INCOMING)
    mkdirSync(incoming, { recursive: true })
    const part = path.join(incoming, `${randomUUID()}.part`)
    let received = 0
    const count = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        if (received + chunk.length > runRoom) return done(this.overRun(runId))
        if (kept + (this.incoming.get(account) ?? 0) + chunk.length > this.accountLimitBytes) return done(this.overAccount(account))
        received += chunk.length
        this.incoming.set(account, (this.incoming.get(account) ?? 0) + chunk.length)
        done(null, chunk)
      },
    })
    const written = pipeline(count, createWriteStream(part, { mode: 0o600 }))
    if (Buffer.isBuffer(source)) count.end(source)
    else {
      // the request is read, never destroyed here: a refusal is still answered on it
      source.once('error', (error) => count.destroy(error))
      source.once('close', () => {
        if (!source.complete) count.destroy(new Error('the upload was cut off before its end'))
      })
      source.pipe(count)
    }
    try {
      await written
      mkdirSync(path.dirname(target), { recursive: true })
      renameSync(part, target)
    } catch (error) {
      if (!Buffer.isBuffer(source)) {
        source.unpipe(count)
        source.resume()
      }
      throw error
    } finally {
      rmSync(part, { force: true })
      const left = (this.incoming.get(account) ?? 0) - received
      if (left > 0) this.incoming.set(account, left)
      else this.incoming.delete(account)
    }
  }

  private overRun(runId: string): UploadRefused {
    return new UploadRefused(413, `The artifacts of run ${runId} would weigh more than the ${RUN_ARTIFACT_LIMIT_BYTES / 1e6} MB a run may keep`)
  }

  private overAccount(account: string): UploadRefused {
    return new UploadRefused(
      413,
      `The artifacts staged for the runs of account ${account} would weigh more than the ${formatLimit(this.accountLimitBytes)} an account may have staged at once: its runs in flight must post their results first`,
    )
  }

  /** Moves what was uploaded for a result (its index) to the result's place. */
  adopt(account: string, runId: string, index: number, resultId: string, stoppedAt: string): void {
    this.store.keepFolder(account, resultId, stoppedAt, path.join(this.dir(account, runId), String(index)))
  }

  discard(account: string, runId: string): void {
    rmSync(this.dir(account, runId), { recursive: true, force: true })
  }

  /**
   * Removes the uploads of every run (of `account`, or of all) whose lease `held` says is no
   * longer held (its result never came: the agent died, or another claim took the run), and
   * incoming files older than `maxAgeMs` (a server stopped mid-upload).
   */
  async sweep(
    held: (account: string, runId: string) => Promise<boolean>,
    options: { account?: string; now?: number; maxAgeMs?: number } = {},
  ): Promise<number> {
    const root = path.join(this.store.root, STAGING)
    const accounts =
      options.account !== undefined ? [encodeURIComponent(options.account)] : (existsSync(root) ? readdirSync(root) : []).filter((a) => a !== INCOMING)
    let removed = 0
    for (const account of accounts) {
      const dir = path.join(root, account)
      for (const run of existsSync(dir) ? readdirSync(dir) : []) {
        if (await held(decodeURIComponent(account), decodeURIComponent(run))) continue
        rmSync(path.join(dir, run), { recursive: true, force: true })
        removed++
      }
    }
    if (options.account === undefined) {
      const incoming = path.join(root, INCOMING)
      // against the files' modification times: the system's clock, not the server's
      const now = options.now ?? systemClock.now()
      for (const part of existsSync(incoming) ? readdirSync(incoming) : []) {
        const file = path.join(incoming, part)
        try {
          if (now - statSync(file).mtimeMs > (options.maxAgeMs ?? 86_400_000)) rmSync(file, { force: true })
        } catch {
          /* gone */
        }
      }
    }
    return removed
  }
}

/** Whether a run's staged uploads are still wanted: its lease held, or the run done (its result adopts them). */
export function leaseHeld(store: { runs: Pick<RunStore, 'lease'> }, now: number): (account: string, runId: string) => Promise<boolean> {
  return async (account, runId) => {
    const lease = await store.runs.lease(account, runId, now)
    return lease === 'done' || typeof lease === 'object'
  }
}

function formatLimit(bytes: number): string {
  return bytes >= 1e9 ? `${Math.round(bytes / 1e8) / 10} GB` : `${Math.round(bytes / 1e5) / 10} MB`
}
