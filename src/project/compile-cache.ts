/**
 * A V8 code cache for the config and the check files. jiti keeps their transpiled JavaScript
 * between runs (`compileCacheDir` in loader.ts), but V8 would still parse and compile it on
 * every command: about 13 ms for a file of 1,000 checks, and Node 20 has no
 * `module.enableCompileCache`. So these files are evaluated here, with `new vm.Script(code, {
 * cachedData })` in the CommonJS wrapper jiti uses (same arguments, so lines, columns and the
 * code jiti's babel output expects are unchanged), and V8's compiled code is kept beside jiti's
 * transpile cache. Everything they import still goes through jiti, and the module is left in
 * jiti's module cache for jiti to hand back with its usual interop.
 *
 * An entry is one file per check file and Node.js (`<dir>-<name>.<path hash>.<node hash>.v8`,
 * the node hash covering Node's version, its architecture and V8's cache tag, which changes
 * with the V8 flags that change compiled code): a checkout used by two Node.js versions, or
 * with and without such flags (a `NODE_OPTIONS` in CI), keeps an entry for each instead of
 * replacing one by the other at every command. At most `VARIANTS` entries are kept per file,
 * the oldest written removed first. An entry starts with a header line with the key (a hash of
 * the exact code compiled and of the node hash), the data's own hash and its length, then V8's
 * data. An entry is used only when all three match: V8 checks
 * a cache against the source's length, not its content, and aborts the process on some
 * corrupt data, so a stale, truncated or corrupt entry must never reach it. Entries are written
 * to a temporary file and renamed into place, so two commands writing at once leave one whole
 * entry; any error reading or writing one only costs the compile it would have saved.
 */
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import Module, { createRequire } from 'node:module'
import { tmpdir, userInfo } from 'node:os'
import path from 'node:path'
import { cachedDataVersionTag } from 'node:v8'
import vm from 'node:vm'
import type { Jiti } from 'jiti'

/** What happened to one file's entry. */
export type CodeCacheEvent =
  /** V8 used the entry. */
  | 'hit'
  /** No entry yet. */
  | 'miss'
  /** The entry is for other code (the file changed) or another Node.js. */
  | 'stale'
  /** The entry is truncated or corrupt: ignored and replaced. */
  | 'invalid'
  /** V8 refused the entry (other V8 flags): replaced. */
  | 'rejected'
  /** A new entry was written. */
  | 'stored'
  /** The entry could not be written (read-only folder, disk full): the command goes on. */
  | 'unwritten'

const counts: Record<CodeCacheEvent, number> = { hit: 0, miss: 0, stale: 0, invalid: 0, rejected: 0, stored: 0, unwritten: 0 }

/** How often each event happened in this process. */
export function codeCacheCounts(): Readonly<Record<CodeCacheEvent, number>> {
  return { ...counts }
}

/** Counted, and with MONITORS_DEBUG_CODE_CACHE set, one line on stderr per event. */
function note(event: CodeCacheEvent, file: string): void {
  counts[event]++
  if (process.env.MONITORS_DEBUG_CODE_CACHE) process.stderr.write(`code cache: ${event} ${path.relative(process.cwd(), file) || file}\n`)
}

const FORMAT = 'monitors-code-cache-1'
/** Entries kept per check file: one per Node.js (version, V8 flags) that loaded it lately. */
const VARIANTS = 4
/** This Node.js, as far as V8's compiled code depends on it. */
const NODE_KEY = sha256(`${process.version}\0${process.arch}\0${cachedDataVersionTag()}`).slice(0, 8)
/** The comment jiti ends an entry of its transpile cache with: the code is the same without it. */
const JITI_CACHE_MARK = /^ \/\* v\d+-[0-9a-f]+ \*\/\n$/
/** Files jiti always transpiles, and evaluates in its CommonJS wrapper (its `evalModule`). */
const TRANSPILED = /\.[cm]?tsx?$/

type WrappedModule = (
  exports: unknown,
  require: Jiti,
  module: Module,
  filename: string,
  dirname: string,
  jitiImport: Jiti['import'],
  jitiESMResolve: Jiti['esmResolve'],
) => Promise<void>

const require = createRequire(import.meta.url)

