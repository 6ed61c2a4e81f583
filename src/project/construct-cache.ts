/**
 * The construct cache: what validating a construct produced (its payload and resource options),
 * kept between commands beside the compile cache. A check file is a program, so it always runs;
 * what is kept is the pure work done on what it made: splitting the options off the props,
 * merging the config's defaults, checking every field with the kind's schema and building the
 * payload. An entry is found by its inputs, written out whole:
 * - the construct's kind, name and logical id, and its props written out exactly (key order,
 *   `undefined` values), when they are plain data: objects, arrays, strings, finite numbers,
 *   booleans and null, and constructs of the project they refer to (a group, an alert channel,
 *   a check it depends on), each written as a reference token (`@ref(…)`, which no plain data
 *   writes): that construct's kind, name, logical id, whether it is part of the project, and for
 *   a check group the frequency and locations a check in it takes. Props holding anything else
 *   (a Date, a function, a class instance, -0, NaN, a cycle) are never cached: they are
 *   validated every time;
 * and the file of entries is for one set of everything else:
 * - the config's defaults written out the same way (none cached when they are not plain data),
 * - this build of monitors (`dist/build-id`, a hash of the compiled code written by the build,
 *   so a changed schema never reuses an entry; no cache without it) and its version,
 * - the Node.js version and architecture.
 * Only constructs that validated without a problem are kept, and only payloads that are plain
 * data themselves, with the references the payload holds (where each referred construct's id
 * goes), so an entry read back is exactly what validating would have produced.
 *
 * There is one file per check file (of one config file and environment), holding the entries of
 * the constructs placed in it: an edit of one check file costs reading and writing that file's
 * entries, not the project's. A file starts with a header line (format, scope hash, the data's
 * SHA-256 and length); one that does not match whole (truncated, corrupt, another scope) is
 * ignored and written again. It holds the entries of the last load only (a construct removed
 * from the code leaves it at the next write; the file of a check file removed from the project
 * is left to the bound on files), and a file larger than MAX_BYTES is not written. Written to a temporary file and
 * renamed into place, so two commands at once leave one whole file; any error reading or writing
 * it only costs the validation it would have saved.
 */
import path from 'node:path'
import { isConstruct } from '../../constructs/construct.js'
import { readCacheFile, sha256, writeCacheFile } from '../resources/cache-file.js'
import type { ResourceOptions, ResourceRef } from '../resources/types.js'

const FORMAT = 'monitors-construct-cache-2'
/** A file above this size is not written (about 150,000 checks in one check file). */
const MAX_BYTES = 128 * 1024 * 1024
/** Files kept per cache folder (one per config file, environment and check file): the oldest written go first. */
export const CONSTRUCT_CACHE_FILES = 4096
/** Deeper props than this are not cached (and a cycle ends here). */
const MAX_DEPTH = 64

/** What validating one construct produced. */
export interface CachedConstruct {
  payload: Record<string, unknown>
  options: ResourceOptions
  /** Where the ids of the constructs it refers to go in the payload (always there in an entry read). */
  refs?: ResourceRef[]
}

/** An entry in the file: the payload, then the options and the references when there are any. */
type Entry = [Record<string, unknown>, ResourceOptions?, ResourceRef[]?]

/**
 * How a construct held in props is written in a key (see the module's comment): its reference
 * token, or undefined when it cannot be (no cache for the props holding it).
 */
export type RefToken = (construct: unknown) => string | undefined

/** How often each thing happened in this process (tests and MONITORS_TIMING read them). */
const counts = { hit: 0, miss: 0, uncacheable: 0, invalid: 0, written: 0, unwritten: 0 }
export function constructCacheCounts(): Readonly<typeof counts> {
  return { ...counts }
}

export interface ConstructCache {
  /** The entry of a construct of check file `file` (absolute), or undefined (its props are not plain data, or it is not there). */
  get(key: string | undefined, file?: string): CachedConstruct | undefined
  /** Records what validating a construct of check file `file` gave (not kept when the payload is not plain data). */
  set(key: string | undefined, value: CachedConstruct, file?: string): void
  /** Writes the files that changed; never throws. */
  save(): void
}

