import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { dnsCheckSchema, runFrequencySchema } from '../schema/check.js'
import { crossField } from '../schema/cross-field.js'
import { validate } from '../schema/issues.js'
import { frequencyOffsetProblem } from '../schema/rules.js'
import { RUN_FREQUENCIES } from '../schema/enums.js'
import type { CheckDefaults, ProjectConfig } from '../../constructs/index.js'
import type { Problem } from './errors.js'

export type { ProjectConfig, CheckDefaults }

/** Names looked for, in this order, in the working directory and then each parent. */
export const CONFIG_FILE_NAMES = ['monitoring.config.ts', 'monitoring.config.mts', 'monitoring.config.js', 'monitoring.config.mjs'] as const

export const DEFAULT_CHECK_MATCH = '**/*.check.ts'

/** The config with every optional setting filled in. */
export interface ResolvedConfig {
  projectName: string
  checkMatch: string[]
  ignore: string[]
  defaults: CheckDefaults
  api: { baseUrl?: string; accountId?: string; apiKey?: string; targetId?: string }
}

/** Check props a config's `defaults` may set: the common fields except `name` and `triggerIncident`. */
export const DEFAULTABLE_CHECK_FIELDS = [
  'activated', 'muted', 'doubleCheck', 'shouldFail', 'locations', 'tags', 'alertSettings',
  'useGlobalAlertSettings', 'groupId', 'groupOrder', 'runtimeId', 'alertChannelSubscriptions',
  'retryStrategy', 'runParallel', 'frequency', 'frequencyOffset', 'alertChannels',
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

const configSchema = z.strictObject({
  projectName: z.string().min(1).max(100),
  checkMatch: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  ignore: z.array(z.string().min(1)).optional(),
  defaults: defaultsSchema.optional(),
  api: z
    .strictObject({
      baseUrl: httpUrl.optional(),
      accountId: z.string().optional(),
      apiKey: z.string().optional(),
      targetId: targetIdSchema.optional(),
    })
    .optional(),
})

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
      return { problem: { file: '', message: `${explicit} is a directory without a monitoring.config.ts (given by --config)` } }
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
      message: `no monitoring.config.ts found in ${path.resolve(cwd)} or any parent directory: run "npx monitors init" to create one (with an example check file and a tsconfig.json), or pass --config <file>`,
    },
  }
}

/** Checks the config module's default export; returns the resolved config or the problems. */
export function resolveConfig(exported: unknown, file: string): { config: ResolvedConfig } | { problems: Problem[] } {
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
        let message = issue.message
        if (message === 'is not a known field') {
          const top = issue.path.split('.')[0]
          if (top === 'defaults' && issue.path.split('.').length === 2) {
            message = `is not a check default (allowed: ${DEFAULTABLE_CHECK_FIELDS.join(', ')})`
          } else if (!issue.path.includes('.')) {
            message = 'is not a config setting (allowed: projectName, checkMatch, ignore, defaults, api)'
          }
        }
        return { file, field: issue.path || undefined, message }
      }),
    }
  }
  const data = result.data
  const raw = exported as { defaults?: CheckDefaults }
  const checkMatch = data.checkMatch === undefined ? [DEFAULT_CHECK_MATCH] : Array.isArray(data.checkMatch) ? data.checkMatch : [data.checkMatch]
  const api: ResolvedConfig['api'] = {}
  if (data.api?.baseUrl) api.baseUrl = data.api.baseUrl
  if (data.api?.accountId) api.accountId = data.api.accountId
  if (data.api?.apiKey) api.apiKey = data.api.apiKey
  if (data.api?.targetId) api.targetId = data.api.targetId
  return {
    config: {
      projectName: data.projectName,
      checkMatch,
      ignore: data.ignore ?? [],
      // the defaults as written: schema defaults must not override what a check leaves unset
      defaults: stripUndefined({ ...(raw.defaults ?? {}) }),
      api,
    },
  }
}

function stripUndefined<T extends object>(o: T): T {
  for (const key of Object.keys(o) as (keyof T)[]) if (o[key] === undefined) delete o[key]
  return o
}
