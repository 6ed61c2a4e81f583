import { z } from 'zod'
import { checkBody } from './omit.js'
import { checkCommonShape, checkEnvironmentVariableSchema, readOnlyShape, runFrequencySchema, sslCheckDomainSchema } from './check.js'
import { crossField } from './cross-field.js'
import { frequencyOffsetProblem } from './rules.js'
import { RUN_FREQUENCIES } from './enums.js'
import { findRuntime } from './runtimes.js'
import type { ScriptCheckType } from './check-types.js'

/** Most characters of a script's files together (`script` and every dependency's `content`): source code, not a bundle. */
export const SCRIPT_MAX_LENGTH = 5_000_000
/** Most local files a script may import (its `dependencies`). */
export const SCRIPT_MAX_DEPENDENCIES = 100
/** Longest dependency path (the reference's limit). */
export const DEPENDENCY_PATH_MAX_LENGTH = 1000

/**
 * Why a dependency's path is not a relative path inside the project, or null: posix separators,
 * no leading `/`, no `..` segment, no drive letter (the runner resolves imports among the stored
 * files by these paths: src/runner/script/build.ts).
 */
export function dependencyPathProblem(p: string): string | null {
  const shown = JSON.stringify(p.slice(0, 80))
  if (p.includes('\\')) return `must use "/" between folders (got ${shown})`
  if (p.startsWith('/') || /^[a-z]:/i.test(p)) return `must be relative to the project folder, not absolute (got ${shown})`
  if (p.split('/').some((s) => s === '..' || s === '.' || s === ''))
    return `must be a path inside the project folder without "." or ".." segments (got ${shown})`
  return null
}

/** One local file a script imports (reference: ChecksV1Dependency). */
export const scriptDependencySchema = z.object({
  path: z
    .string()
    .min(1)
    .max(DEPENDENCY_PATH_MAX_LENGTH)
    .superRefine((p, ctx) => {
      const problem = dependencyPathProblem(p)
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: p })
    }),
  content: z.string().min(1),
})

/**
 * The items of a list of files (`dependencies`, a suite's `files`) that are objects, each with its
 * index: the rules across items read only these, as the item schema refuses any other (null).
 */
type FileItem = { path?: unknown; content?: unknown; encoding?: unknown }
export function fileItems(list: unknown): Array<[FileItem, number]> {
  if (!Array.isArray(list)) return []
  return list.flatMap((item, i) => (item !== null && typeof item === 'object' && !Array.isArray(item) ? [[item as FileItem, i] as [FileItem, number]] : []))
}

/** The rules every script check shares: frequencyOffset, unique dependency paths, the runtime's multi-step support. */
function scriptRules(checkType: ScriptCheckType) {
  return crossField((value, add) => {
    if ((RUN_FREQUENCIES as readonly unknown[]).includes(value.frequency ?? 10)) {
      const problem = frequencyOffsetProblem(value.frequency ?? 10, value.frequencyOffset)
      if (problem) add({ path: ['frequencyOffset'], message: problem, input: value.frequencyOffset })
    }
    // an item that is not an object (null) is the item schema's problem (`dependencies.0: must be an object`): skipped here
    const deps = fileItems(value.dependencies)
    const size =
      (typeof value.script === 'string' ? value.script.length : 0) + deps.reduce((n, [d]) => n + (typeof d.content === 'string' ? d.content.length : 0), 0)
    if (size > SCRIPT_MAX_LENGTH)
      add({ path: ['script'], message: `and its dependencies hold ${size} characters together: at most ${SCRIPT_MAX_LENGTH}`, input: value.script })
    const seen = new Set<unknown>()
    for (const [d, i] of deps) {
      if (typeof d.path !== 'string') continue
      if (seen.has(d.path)) add({ path: ['dependencies', i, 'path'], message: `${JSON.stringify(d.path)} is listed twice: each file once`, input: d.path })
      else if (d.path === value.scriptPath)
        add({ path: ['dependencies', i, 'path'], message: `${JSON.stringify(d.path)} is the scriptPath: the entry file is the script itself`, input: d.path })
      seen.add(d.path)
    }
    if (checkType === 'MULTI_STEP' && typeof value.runtimeId === 'string') {
      const runtime = findRuntime(value.runtimeId)
      if (runtime && !runtime.multiStepSupport)
        add({ path: ['runtimeId'], message: `runtime ${runtime.name} does not run multi-step checks: choose 2023.09 or newer`, input: value.runtimeId })
    }
  })
}

/** The fields of a browser or multi-step check besides the common ones (reference: ChecksV1BrowserCheckCreate, ChecksV1MultiStepCheckCreate). */
const scriptShape = {
  ...checkCommonShape,
  ...readOnlyShape,
  frequency: runFrequencySchema(),
  script: z.string().min(1),
  scriptPath: z
    .string()
    .min(1)
    .max(DEPENDENCY_PATH_MAX_LENGTH)
    .superRefine((p, ctx) => {
      const problem = dependencyPathProblem(p)
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: p })
    })
    .nullish(),
  dependencies: z.array(scriptDependencySchema).max(SCRIPT_MAX_DEPENDENCIES).nullish(),
  environmentVariables: z.array(checkEnvironmentVariableSchema).max(50).nullish(),
  description: z.string().max(510).nullish(),
}

/**
 * Body of POST /v1/checks/browser and PUT /v1/checks/browser/{id}: a Playwright test script run
 * in Chromium from each location. Sub-minute frequencies are refused (the spec keeps them for
 * API and TCP checks).
 */
export const browserCheckSchema = z
  .object({ ...scriptShape, checkType: z.literal('BROWSER').optional(), sslCheckDomain: sslCheckDomainSchema.nullish() })
  .check(scriptRules('BROWSER'))
  .transform((value) => checkBody(value, 'BROWSER' as const))

/**
 * Body of POST /v1/checks/multistep and PUT /v1/checks/multistep/{id}: a Playwright test script
 * of API requests (the `request` fixture), without a browser.
 */
export const multiStepCheckSchema = z
  .object({ ...scriptShape, checkType: z.literal('MULTI_STEP').optional() })
  .check(scriptRules('MULTI_STEP'))
  .transform((value) => checkBody(value, 'MULTI_STEP' as const))

export type BrowserCheckInput = z.input<typeof browserCheckSchema>
export type BrowserCheck = z.output<typeof browserCheckSchema>
export type MultiStepCheckInput = z.input<typeof multiStepCheckSchema>
export type MultiStepCheck = z.output<typeof multiStepCheckSchema>
