import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGE_NAME = 'monitors-as-code'

/**
 * This package's version: the package.json of monitors-as-code found above this module (the
 * CLI's bundle in dist/cli or the compiled dist/src/server). What `monitors --version` prints
 * and what GET /v1/accounts/me answers as the server's version; `unknown` when none is found.
 */
export function packageVersion(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from)
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === PACKAGE_NAME && pkg.version) return pkg.version
    } catch {
      // no package.json here, or not readable: keep looking upwards
    }
    const parent = dirname(dir)
    if (parent === dir) return 'unknown'
    dir = parent
  }
}
