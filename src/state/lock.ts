import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs'
import { dirname, basename, join } from 'node:path'
import type { ResourceKind } from '../resources/types.js'
import { stableStringify } from '../resources/stable-json.js'
import { UserError } from '../errors.js'
import { journalPath, removeJournal, replayJournal } from './journal.js'

/** Identity of the service a lock file belongs to. */
export interface LockTarget {
  /** `local` for the embedded server, otherwise the base URL without a trailing slash. */
  id: string
  baseUrl: string
  accountId?: string
}

export interface LockEntry {
  kind: ResourceKind
  logicalId: string
  remoteId: string
  /** `sha256:` of the normalized payload last applied (secret values left out). */
  appliedHash: string
  /** Display name of the resource when last applied (for deletes and review). */
  name?: string
  /** Fingerprint of a secret variable's value (see plan/secrets.ts); never the value. */
  secretHash?: string
  /** `protect: true` when last applied: a plan that deletes it is refused even once it is gone from the code. */
  protect?: true
  /** `retainOnDelete: true` when last applied: removing it from the code only forgets it. */
  retainOnDelete?: true
}

/**
 * A create sent (or about to be sent) whose answer has not been recorded yet. Written before the
 * POST: when the answer is lost (timeout, reset, the process killed), the next plan finds the
 * resource the POST made by these identifying fields and adopts it instead of creating it twice.
 */
export interface PendingCreate {
  kind: ResourceKind
  logicalId: string
  /** `sha256:` of the normalized payload sent, as `appliedHash`. */
  appliedHash: string
  /** Fields that find the resource again in a list: name (checks, services, windows), key (variables), url (status pages). */
  match: Record<string, string>
  /** Fingerprint of a secret variable's value, as in LockEntry. */
  secretHash?: string
}

export interface LockFile {
  version: 1
  /**
   * The environment of the config the lock belongs to (`--env`), absent without environments.
   * A lock is never used for another environment (assertLockEnvironment).
   */
  environment?: string
  target: LockTarget
  /** Keyed by `${kind}:${logicalId}`. */
  resources: Record<string, LockEntry>
  /** Creates whose outcome is not known yet, keyed as `resources`; absent when there are none. */
  pending?: Record<string, PendingCreate>
}

export const LOCK_FILE_NAME = 'monitoring.lock.json'

export const lockKey = (kind: string, logicalId: string) => `${kind}:${logicalId}`

/**
 * The lock's entries per kind, in the lock's order, made once per lock object (a plan reads the
 * entries of a few kinds in several places; walking 10,000 entries each time added up). A lock
 * object is not changed after it is read: apply works on a copy (see workingLock).
 */
const byKindIndexes = new WeakMap<LockFile, Map<ResourceKind, LockEntry[]>>()
export function entriesByKind(lock: LockFile | undefined): ReadonlyMap<ResourceKind, readonly LockEntry[]> {
  if (!lock) return new Map()
  let index = byKindIndexes.get(lock)
  if (index) return index
  index = new Map()
  const entries = lock.resources
  for (const key in entries) {
    if (!Object.hasOwn(entries, key)) continue
    const entry = entries[key]
    let list = index.get(entry.kind)
    if (!list) index.set(entry.kind, (list = []))
    list.push(entry)
  }
  byKindIndexes.set(lock, index)
  return index
}

export function emptyLock(target: LockTarget, environment?: string): LockFile {
  return { version: 1, ...(environment !== undefined ? { environment } : {}), target: { ...target }, resources: {} }
}

class LockError extends UserError {}

/**
 * Reads a lock file, with the journal an apply killed mid-way left beside it replayed onto it
 * (see journal.ts; the file itself is not changed: `foldJournal` does that); undefined when there
 * is no lock file.
 */
export function readLock(path: string, bytes?: Buffer): LockFile | undefined {
  let text: string
  try {
    text = bytes !== undefined ? bytes.toString('utf8') : readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new LockError(`Cannot read the lock file ${path}: ${(error as Error).message}`)
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    throw new LockError(
      `The lock file ${path} is not valid JSON (${(error as Error).message.split('\n')[0]}). ` +
        'If a merge left conflict markers in it, resolve them, then run plan again.',
    )
  }
  const lock = data as Partial<LockFile>
  if (!lock || typeof lock !== 'object' || lock.version !== 1 || !lock.target || typeof lock.target.id !== 'string' || typeof lock.resources !== 'object') {
    throw new LockError(`The lock file ${path} is not a monitors lock file (version 1) this version understands.`)
  }
  if (lock.environment !== undefined && (typeof lock.environment !== 'string' || lock.environment === '')) {
    throw new LockError(`The lock file ${path} has a broken "environment" (it must be the name of an environment of the config, e.g. "staging").`)
  }
  const resources = lock.resources ?? {}
  for (const key in resources) {
    const entry = resources[key]
    if (!entry || typeof entry.remoteId !== 'string' || typeof entry.kind !== 'string' || typeof entry.logicalId !== 'string') {
      throw new LockError(`The lock file ${path} has a broken entry "${key}" (kind, logicalId and remoteId are required).`)
    }
  }
  replayJournal(lock as LockFile, path)
  return lock as LockFile
}

