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
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

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

/** Folder of the files agents upload before posting a run's result (kept a day at most). */
const STAGING = '.staging'

export class StagedUploads {
  constructor(private readonly store: ArtifactStore) {}

  private dir(account: string, runId: string): string {
    return path.join(this.store.root, STAGING, encodeURIComponent(account), encodeURIComponent(runId))
  }

  /** Bytes already uploaded for a run. */
  bytes(account: string, runId: string): number {
    const walk = (dir: string): number => {
      let total = 0
      for (const entry of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
        const p = path.join(dir, entry.name)
        total += entry.isDirectory() ? walk(p) : statSync(p).size
      }
      return total
    }
    return walk(this.dir(account, runId))
  }

  /** Keeps one uploaded file of a run's result (`index` 0) or of its n-th retried attempt (`index` n). */
  put(account: string, runId: string, index: number, name: string, content: Buffer): void {
    const target = path.join(this.dir(account, runId), String(index), ...name.split('/'))
    mkdirSync(path.dirname(target), { recursive: true })
    writeFileSync(target, content)
  }

  /** Moves what was uploaded for a result (its index) to the result's place. */
  adopt(account: string, runId: string, index: number, resultId: string, stoppedAt: string): void {
    this.store.keepFolder(account, resultId, stoppedAt, path.join(this.dir(account, runId), String(index)))
  }

  discard(account: string, runId: string): void {
    rmSync(this.dir(account, runId), { recursive: true, force: true })
  }

  /** Removes uploads of runs whose result never came, older than `maxAgeMs`. */
  prune(now: number, maxAgeMs = 86_400_000): void {
    const root = path.join(this.store.root, STAGING)
    for (const account of existsSync(root) ? readdirSync(root) : []) {
      for (const run of readdirSync(path.join(root, account))) {
        const dir = path.join(root, account, run)
        if (now - statSync(dir).mtimeMs > maxAgeMs) rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}
