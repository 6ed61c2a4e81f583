/**
 * Scrubbing a run's files without ever holding one whole: a file is read and rewritten in
 * pieces, and a zip (a Playwright trace) is read entry by entry through its central directory,
 * each entry inflated a few kilobytes at a time, scrubbed and deflated into a new archive that
 * replaces it. A zip past a limit (entries, an entry's or all entries' inflated bytes, the ratio
 * of an entry's inflated to its compressed bytes, a trace line's length), encrypted, of zip64 or
 * not readable is refused whole (ArchiveRefused): the caller drops it, never keeps it unscrubbed.
 *
 * Synchronous on purpose: it runs in a worker thread (scrub-worker.ts), never on the thread of
 * a server or an agent, and reads what it writes at the pace it writes it.
 */
import { closeSync, constants, fstatSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs'
import { Inflate, Zip, ZipDeflate, ZipPassThrough } from 'fflate'
import { SCRUBBED, looksLikeText, scrubTraceLine, type Scrubber } from './scrub.js'

export interface ArchiveLimits {
  /** entries of one archive */
  maxEntries: number
  /** inflated bytes of one entry */
  maxEntryBytes: number
  /** inflated bytes of every entry of one archive */
  maxTotalBytes: number
  /** inflated bytes per compressed byte of an entry, judged once it inflated past `ratioFromBytes` */
  maxRatio: number
  ratioFromBytes: number
  /** bytes of one line of a trace (its events are JSON, a line each, parsed one at a time) */
  maxLineBytes: number
}

const MiB = 1024 * 1024

/** Far above what a Playwright trace holds; a zip bomb passes none of them. */
export const ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 20_000,
  maxEntryBytes: 256 * MiB,
  maxTotalBytes: 512 * MiB,
  maxRatio: 200,
  ratioFromBytes: MiB,
  maxLineBytes: 16 * MiB,
}

/** Why an archive is not kept: past a limit, or not an archive this reads. */
export class ArchiveRefused extends Error {}

/** What is read of an archive (or a file) at a time. */
const PIECE = 64 * 1024
/** What is fed to the inflater at a time: its output is at most about a thousand times that. */
const INFLATE_PIECE = 4 * 1024

const TRACE_ENTRY = /\.(trace|network)$/

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * Replaces the secrets' forms in bytes fed in pieces, byte for byte (the forms matched as their
 * UTF-8 bytes, on latin1 strings). The last `longest - 1` bytes wait for the next piece, unless
 * a match ends further: every match starting before the cut is seen whole, as in one piece.
 */
export class ByteScrubber {
  private readonly pattern: RegExp | null
  private readonly longest: number
  private carry = ''
  changed = false

  constructor(forms: readonly string[]) {
    const bytes = [...new Set(forms.map((f) => Buffer.from(f, 'utf8').toString('latin1')))].filter(Boolean).sort((a, b) => b.length - a.length)
    this.pattern = bytes.length > 0 ? new RegExp(bytes.map(escapeRegExp).join('|'), 'g') : null
    this.longest = bytes[0]?.length ?? 0
  }

  push(chunk: Uint8Array, final = false): Buffer {
    if (!this.pattern) return Buffer.from(chunk)
    const text = this.carry + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1')
    const safe = final ? text.length : Math.max(0, text.length - (this.longest - 1))
    let out = ''
    let at = 0
    this.pattern.lastIndex = 0
    for (let match = this.pattern.exec(text); match && match.index < safe; match = this.pattern.exec(text)) {
      out += text.slice(at, match.index) + SCRUBBED
      at = match.index + match[0].length
      this.changed = true
    }
    const until = Math.max(at, safe)
    out += text.slice(at, until)
    this.carry = text.slice(until)
    return Buffer.from(out, 'latin1')
  }
}

interface Entry {
  name: string
  method: number
  flags: number
  compressedSize: number
  localOffset: number
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length)
  let got = 0
  while (got < length) {
    const n = readSync(fd, buffer, got, length - got, position + got)
    if (n === 0) throw new ArchiveRefused('it ends before its central directory says')
    got += n
  }
  return buffer
}