/** Whether an apply left a journal beside the lock (one is running, or one was killed). */
export function hasJournal(path: string): boolean {
  return existsSync(journalPath(path))
}

/**
 * Writes the journal beside the lock into the lock file and removes it; only while no apply
 * runs (the caller holds the apply lock). Returns the lock as it is now. A journal without a
 * lock file (the lock was deleted on purpose) is removed.
 */
export function foldJournal(path: string): LockFile | undefined {
  if (!hasJournal(path)) return readLock(path)
  const lock = readLock(path)
  if (lock) writeLock(path, lock)
  removeJournal(path)
  return lock
}

/** The lock file's text: sorted keys, two-space indent, trailing newline, so diffs stay small. */
function serializeLock(lock: LockFile): string {
  return `${stableStringify(lock, 2)}\n`
}

/** Whether `bytes` are `lock` as writeLock writes it (keys sorted, two spaces): what lockEntriesOf reads. */
export function isWrittenForm(lock: LockFile, bytes: Buffer): boolean {
  return bytes.equals(Buffer.from(serializeLock(lock), 'utf8'))
}

/**
 * The lock of `bytes` with the entries of `keys` alone (those it has), read without parsing the
 * rest: `bytes` must be a lock in writeLock's form (isWrittenForm), checked before, and without a
 * journal. There, each resource's entry is its own lines, `    "<key>": {` to `    }` (an entry
 * holds no object), and the only other object keyed at that depth is `pending`. Undefined when
 * the lock has pending creates, or something is not where that form puts it: the caller then
 * reads the lock whole.
 */
export function lockEntriesOf(bytes: Buffer, keys: readonly string[]): LockFile | undefined {
  if (bytes.includes('\n  "pending": ') || !bytes.includes('\n  "version": 1\n}')) return undefined
  const object = (from: string, close: string): unknown => {
    const at = bytes.indexOf(from)
    if (at < 0) return undefined
    const start = at + from.length - 1
    const end = bytes.indexOf(close, start)
    if (end < 0 || bytes.indexOf(from, at + 1) >= 0) return null
    try {
      return JSON.parse(bytes.toString('utf8', start, end + close.length))
    } catch {
      return null
    }
  }
  const target = object('\n  "target": {', '\n  }') as LockTarget | undefined | null
  if (!target || typeof target.id !== 'string' || typeof target.baseUrl !== 'string') return undefined
  const lock: LockFile = { version: 1, target, resources: {} }
  const environment = /\n {2}"environment": ("(?:[^"\\\n]|\\.)*"),\n/.exec(bytes.toString('utf8', 0, Math.min(bytes.length, 4096)))
  if (environment) lock.environment = JSON.parse(environment[1]) as string
  for (const key of keys) {
    const entry = object(`\n    ${JSON.stringify(key)}: {`, '\n    }') as LockEntry | undefined | null
    if (entry === undefined) continue
    if (!entry || typeof entry.remoteId !== 'string' || lockKey(entry.kind, entry.logicalId) !== key) return undefined
    lock.resources[key] = entry
  }
  return lock
}

const cleaned = new Set<string>()

/**
 * Writes the lock atomically: a temporary file in the same folder, flushed to disk, then renamed
 * over the old one. A process killed at any moment leaves the old lock or the new one, never a
 * mix; the temporary file a killed writer leaves behind is removed by the next writer.
 */
export function writeLock(path: string, lock: LockFile): void {
  const dir = dirname(path)
  mkdirSync(dir, { recursive: true })
  const temp = join(dir, `.${basename(path)}.${process.pid}.tmp`)
  if (!cleaned.has(path)) {
    cleaned.add(path)
    removeStrayTemps(dir, basename(path), temp)
  }
  if (lock.pending && Object.keys(lock.pending).length === 0) delete lock.pending
  try {
    const fd = openSync(temp, 'w')
    try {
      writeSync(fd, serializeLock(lock))
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(temp, path)
  } catch (error) {
    try {
      unlinkSync(temp)
    } catch {
      // nothing to clean up
    }
    throw new LockError(`Cannot write the lock file ${path}: ${(error as Error).message}`)
  }
}

/** Temporary files of writers that died before their rename (one writer at a time: see process-lock.ts). */
function removeStrayTemps(dir: string, name: string, own: string): void {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return
  }
  for (const file of names) {
    if (!file.startsWith(`.${name}.`) || !file.endsWith('.tmp') || join(dir, file) === own) continue
    try {
      unlinkSync(join(dir, file))
    } catch {
      // gone already, or not ours to remove
    }
  }
}

/** Whether a lock file belongs to the target; a lock without account matches any account. */
function sameTarget(a: LockTarget, b: LockTarget): boolean {
  if (a.id !== b.id) return false
  if (a.accountId && b.accountId && a.accountId !== b.accountId) return false
  return true
}

