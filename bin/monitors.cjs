#!/usr/bin/env node
// CommonJS: a script Node runs without starting its ES module loader (10 to 20 ms of every command)
const { closeSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync, writeSync } = require('node:fs')
const { dirname, join } = require('node:path')

/** Node's modules that only running the CLI needs, loaded then: `--version` loads none of them. */
const builtin = (name) => process.getBuiltinModule(name)
const sha256 = (data) => builtin('node:crypto').createHash('sha256').update(data)

const argv = process.argv.slice(2)
const packageRoot = join(__dirname, '..')
const debug = (line) => {
  if (process.env.MONITORS_DEBUG) process.stderr.write(`monitors: ${line}\n`)
}

/**
 * `monitors --version` answers from the package.json beside this file without loading the CLI
 * bundle, whose start-up would be most of the time a version check takes. Undefined when that
 * file cannot be read: the CLI then finds the version its own way.
 */
function ownVersion() {
  try {
    const version = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')).version
    return typeof version === 'string' && version !== '' ? version : undefined
  } catch {
    return undefined
  }
}

const version = argv.length === 1 && argv[0] === '--version' ? ownVersion() : undefined
if (version !== undefined) process.stdout.write(`${version}\n`)
else runCli()

async function runCli() {
  let main
  let afterRun = () => {}
  try {
    ;({ main, afterRun } = loadScript())
  } catch (error) {
    // no CommonJS bundle (an older build), or it would not compile: the ES module bundle
    debug(`code cache: not used (${error instanceof Error ? error.message : String(error)})`)
    ;({ main } = await import('../dist/cli/main.js'))
  }
  return main(argv).then(
    (code) => {
      process.exitCode = code
      afterRun()
    },
    (error) => {
      process.stderr.write(`monitors: internal error: ${error instanceof Error ? error.message : String(error)}\n`)
      if (process.env.MONITORS_DEBUG) process.stderr.write(`${error instanceof Error ? error.stack : ''}\n`)
      process.exitCode = 1
    },
  )
}

/**
 * Runs the CLI from dist/cli/main.cjs, one CommonJS script, through vm.Script with a V8 code
 * cache: compiling the bundle is most of what a command costs before it starts, and Node 20
 * caches compiled code for scripts only (not for ES modules, nor on its own). The cache holds the
 * functions the command compiled, so it is written after the command ran, once per command name
 * (a `--help` run compiles other functions than a `plan`). It is keyed by what V8 checks before
 * it accepts cached data: the bundle's content, and V8's version tag (v8.cachedDataVersionTag():
 * V8's version, the V8 flags that change the code it makes, such as a heap size or
 * --stack-size, and the CPU's features), with Node's version and the architecture. Node's own
 * flags (--no-warnings, --enable-source-maps, ...) leave the tag as it is, so they share the
 * cache. A corrupt, rejected, missing or unwritable cache only means the script compiles as it
 * would without one.
 */
function loadScript() {
  const filename = join(packageRoot, 'dist/cli/main.cjs')
  const bytes = readFileSync(filename)
  const source = bytes.toString('utf8')
  const command = /^[a-z][a-z-]*$/.test(argv[0] ?? '') ? argv[0] : 'other'
  const tag = builtin('node:v8').cachedDataVersionTag().toString(16).padStart(8, '0')
  const key = `${sha256(bytes).digest('hex').slice(0, 16)}-${process.version}-${process.arch}-${tag}`
  const dir = cacheDir()
  const file = dir && join(dir, `cli-${key}-${command}.bin`)
  const cachedData = file ? readCache(file) : undefined
  const script = new (builtin('node:vm').Script)(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename,
    cachedData,
  })
  // A script made from cached data loses its dynamic-import callback on Node 20, so the bundle
  // imports files outside it (a runtime's Playwright) through this function, compiled by Node's
  // own loader (src/runner/script/native-import.ts)
  globalThis[Symbol.for('monitors.nativeImport')] = (specifier) => import(specifier)
  const used = cachedData !== undefined && !script.cachedDataRejected
  if (cachedData !== undefined) debug(used ? `code cache: used ${file}` : `code cache: rejected by V8, replaced after this run: ${file}`)
  if (used) touch(file)
  const module = { exports: {} }
  script.runInThisContext()(module.exports, builtin('node:module').createRequire(filename), module, filename, dirname(filename))
  if (typeof module.exports.main !== 'function') throw new Error(`${filename} exports no main()`)
  return {
    main: module.exports.main,
    afterRun: () => {
      // one cache per command, not one per word a user may type
      const known = command === 'other' || (module.exports.COMMANDS ?? []).some((c) => c.command.split(' ')[0] === command)
      if (file && !used && known) writeCache(dir, file, key, script)
    },
  }
}

