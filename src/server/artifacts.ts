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
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
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
    mkdirSync(root, { recursive: true })
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

interface WithDetails {
  details: unknown
}

/**
 * Takes the artifact folder out of a result's details (in place): a stored result never names a
 * path of the machine that ran it. Answers the folder, or null when the run kept none.
 */
export function detachArtifactFolder(result: WithDetails): string | null {
  const details = result.details as { artifacts?: { dir?: string | null } } | null
  const dir = details?.artifacts?.dir
  if (!details?.artifacts || typeof dir !== 'string') return null
  result.details = { ...details, artifacts: { ...details.artifacts, dir: null } }
  return dir
}

/** The artifact folders of a run (its final result, then each retried attempt), detached from their details. */
export function detachRunArtifacts(result: WithDetails & { attempts?: WithDetails[] }): { final: string | null; attempts: Array<string | null> } {
  return { final: detachArtifactFolder(result), attempts: (result.attempts ?? []).map(detachArtifactFolder) }
}

/** Removes folders a run left that were not kept (a run lost, a duplicate). */
export function discardFolders(folders: { final: string | null; attempts: Array<string | null> }): void {
  for (const dir of [folders.final, ...folders.attempts]) if (dir) rmSync(dir, { recursive: true, force: true })
}
