import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { dnsCheckSchema, runFrequencySchema } from '../schema/check.js'
import { crossField } from '../schema/cross-field.js'
import { closest, validate } from '../schema/issues.js'
import { frequencyOffsetProblem } from '../schema/rules.js'
import { RUN_FREQUENCIES } from '../schema/enums.js'
import type { CheckDefaults, ProjectConfig } from '../../constructs/index.js'
import type { Problem } from './errors.js'
import { CHECKLY_CONFIG_FILE_NAMES, isChecklyConfig, resolveChecklyConfig, type ChecklySettings } from './checkly-config.js'

export type { ProjectConfig, CheckDefaults }

/**
 * Names looked for, in this order, in the working directory and then each parent: this
 * project's config, then the hosted service's CLI's (checkly-config.ts), read as it is.
 */
export const CONFIG_FILE_NAMES = [
  'monitoring.config.ts',
  'monitoring.config.mts',
  'monitoring.config.js',
  'monitoring.config.mjs',
  ...CHECKLY_CONFIG_FILE_NAMES,
] as const

export const DEFAULT_CHECK_MATCH = '**/*.check.ts'

export type ResolvedApi = { baseUrl?: string; accountId?: string; apiKey?: string; targetId?: string }

/** One environment of the config, as written (empty strings left out). */
export interface ResolvedEnvironment {
  api: ResolvedApi
  /** The lock file as written, relative to the config's directory; absent: `monitoring.<name>.lock.json`. */
  lock?: string
  defaults: CheckDefaults
  /** The `api` fields written but empty (`baseUrl: process.env.STAGING_API_URL` with an unset secret). */
  emptyApi: string[]
}

/** The chosen environment of a loaded project. */
export interface ChosenEnvironment {
  name: string
  /** The environment's own `lock` setting, relative to the config's directory (absent: the default name). */
  lock?: string
  /** How it was chosen, for messages: `--env`, `MONITORS_ENV` or `defaultEnvironment`. */
  from: string
  /**
   * Its `api` fields written but empty: never filled from the config's `api` or MONITORING_*
   * (that could be another environment's target); a command that opens the target refuses them.
   */
  emptyApi?: string[]
}

/** The config with every optional setting filled in. */
export interface ResolvedConfig {
  projectName: string
  checkMatch: string[]
  ignore: string[]
  /** The check defaults; once an environment is chosen, with its own merged in. */
  defaults: CheckDefaults
  /** The target's settings; once an environment is chosen, with its own merged in. */
  api: ResolvedApi
  /** The environments the config declares, by name, in its order; empty without any. */
  environments: Record<string, ResolvedEnvironment>
  defaultEnvironment?: string
  /** The environment this load is for (see chooseEnvironment); absent when the config declares none. */
  environment?: ChosenEnvironment
  /** What a `checkly.config.ts` says beyond the above (checkly-config.ts); absent for a `monitoring.config.ts`. */
  checkly?: ChecklySettings
}

/** An environment's name: it names its lock file, so lower case (one file on every file system). */
export const ENVIRONMENT_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/
const ENVIRONMENT_NAME_RULE = 'lower-case letters, digits, - and _ (at most 40 characters, starting with a letter or a digit), e.g. staging'

/** The lock file of an environment of a real target, beside the config, when it names none. */
export const environmentLockName = (name: string) => `monitoring.${name}.lock.json`

/** Check props a config's `defaults` may set: the common fields except `name` and `triggerIncident`. */
export const DEFAULTABLE_CHECK_FIELDS = [
  'activated',
  'muted',
  'doubleCheck',
  'shouldFail',
  'locations',
  'tags',
  'alertSettings',
  'useGlobalAlertSettings',
  'groupId',
  'groupOrder',
  'runtimeId',
  'alertChannelSubscriptions',
  'retryStrategy',
  'runParallel',
  'frequency',
  'frequencyOffset',
  'alertChannels',
] as const satisfies readonly (keyof CheckDefaults)[]

// a default frequency is never sub-minute (nor 0 for the API checks it also applies to)
const checkShape = { ...dnsCheckSchema.in.shape, frequency: runFrequencySchema(false) }

