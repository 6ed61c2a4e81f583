import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/*
 * The runtime's code cache (src/runner/script/code-cache.ts), as a script's process uses it: the
 * primer writes it in a process of its own, another process loads the modules with it. Each case
 * runs Node itself (the hook patches Node's module loader: not in the test's own process).
 */

const repo = resolve(import.meta.dirname, '../../..')
const hook = join(repo, 'dist', 'src', 'runner', 'script', 'code-cache.js')
const primer = join(repo, 'dist', 'src', 'runner', 'script', 'code-cache-prime.js')

let dir: string
let modules: string
let base: string
const HEAP = '--max-old-space-size=256'

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-code-cache-'))
  modules = join(dir, 'node_modules')
  base = join(dir, 'cache')
  mkdirSync(join(modules, 'lib'), { recursive: true })
  writeFileSync(join(modules, 'lib', 'index.js'), "const other = require('./other.js')\nexports.value = () => 'from index ' + other.value()\n")
  writeFileSync(join(modules, 'lib', 'other.js'), "exports.value = () => 'and other'\n")
})

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** The primer, as the runner starts it. */
function prime(): void {
  execFileSync(process.execPath, [HEAP, primer, base, modules, join(modules, 'lib', 'index.js')], { stdio: 'pipe' })
}

/** A process that loads the module with the cache: what it answered and what the hook did. */
function load(): { value: string; stats: { used: number; compiled: number; refused: number; rejected: number } } {
  const code = `import { createRequire } from 'node:module'
import { codeCacheDir, codeCacheStats, useCodeCache } from ${JSON.stringify(`file://${hook}`)}
useCodeCache(codeCacheDir(${JSON.stringify(base)}), ${JSON.stringify(modules)})
const m = createRequire(import.meta.url)(${JSON.stringify(join(modules, 'lib', 'index.js'))})
console.log(JSON.stringify({ value: m.value(), stats: codeCacheStats }))`
  return JSON.parse(execFileSync(process.execPath, [HEAP, '--input-type=module', '-e', code], { encoding: 'utf8' }))
}

function entries(): string[] {
  const [folder] = readdirSync(base)
  return readdirSync(join(base, folder))
    .filter((n) => n !== 'complete')
    .map((n) => join(base, folder, n))
}

describe('the code cache of a runtime', () => {
  it('is written by the primer, one entry a module, in a folder of the Node.js version and heap limit, closed to writes by others; a process loads the modules from it', () => {
    prime()
    const [folder] = readdirSync(base)
    expect(folder).toBe(`${process.version}-${process.arch}-v8-${process.versions.v8}-heap-256`)
    expect(entries()).toHaveLength(2)
    for (const file of entries()) expect(readFileSync(file).subarray(0, 4).toString()).toBe('MCC1')
    const loaded = load()
    expect(loaded.value).toBe('from index and other')
    expect(loaded.stats).toMatchObject({ used: 2, compiled: 0, refused: 0, rejected: 0 })
  })

  it('a tampered entry is not used: the module compiles from its source and runs as written', () => {
    prime()
    for (const file of entries()) {
      const bytes = readFileSync(file)
      // past the magic and the digest: the code V8 would be given
      bytes[bytes.length - 8] ^= 0xff
      writeFileSync(file, bytes)
    }
    const loaded = load()
    expect(loaded.value).toBe('from index and other')
    expect(loaded.stats).toMatchObject({ used: 0, compiled: 2, refused: 2 })
  })

  it('an entry or a folder others may write is not used', () => {
    prime()
    const [first] = entries()
    chmodSync(first, 0o666)
    expect(load().stats).toMatchObject({ used: 1, compiled: 1, refused: 1 })
    chmodSync(first, 0o644)
    expect(load().stats).toMatchObject({ used: 2, compiled: 0, refused: 0 })
    const folder = join(base, readdirSync(base)[0])
    chmodSync(folder, 0o777)
    try {
      expect(load().stats).toMatchObject({ used: 0, compiled: 2, refused: 2 })
    } finally {
      chmodSync(folder, 0o755)
    }
  })

  it('a stale entry is never found: a module whose source changed compiles anew and runs its new code', () => {
    prime()
    writeFileSync(join(modules, 'lib', 'other.js'), "exports.value = () => 'and the new other'\n")
    const loaded = load()
    expect(loaded.value).toBe('from index and the new other')
    expect(loaded.stats).toMatchObject({ used: 1, compiled: 1, refused: 0, rejected: 0 })
  })
})
