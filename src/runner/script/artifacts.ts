/**
 * A run's artifacts: what the harness wrote (failure screenshots, traces, attachments), the
 * images the script saved in its scratch folder, and the logs the parent writes. Everything is
 * scrubbed of the run's secrets (text files, trace zips, file names), then kept up to the limit
 * (150 MB by default, the spec's); what does not fit is deleted and listed as dropped.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { copyRunFile } from './contain.js'
import type { Scrubber } from './scrub.js'
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
      // a link is never followed (one a run made may point anywhere)
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
    { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.gif': 'image/gif', '.zip': 'application/zip', '.json': 'application/json', '.log': 'text/plain', '.txt': 'text/plain', '.html': 'text/html', '.md': 'text/markdown' } as Record<string, string>
  )[ext] ?? 'application/octet-stream'
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

/** Scrubs, caps and lists the files of `dir`; answers the manifest (also written to `dir/manifest.json`). */
export function finishArtifacts(dir: string, scrub: Scrubber, limitBytes: number): ArtifactManifest {
  const files: ArtifactEntry[] = []
  const dropped: ArtifactManifest['dropped'] = []
  const names = listFiles(dir).filter((n) => n !== 'manifest.json')
  // scrub names and contents first: what is measured is what is kept
  const scrubbed: string[] = []
  for (const name of names) {
    let current = name
    const clean = scrub.text(name)
    if (clean !== name) {
      const target = path.join(dir, clean.replace(/\*/g, '_'))
      mkdirSync(path.dirname(target), { recursive: true })
      renameSync(path.join(dir, name), target)
      current = path.relative(dir, target)
    }
    const file = path.join(dir, current)
    // a trace is always rewritten (its Authorization headers go, secrets or not); other files when there are secrets
    if (!scrub.empty || current.endsWith('.zip')) {
      try {
        const data = readFileSync(file)
        if (current.endsWith('.zip')) writeFileSync(file, scrub.zip(data))
        else {
          const out = scrub.bytes(data)
          if (out.changed) writeFileSync(file, out.data)
        }
      } catch (error) {
        // a file that cannot be scrubbed is not kept
        rmSync(file, { force: true })
        dropped.push({ name: current, kind: kindOf(current), bytes: 0, reason: `could not be scrubbed of secrets: ${(error as Error).message}` })
        continue
      }
    }
    scrubbed.push(current)
  }
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
