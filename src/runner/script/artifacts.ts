/**
 * A run's artifacts: what the harness wrote (failure screenshots, traces, attachments), the
 * images the script saved in its scratch folder, and the logs the parent writes. Everything is
 * scrubbed of the run's secrets (text files, trace zips, file names), in a worker thread and in
 * pieces (archive.ts: a zip past its limits is dropped, never kept unscrubbed), then kept up to
 * the limit (150 MB by default, the spec's); what does not fit is deleted and listed as dropped.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { ARCHIVE_LIMITS, type ArchiveLimits } from './archive.js'
import { copyRunFile } from './contain.js'
import type { Scrubber } from './scrub.js'
import type { ScrubAnswer, ScrubJob, ScrubWork } from './scrub-worker.js'
import type { ArtifactEntry, ArtifactManifest } from './types.js'

const IMAGE = /\.(png|jpe?g|webp|gif)$/i

function listFiles(dir: string, base = dir): string[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  const out: string[] = []
  for (const n of names.sort()) {
    const p = path.join(dir, n)
    try {
      // links are not followed: a run's link to a file of the machine is not one of its files
      const s = lstatSync(p)
      if (s.isDirectory()) out.push(...listFiles(p, base))
      else if (s.isFile()) out.push(path.relative(base, p))
    } catch {
      /* gone */
    }
  }
  return out
}

function kindOf(name: string): ArtifactEntry['kind'] {
  if (name.startsWith('traces/') || name.endsWith('.zip')) return 'trace'
  if (IMAGE.test(name)) return 'screenshot'
  if (name === 'console.json') return 'console'
  if (name === 'network.json') return 'network'
  if (name === 'script.log') return 'log'
  if (name.startsWith('attachments/')) return 'attachment'
  return 'other'
}

function contentType(name: string): string {
  const ext = path.extname(name).toLowerCase()
  return (
    (
      {
        '.png': 'image/png',
        '.jpg': 'image/jpeg',
        '.jpeg': 'image/jpeg',
        '.webp': 'image/webp',
        '.gif': 'image/gif',
        '.zip': 'application/zip',
        '.json': 'application/json',
        '.log': 'text/plain',
        '.txt': 'text/plain',
        '.html': 'text/html',
        '.md': 'text/markdown',
      } as Record<string, string>
    )[ext] ?? 'application/octet-stream'
  )
}

/** Which files are kept first when the limit bites: logs, failure screenshots, traces, the rest. */
function priority(name: string): number {
  const kind = kindOf(name)
  if (kind === 'log' || kind === 'console' || kind === 'network') return 0
  if (kind === 'screenshot' && /-failure(-\d+)?\.png$/.test(name)) return 1
  if (kind === 'trace') return 2
  if (kind === 'screenshot') return 3
  return 4
}

/**
 * Moves the images the script saved in its scratch folder into `artifacts/screenshots/script/`;
 * those of a contained run are copied instead, regular files of `owner` only (the run's user,
 * gone by then), never through a link.
 */
export function adoptScratchImages(scratch: string, artifacts: string, owner?: number): void {
  for (const rel of listFiles(scratch)) {
    if (!IMAGE.test(rel)) continue
    const target = path.join(artifacts, 'screenshots', 'script', rel)
    mkdirSync(path.dirname(target), { recursive: true })
    try {
      if (owner === undefined) renameSync(path.join(scratch, rel), target)
      else copyRunFile(path.join(scratch, rel), target, owner)
    } catch {
      /* moved or gone */
    }
  }
}

/** The scrubbing worker's file: next to this module (dist/src), else in the package's dist (the CLI bundle; src/ under the tests). */
export function scrubWorkerFile(): string {
  const here = path.dirname(fileURLToPath(import.meta.url))
  const beside = path.join(here, 'scrub-worker.js')
  if (existsSync(beside)) return beside
  for (let dir = here; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'dist', 'src', 'runner', 'script', 'scrub-worker.js')
    if (existsSync(candidate)) return candidate
    if (path.dirname(dir) === dir) break
  }
  throw new Error(`the scrubbing worker is missing (looked next to ${here} and in dist/src/runner/script/)`)
}

/** How long one run's files may take to scrub before the worker is stopped (what it did not finish is dropped). */
const SCRUB_TIMEOUT_MS = 120_000

/**
 * Scrubs the files in a worker thread (scrub-worker.ts), held to a heap of its own, so that
 * neither a large file nor an archive is read on this thread; answers each file's outcome (a
 * file the worker did not finish, or could not start for, failed).
 */
