/**
 * The plan memo: a plan is a pure function of its inputs (computePlan: no I/O, no clock), so the
 * plan computed last is kept, with what it was computed from, and shown again when nothing
 * changed. One file per project (config file and environment) in the folder of the compile
 * cache, holding one plan:
 * - its key: a hash of the constructs (DeferredProject.constructsKey: this build, Node.js, the
 *   working directory, the config written out, each construct's file and construct cache key),
 *   the target (URL, account, a hash of the API key, its id), the environment, the lock file's
 *   bytes, and the options that change the plan (`--target`, `--adopt-existing`);
 * - every list page the plan read: its path and query, its ETag and what it said of the pages
 *   after it.
 * The memo is used only when the key is the same and every one of those pages, asked again with
 * its ETag, answers 304 and says the same of the pages after it: the server decides, so a record
 * changed by anyone is always seen. Then neither the construct cache nor the page cache is read.
 * A plan that sent any other request (a list read by cursor, a page without an ETag, a page read
 * twice) is not kept.
 *
 * The file starts with a header line (format, key, the data's SHA-256 and length); one that does
 * not match whole is ignored (and written again by the next plan). Written to a temporary file
 * renamed into place, mode 0600, not above MAX_BYTES; any error only costs the plan it would
 * have saved.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { ListPageRead } from '../api/paging.js'
import type { Plan } from './types.js'

const FORMAT = 'monitors-plan-memo-1'
/** A memo larger than this is not written. */
const MAX_BYTES = 64 * 1024 * 1024
/** Memo files kept per folder (one per config file and environment): the oldest written go first. */
const MAX_FILES = 16

/** What is kept: the plan (before `--refresh-only` filters it), the pages it read, and what the command printed before it. */
export interface PlanMemo {
  pages: ListPageRead[]
  plan: Plan
  /** What the command printed from the loaded project (warnings), kept as it printed them. */
  printed: unknown
}

/** The file of the memo of one project. */
export function planMemoFile(dir: string, configFile: string, environment: string | undefined): string {
  return path.join(dir, `plan.${sha256(`${configFile}\0${environment ?? ''}`).slice(0, 16)}.cache`)
}

/** The key of a plan's inputs (see above), from its parts written out as JSON. */
export function planMemoKey(parts: Record<string, unknown>): string {
  return sha256(`${FORMAT}\0${JSON.stringify(parts)}`)
}

/** The memo of `file` when it is whole and of this key; else why not. */
export function readPlanMemo(file: string, key: string): { memo: PlanMemo } | { miss: string } {
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch {
    return { miss: 'none kept' }
  }
  const end = bytes.indexOf(10)
  const header = end > 0 && end < 512 ? bytes.subarray(0, end).toString('latin1').split(' ') : []
  if (header.length !== 4 || header[0] !== FORMAT) return { miss: 'the file was damaged: ignored' }
  if (header[1] !== key) return { miss: 'the code, config, lock, target or options changed' }
  const data = bytes.subarray(end + 1)
  if (String(data.length) !== header[3] || sha256(data) !== header[2]) return { miss: 'the file was damaged: ignored' }
  try {
    const memo = JSON.parse(data.toString('utf8')) as PlanMemo
    if (memo && Array.isArray(memo.pages) && memo.plan && typeof memo.plan === 'object') return { memo }
  } catch {
    // not JSON after all: as damaged
  }
  return { miss: 'the file was damaged: ignored' }
}

/** Writes the memo whole (temporary file, rename); never throws. A new file prunes the folder to MAX_FILES. */
export function writePlanMemo(file: string, key: string, memo: PlanMemo): void {
  const temporary = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`
  try {
    const data = Buffer.from(JSON.stringify(memo), 'utf8')
    if (data.length > MAX_BYTES) return
    const dir = path.dirname(file)
    mkdirSync(dir, { recursive: true })
    let existed = true
    try {
      statSync(file)
    } catch {
      existed = false
    }
    writeFileSync(temporary, Buffer.concat([Buffer.from(`${FORMAT} ${key} ${sha256(data)} ${data.length}\n`, 'latin1'), data]), { mode: 0o600 })
    renameSync(temporary, file)
    if (!existed) prune(dir)
  } catch {
    try {
      unlinkSync(temporary)
    } catch {
      /* never written */
    }
  }
}

/** Removes the oldest written memos beyond MAX_FILES, and temporary files older than an hour; never throws. */
function prune(dir: string): void {
  try {
    const files = readdirSync(dir)
      .filter((name) => name.startsWith('plan.'))
      .map((name) => ({ name, written: statSync(path.join(dir, name)).mtimeMs }))
      .sort((a, b) => b.written - a.written)
    for (const { name } of files.filter((f) => f.name.endsWith('.cache')).slice(MAX_FILES)) unlinkSync(path.join(dir, name))
    for (const { name, written } of files) if (name.endsWith('.tmp') && Date.now() - written > 3_600_000) unlinkSync(path.join(dir, name))
  } catch {
    // another command pruned at once: nothing is lost but space
  }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}