/**
 * The folder for code caches: .code-cache in the package when this user may write there, else
 * monitors-code-cache-<uid> in the system's temporary folder. A code cache is code this process
 * runs, so the folder must be this user's own and writable by nobody else (0700), and not a
 * symbolic link; a folder that is not is not used. MONITORS_CODE_CACHE_DIR names another folder;
 * MONITORS_CODE_CACHE=0 turns the cache off.
 */
function cacheDir() {
  if (process.env.MONITORS_CODE_CACHE === '0') return undefined
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
  const candidates = process.env.MONITORS_CODE_CACHE_DIR
    ? [process.env.MONITORS_CODE_CACHE_DIR]
    : [join(packageRoot, '.code-cache'), join(builtin('node:os').tmpdir(), `monitors-code-cache-${uid ?? 'user'}`)]
  for (const dir of candidates) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      const stat = lstatSync(dir)
      if (!stat.isDirectory()) continue
      if (uid !== undefined && (stat.uid !== uid || (stat.mode & 0o022) !== 0)) {
        debug(`code cache: ${dir} is not this user's own folder, or others may write to it: not used`)
        continue
      }
      return dir
    } catch {
      // not creatable here (a read-only install): try the next
    }
  }
  debug(`code cache: no folder this user may write to (${candidates.join(', ')}): not used`)
  return undefined
}

/**
 * A cache file is the SHA-256 of the V8 data, then the data: V8 checks that a cache fits its
 * version, flags and source, but not (in release builds) that the data is intact, and damaged
 * data must never reach it.
 */
function readCache(file) {
  let bytes
  try {
    bytes = readFileSync(file)
  } catch {
    return undefined // none yet
  }
  const data = bytes.subarray(32)
  if (bytes.length > 32 && sha256(data).digest().equals(bytes.subarray(0, 32))) return data
  debug(`code cache: corrupt, replaced after this run: ${file}`)
  return undefined
}

/**
 * Caches of this bundle kept under keys other than the current one: another V8 set-up in use
 * beside it (a heap size set in CI's NODE_OPTIONS, say) keeps its cache too; any more, the
 * least recently used go.
 */
const OTHER_KEYS_KEPT = 1

/** Writes the cache atomically (a temporary file, then a rename), then removes stale caches (prune). */
function writeCache(dir, file, key, script) {
  const temporary = `${file}.${process.pid}.tmp`
  try {
    const data = script.createCachedData()
    rmSync(temporary, { force: true }) // left by a process of the same id that died writing
    const fd = openSync(temporary, 'wx', 0o600)
    try {
      writeSync(fd, sha256(data).digest())
      writeSync(fd, data)
    } finally {
      closeSync(fd)
    }
    renameSync(temporary, file)
    debug(`code cache: written ${file}`)
    prune(dir, key)
  } catch (error) {
    rmSync(temporary, { force: true })
    debug(`code cache: not written (${error instanceof Error ? error.message : String(error)})`)
  }
}

/**
 * Removes stale caches, so that the folder does not grow with each V8 set-up or build: of this
 * bundle, the caches of keys other than the current one but the OTHER_KEYS_KEPT used most
 * recently; of other builds of the bundle, every one in the package's own folder, and in the
 * shared temporary folder, which other installs use too, those unused for 30 days; and
 * temporary files of processes killed while they wrote. A file's modification time is when it
 * was last written or used (touch).
 */
function prune(dir, key) {
  const own = dir === join(packageRoot, '.code-cache')
  const bundle = `cli-${key.slice(0, key.indexOf('-'))}-`
  const current = `cli-${key}-`
  const now = Date.now()
  /** this bundle's caches of other keys: the key, its files and when one was last used */
  const others = new Map()
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('cli-')) continue
    const path = join(dir, name)
    const age = now - lstatSync(path).mtimeMs
    // a temporary file of a process killed while it wrote
    if (name.endsWith('.tmp') && age > 3600 * 1000) rmSync(path, { force: true })
    if (!name.endsWith('.bin') || name.startsWith(current)) continue
    if (!name.startsWith(bundle)) {
      if (own || age > 30 * 24 * 3600 * 1000) rmSync(path, { force: true })
      continue
    }
    // cli-<key>-<command>.bin: no command name has a dash
    const other = name.slice(0, name.lastIndexOf('-'))
    const group = others.get(other) ?? { paths: [], age: Infinity }
    group.paths.push(path)
    group.age = Math.min(group.age, age)
    others.set(other, group)
  }
  const stale = [...others.values()].sort((a, b) => a.age - b.age).slice(OTHER_KEYS_KEPT)
  for (const group of stale) for (const path of group.paths) rmSync(path, { force: true })
}

/** Marks a cache as used now (prune keeps the caches used most recently); a failure changes nothing. */
function touch(file) {
  try {
    const now = new Date()
    utimesSync(file, now, now)
  } catch {
    // a read-only cache still serves
  }
}