/** What every entry of a file is for: one project, its defaults, this build, this Node.js. */
export interface CacheScope {
  configFile: string
  environment?: string
  defaults: unknown
  /** dist/build-id (loader.ts buildId): no cache without one. */
  buildId: string | undefined
  /** This package's version. */
  version: string
  /** Node.js's version: process.version unless told. */
  node?: string
}

/**
 * The cache of one project (config file and environment) in `dir`, for constructs built with
 * these `defaults`; undefined when it cannot be used (no folder, no build id, defaults that are
 * not plain data).
 */
export function openConstructCache(dir: string | false, scope: CacheScope): ConstructCache | undefined {
  if (!dir || !scope.buildId) return undefined
  const defaults = plainJson(scope.defaults, true)
  if (defaults === undefined) return undefined
  const scopeKey = sha256(`${FORMAT}\0${scope.version}\0${scope.buildId}\0${scope.node ?? process.version}\0${process.arch}\0${defaults}`)
  const invalidBefore = counts.invalid
  // one file per check file, read when its first construct is asked for
  const files = new Map<string, CheckFileEntries>()
  const of = (checkFile: string) => {
    let entries = files.get(checkFile)
    if (!entries) {
      const file = path.join(dir, `constructs.${sha256(`${scope.configFile}\0${scope.environment ?? ''}\0${checkFile}`).slice(0, 16)}.cache`)
      files.set(checkFile, (entries = { file, old: readEntries(file, scopeKey), fresh: {}, added: 0, used: 0 }))
    }
    return entries
  }
  let uncacheable = 0
  let missed = 0
  return {
    get(key, checkFile = '') {
      if (key === undefined) {
        counts.uncacheable++
        uncacheable++
        return undefined
      }
      const entries = of(checkFile)
      const entry = entries.old?.[key]
      if (entry === undefined || !Object.hasOwn(entries.old!, key)) {
        counts.miss++
        missed++
        return undefined
      }
      counts.hit++
      entries.used++
      entries.fresh[key] = entry
      return { payload: entry[0], options: entry[1] ?? {}, refs: entry[2] ?? [] }
    },
    set(key, value, checkFile = '') {
      const refs = value.refs ?? []
      if (key === undefined || plainness(value.payload, 0) !== PLAIN || plainness(value.options, 0) !== PLAIN || plainness(refs, 0) !== PLAIN) return
      const options = Object.keys(value.options).length === 0 ? undefined : value.options
      const entries = of(checkFile)
      entries.fresh[key] = refs.length > 0 ? [value.payload, options ?? {}, refs] : options ? [value.payload, options] : [value.payload]
      entries.added++
    },
    save() {
      let used = 0
      let added = 0
      for (const entries of files.values()) {
        used += entries.used
        added += entries.added
        const before = entries.old ? Object.keys(entries.old).length : 0
        if (entries.added > 0 || entries.used !== before || entries.old === undefined) write(entries.file, scopeKey, entries.fresh, entries.old === undefined)
      }
      const damaged = counts.invalid > invalidBefore ? ' (the file was damaged: ignored)' : ''
      if (process.env.MONITORS_DEBUG_CACHE)
        process.stderr.write(`construct cache: ${used} reused, ${missed} validated (${added} kept), ${uncacheable} not cacheable${damaged}\n`)
    },
  }
}

/** The entries of one check file: as read, and as the next write keeps them. */
interface CheckFileEntries {
  file: string
  old: Record<string, Entry> | undefined
  fresh: Record<string, Entry>
  added: number
  used: number
}

/**
 * The key of a construct's entry: its kind, name, logical id and props written out exactly, the
 * constructs in them as `ref` writes them; undefined when the props are not plain data (or hold
 * a construct and there is no `ref`).
 */
