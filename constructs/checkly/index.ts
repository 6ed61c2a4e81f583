/**
 * `checkly`, for a project written for the hosted service's CLI: `defineConfig` of
 * `checkly.config.ts`, and its constructs (`checkly/constructs`, ./constructs.ts). The loader
 * points `checkly` at this module, never at the hosted CLI itself.
 */
import type { ChecklyConfig } from './types.js'

export * as constructs from './constructs.js'
export type { ChecklyConfig } from './types.js'

/**
 * Declares the settings of `checkly.config.ts` with types; returns them unchanged. monitors
 * reads `projectName`, `checks` (the check defaults, `checkMatch`, `ignoreDirectoriesMatch`,
 * `browserChecks` and `multiStepChecks` with their `testMatch`, the Playwright suites) and
 * leaves out what only the hosted CLI uses (`logicalId`, `repoUrl`, `cli`, ...).
 */
export function defineConfig<T extends ChecklyConfig>(config: T): T {
  return config
}
