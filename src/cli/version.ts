import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGE_NAME = 'monitors-as-code'

/**
 * The tool's own version: the package.json of monitors-as-code found above this module (the
 * bundle in dist/cli or the compiled dist/src/cli). yargs' default reads the package.json of
 * the working directory, which in a user's project is the user's own version.
 */
export function toolVersion(from: string = fileURLToPath(import.meta.url)): string {
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
