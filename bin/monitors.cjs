#!/usr/bin/env node
// CommonJS: a script Node runs without starting its ES module loader (10 to 20 ms of every command)
const { closeSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } = require('node:fs')
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
 * (a `--help` run compiles other functions than a `plan`). It is keyed by the bundle's content
 * and Node's version; V8 rejects one that does not fit (another V8, other flags), and a corrupt,
 * rejected, missing or unwritable cache only means the script compiles as it would without one.
 */
function loadScript() {
  const filename = join(packageRoot, 'dist/cli/main.cjs')
  const bytes = readFileSync(filename)
  const source = bytes.toString('utf8')
  const command = /^[a-z][a-z-]*$/.test(argv[0] ?? '') ? argv[0] : 'other'
  // V8 flags change the code V8 makes (and make it reject a cache made without them)
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ').trim()
  const flagsKey = flags ? `-${sha256(flags).digest('hex').slice(0, 8)}` : ''
  const key = `${sha256(bytes).digest('hex').slice(0, 16)}-${process.version}-${process.arch}${flagsKey}`
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
 * Writes the cache atomically (a temporary file, then a rename), then removes stale caches: in
 * the package's own folder those of other builds of the bundle; in the shared temporary folder,
 * which other installs use too, those not written for 30 days; and temporary files of processes
 * killed while they wrote.
 */
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
    const own = dir === join(packageRoot, '.code-cache')
    const bundle = `cli-${key.slice(0, key.indexOf('-'))}-`
    const age = (path) => Date.now() - lstatSync(path).mtimeMs
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (!name.startsWith('cli-')) continue
      // a temporary file of a process killed while it wrote
      if (name.endsWith('.tmp') && age(path) > 3600 * 1000) rmSync(path, { force: true })
      if (!name.endsWith('.bin') || name.startsWith(bundle)) continue
      if (own || age(path) > 30 * 24 * 3600 * 1000) rmSync(path, { force: true })
    }
  } catch (error) {
    rmSync(temporary, { force: true })
    debug(`code cache: not written (${error instanceof Error ? error.message : String(error)})`)
  }
}
