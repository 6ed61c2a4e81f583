/**
 * The project of a `PlaywrightCheck`, gathered when the project loads: its Playwright config
 * (`playwrightConfigPath`, relative to the check file), the test files the config finds (its
 * `testDir`, `testMatch` and `testIgnore`, the selected projects' own), the local files each of
 * them imports (bundled as a browser check's script is: src/project/bundle.ts, so an import the
 * runtime does not provide is a problem naming the file and the import), and the files `include`
 * globs add. Every path is relative to the config's folder, the suite's root: what the API
 * stores as `files` (`playwrightConfigPath` the config's path there).
 *
 * The config is evaluated to read those fields: bundled by esbuild with `@playwright/test` as a
 * stand-in whose `defineConfig` merges its arguments and whose `devices` are empty, its other
 * packages required from the config's folder.
 */
import { build } from 'esbuild'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { builtinModules, createRequire } from 'node:module'
import path from 'node:path'
import { globSync } from 'tinyglobby'
import { suiteFileOf, type SuiteFile } from '../schema/playwright-check.js'
import { bundleScript } from './bundle.js'
import type { Problem } from './errors.js'

export interface SuiteInput {
  /** The check file the construct is in (absolute). */
  checkFile: string
  playwrightConfigPath: string
  include?: readonly string[]
  pwProjects?: readonly string[]
  runtimeId?: string | null
  construct: string
  logicalId: string
  cwd: string
}

export type SuiteOutcome = { ok: true; files: SuiteFile[]; configPath: string } | { ok: false; problems: Problem[] }

/** Playwright's default `testMatch`. */
const DEFAULT_TEST_MATCH = '**/*.@(spec|test).?(c|m)[jt]s?(x)'

type Matcher = string | RegExp | Array<string | RegExp>

interface SuiteConfig {
  testDir?: string
  testMatch?: Matcher
  testIgnore?: Matcher
  projects?: Array<{ name?: string; testDir?: string; testMatch?: Matcher; testIgnore?: Matcher }>
}

const toPosix = (p: string) => p.split(path.sep).join('/')
const BUILTINS = new Set(builtinModules)

/** The config's exported object, evaluated as the module's comment says; throws what went wrong. */
export async function readPlaywrightConfig(configFile: string): Promise<SuiteConfig> {
  const result = await build({
    entryPoints: [configFile],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'silent',
    plugins: [
      {
        name: 'playwright-stand-in',
        setup(b) {
          b.onResolve({ filter: /^@playwright\/test$|^playwright\/test$/ }, () => ({ path: 'playwright', namespace: 'stand-in' }))
          b.onLoad({ filter: /.*/, namespace: 'stand-in' }, () => ({
            contents:
              'const defineConfig = (...c) => Object.assign({}, ...c.filter((x) => x && typeof x === "object")); module.exports = { defineConfig, devices: new Proxy({}, { get: () => ({}) }), test: {}, expect: {} }',
            loader: 'js',
          }))
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            BUILTINS.has(args.path.replace(/^node:/, '').split('/')[0]) || !args.path.startsWith('@playwright')
              ? { path: args.path, external: true }
              : undefined,
          )
        },
      },
    ],
  })
  const code = result.outputFiles[0].text
  const module = { exports: {} as Record<string, unknown> }
  const require = createRequire(configFile)
  new Function('require', 'module', 'exports', '__filename', '__dirname', code)(require, module, module.exports, configFile, path.dirname(configFile))
  const exported = (module.exports.default ?? module.exports) as unknown
  if (!exported || typeof exported !== 'object') throw new Error('its default export is not a config object (export default defineConfig({ … }))')
  return exported as SuiteConfig
}

const list = (m: Matcher | undefined): Array<string | RegExp> => (m === undefined ? [] : Array.isArray(m) ? m : [m])

/** The files under `dir` that `match` and not `ignore` select, as Playwright selects them (a glob not starting with `**` matches at any depth). */
function testFilesIn(dir: string, match: Matcher | undefined, ignore: Matcher | undefined): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return []
  const all = globSync('**/*', { cwd: dir, absolute: true, ignore: ['**/node_modules/**'], dot: false })
  const globbed = (patterns: string[]) =>
    new Set(
      patterns.length === 0
        ? []
        : globSync(
            patterns.map((p) => (p.startsWith('**/') || p.startsWith('/') ? p : `**/${p}`)),
            { cwd: dir, absolute: true, ignore: ['**/node_modules/**'] },
          ),
    )
  const matchers = list(match ?? DEFAULT_TEST_MATCH)
  const ignorers = list(ignore)
  const matched = globbed(matchers.filter((m): m is string => typeof m === 'string'))
  const ignored = globbed(ignorers.filter((m): m is string => typeof m === 'string'))
  return all.filter(
    (f) =>
      (matched.has(f) || matchers.some((m) => m instanceof RegExp && m.test(f))) && !ignored.has(f) && !ignorers.some((m) => m instanceof RegExp && m.test(f)),
  )
}

