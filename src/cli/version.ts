import { packageVersion } from '../server/version.js'

/**
 * The tool's own version: the package.json of monitors-as-code found above this module (the
 * bundle in dist/cli or the compiled dist/src/cli). yargs' default reads the package.json of
 * the working directory, which in a user's project is the user's own version.
 */
export function toolVersion(): string {
  return packageVersion()
}
