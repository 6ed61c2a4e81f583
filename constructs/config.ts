import type { CheckDefaults } from './check.js'

/** Where the Monitoring API is and which account to use. */
export interface ApiConfig {
  /**
   * Base URL of the Monitoring API, without `/v1`. Leave it out to use the embedded local
   * server on a developer's machine; `'local'` chooses it on purpose, which CI requires (with
   * `CI` set, a missing URL is refused).
   * @example baseUrl: process.env.MONITORING_API_URL
   */
  baseUrl?: string
  /**
   * Account id, sent as `x-service-account`.
   * @example accountId: process.env.MONITORING_ACCOUNT_ID
   */
  accountId?: string
  /**
   * API key. Prefer the environment (`MONITORING_API_KEY`) to writing it here.
   */
  apiKey?: string
  /**
   * The target's identity in the lock file (default: the base URL). Name one service reached
   * through several URLs (servers of a cluster sharing a database) once, so that a lock written
   * through one is accepted through the others. Env `MONITORING_TARGET_ID`.
   * @example targetId: 'production'
   */
  targetId?: string
}

/** The project's settings: the default export of `monitoring.config.ts`. */
export interface ProjectConfig {
  /**
   * Name of the project; it names the lock file's owner and appears in plans.
   * @example projectName: 'shop'
   */
  projectName: string
  /**
   * Glob(s), relative to the config's directory, of the check files to load.
   * `node_modules` and `.git` are never searched.
   * @defaultValue '**\/*.check.ts'
   */
  checkMatch?: string | string[]
  /**
   * Globs of files to leave out even when `checkMatch` matches them.
   * @example ignore: ['**\/drafts/**']
   */
  ignore?: string[]
  /**
   * Check props applied to every check that does not set them. `tags` are merged: the
   * defaults' tags first, then the check's own; a check with `defaultTags: false` takes none of
   * them. A check opts out of `alertSettings`, `retryStrategy`, `alertChannels`,
   * `alertChannelSubscriptions` or `frequencyOffset` with `null`.
   * @example defaults: { frequency: 5, locations: ['eu-west-1', 'us-east-1'], tags: ['shop'] }
   */
  defaults?: CheckDefaults
  /** Where the Monitoring API is; see `ApiConfig`. */
  api?: ApiConfig
}

/**
 * Declares the project's settings with types; returns them unchanged.
 *
 * @example
 * export default defineConfig({
 *   projectName: 'shop',
 *   checkMatch: '**\/*.check.ts',
 *   defaults: { frequency: 5, locations: ['eu-west-1', 'us-east-1'], tags: ['shop'] },
 * })
 */
export function defineConfig(config: ProjectConfig): ProjectConfig {
  return config
}
