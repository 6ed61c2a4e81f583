import { resolve } from 'node:path'
import { DEFAULT_RUNTIME_ID } from '../../src/schema/index.js'
import { prepareRuntime } from '../../src/runner/script/index.js'

const repo = resolve(import.meta.dirname, '../..')

/** Kept between test runs (test-results/ is not committed): preparing again is a no-op. */
export const TEST_RUNTIME_CACHE = resolve(repo, 'test-results/runtimes')

/**
 * The newest runtime, prepared without the network: its packages are the project's own
 * (package-lock.json), which `npm ci` left in npm's cache.
 */
export async function prepareTestRuntime(): Promise<string> {
  await prepareRuntime(DEFAULT_RUNTIME_ID, { cacheDir: TEST_RUNTIME_CACHE, offline: true, fromLock: resolve(repo, 'package-lock.json') })
  return TEST_RUNTIME_CACHE
}
