/**
 * The files of the caches kept between commands (constructs, list pages, the plan memo): a
 * header line `<format> <identity> <sha256> <length>` and JSON data, written whole (a temporary
 * file renamed into place, mode 0600) and read back only when whole. See
 * docs/writing-monitors.md ("Caches between commands").
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

/**
 * The JSON data of `file` when it is whole, of `format` and of `identity`; else why not: `none`
 * (no file), `other` (whole, but another identity's), `damaged` (truncated, altered, not JSON).
 */
export function readCacheFile(file: string, format: string, identity: string): { data: unknown } | { miss: 'none' | 'other' | 'damaged' } {
  const read = readCacheBytes(file, format, identity)
  if ('miss' in read) return read
  try {
    return { data: JSON.parse(read.bytes.toString('utf8')) as unknown }
  } catch {
    return { miss: 'damaged' }
  }
}

/** The data of `file` as bytes, when it is whole, of `format` and of `identity` (see readCacheFile). */
export function readCacheBytes(file: string, format: string, identity: string): { bytes: Buffer } | { miss: 'none' | 'other' | 'damaged' } {
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch {
    return { miss: 'none' }
  }
  const end = bytes.indexOf(10)
  const header = end > 0 && end < 512 ? bytes.subarray(0, end).toString('latin1').split(' ') : []
  if (header.length !== 4 || header[0] !== format) return { miss: 'damaged' }
  if (header[1] !== identity) return { miss: 'other' }
  const data = bytes.subarray(end + 1)
  if (String(data.length) !== header[3] || sha256(data) !== header[2]) return { miss: 'damaged' }
  return { bytes: data }
}

export interface CacheFileBounds {
  /** data above this many bytes is not written */
  maxBytes: number
  /** the cache's files in its folder start with this (`pages.`) and end with `.cache` */
  prefix: string
  /** at most this many of them are kept, the oldest written removed first */
  maxFiles: number
}

/** Writes `value` whole; never throws. `prune`: then keep the folder to `maxFiles`. Whether it was written. */
export function writeCacheFile(file: string, format: string, identity: string, value: unknown, bounds: CacheFileBounds, prune: boolean): boolean {
  let data: Buffer
  try {
    data = Buffer.from(JSON.stringify(value), 'utf8')
  } catch {
    return false
  }
  return writeCacheBytes(file, format, identity, data, bounds, prune)
}

/** Writes `data` whole as the data of the file (see writeCacheFile); never throws. */
export function writeCacheBytes(file: string, format: string, identity: string, data: Buffer, bounds: CacheFileBounds, prune: boolean): boolean {
  const temporary = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`
  try {
    if (data.length > bounds.maxBytes) return false
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(temporary, Buffer.concat([Buffer.from(`${format} ${identity} ${sha256(data)} ${data.length}\n`, 'latin1'), data]), { mode: 0o600 })
    renameSync(temporary, file)
    if (prune) pruneCacheFiles(path.dirname(file), bounds)
    return true
  } catch {
    try {
      unlinkSync(temporary)
    } catch {
      /* never written */
    }
    return false
  }
}

/** Removes the oldest written files of a cache beyond `maxFiles`, and its temporary files older than an hour; never throws. */
function pruneCacheFiles(dir: string, bounds: CacheFileBounds): void {
  try {
    const files = readdirSync(dir)
      .filter((name) => name.startsWith(bounds.prefix))
      .map((name) => ({ name, written: statSync(path.join(dir, name)).mtimeMs }))
      .sort((a, b) => b.written - a.written)
    for (const { name } of files.filter((f) => f.name.endsWith('.cache')).slice(bounds.maxFiles)) unlinkSync(path.join(dir, name))
    for (const { name, written } of files) if (name.endsWith('.tmp') && Date.now() - written > 3_600_000) unlinkSync(path.join(dir, name))
  } catch {
    // another command pruned at once: nothing is lost but space
  }
}