export function constructKey(kind: string, name: string, logicalId: string, props: unknown, ref?: RefToken): string | undefined {
  const plain = plainness(props, 0)
  // JSON.stringify writes plain data without undefined values exactly, and natively
  const text = plain === PLAIN ? JSON.stringify(props) : plain === WITH_UNDEFINED || ref ? plainJson(props, true, 0, ref) : undefined
  // the text itself, not a hash of it: hashing 10,000 of them cost more than reading them back
  return text === undefined ? undefined : `${kind} ${name} ${JSON.stringify(logicalId)} ${text}`
}

const NOT_PLAIN = 0
const PLAIN = 1
const WITH_UNDEFINED = 2

/** Whether `value` is plain data (see plainJson), and whether an object of it holds an `undefined` value; builds no string. */
function plainness(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return PLAIN
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? PLAIN : NOT_PLAIN
    case 'object':
      break
    default:
      return NOT_PLAIN
  }
  if (value === null) return PLAIN
  if (depth > MAX_DEPTH) return NOT_PLAIN
  let out = PLAIN
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN
    for (let i = 0; i < value.length; i++) {
      const item = value[i] === undefined ? NOT_PLAIN : plainness(value[i], depth + 1)
      if (item === NOT_PLAIN) return NOT_PLAIN
      if (item === WITH_UNDEFINED) out = WITH_UNDEFINED
    }
    return out
  }
  const proto = Object.getPrototypeOf(value)
  if ((proto !== Object.prototype && proto !== null) || isConstruct(value)) return NOT_PLAIN
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    const v = (value as Record<string, unknown>)[key]
    const item = v === undefined ? WITH_UNDEFINED : plainness(v, depth + 1)
    if (item === NOT_PLAIN) return NOT_PLAIN
    if (item === WITH_UNDEFINED) out = WITH_UNDEFINED
  }
  return out
}

/**
 * `value` written out exactly when it is plain data (JSON's values, with `undefined` values of
 * object keys written as `~u` when `undefinedValues`; a construct as `ref` writes it, when there
 * is one); undefined for anything else.
 */
export function plainJson(value: unknown, undefinedValues: boolean, depth = 0, ref?: RefToken): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? String(value) : undefined
    case 'object':
      break
    default:
      return undefined
  }
  if (value === null) return 'null'
  if (depth > MAX_DEPTH) return undefined
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return undefined
    let out = '['
    for (let i = 0; i < value.length; i++) {
      const item = value[i] === undefined ? undefined : plainJson(value[i], undefinedValues, depth + 1, ref)
      if (item === undefined) return undefined
      out += i === 0 ? item : `,${item}`
    }
    return `${out}]`
  }
  if (isConstruct(value)) return ref?.(value)
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return undefined
  let out = '{'
  let first = true
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    const v = (value as Record<string, unknown>)[key]
    let text: string | undefined
    if (v === undefined) {
      if (!undefinedValues) return undefined
      text = '~u'
    } else {
      text = plainJson(v, undefinedValues, depth + 1, ref)
      if (text === undefined) return undefined
    }
    out += `${first ? '' : ','}${JSON.stringify(key)}:${text}`
    first = false
  }
  return `${out}}`
}

/** The entries of the file when it is whole and of this scope; else undefined (counted as invalid when damaged). */
function readEntries(file: string, scopeKey: string): Record<string, Entry> | undefined {
  const read = readCacheFile(file, FORMAT, scopeKey)
  if ('data' in read && read.data && typeof read.data === 'object' && !Array.isArray(read.data)) return read.data as Record<string, Entry>
  if (!('miss' in read) || read.miss === 'damaged') counts.invalid++
  return undefined
}

/** The file written whole (temporary file, rename); never throws. A new file prunes the folder to MAX_FILES. */
function write(file: string, scopeKey: string, entries: object, added: boolean): void {
  if (writeCacheFile(file, FORMAT, scopeKey, entries, { maxBytes: MAX_BYTES, prefix: 'constructs.', maxFiles: CONSTRUCT_CACHE_FILES }, added)) counts.written++
  else counts.unwritten++
}