export async function scrubInWorker(
  jobs: ScrubJob[],
  scrub: Scrubber,
  limits: ArchiveLimits = ARCHIVE_LIMITS,
  timeoutMs = SCRUB_TIMEOUT_MS,
): Promise<Map<string, ScrubAnswer>> {
  const answers = new Map<string, ScrubAnswer>()
  if (jobs.length === 0) return answers
  let stopped = 'the scrubbing worker stopped'
  try {
    const work: ScrubWork = { jobs, forms: [...scrub.forms], limits }
    const worker = new Worker(scrubWorkerFile(), { workerData: work, resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 } })
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        stopped = `scrubbing took more than ${timeoutMs / 1000} s`
        void worker.terminate()
      }, timeoutMs)
      worker.on('message', (answer: ScrubAnswer) => answers.set(answer.file, answer))
      worker.on('error', (error) => (stopped = `the scrubbing worker failed: ${error.message}`))
      worker.on('exit', () => {
        clearTimeout(timer)
        resolve()
      })
    })
  } catch (error) {
    stopped = `the scrubbing worker could not start: ${(error as Error).message}`
  }
  for (const job of jobs) if (!answers.has(job.file)) answers.set(job.file, { file: job.file, ok: false, refused: false, reason: stopped })
  return answers
}

/** Why a file that was not scrubbed is not kept. */
function scrubProblem(answer: ScrubAnswer & { ok: false }): string {
  return answer.refused ? `an archive past the limits of unpacking is not kept: ${answer.reason}` : `could not be scrubbed of secrets: ${answer.reason}`
}

/**
 * Scrubs, caps and lists the files of `dir`; answers the manifest (also written to
 * `dir/manifest.json`). Names are scrubbed here; contents in a worker thread (scrubInWorker).
 */
export async function finishArtifacts(dir: string, scrub: Scrubber, limitBytes: number, limits: ArchiveLimits = ARCHIVE_LIMITS): Promise<ArtifactManifest> {
  const files: ArtifactEntry[] = []
  const dropped: ArtifactManifest['dropped'] = []
  const names = listFiles(dir).filter((n) => n !== 'manifest.json')
  // scrub names and contents first: what is measured is what is kept
  const named: string[] = []
  for (const name of names) {
    let current = name
    const clean = scrub.text(name)
    if (clean !== name) {
      const target = path.join(dir, clean.replace(/\*/g, '_'))
      mkdirSync(path.dirname(target), { recursive: true })
      renameSync(path.join(dir, name), target)
      current = path.relative(dir, target)
    }
    // a file over the whole limit is never kept: not read either
    const bytes = statSync(path.join(dir, current)).size
    if (bytes > limitBytes) {
      rmSync(path.join(dir, current), { force: true })
      dropped.push({ name: current, kind: kindOf(current), bytes, reason: `over the run's artifact limit of ${formatBytes(limitBytes)}` })
      continue
    }
    named.push(current)
  }
  // a trace is always rewritten (its Authorization headers go, secrets or not); other files when there are secrets
  const jobs = named.filter((name) => !scrub.empty || name.endsWith('.zip')).map((name) => ({ file: path.join(dir, name), zip: name.endsWith('.zip') }))
  const answers = await scrubInWorker(jobs, scrub, limits)
  const scrubbed = named.filter((name) => {
    const answer = answers.get(path.join(dir, name))
    if (!answer || answer.ok) return true
    // a file that cannot be scrubbed is not kept
    const bytes = statSync(path.join(dir, name), { throwIfNoEntry: false })?.size ?? 0
    rmSync(path.join(dir, name), { force: true })
    dropped.push({ name, kind: kindOf(name), bytes, reason: scrubProblem(answer) })
    return false
  })
  const sized = scrubbed.map((name) => ({ name, bytes: statSync(path.join(dir, name)).size }))
  sized.sort((a, b) => priority(a.name) - priority(b.name) || a.name.localeCompare(b.name, 'en'))
  let total = 0
  for (const f of sized) {
    if (total + f.bytes > limitBytes) {
      rmSync(path.join(dir, f.name), { force: true })
      dropped.push({ name: f.name, kind: kindOf(f.name), bytes: f.bytes, reason: `over the run's artifact limit of ${formatBytes(limitBytes)}` })
      continue
    }
    total += f.bytes
    files.push({ name: f.name, kind: kindOf(f.name), bytes: f.bytes, contentType: contentType(f.name) })
  }
  const manifest: ArtifactManifest = { dir: files.length > 0 ? dir : null, files, totalBytes: total, limitBytes, dropped }
  writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  return manifest
}

export function formatBytes(n: number): string {
  if (n >= 1_000_000) return `${Math.round(n / 100_000) / 10} MB`
  if (n >= 1000) return `${Math.round(n / 100) / 10} kB`
  return `${n} B`
}