const defaultsSchema = z
  .strictObject(
    Object.fromEntries(DEFAULTABLE_CHECK_FIELDS.map((f) => [f, checkShape[f].optional()])) as {
      [K in (typeof DEFAULTABLE_CHECK_FIELDS)[number]]: z.ZodOptional<(typeof checkShape)[K]>
    },
  )
  .check(
    crossField((v, add) => {
      // a frequency the field refuses (0 among them, see runFrequencySchema) is reported once, by the field
      if (v.frequency !== undefined && (RUN_FREQUENCIES as readonly unknown[]).includes(v.frequency)) {
        const problem = frequencyOffsetProblem(v.frequency, v.frequencyOffset)
        if (problem) add({ path: ['frequencyOffset'], message: problem, input: v.frequencyOffset })
      }
    }),
  )

/** A target's identity in the lock: a name of a few characters, not `local` (the embedded server's). */
const targetIdSchema = z.string().refine((s) => s === '' || (/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/.test(s) && s !== 'local'), {
  message: "must be a name of letters, digits and . _ : / - (at most 200 characters), e.g. 'production'; not 'local', the embedded server's",
})

// 'local': the embedded local server, chosen on purpose (the only way to use it in CI)
const httpUrl = z.string().refine((s) => s === '' || s === 'local' || /^https?:\/\/[^\s/]+/.test(s), {
  message: "must be an http(s) URL, e.g. https://api.example.com, or 'local' for the embedded local server",
})

const apiSchema = z.strictObject({
  baseUrl: httpUrl.optional(),
  accountId: z.string().optional(),
  apiKey: z.string().optional(),
  targetId: targetIdSchema.optional(),
})

const environmentSchema = z.strictObject({
  api: apiSchema.optional(),
  lock: z.string().min(1).optional(),
  defaults: defaultsSchema.optional(),
})

const configSchema = z
  .strictObject({
    projectName: z.string().min(1).max(100),
    checkMatch: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    ignore: z.array(z.string().min(1)).optional(),
    defaults: defaultsSchema.optional(),
    api: apiSchema.optional(),
    environments: z.record(z.string(), environmentSchema).optional(),
    defaultEnvironment: z.string().optional(),
  })
  .check(
    crossField((v, add) => {
      const envs = v.environments
      const names = envs && typeof envs === 'object' && !Array.isArray(envs) ? Object.keys(envs) : undefined
      if (names) {
        if (names.length === 0)
          add({
            path: ['environments'],
            message: 'declares no environment: name at least one (e.g. { staging: {}, production: {} }), or leave environments out',
            input: envs,
          })
        for (const name of names) {
          if (!ENVIRONMENT_NAME.test(name))
            add({ path: ['environments', name], message: `is not an environment name: write ${ENVIRONMENT_NAME_RULE}`, input: name })
        }
        // two environments never share a lock file: a lock belongs to one environment
        const byLock = new Map<string, string>()
        for (const name of names) {
          const lock = (envs as Record<string, { lock?: unknown } | undefined>)[name]?.lock
          const file = path.posix.normalize(typeof lock === 'string' && lock !== '' ? lock.split(path.sep).join('/') : environmentLockName(name))
          const other = byLock.get(file)
          if (other !== undefined)
            add({
              path: ['environments', name, 'lock'],
              message: `is ${file}, the lock file of the environment ${other} too: each environment needs its own lock file`,
              input: lock,
            })
          else byLock.set(file, name)
        }
      }
      const chosen = v.defaultEnvironment
      if (typeof chosen === 'string' && !(names ?? []).includes(chosen)) {
        add({
          path: ['defaultEnvironment'],
          message:
            names && names.length > 0
              ? `is "${chosen}", which is not an environment of this config (environments: ${names.join(', ')})`
              : 'names an environment, but the config declares no environments',
          input: chosen,
        })
      }
    }),
  )

const CONFIG_SETTINGS = ['projectName', 'checkMatch', 'ignore', 'defaults', 'api', 'environments', 'defaultEnvironment']
const API_SETTINGS = ['baseUrl', 'accountId', 'apiKey', 'targetId']
const ENVIRONMENT_SETTINGS = ['api', 'lock', 'defaults']