/** The entries of the zip's central directory (no zip64: its entries would be past the limits anyway). */
function centralDirectory(fd: number, size: number, limits: ArchiveLimits): Entry[] {
  const tail = Math.min(size, 22 + 65_535)
  const end = readAt(fd, size - tail, tail)
  let at = -1
  for (let i = tail - 22; i >= 0; i--)
    if (end.readUInt32LE(i) === 0x06054b50) {
      at = i
      break
    }
  if (at < 0) throw new ArchiveRefused('it is not a zip archive (no end of central directory)')
  const count = end.readUInt16LE(at + 10)
  const cdSize = end.readUInt32LE(at + 12)
  const cdOffset = end.readUInt32LE(at + 16)
  if (count === 0xffff || cdOffset === 0xffffffff) throw new ArchiveRefused('it is a zip64 archive, which is not unpacked')
  if (count > limits.maxEntries) throw new ArchiveRefused(`it has ${count} entries, more than the ${limits.maxEntries} unpacked`)
  if (cdOffset + cdSize > size || cdSize > count * (46 + 3 * 65_535)) throw new ArchiveRefused('its central directory is not inside it')
  const cd = readAt(fd, cdOffset, cdSize)
  const entries: Entry[] = []
  let p = 0
  for (let i = 0; i < count; i++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== 0x02014b50) throw new ArchiveRefused('its central directory is damaged')
    const flags = cd.readUInt16LE(p + 8)
    const method = cd.readUInt16LE(p + 10)
    const compressedSize = cd.readUInt32LE(p + 20)
    const inflatedSize = cd.readUInt32LE(p + 24)
    const nameLength = cd.readUInt16LE(p + 28)
    const next = p + 46 + nameLength + cd.readUInt16LE(p + 30) + cd.readUInt16LE(p + 32)
    const localOffset = cd.readUInt32LE(p + 42)
    const raw = cd.subarray(p + 46, p + 46 + nameLength)
    const name = raw.toString(flags & 0x800 ? 'utf8' : 'latin1')
    if (flags & 1) throw new ArchiveRefused(`its entry ${name} is encrypted`)
    if (method !== 0 && method !== 8) throw new ArchiveRefused(`its entry ${name} is compressed with method ${method}, not deflate`)
    if (compressedSize === 0xffffffff || inflatedSize === 0xffffffff || localOffset === 0xffffffff) throw new ArchiveRefused(`its entry ${name} is of zip64`)
    entries.push({ name, method, flags, compressedSize, localOffset })
    p = next
  }
  return entries
}

/** Where an entry's compressed bytes start (after its local header). */
function dataStart(fd: number, size: number, entry: Entry): number {
  const header = readAt(fd, entry.localOffset, 30)
  if (header.readUInt32LE(0) !== 0x04034b50) throw new ArchiveRefused(`its entry ${entry.name} has no local header`)
  const start = entry.localOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28)
  if (start + entry.compressedSize > size) throw new ArchiveRefused(`its entry ${entry.name} runs past its end`)
  return start
}

/**
 * What an entry's bytes go through before they are deflated again: a trace's lines, each
 * scrubbed (Authorization headers out, then the secrets); other text scrubbed byte for byte;
 * anything else (images, fonts, without secrets text too) as it is. Undecided until 8 KiB are seen.
 */
class EntryFilter {
  private head: Buffer[] = []
  private headBytes = 0
  private mode: 'undecided' | 'lines' | 'bytes' | 'as-is'
  private line: Buffer[] = []
  private lineBytes = 0
  private readonly bytes: ByteScrubber

  constructor(
    name: string,
    private readonly scrub: Scrubber,
    forms: readonly string[],
    private readonly limits: ArchiveLimits,
    private readonly out: (chunk: Uint8Array) => void,
  ) {
    this.mode = TRACE_ENTRY.test(name) ? 'lines' : 'undecided'
    this.bytes = new ByteScrubber(forms)
  }

  push(chunk: Uint8Array): void {
    if (this.mode === 'undecided') {
      this.head.push(Buffer.from(chunk))
      this.headBytes += chunk.length
      if (this.headBytes >= 8192) this.decide()
      return
    }
    if (this.mode === 'lines') this.lines(chunk)
    else if (this.mode === 'bytes') this.out(this.bytes.push(chunk))
    else this.out(chunk)
  }

  end(): void {
    if (this.mode === 'undecided') this.decide()
    if (this.mode === 'lines') {
      if (this.lineBytes > 0) this.out(Buffer.from(scrubTraceLine(Buffer.concat(this.line).toString('utf8'), this.scrub.text), 'utf8'))
    } else if (this.mode === 'bytes') this.out(this.bytes.push(new Uint8Array(0), true))
  }

  private decide(): void {
    const head = Buffer.concat(this.head)
    this.head = []
    this.mode = !this.scrub.empty && looksLikeText(head) ? 'bytes' : 'as-is'
    if (head.length > 0) this.push(head)
  }

  private lines(chunk: Uint8Array): void {
    let from = 0
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, from)) {
      this.line.push(Buffer.from(chunk.subarray(from, nl)))
      const text = Buffer.concat(this.line).toString('utf8')
      this.out(Buffer.from(`${scrubTraceLine(text, this.scrub.text)}\n`, 'utf8'))
      this.line = []
      this.lineBytes = 0
      from = nl + 1
    }
    if (from < chunk.length) {
      this.line.push(Buffer.from(chunk.subarray(from)))
      this.lineBytes += chunk.length - from
      if (this.lineBytes > this.limits.maxLineBytes) throw new ArchiveRefused(`a line of its entry longer than ${this.limits.maxLineBytes / MiB} MiB`)
    }
  }
}

