import type { CheckDefaults } from './check.js'
import { LOADING_KEY, type LoadingRegistry } from './construct.js'

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

/**
 * One target of the project (`staging`, `production`): chosen with `--env NAME` (or
 * `MONITORS_ENV`, or the config's `defaultEnvironment`) on every command.
 */
export interface EnvironmentConfig {
  /**
   * Where this environment's Monitoring API is: each field replaces the config's `api` field of
   * the same name; a flag (`--api-url`, ...) still wins, and what neither sets comes from
   * MONITORING_API_URL, MONITORING_API_KEY, MONITORING_ACCOUNT_ID, MONITORING_TARGET_ID.
   * @example api: { baseUrl: process.env.STAGING_API_URL, accountId: process.env.STAGING_ACCOUNT_ID }
   */
  api?: ApiConfig
  /**
   * This environment's lock file, relative to the config's directory. A lock records its
   * environment, and a lock of another environment is refused.
   * @defaultValue 'monitoring.<name>.lock.json'
   */
  lock?: string
  /**
   * Check defaults of this environment: each field replaces the config's `defaults` field of
   * the same name (`tags` too, whole); a check's own props still win over them.
   * @example defaults: { frequency: 60, locations: ['eu-west-1'], activated: false }
   */
  defaults?: CheckDefaults
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
  /**
   * The project's targets, by name (lower-case letters, digits, `-` and `_`): each with its
   * target, its lock file and overrides of `defaults`. Once declared, every command runs for one
   * of them: `--env NAME`, else `MONITORS_ENV`, else `defaultEnvironment`; none is refused.
   * @example environments: { staging: { defaults: { frequency: 60 } }, production: {} }
   */
  environments?: Record<string, EnvironmentConfig>
  /**
   * The environment a command runs for when neither `--env` nor `MONITORS_ENV` names one.
   * Without it, such a command is refused (`validate` then checks every environment).
   */
  defaultEnvironment?: string
}

/**
 * The name of the environment the project is being loaded for (`--env`, `MONITORS_ENV` or
 * `defaultEnvironment`), for check files whose monitors differ by environment; undefined when
 * the config declares no environments, and outside a load (the config file itself runs before
 * the environment is chosen).
 *
 * @example
 * const host = currentEnvironment() === 'production' ? 'shop.example.com' : 'staging.shop.example.com'
 */
export function currentEnvironment(): string | undefined {
  return (globalThis as Record<symbol, LoadingRegistry | undefined>)[LOADING_KEY]?.environment
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
