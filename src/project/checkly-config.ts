/**
 * A `checkly.config.ts`, the config of a project written for the hosted service's CLI, read as
 * this project's config: `projectName`; `checks.checkMatch` (default `**\/*.check.{js,ts}`) and
 * `checks.ignoreDirectoriesMatch`; the check defaults of `checks`, `checks.browserChecks` and
 * `checks.multiStepChecks`, which the hosted constructs (constructs/checkly/) apply as they are
 * made, as the hosted CLI does; the spec files of `browserChecks.testMatch` and
 * `multiStepChecks.testMatch`, and the Playwright suites of `checks.playwrightConfigPath` /
 * `checks.playwrightChecks`, which the loader makes checks of (index.ts). What only the hosted
 * CLI uses (`logicalId`, `repoUrl`, `cli`, `bundle`, `caching`, `runner`) is left out.
 */
import path from 'node:path'
import { closest } from '../schema/issues.js'
import type { Problem } from './errors.js'
import type { ResolvedConfig } from './config.js'

/** The names of a hosted CLI's config, looked for after `monitoring.config.*` in each folder. */
export const CHECKLY_CONFIG_FILE_NAMES = ['checkly.config.ts', 'checkly.config.mts', 'checkly.config.js', 'checkly.config.mjs'] as const

/** The hosted CLI's default `checkMatch`. */
export const CHECKLY_DEFAULT_CHECK_MATCH = '**/*.check.{js,ts}'

export const isChecklyConfig = (file: string): boolean => (CHECKLY_CONFIG_FILE_NAMES as readonly string[]).includes(path.basename(file))

/** What a `checkly.config.ts` says beyond this project's own config. */
export interface ChecklySettings {
  /** The check defaults, by the checks they are for (what `LoadingRegistry.checklyDefaults` hands the constructs). */
  defaults: { checks: Record<string, unknown>; browserChecks: Record<string, unknown>; multiStepChecks: Record<string, unknown> }
  /** Spec files each of which is a browser check, and a multi-step check. */
  browserTestMatch: string[]
  multiStepTestMatch: string[]
  /** The Playwright suites the config declares (`checks.playwrightConfigPath`, `checks.playwrightChecks`). */
  playwrightConfigPath?: string
  include?: string | string[]
  playwrightChecks: Record<string, unknown>[]
}

const TOP = ['projectName', 'logicalId', 'repoUrl', 'checks', 'cli', 'bundle', 'caching', 'runner']
const DEFAULTS = [
  'activated',
  'alertChannels',
  'alertEscalationPolicy',
  'doubleCheck',
  'frequency',
  'locations',
  'muted',
  'privateLocations',
  'retryStrategy',
  'shouldFail',
  'tags',
  'environmentVariables',
  'runtimeId',
  'playwrightConfig',
]
const CHECKS = [...DEFAULTS, 'checkMatch', 'ignoreDirectoriesMatch', 'browserChecks', 'multiStepChecks', 'playwrightConfigPath', 'include', 'playwrightChecks']
const TYPED = [...DEFAULTS, 'testMatch']

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** `value` as a list of globs; a problem when it is not a glob or a list of them. */
function globs(value: unknown, field: string, file: string, problems: Problem[], allowNone = false): string[] | undefined {
  if (value === undefined) return undefined
  const list = Array.isArray(value) ? value : [value]
  if ((list.length === 0 && !allowNone) || !list.every((g) => typeof g === 'string' && g !== '')) {
    problems.push({
      file,
      field,
      message: `must be a glob or a list of globs, e.g. '**/__checks__/**/*.check.ts' (got ${JSON.stringify(value)?.slice(0, 60) ?? typeof value})`,
    })
    return undefined
  }
  return list as string[]
}

function unknownKeys(given: Record<string, unknown>, allowed: readonly string[], at: string, file: string, problems: Problem[]): void {
  for (const key of Object.keys(given)) {
    if (allowed.includes(key) || given[key] === undefined) continue
    const near = closest(key, allowed)
    problems.push({
      file,
      field: at ? `${at}.${key}` : key,
      message: `is not a setting of checkly.config.ts${near ? `: did you mean ${near}?` : ''} (allowed: ${allowed.join(', ')})`,
    })
  }
}

