import { createHash } from 'node:crypto'
import { statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { DEFAULT_RUNTIME_ID } from '../../src/schema/index.js'
import { prepareRuntime } from '../../src/runner/script/index.js'

const repo = resolve(import.meta.dirname, '../..')

/** Whether every folder from / down to `dir` lets other users through (a suite run by root runs as a user of its own). */
function openToOthers(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    try {
      if ((statSync(d).mode & 0o001) === 0) return false
    } catch {
      return false
    }
    if (dirname(d) === d) return true
  }
}

/**
 * Kept between test runs (test-results/ is not committed): preparing again is a no-op. A
 * checkout under a folder closed to other users (/root) keeps it in the temporary folder
 * instead, one per checkout: a Playwright suite run by root reads it as a user of its own.
 */
export const TEST_RUNTIME_CACHE = openToOthers(repo)
  ? resolve(repo, 'test-results/runtimes')
  : join(tmpdir(), `monitors-test-runtimes-${createHash('sha256').update(repo).digest('hex').slice(0, 12)}`)

/**
 * The newest runtime, prepared without the network: its packages are the project's own
 * (package-lock.json), which `npm ci` left in npm's cache.
 */
export async function prepareTestRuntime(): Promise<string> {
  await prepareRuntime(DEFAULT_RUNTIME_ID, { cacheDir: TEST_RUNTIME_CACHE, offline: true, fromLock: resolve(repo, 'package-lock.json') })
  return TEST_RUNTIME_CACHE
}
