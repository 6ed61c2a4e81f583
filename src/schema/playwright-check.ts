import { z } from 'zod'
import { checkBody } from './omit.js'
import { checkCommonShape, checkEnvironmentVariableSchema, readOnlyShape, runFrequencySchema } from './check.js'
import { crossField } from './cross-field.js'
import { frequencyOffsetProblem } from './rules.js'
import { RUN_FREQUENCIES } from './enums.js'
import { DEPENDENCY_PATH_MAX_LENGTH, SCRIPT_MAX_LENGTH, dependencyPathProblem, fileItems } from './script-check.js'

/** Most files of a Playwright check suite (config, tests, the local files they import). */
export const SUITE_MAX_FILES = 200
/** Most projects or tags a suite selects. */
export const SUITE_MAX_SELECTIONS = 50

const projectPath = z
  .string()
  .min(1)
  .max(DEPENDENCY_PATH_MAX_LENGTH)
  .superRefine((p, ctx) => {
    const problem = dependencyPathProblem(p)
    if (problem) ctx.addIssue({ code: 'custom', message: problem, input: p })
  })

/**
 * One file of a suite's project, its path relative to the project's root (where its config is).
 * A text file's `content` is its text (UTF-8); a binary one (a screenshot baseline, any bytes
 * that are not UTF-8) is carried as `encoding: "base64"` with its bytes in base64, as the
 * reference's `bodyEncoding` carries raw bytes.
 */
export const suiteFileSchema = z.object({ path: projectPath, content: z.string(), encoding: z.literal('base64').optional() })

export type SuiteFile = z.output<typeof suiteFileSchema>

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** A suite file's bytes. */
export function suiteFileBytes(file: { content: string; encoding?: 'base64' }): Buffer {
  return file.encoding === 'base64' ? Buffer.from(file.content, 'base64') : Buffer.from(file.content, 'utf8')
}

/** A suite file of these bytes: as text when they are UTF-8 (read back to the same bytes), else in base64. */
export function suiteFileOf(path: string, bytes: Buffer): SuiteFile {
  const text = bytes.toString('utf8')
  return Buffer.from(text, 'utf8').equals(bytes) ? { path, content: text } : { path, content: bytes.toString('base64'), encoding: 'base64' }
}

/**
 * The command the runner runs for a suite (the read model's `testCommand`): the runtime's
 * `playwright test` with the config, projects and tags selected. Answered, never taken: a
 * suite cannot run a command of its own.
 */
export function suiteTestCommand(suite: {
  playwrightConfigPath?: string | null
  pwProjects?: readonly string[] | null
  pwTags?: readonly string[] | null
}): string {
  const parts = ['npx playwright test']
  if (suite.playwrightConfigPath) parts.push(`--config ${suite.playwrightConfigPath}`)
  for (const p of suite.pwProjects ?? []) parts.push(`--project ${JSON.stringify(p)}`)
  if (suite.pwTags && suite.pwTags.length > 0) parts.push(`--grep ${JSON.stringify(suite.pwTags.join('|'))}`)
  return parts.join(' ')
}

/** The rules of a suite: frequencyOffset, its files (unique, not too many characters), its config (when named) among them. */
const suiteRules = crossField((value, add) => {
  if ((RUN_FREQUENCIES as readonly unknown[]).includes(value.frequency ?? 10)) {
    const problem = frequencyOffsetProblem(value.frequency ?? 10, value.frequencyOffset)
    if (problem) add({ path: ['frequencyOffset'], message: problem, input: value.frequencyOffset })
  }
  // an item that is not an object (null) is the item schema's problem (`files.0: must be an object`): skipped here
  const files = fileItems(value.files)
  const size = files.reduce((n, [f]) => n + (typeof f.content === 'string' ? f.content.length : 0), 0)
  if (size > SCRIPT_MAX_LENGTH) add({ path: ['files'], message: `hold ${size} characters together: at most ${SCRIPT_MAX_LENGTH}`, input: undefined })
  const seen = new Set<unknown>()
  for (const [f, i] of files) {
    if (f.encoding === 'base64' && typeof f.content === 'string' && !BASE64.test(f.content)) {
      add({
        path: ['files', i, 'content'],
        message: 'is not base64, as encoding "base64" says: the file\'s bytes in standard base64 (A-Z a-z 0-9 + /, padded with =)',
        input: undefined,
      })
    }
    if (typeof f.path !== 'string') continue
    if (seen.has(f.path)) add({ path: ['files', i, 'path'], message: `${JSON.stringify(f.path)} is listed twice: each file once`, input: f.path })
    seen.add(f.path)
  }
  // without one, the config is the default one among the files, or none (Playwright's defaults)
  const config = value.playwrightConfigPath
  if (typeof config === 'string' && !seen.has(config))
    add({ path: ['playwrightConfigPath'], message: `names no file of the suite: add ${JSON.stringify(config)} to files`, input: config })
})

/**
 * Body of POST /v1/checks/playwright and PUT /v1/checks/playwright/{id} (an extension: the
 * reference has only the read model, ChecksV1PlaywrightCheck): a whole Playwright project run
 * by the runtime's `playwright test`, Chromium only. `files` holds the project
 * (config, tests, the local files they import); `pwProjects` and `pwTags` select what runs.
 * `testCommand` is answered (see suiteTestCommand); sent back, it is ignored.
 */
export const playwrightCheckSchema = z
  .object({
    ...checkCommonShape,
    ...readOnlyShape,
    checkType: z.literal('PLAYWRIGHT').optional(),
    frequency: runFrequencySchema(),
    files: z.array(suiteFileSchema).min(1).max(SUITE_MAX_FILES),
    playwrightConfigPath: projectPath.nullish(),
    pwProjects: z.array(z.string().min(1).max(200)).max(SUITE_MAX_SELECTIONS).optional(),
    pwTags: z.array(z.string().min(1).max(200)).max(SUITE_MAX_SELECTIONS).optional(),
    browsers: z.array(z.literal('chromium', { error: 'only chromium runs here (Debian\'s /usr/bin/chromium): use ["chromium"]' })).optional(),
    testCommand: z.unknown().optional(),
    playwrightVersion: z.unknown().optional(),
    environmentVariables: z.array(checkEnvironmentVariableSchema).max(50).nullish(),
    description: z.string().max(500).nullish(),
  })
  .check(suiteRules)
  .transform((value) => {
    const out = checkBody(value, 'PLAYWRIGHT' as const) as typeof value & { checkType: 'PLAYWRIGHT' }
    delete out.playwrightVersion
    out.testCommand = suiteTestCommand(value)
    return out as Omit<typeof out, 'testCommand' | 'playwrightVersion'> & { checkType: 'PLAYWRIGHT'; testCommand: string }
  })

export type PlaywrightCheckInput = z.input<typeof playwrightCheckSchema>
export type PlaywrightCheck = z.output<typeof playwrightCheckSchema>