/** What a misspelt setting of the config is not, what is allowed where it is, and the nearest allowed name. */
function unknownSetting(dotted: string): string {
  const parts = dotted.split('.')
  const key = parts[parts.length - 1]
  const [what, allowed]: [string, readonly string[]] | [undefined, undefined] =
    parts.length === 1
      ? ['a config setting', CONFIG_SETTINGS]
      : parts.length === 2 && parts[0] === 'defaults'
        ? ['a check default', DEFAULTABLE_CHECK_FIELDS]
        : parts.length === 2 && parts[0] === 'api'
          ? ['an api setting', API_SETTINGS]
          : parts.length === 3 && parts[0] === 'environments'
            ? ['an environment setting', ENVIRONMENT_SETTINGS]
            : parts.length === 4 && parts[0] === 'environments' && parts[2] === 'defaults'
              ? ['a check default', DEFAULTABLE_CHECK_FIELDS]
              : parts.length === 4 && parts[0] === 'environments' && parts[2] === 'api'
                ? ['an api setting', API_SETTINGS]
                : [undefined, undefined]
  if (!what) return 'is not a known field'
  const near = closest(key, allowed)
  return `is not ${what}${near ? `: did you mean ${near}?` : ''} (allowed: ${allowed.join(', ')})`
}

/**
 * The config file to use: `explicit` (relative to `cwd`) or the first `monitoring.config.*`
 * found in `cwd` or a parent directory. Returns a problem when there is none.
 */
