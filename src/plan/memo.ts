/**
 * The plan memo: a plan is a pure function of its inputs (computePlan: no I/O, no clock), so the
 * plan computed last is kept, with what it was computed from, and shown again when nothing
 * changed. One file per project (config file and environment) in the folder of the compile
 * cache, holding one plan:
 * - its key: a hash of what every construct shares (DeferredProject.constructsParts: this build,
 *   Node.js, the working directory, the config written out), the target (URL, account, a hash of
 *   the API key, its id), the environment, the lock file's bytes, and the options that change the
 *   plan (`--target`, `--adopt-existing`);
 * - each check file's hash (its path, each construct's construct cache key), and a hash of each
 *   construct's key;
 * - every list page the plan read: its path and query, its ETag and what it said of the pages
 *   after it.
 * The memo is used only when the key is the same and every one of those pages, asked again with
 * its ETag, answers 304 and says the same of the pages after it: the server decides, so a record
 * changed by anyone is always seen. Then neither the construct cache nor the page cache is read.
 * When only some check files' hashes differ, the constructs of those files are validated and
 * planned again, with the records of their resources alone read from the page cache, and the
 * kept plan stands for the rest (src/cli/plan-memo.ts says when that is the same plan).
 * A plan that sent any other request (a list read by cursor, a page without an ETag, a page read
 * twice) is not kept.
 *
 * The file starts with a header line (format, key, the data's SHA-256 and length); one that does
 * not match whole is ignored (and written again by the next plan). Written to a temporary file
 * renamed into place, mode 0600, not above MAX_BYTES; any error only costs the plan it would
 * have saved.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { ListPageRead } from '../api/paging.js'
import { sha256, readCacheFile, writeCacheFile } from '../resources/cache-file.js'
import type { Plan } from './types.js'

const FORMAT = 'monitors-plan-memo-2'
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
  /** Each check file's hash (FileKey.hash), by its path relative to the project root. */
  files: Record<string, string>
  /** A hash of each construct's construct cache key (constructHash), per check file, in the order the file made them. */
  constructs: Record<string, string[]>
}

/** The hash of a construct's construct cache key kept in a memo (64 bits of its SHA-256). */
export function constructHash(key: string): string {
  return sha256(key).slice(0, 16)
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
  const read = readCacheFile(file, FORMAT, key)
  if ('miss' in read) {
    if (read.miss === 'none') return { miss: 'none kept' }
    if (read.miss === 'other') return { miss: 'the build, config, lock, target or options changed' }
    return { miss: 'the file was damaged: ignored' }
  }
  const memo = read.data as PlanMemo
  if (memo && Array.isArray(memo.pages) && memo.plan && typeof memo.plan === 'object' && Array.isArray(memo.plan.changes) && memo.files && typeof memo.files === 'object' && memo.constructs && typeof memo.constructs === 'object') return { memo }
  return { miss: 'the file was damaged: ignored' }
}

/** Writes the memo whole (temporary file, rename); never throws. A new file prunes the folder to MAX_FILES. */
export function writePlanMemo(file: string, key: string, memo: PlanMemo): void {
  writeCacheFile(file, FORMAT, key, memo, { maxBytes: MAX_BYTES, prefix: 'plan.', maxFiles: MAX_FILES }, !existsSync(file))
}
