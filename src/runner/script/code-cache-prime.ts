/**
 * The primer of a runtime's code cache (code-cache.ts), run by the runner in a process of its
 * own, outside every sandbox: `node code-cache-prime.js BASE WITHIN MODULE…` loads each MODULE
 * (the runtime's Playwright) with its compilation recorded, then writes what V8 compiled into
 * this Node.js's folder of BASE (codeCacheDir: run it with the script's V8 flags), the modules
 * under WITHIN only.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import { codeCacheDir, useCodeCache } from './code-cache.js'

// run under Node's permission model (it reads the runtime, writes the cache): as in the
// script's process, a path it denies is absent to fs.existsSync (Playwright probes a few)
const existsSync = fs.existsSync
fs.existsSync = (p) => {
  try {
    return existsSync(p)
  } catch {
    return false
  }
}

const [base, within, ...modules] = process.argv.slice(2)
if (!base || !within || modules.length === 0) {
  console.error('usage: code-cache-prime BASE WITHIN MODULE...')
  process.exit(2)
}
const cache = useCodeCache(codeCacheDir(base), within, true)
const load = createRequire(import.meta.url)
for (const m of modules) load(m)
cache.flush()
// the modules loaded may leave handles open: the cache is written
process.exit(0)