/** Whether a target's id is a configured name (MONITORING_TARGET_ID) rather than its URL. */
const namedTarget = (target: LockTarget) => target.id !== 'local' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(target.id)

export function describeTarget(target: LockTarget): string {
  const where = target.id === 'local' ? 'the embedded local server' : namedTarget(target) ? `target "${target.id}" (${target.baseUrl})` : target.baseUrl
  return target.accountId ? `${where} (account ${target.accountId})` : where
}

/**
 * Refuses a lock file written for another target, saying how to proceed: the lock's ids mean
 * nothing on another service, and acting on them could delete the wrong resources. A target
 * whose identity is configured (`urlId` set: MONITORING_TARGET_ID) also accepts a lock written
 * through its own URL before it was named; the next write records the name.
 */
export function assertLockTarget(lock: LockFile | undefined, target: LockTarget & { urlId?: string }, path: string): void {
  if (!lock || sameTarget(lock.target, target)) return
  if (target.urlId !== undefined && sameTarget(lock.target, { ...target, id: target.urlId })) return
  const count = Object.keys(lock.resources).length
  const oneService =
    lock.target.id !== 'local' && target.id !== 'local'
      ? ' If both are servers of one service (a cluster sharing one database), name that service once: set MONITORING_TARGET_ID ' +
        `(or api.targetId in the config, or --target-id) to one name everywhere${namedTarget(lock.target) ? ` ("${lock.target.id}", the lock's)` : `, run once through ${lock.target.baseUrl} so the lock records it (or set "target.id" in ${path} to that name)`}.`
      : ''
  throw new LockError(
    `The lock file ${path} belongs to ${describeTarget(lock.target)}, but the target is ${describeTarget(target)}. ` +
      `Point the CLI at the lock's target (MONITORING_API_URL / --api-url, MONITORING_ACCOUNT_ID / --account-id), ` +
      `or pass --lock <file> to keep a separate lock file for this target` +
      (count > 0 ? ` (the ${count} resources in ${path} stay where they are).` : '.') +
      oneService,
  )
}

/**
 * Refuses a lock file of another environment: a plan for one environment never uses another's
 * lock (its remote ids are the other environment's resources: applying would change or delete
 * them). The lock's `environment` must be the run's: both absent (no environments), or the same
 * name. One exception keeps a lock written before environments were declared: when the lock
 * file is the one the environment's own `lock` setting names (`namedByEnvironment`), a lock that
 * records no environment is taken as that environment's (its next write records it).
 */
export function assertLockEnvironment(lock: LockFile | undefined, environment: string | undefined, path: string, namedByEnvironment = false): void {
  if (!lock || lock.environment === environment) return
  if (lock.environment === undefined && environment !== undefined && namedByEnvironment) return
  const count = Object.keys(lock.resources).length
  const keep = count === 0 ? '' : count === 1 ? ' (its 1 resource stays as it is)' : ` (its ${count} resources stay as they are)`
  if (lock.environment !== undefined && environment !== undefined) {
    throw new LockError(
      `The lock file ${path} belongs to the environment "${lock.environment}", but this run is for the environment "${environment}": ` +
        `a plan for one environment never uses another's lock${keep}. Run with --env ${lock.environment} to use it, ` +
        `or leave --lock out (or point it at the lock of "${environment}").`,
    )
  }
  if (lock.environment !== undefined) {
    throw new LockError(
      `The lock file ${path} belongs to the environment "${lock.environment}", but this run names no environment${keep}. ` +
        `Run with --env ${lock.environment} (the config must declare it), or use another lock file.`,
    )
  }
  throw new LockError(
    `The lock file ${path} records no environment (it was written without one), but this run is for the environment "${environment}": ` +
      `it may be another environment's lock${keep}, so it is not used. If it is the lock of "${environment}" (written before the config ` +
      `declared environments), name it as that environment's lock in the config (environments: { ${environment}: { lock: '${basename(path)}' } }), ` +
      `or set "environment": "${environment}" in it (it is a reviewed file); otherwise leave --lock out.`,
  )
}

/**
 * Records the code's resource options (`protect`, `retainOnDelete`) on the lock entries of the
 * resources that have one, so that they still apply once the construct is removed from the code.
 * Returns whether anything changed (no request is needed: the options are local).
 */
export function syncLockOptions(
  lock: LockFile,
  resources: ReadonlyArray<{ kind: ResourceKind; logicalId: string; options: { protect?: boolean; retainOnDelete?: boolean } }>,
): boolean {
  let changed = false
  for (const resource of resources) {
    const entry = lock.resources[lockKey(resource.kind, resource.logicalId)]
    if (!entry) continue
    for (const option of ['protect', 'retainOnDelete'] as const) {
      const want = resource.options[option] === true
      if (want && entry[option] !== true) {
        entry[option] = true
        changed = true
      } else if (!want && entry[option] !== undefined) {
        delete entry[option]
        changed = true
      }
    }
  }
  return changed
}