export function findConfigFile(cwd: string, explicit?: string): { file: string } | { problem: Problem } {
  if (explicit) {
    const file = path.resolve(cwd, explicit)
    if (!existsSync(file)) return { problem: { file: '', message: `config file ${explicit} does not exist (given by --config)` } }
    if (statSync(file).isDirectory()) {
      for (const name of CONFIG_FILE_NAMES) {
        const inside = path.join(file, name)
        if (existsSync(inside)) return { file: inside }
      }
      return { problem: { file: '', message: `${explicit} is a directory without a monitoring.config.ts or checkly.config.ts (given by --config)` } }
    }
    return { file }
  }
  let dir = path.resolve(cwd)
  for (;;) {
    for (const name of CONFIG_FILE_NAMES) {
      const file = path.join(dir, name)
      if (existsSync(file)) return { file }
    }
    const parent = path.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return {
    problem: {
      file: '',
      message: `no monitoring.config.ts (or checkly.config.ts) found in ${path.resolve(cwd)} or any parent directory: run "npx monitors init" to create one (with an example check file and a tsconfig.json), or pass --config <file>`,
    },
  }
}

/** Checks the config module's default export; returns the resolved config or the problems. */
export function resolveConfig(exported: unknown, file: string): { config: ResolvedConfig } | { problems: Problem[] } {
  if (isChecklyConfig(file)) return resolveChecklyConfig(exported, file)
  if (exported === undefined || exported === null || typeof exported !== 'object' || Array.isArray(exported)) {
    return {
      problems: [
        {
          file,
          message: `must export the config as its default export, e.g. export default defineConfig({ projectName: 'shop' }) (got ${exported === undefined ? 'no default export' : Array.isArray(exported) ? 'an array' : typeof exported})`,
        },
      ],
    }
  }
  const result = validate(configSchema, exported)
  if (!result.ok) {
    return {
      problems: result.issues.map((issue) => {
        const message = issue.message === 'is not a known field' ? unknownSetting(issue.path) : issue.message
        return { file, field: issue.path || undefined, message }
      }),
    }
  }
  const data = result.data
  const raw = exported as { defaults?: CheckDefaults; environments?: Record<string, { defaults?: CheckDefaults }> }
  const checkMatch = data.checkMatch === undefined ? [DEFAULT_CHECK_MATCH] : Array.isArray(data.checkMatch) ? data.checkMatch : [data.checkMatch]
  const environments: Record<string, ResolvedEnvironment> = {}
  for (const [name, env] of Object.entries(data.environments ?? {})) {
    environments[name] = {
      api: resolveApi(env.api),
      ...(env.lock ? { lock: env.lock } : {}),
      emptyApi: Object.entries(env.api ?? {})
        .filter(([, v]) => typeof v === 'string' && v.trim() === '')
        .map(([k]) => k),
      defaults: stripUndefined({ ...(raw.environments?.[name]?.defaults ?? {}) }),
    }
  }
  return {
    config: {
      projectName: data.projectName,
      checkMatch,
      ignore: data.ignore ?? [],
      // the defaults as written: schema defaults must not override what a check leaves unset
      defaults: stripUndefined({ ...(raw.defaults ?? {}) }),
      api: resolveApi(data.api),
      environments,
      ...(data.defaultEnvironment !== undefined ? { defaultEnvironment: data.defaultEnvironment } : {}),
    },
  }
}

/** The `api` settings given (an empty string, as an unset variable reads, is not given). */
function resolveApi(given: ResolvedApi | undefined): ResolvedApi {
  const api: ResolvedApi = {}
  if (given?.baseUrl) api.baseUrl = given.baseUrl
  if (given?.accountId) api.accountId = given.accountId
  if (given?.apiKey) api.apiKey = given.apiKey
  if (given?.targetId) api.targetId = given.targetId
  return api
}

/** The environment asked for: by `--env` (`from: '--env'`) or by MONITORS_ENV. */
export interface EnvironmentRequest {
  name: string
  from: '--env' | 'MONITORS_ENV'
}

/**
 * The config for one environment: the one asked for (`--env`, else MONITORS_ENV), else the
 * config's `defaultEnvironment`. Its `api` fields replace the config's of the same name, its
 * `defaults` fields the config's defaults of the same name (a check's own props still win over
 * both, see desired.ts). Without environments in the config the config is returned as it is,
 * unless one is asked for (refused: it would not be what the user meant). A problem otherwise;
 * `noneChosen` lists the environments when the config declares some and none was chosen
 * (validate then checks each).
 */
export function chooseEnvironment(
  config: ResolvedConfig,
  requested: EnvironmentRequest | undefined,
  file: string,
): { config: ResolvedConfig } | { problem: Problem; noneChosen?: string[] } {
  const names = Object.keys(config.environments)
  const ways = '--env NAME on the command line, or MONITORS_ENV=NAME'
  if (requested !== undefined && requested.name.trim() === '') {
    return {
      problem: {
        file,
        field: 'environments',
        message: `${requested.from === '--env' ? '--env is empty' : 'MONITORS_ENV is set but empty (an unset variable in CI?)'}: name an environment${names.length > 0 ? ` (${names.join(', ')})` : ''}`,
      },
    }
  }
  if (names.length === 0) {
    if (requested === undefined) return { config }
    return {
      problem: {
        file,
        field: 'environments',
        message: `${requested.from === '--env' ? `--env ${requested.name}` : `MONITORS_ENV=${requested.name}`} names an environment, but the config declares none: declare it (environments: { ${JSON.stringify(requested.name)}: {} }), or ${requested.from === '--env' ? 'leave --env out' : 'unset MONITORS_ENV'}`,
      },
    }
  }
  let name: string
  let from: string
  if (requested !== undefined) {
    name = requested.name
    from = requested.from
  } else if (config.defaultEnvironment !== undefined) {
    name = config.defaultEnvironment
    from = 'defaultEnvironment'
  } else {
    return {
      problem: {
        file,
        field: 'environments',
        message: `declares the environments ${names.join(', ')}: choose one with ${ways} (or set defaultEnvironment in the config)`,
      },
      noneChosen: names,
    }
  }
  const env = config.environments[name]
  if (!env) {
    return { problem: { file, field: 'environments', message: `has no environment "${name}" (given by ${from}): the environments are ${names.join(', ')}` } }
  }
  return {
    config: {
      ...config,
      api: { ...config.api, ...env.api },
      defaults: { ...config.defaults, ...env.defaults },
      environment: { name, ...(env.lock ? { lock: env.lock } : {}), from, ...(env.emptyApi.length > 0 ? { emptyApi: env.emptyApi } : {}) },
    },
  }
}

function stripUndefined<T extends object>(o: T): T {
  for (const key of Object.keys(o) as (keyof T)[]) if (o[key] === undefined) delete o[key]
  return o
}
