/**
 * A V8 code cache for the runtime's modules (Playwright: 7 MB of JavaScript a script's process
 * compiles at every run). Node 20 has no `module.enableCompileCache`, so CommonJS compilation is
 * hooked (`Module.prototype._compile`, as the v8-compile-cache package does): a module of the
 * runtime is compiled with the V8 code V8 made of it before, read from the cache.
 *
 * Who writes it: the runner, outside every sandbox, once per runtime and Node.js (engine.ts's
 * `primeCodeCache`: a process of its own loads the runtime's Playwright and saves what V8
 * compiled). It sits in the runtime's folder, which every run sees read-only (bound read-only by
 * the containment, outside the permission model's writable folders), so no run, of any account,
 * writes what another run loads.
 *
 * When an entry is used: its name is the SHA-256 of the module's path and source (a module that
 * changed names another entry: a stale one is never found), in a folder of this Node.js's
 * version, architecture and V8's; the entry holds the SHA-256 of its data, checked before V8 is
 * given it; neither it nor its folder may be writable by others than its owner. Anything else
 * (a tampered or truncated entry, a loose mode, V8 refusing the data) compiles the module from
 * its source, as without a cache. Imports nothing but Node's built-ins (the harness bundles it).
 */
import type * as CRYPTO from 'node:crypto'
import type * as FS from 'node:fs'
import { createRequire } from 'node:module'
import type * as PATH from 'node:path'
import type * as VM from 'node:vm'

// CommonJS modules, Module.prototype patched in place: `require` in the harness's bundle
// (CommonJS), made here in the primer (an ES module)
const load = typeof require === 'function' ? require : createRequire(import.meta.url)
const crypto = load('node:crypto') as typeof CRYPTO
const fs = load('node:fs') as typeof FS
const Module = load('node:module') as Any
const path = load('node:path') as typeof PATH
const vm = load('node:vm') as typeof VM

// biome-ignore lint/suspicious/noExplicitAny: Node's Module internals are not typed
type Any = any

/** The folder of the cache in a prepared runtime. */
export const CODE_CACHE_FOLDER = '.v8-code-cache'
/** Written last by the primer: the folder is complete. */
export const CODE_CACHE_DONE = 'complete'
const MAGIC = Buffer.from('MCC1')
const DIGEST = 32

/**
 * The folder of this process's entries under `base`: V8 accepts code made by its own version, on
 * its architecture, under the same V8 flags (the heap limit among them: the primer runs with
 * the script's).
 */
export function codeCacheDir(
  base: string,
  heap = process.execArgv
    .filter((a) => a.startsWith('--max-old-space-size='))
    .pop()
    ?.split('=')[1] ?? 'default',
): string {
  return path.join(base, `${process.version}-${process.arch}-v8-${process.versions.v8}-heap-${heap}`)
}

/** What the hook did, for the tests and the benches. */
export const codeCacheStats = { used: 0, compiled: 0, refused: 0, rejected: 0, written: 0 }

function entryName(filename: string, content: string): string {
  return crypto.createHash('sha256').update(filename).update('\0').update(content).digest('hex')
}

/** An entry's data, when it may be used: its owner alone may write it and its folder, and its digest holds. */
function readEntry(dir: string, file: string): Buffer | null {
  let fd: number | null = null
  try {
    if ((fs.statSync(dir).mode & 0o022) !== 0) return null
    fd = fs.openSync(file, 'r')
    const stat = fs.fstatSync(fd)
    if (!stat.isFile() || (stat.mode & 0o022) !== 0) return null
    const bytes = fs.readFileSync(fd)
    if (bytes.length <= MAGIC.length + DIGEST || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return null
    const data = bytes.subarray(MAGIC.length + DIGEST)
    const digest = crypto.createHash('sha256').update(data).digest()
    return digest.equals(bytes.subarray(MAGIC.length, MAGIC.length + DIGEST)) ? data : null
  } catch {
    return null
  } finally {
    if (fd !== null) fs.closeSync(fd)
  }
}

/** The require function Node gives a module (as Module.prototype._compile makes it). */
function requireOf(mod: Any): Any {
  const require: Any = (id: string) => mod.require(id)
  require.resolve = (request: string, options?: unknown) => Module._resolveFilename(request, mod, false, options)
  require.resolve.paths = (request: string) => Module._resolveLookupPaths(request, mod)
  require.main = process.mainModule
  require.extensions = Module._extensions
  require.cache = Module._cache
  return require
}

/**
 * Compiles the CommonJS modules under `within` with the entries of `dir` (codeCacheDir), or
 * records them (`produce`: `flush` writes what V8 compiled, once the modules have run, their
 * lazily compiled functions with them). Other modules compile as before.
 */
export function useCodeCache(dir: string, within: string, produce = false): { flush(): void } {
  const scripts: Array<{ script: VM.Script; file: string }> = []
  const original = Module.prototype._compile
  const root = within.endsWith(path.sep) ? within : within + path.sep
  const dynamicImport = (vm as Any).constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER
  Module.prototype._compile = function compile(this: Any, content: string, filename: string) {
    if (!filename.startsWith(root) || !filename.endsWith('.js')) return original.call(this, content, filename)
    const file = path.join(dir, entryName(filename, content))
    const cachedData = produce ? undefined : (readEntry(dir, file) ?? undefined)
    if (!produce && !cachedData && fs.existsSync(file)) codeCacheStats.refused += 1
    let script: VM.Script
    try {
      script = new vm.Script(Module.wrap(content), { filename, cachedData, ...(dynamicImport ? { importModuleDynamically: dynamicImport } : {}) })
    } catch {
      return original.call(this, content, filename)
    }
    if (cachedData && script.cachedDataRejected) codeCacheStats.rejected += 1
    else if (cachedData) codeCacheStats.used += 1
    else codeCacheStats.compiled += 1
    if (produce) scripts.push({ script, file })
    const fn = script.runInThisContext({ displayErrors: true })
    return fn.call(this.exports, this.exports, requireOf(this), this, filename, path.dirname(filename))
  }
  return {
    flush() {
      fs.mkdirSync(dir, { recursive: true, mode: 0o755 })
      for (const { script, file } of scripts) {
        const data = script.createCachedData()
        const tmp = `${file}.${process.pid}.tmp`
        fs.writeFileSync(tmp, Buffer.concat([MAGIC, crypto.createHash('sha256').update(data).digest(), data]), { mode: 0o644 })
        fs.renameSync(tmp, file)
        codeCacheStats.written += 1
      }
      fs.writeFileSync(path.join(dir, CODE_CACHE_DONE), `${scripts.length}\n`, { mode: 0o644 })
    },
  }
}
