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
import type { ResourceKind } from '../resources/types.js'
import type { Plan, PlanChange } from './types.js'

const FORMAT = 'monitors-plan-memo-3'
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
  /** A hash of each construct's construct cache key (constructHash), per check file, in the order the file made them, one after the other (see joinHashes). */
  constructs: Record<string, string>
  /**
   * The lock (the bytes the key holds) is in the form monitors writes it (isWrittenForm): a plan
   * of edited files reads their resources' entries alone from its bytes (lockEntriesOf).
   */
  lockWritten?: boolean
}

/** Characters of a constructHash. */
const HASH_LENGTH = 16

/** The hash of a construct's construct cache key kept in a memo (64 bits of its SHA-256). */
export function constructHash(key: string): string {
  return sha256(key).slice(0, HASH_LENGTH)
}

/** Construct hashes as the memo keeps them: one string (each hash has HASH_LENGTH characters). */
export function joinHashes(hashes: readonly string[]): string {
  return hashes.join('')
}

/** The hashes of a string of joinHashes. */
export function splitHashes(joined: string | undefined): string[] {
  const out: string[] = []
  if (joined === undefined) return out
  for (let i = 0; i + HASH_LENGTH <= joined.length; i += HASH_LENGTH) out.push(joined.slice(i, i + HASH_LENGTH))
  return out
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
  const stored = read.data as StoredMemo
  if (
    !stored ||
    !Array.isArray(stored.pages) ||
    !stored.plan ||
    typeof stored.plan !== 'object' ||
    !Array.isArray(stored.plan.changes) ||
    !stored.files ||
    typeof stored.files !== 'object' ||
    !stored.constructs ||
    typeof stored.constructs !== 'object'
  ) {
    return { miss: 'the file was damaged: ignored' }
  }
  const changes = unpackChanges(stored.plan.changes, stored.groups)
  if (!changes)
    return { miss: 'the file was damaged: ignored' }
    // in place: the plan keeps its keys' order
  ;(stored.plan as unknown as Plan).changes = changes
  delete (stored as Partial<StoredMemo>).groups
  return { memo: stored as unknown as PlanMemo }
}

/** Writes the memo whole (temporary file, rename); never throws. A new file prunes the folder to MAX_FILES. */
export function writePlanMemo(file: string, key: string, memo: PlanMemo): void {
  const packed = packChanges(memo.plan.changes)
  const stored: StoredMemo = { ...memo, plan: { ...memo.plan, changes: packed.changes }, groups: packed.groups }
  writeCacheFile(file, FORMAT, key, stored, { maxBytes: MAX_BYTES, prefix: 'plan.', maxFiles: MAX_FILES }, !existsSync(file))
}

/**
 * The memo as written: most of a plan's changes are no-ops of the same few kinds, constructs and
 * files, each an object of seven keys; they are kept as `[group, logicalId, remoteId, name?]`,
 * `group` indexing `groups` (`[kind, construct, file]`), a third of the bytes to write and parse.
 */
interface StoredMemo extends Omit<PlanMemo, 'plan'> {
  plan: Omit<Plan, 'changes'> & { changes: PackedChange[] }
  groups: Array<[string, string, string]>
}

type PackedChange = PlanChange | [number, string, string] | [number, string, string, string]

/** A no-op's keys as planResource makes it, in its order (`name` may be absent). */
const NOOP_KEYS = ['kind', 'logicalId', 'action', 'name', 'construct', 'file', 'remoteId'] as const

/** Whether `change` is a no-op whose JSON holds these keys alone, in this order, all strings: packed, it reads back as the same JSON. */
function packable(change: PlanChange): boolean {
  if (change.action !== 'noop') return false
  let at = 0
  for (const key in change) {
    const value = (change as unknown as Record<string, unknown>)[key]
    // JSON leaves an undefined value out, as the packed form does
    if (value === undefined) continue
    if (typeof value !== 'string') return false
    // a no-op without a name: the keys after it
    if (NOOP_KEYS[at] === 'name' && key !== 'name') at++
    if (NOOP_KEYS[at] !== key) return false
    at++
  }
  return at === NOOP_KEYS.length
}

function packChanges(changes: readonly PlanChange[]): { changes: PackedChange[]; groups: Array<[string, string, string]> } {
  const groups: Array<[string, string, string]> = []
  const index = new Map<string, number>()
  const packed = changes.map((change): PackedChange => {
    if (!packable(change)) return change
    const id = `${change.kind}\0${change.construct}\0${change.file}`
    let group = index.get(id)
    if (group === undefined) {
      index.set(id, (group = groups.length))
      groups.push([change.kind, change.construct!, change.file!])
    }
    return change.name === undefined ? [group, change.logicalId, change.remoteId!] : [group, change.logicalId, change.remoteId!, change.name]
  })
  return { changes: packed, groups }
}

/** The changes of packChanges as they were (as JSON reads them back); undefined when they are not such a list. */
function unpackChanges(packed: readonly unknown[], groups: unknown): PlanChange[] | undefined {
  if (!Array.isArray(groups)) return undefined
  const out: PlanChange[] = new Array(packed.length)
  for (let i = 0; i < packed.length; i++) {
    const item = packed[i]
    if (!Array.isArray(item)) {
      if (!item || typeof item !== 'object') return undefined
      out[i] = item as PlanChange
      continue
    }
    const group = groups[item[0] as number] as [ResourceKind, string, string] | undefined
    if (!Array.isArray(group) || typeof item[1] !== 'string' || typeof item[2] !== 'string') return undefined
    const [kind, construct, file] = group
    out[i] =
      item.length === 3
        ? { kind, logicalId: item[1], action: 'noop', construct, file, remoteId: item[2] }
        : { kind, logicalId: item[1], action: 'noop', name: item[3] as string, construct, file, remoteId: item[2] }
  }
  return out
}