/** Gathers a suite's files (see the module's comment); never throws. */
export async function gatherSuite(input: SuiteInput): Promise<SuiteOutcome> {
  const shown = (file: string) => toPosix(path.relative(input.cwd, file)) || file
  const where = { file: shown(input.checkFile), construct: input.construct, logicalId: input.logicalId }
  const configFile = path.resolve(path.dirname(input.checkFile), input.playwrightConfigPath)
  if (!existsSync(configFile) || !statSync(configFile).isFile()) {
    return {
      ok: false,
      problems: [{ ...where, field: 'playwrightConfigPath', message: `file ${input.playwrightConfigPath} does not exist (looked for ${shown(configFile)})` }],
    }
  }
  const root = path.dirname(configFile)
  let config: SuiteConfig
  try {
    config = await readPlaywrightConfig(configFile)
  } catch (error) {
    const message = ((error as { errors?: Array<{ text: string }> }).errors?.[0]?.text ?? (error as Error).message).split('\n')[0]
    return { ok: false, problems: [{ ...where, field: 'playwrightConfigPath', message: `${shown(configFile)} could not be read: ${message}` }] }
  }
  const problems: Problem[] = []
  const projects = (config.projects ?? []).filter((p) => p && typeof p === 'object')
  const names = projects.map((p) => String(p.name ?? ''))
  ;(input.pwProjects ?? []).forEach((name, i) => {
    if (!names.includes(name)) {
      problems.push({
        ...where,
        field: `pwProjects.${i}`,
        message: `names no project of ${shown(configFile)} (got ${JSON.stringify(name)}; ${names.length > 0 ? `its projects: ${names.map((n) => JSON.stringify(n)).join(', ')}` : 'it declares no projects'})`,
      })
    }
  })
  if (problems.length > 0) return { ok: false, problems }
  const selected = projects.length === 0 ? [{}] : projects.filter((p) => !input.pwProjects?.length || input.pwProjects.includes(String(p.name ?? '')))
  const tests = new Set<string>()
  for (const p of selected as SuiteConfig['projects'] & object) {
    const dir = path.resolve(root, p.testDir ?? config.testDir ?? '.')
    for (const f of testFilesIn(dir, p.testMatch ?? config.testMatch, p.testIgnore ?? config.testIgnore)) tests.add(f)
  }
  if (tests.size === 0) {
    return {
      ok: false,
      problems: [
        {
          ...where,
          field: 'playwrightConfigPath',
          message: `${shown(configFile)} finds no test file (testDir ${JSON.stringify(config.testDir ?? '.')}, testMatch ${String(config.testMatch ?? DEFAULT_TEST_MATCH)})`,
        },
      ],
    }
  }
  return collectFiles(input, configFile, [...tests].sort(), where)
}

/**
 * The config and the tests with the local files they import, and the files `include` adds
 * (read as bytes: a screenshot baseline or any file that is not UTF-8 goes in base64), relative to
 * the config's folder.
 */
async function collectFiles(
  input: SuiteInput,
  configFile: string,
  tests: string[],
  where: { file: string; construct: string; logicalId: string },
): Promise<SuiteOutcome> {
  const root = path.dirname(configFile)
  const files = new Map<string, SuiteFile>()
  const problems: Problem[] = []
  for (const entry of [configFile, ...tests]) {
    const bundled = await bundleScript({
      entrypoint: entry,
      checkFile: input.checkFile,
      projectDir: root,
      runtimeId: input.runtimeId,
      construct: input.construct,
      logicalId: input.logicalId,
      field: 'playwrightConfigPath',
      cwd: input.cwd,
    })
    if (!bundled.ok) problems.push(...bundled.problems)
    else for (const f of bundled.value.files) files.set(f.path, { path: f.path, content: f.content })
  }
  ;(input.include ?? []).forEach((pattern, i) => {
    const found = globSync(pattern, { cwd: root, absolute: true, ignore: ['**/node_modules/**'] })
    if (found.length === 0)
      problems.push({
        ...where,
        field: `include.${i}`,
        message: `matches no file in ${toPosix(path.relative(input.cwd, root)) || '.'} (got ${JSON.stringify(pattern)})`,
      })
    for (const f of found) {
      const rel = toPosix(path.relative(root, f))
      if (rel.startsWith('..'))
        problems.push({
          ...where,
          field: `include.${i}`,
          message: `matches ${rel}, outside the config's folder: a suite holds the files under its config's folder`,
        })
      else files.set(rel, suiteFileOf(rel, readFileSync(f)))
    }
  })
  if (problems.length > 0) return { ok: false, problems }
  const sorted = [...files.values()].sort((a, b) => a.path.localeCompare(b.path, 'en'))
  return { ok: true, files: sorted, configPath: toPosix(path.relative(root, configFile)) }
}