/**
 * Imports `file` (the config or a check file) as `jiti.import(file)` does, with the V8 code
 * cache. jiti does it when the file is not TypeScript, already loaded (imported by an earlier
 * file), when there is no cache folder, and when the file does not compile (so syntax errors
 * are reported exactly as before).
 */
export async function importCompiled(jiti: Jiti, file: string, scope?: RunningScope): Promise<unknown> {
  const dir = jiti.options.fsCache
  if (!TRANSPILED.test(file) || typeof dir !== 'string' || !jiti.options.moduleCache || jiti.cache[file]) return jiti.import(file)
  // jiti's transpile cache, as its evalModule asks it (same entry)
  const transpiled = jiti.transform({ source: readFileSync(file, 'utf8'), filename: file, ts: true, async: true, jsx: jiti.options.jsx })
  if (transpiled.startsWith('exports.__JITI_ERROR__')) return jiti.import(file) // babel could not parse it: jiti says where
  // the same code whether jiti just transpiled it or read it back with its `/* v9-<source hash> */` line
  const mark = transpiled.lastIndexOf(' /* v')
  const code = mark >= 0 && JITI_CACHE_MARK.test(transpiled.slice(mark)) ? transpiled.slice(0, mark) : transpiled
  const wrapper = `(async function (exports, require, module, __filename, __dirname, jitiImport, jitiESMResolve) { ${code}\n});`
  const entry = path.join(dir, entryName(file))
  const key = sha256(`${NODE_KEY}\0${wrapper}`)
  const cached = readEntry(entry, key)
  let script: vm.Script
  try {
    script = new vm.Script(wrapper, { filename: file, cachedData: typeof cached === 'string' ? undefined : cached })
  } catch {
    return jiti.import(file) // V8 refuses the code: reported as it always was
  }
  const event = typeof cached === 'string' ? cached : script.cachedDataRejected ? 'rejected' : 'hit'
  note(event, file)
  try {
    await evaluate(jiti, file, script, scope)
  } finally {
    // after running, so functions compiled lazily are in the entry too; a file that throws is kept as well
    if (event !== 'hit') store(entry, key, script, file, event === 'miss')
  }
  return jiti.import(file) // now in jiti's module cache: jiti applies its default-export interop
}

/**
 * Which check file's own code is running (see LoadingSession in loader.ts): set while the
 * synchronous part of a check file's top level runs, cleared while a module it imports runs,
 * and for the rest of the file once it imports another check file (a function of that file
 * then places the constructs it makes there, which only a stack tells).
 */
export interface RunningScope {
  running: string | undefined
  readonly matched: ReadonlySet<string>
}

/** The modules of constructs (this package's, and the hosted CLI's it stands in for): never a check file. */
const PACKAGES_OF_CONSTRUCTS = /^(?:monitors-as-code|checkly)(?:\/|$)/

/** `child` as the file's `require` and `import`, clearing `scope.running` while what they load runs. */
function guarded(child: Jiti, scope: RunningScope): { require: Jiti; import: Jiti['import'] } {
  let ownCodeOnly = true
  const around = <T>(id: unknown, load: () => T): T => {
    if (ownCodeOnly && typeof id === 'string' && !id.startsWith('node:') && !PACKAGES_OF_CONSTRUCTS.test(id)) {
      try {
        if (scope.matched.has(child.resolve(id))) ownCodeOnly = false
      } catch {
        // not found: the load below reports it
      }
    }
    const was = scope.running
    scope.running = undefined
    try {
      return load()
    } finally {
      scope.running = ownCodeOnly ? was : undefined
    }
  }
  const require = Object.assign((id: string) => around(id, () => child(id)), child) as Jiti
  const load = ((id: string, options?: object) => around(id, () => child.import(id, options as never))) as Jiti['import']
  require.import = load
  return { require, import: load }
}

/**
 * Runs the compiled wrapper as jiti's evalModule would: a Module in jiti's module cache
 * (withSession clears it after a load), with a jiti of its own for what the file imports.
 */