/** The defaults of `given` (the settings of `checks` or of its browserChecks / multiStepChecks that are check props). */
function defaultsOf(given: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of DEFAULTS) if (given[key] !== undefined) out[key] = given[key]
  return out
}

function typedChecks(given: unknown, field: string, file: string, problems: Problem[]): { defaults: Record<string, unknown>; testMatch: string[] } {
  if (given === undefined) return { defaults: {}, testMatch: [] }
  if (!isObject(given)) {
    problems.push({ file, field, message: `must be an object of check defaults and testMatch (got ${Array.isArray(given) ? 'an array' : typeof given})` })
    return { defaults: {}, testMatch: [] }
  }
  unknownKeys(given, TYPED, field, file, problems)
  return { defaults: defaultsOf(given), testMatch: globs(given.testMatch, `${field}.testMatch`, file, problems) ?? [] }
}

/** A `checkly.config.ts`'s default export as this project's resolved config, or its problems. */
export function resolveChecklyConfig(exported: unknown, file: string): { config: ResolvedConfig } | { problems: Problem[] } {
  if (!isObject(exported)) {
    return {
      problems: [
        {
          file,
          message: `must export the config as its default export, e.g. export default defineConfig({ projectName: 'shop', logicalId: 'shop' }) (got ${exported === undefined ? 'no default export' : Array.isArray(exported) ? 'an array' : typeof exported})`,
        },
      ],
    }
  }
  const problems: Problem[] = []
  unknownKeys(exported, TOP, '', file, problems)
  const name = exported.projectName
  if (typeof name !== 'string' || name.length === 0 || name.length > 100) {
    problems.push({ file, field: 'projectName', message: `must be the project's name, 1-100 characters (got ${JSON.stringify(name) ?? 'nothing'})` })
  }
  const checks = exported.checks === undefined ? {} : exported.checks
  if (!isObject(checks)) {
    problems.push({
      file,
      field: 'checks',
      message: `must be an object of check defaults and checkMatch (got ${Array.isArray(checks) ? 'an array' : typeof checks})`,
    })
    return { problems }
  }
  unknownKeys(checks, CHECKS, 'checks', file, problems)
  const checkMatch = globs(checks.checkMatch, 'checks.checkMatch', file, problems) ?? [CHECKLY_DEFAULT_CHECK_MATCH]
  const ignore = globs(checks.ignoreDirectoriesMatch, 'checks.ignoreDirectoriesMatch', file, problems, true) ?? []
  const browser = typedChecks(checks.browserChecks, 'checks.browserChecks', file, problems)
  const multiStep = typedChecks(checks.multiStepChecks, 'checks.multiStepChecks', file, problems)
  const suites = checks.playwrightChecks
  if (suites !== undefined && !(Array.isArray(suites) && suites.every(isObject))) {
    problems.push({ file, field: 'checks.playwrightChecks', message: 'must be a list of Playwright check props, each with its logicalId and name' })
  }
  if (checks.playwrightConfigPath !== undefined && typeof checks.playwrightConfigPath !== 'string') {
    problems.push({
      file,
      field: 'checks.playwrightConfigPath',
      message: `must be the path of a Playwright config, relative to ${path.basename(file)} (got ${typeof checks.playwrightConfigPath})`,
    })
  }
  if (problems.length > 0) return { problems }
  const checkly: ChecklySettings = {
    defaults: { checks: defaultsOf(checks), browserChecks: browser.defaults, multiStepChecks: multiStep.defaults },
    browserTestMatch: browser.testMatch,
    multiStepTestMatch: multiStep.testMatch,
    ...(typeof checks.playwrightConfigPath === 'string' ? { playwrightConfigPath: checks.playwrightConfigPath } : {}),
    ...(checks.include !== undefined ? { include: checks.include as string | string[] } : {}),
    playwrightChecks: (suites as Record<string, unknown>[] | undefined) ?? [],
  }
  // the defaults are the hosted constructs' to apply: this project's own defaults stay empty
  return { config: { projectName: name as string, checkMatch, ignore, defaults: {}, api: {}, environments: {}, checkly } }
}