/** Inflates one entry a piece at a time into `sink`, held to the limits; answers its inflated bytes. */
function inflateEntry(fd: number, start: number, entry: Entry, limits: ArchiveLimits, before: number, sink: (chunk: Uint8Array) => void): number {
  let inflated = 0
  let fed = 0
  const take = (chunk: Uint8Array) => {
    inflated += chunk.length
    if (inflated > limits.maxEntryBytes) throw new ArchiveRefused(`its entry ${entry.name} inflates to more than ${limits.maxEntryBytes / MiB} MiB`)
    if (before + inflated > limits.maxTotalBytes) throw new ArchiveRefused(`its entries inflate to more than ${limits.maxTotalBytes / MiB} MiB`)
    if (inflated > limits.ratioFromBytes && inflated > limits.maxRatio * Math.max(fed, 1)) {
      throw new ArchiveRefused(`its entry ${entry.name} inflates to more than ${limits.maxRatio} times its compressed size (a zip bomb?)`)
    }
    if (chunk.length > 0) sink(chunk)
  }
  const inflater = entry.method === 8 ? new Inflate((chunk) => take(chunk)) : undefined
  const piece = Buffer.alloc(entry.method === 8 ? INFLATE_PIECE : PIECE)
  for (let at = 0; at < entry.compressedSize; ) {
    const n = readSync(fd, piece, 0, Math.min(piece.length, entry.compressedSize - at), start + at)
    if (n === 0) throw new ArchiveRefused(`its entry ${entry.name} is cut short`)
    at += n
    fed += n
    const bytes = piece.subarray(0, n)
    try {
      if (inflater) inflater.push(bytes, at === entry.compressedSize)
      else take(Buffer.from(bytes))
    } catch (error) {
      if (error instanceof ArchiveRefused) throw error
      throw new ArchiveRefused(`its entry ${entry.name} does not inflate (${(error as Error).message})`)
    }
  }
  if (inflater && entry.compressedSize === 0) inflater.push(new Uint8Array(0), true)
  return inflated
}

/**
 * Rewrites the zip `file` scrubbed (every text entry and name; a trace's Authorization headers
 * dropped whatever the secrets), entry by entry, into a file beside it that replaces it. Throws
 * ArchiveRefused past a limit; the file is then left as it was, for the caller to drop.
 */
export function scrubZipFile(file: string, scrub: Scrubber, limits: ArchiveLimits = ARCHIVE_LIMITS): void {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW)
  const partPath = `${file}.scrubbing`
  let out: number | undefined
  try {
    const size = fstatSync(fd).size
    const entries = centralDirectory(fd, size, limits)
    out = openSync(partPath, 'w', 0o600)
    const target = out
    let failure: Error | null = null
    const zip = new Zip((error, data) => {
      if (error) failure = error
      else writeSync(target, data)
    })
    let total = 0
    const forms = scrub.forms
    for (const entry of entries) {
      const start = dataStart(fd, size, entry)
      const name = scrub.text(entry.name)
      if (name.endsWith('/')) {
        const folder = new ZipPassThrough(name)
        zip.add(folder)
        folder.push(new Uint8Array(0), true)
        continue
      }
      const next = new ZipDeflate(name, { level: 6 })
      zip.add(next)
      const filter = new EntryFilter(entry.name, scrub, forms, limits, (chunk) => next.push(chunk))
      total += inflateEntry(fd, start, entry, limits, total, (chunk) => filter.push(chunk))
      filter.end()
      next.push(new Uint8Array(0), true)
      if (failure) throw failure
    }
    zip.end()
    if (failure) throw failure
    closeSync(out)
    out = undefined
    renameSync(partPath, file)
  } finally {
    closeSync(fd)
    if (out !== undefined) closeSync(out)
    rmSync(partPath, { force: true })
  }
}

/**
 * Scrubs a file that is not an archive, in pieces: text (judged by its first 8 KiB) has every
 * secret form replaced; binary data, or a file without a secret in it, is left as it is.
 */
export function scrubPlainFile(file: string, scrub: Scrubber): void {
  if (scrub.empty) return
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW)
  const partPath = `${file}.scrubbing`
  let out: number | undefined
  try {
    const piece = Buffer.alloc(PIECE)
    const first = readSync(fd, piece, 0, piece.length, 0)
    if (!looksLikeText(piece.subarray(0, first))) return
    out = openSync(partPath, 'w', 0o600)
    const bytes = new ByteScrubber(scrub.forms)
    let at = 0
    for (let n = first; n > 0; n = readSync(fd, piece, 0, piece.length, at)) {
      at += n
      writeSync(out, bytes.push(piece.subarray(0, n)))
    }
    writeSync(out, bytes.push(new Uint8Array(0), true))
    closeSync(out)
    out = undefined
    if (bytes.changed) renameSync(partPath, file)
  } finally {
    closeSync(fd)
    if (out !== undefined) closeSync(out)
    rmSync(partPath, { force: true })
  }
}