async function evaluate(jiti: Jiti, file: string, script: vm.Script, scope?: RunningScope): Promise<void> {
  const run = script.runInThisContext({ displayErrors: false }) as WrappedModule
  const dirname = path.dirname(file)
  const mod = new Module(file)
  const child = (require('jiti') as typeof import('jiti')).createJiti(file, jiti.options)
  mod.filename = file
  mod.path = dirname
  mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(dirname)
  mod.require = child
  // Marked loaded while it runs: a module it imports that imports it back gets its exports so
  // far, as jiti's own parent cache gives them, instead of running it a second time.
  mod.loaded = true
  jiti.cache[file] = mod as unknown as Jiti['cache'][string]
  const own = scope?.matched.has(file) ? guarded(child, scope) : undefined
  try {
    if (own && scope) scope.running = file
    // only the synchronous part: after its first await, other code may run before the file's
    const done = run.call(undefined, mod.exports, own?.require ?? child, mod, file, dirname, own?.import ?? child.import, child.esmResolve)
    if (scope) scope.running = undefined
    await done
  } catch (error) {
    delete jiti.cache[file]
    throw error
  } finally {
    if (scope) scope.running = undefined
  }
}

/** The start of every entry name of `file`, whichever Node.js wrote it. */
function entryPrefix(file: string): string {
  return `${path.basename(path.dirname(file))}-${path.basename(file)}.${sha256(file).slice(0, 8)}.`
}

function entryName(file: string): string {
  return `${entryPrefix(file)}${NODE_KEY}.v8`
}

/** Removes the oldest written entries of `file` beyond VARIANTS (other Node.js versions or flags); never throws. */
function pruneVariants(entry: string, file: string): void {
  try {
    const dir = path.dirname(entry)
    const prefix = entryPrefix(file)
    const variants = readdirSync(dir)
      .filter((name) => name.startsWith(prefix) && name.endsWith('.v8'))
      .map((name) => ({ name, written: statSync(path.join(dir, name)).mtimeMs }))
      .sort((a, b) => b.written - a.written)
    for (const { name } of variants.slice(VARIANTS)) unlinkSync(path.join(dir, name))
  } catch {
    // another command pruned at once, or the folder went away: nothing is lost but space
  }
}

/** The entry's V8 data when it is whole and for this code, else why not. */
function readEntry(entry: string, key: string): Buffer | 'miss' | 'stale' | 'invalid' {
  let bytes: Buffer
  try {
    bytes = readFileSync(entry)
  } catch {
    return 'miss'
  }
  const end = bytes.indexOf(10)
  if (end < 0 || end > 256) return 'invalid'
  const [format, entryKey, dataHash, length, ...rest] = bytes.subarray(0, end).toString('latin1').split(' ')
  if (format !== FORMAT || rest.length > 0 || !dataHash || !length) return 'invalid'
  if (entryKey !== key) return 'stale'
  const data = bytes.subarray(end + 1)
  if (String(data.length) !== length || sha256(data) !== dataHash) return 'invalid'
  return data
}

/** Writes a new entry whole (a temporary file renamed into place); never throws. */
function store(entry: string, key: string, script: vm.Script, file: string, added: boolean): void {
  const temporary = `${entry}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`
  try {
    const data = script.createCachedData()
    writeFileSync(temporary, Buffer.concat([Buffer.from(`${FORMAT} ${key} ${sha256(data)} ${data.length}\n`, 'latin1'), data]))
    renameSync(temporary, entry)
    note('stored', file)
    if (added) pruneVariants(entry, file)
  } catch {
    try {
      unlinkSync(temporary)
    } catch {
      /* never written */
    }
    note('unwritten', file)
  }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

/**
 * A folder of this user's own under the system's temporary directory (`<tmp>/<name>-<uid>`),
 * made with mode 0700, for caches that hold code to run: undefined when it cannot be made or
 * is not safe to use (another user's, a link, or anything but a folder). Made writable by its
 * owner only when found open to others.
 */
export function privateTempDir(name: string): string | undefined {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
  let user: string
  try {
    user = uid !== undefined ? String(uid) : userInfo().username.replace(/[^\w.-]/g, '_')
  } catch {
    return undefined
  }
  const dir = path.join(tmpdir(), `${name}-${user}`)
  try {
    mkdirSync(dir, { mode: 0o700 })
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') return undefined
  }
  try {
    const stat = lstatSync(dir)
    if (!stat.isDirectory()) return undefined
    if (uid !== undefined && stat.uid !== uid) return undefined
    if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) chmodSync(dir, 0o700)
    return dir
  } catch {
    return undefined
  }
}
