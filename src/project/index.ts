import path from 'node:path'
import { chooseEnvironment, findConfigFile, resolveConfig, type EnvironmentRequest, type ResolvedConfig } from './config.js'
import { buildResources, constructsKey, type FileKey } from './desired.js'
import { NoEnvironmentError, ProjectError, type Problem } from './errors.js'
import { findFiles } from './glob.js'
import { buildId, compileCacheDir, importFile, LoadingSession, PACKAGE_VERSION, withSession, type Registration } from './loader.js'
import { isConstruct, type AnyConstruct } from '../../constructs/construct.js'
import { openConstructCache } from './construct-cache.js'
import type { DesiredResource } from '../resources/types.js'
import { lintResources } from './lints.js'
import { bundleScripts } from './scripts.js'
import { isChecklyConfig } from './checkly-config.js'
import { makeChecklyChecks, specFilesOf } from './checkly-checks.js'

export type { ProjectConfig, ResolvedConfig, CheckDefaults, ChosenEnvironment, EnvironmentRequest } from './config.js'
export { CONFIG_FILE_NAMES, DEFAULT_CHECK_MATCH, DEFAULTABLE_CHECK_FIELDS, environmentLockName, findConfigFile } from './config.js'
export { NoEnvironmentError, ProjectError, formatProblem, type Problem } from './errors.js'
export { LOGICAL_ID_PATTERN, type FileKey } from './desired.js'
export { findFiles, globToRegExp } from './glob.js'

/** A project loaded and validated: what the code asks for. */
export interface LoadedProject {
  /** Absolute path of the config file. */
  configFile: string
  /** Absolute path of the project root: the config file's directory. */
  rootDir: string
  config: ResolvedConfig
  /** Check files loaded, relative to `rootDir`, sorted. */
  files: string[]
  /** One entry per construct, sorted by RESOURCE_KINDS order then logical id. */
  resources: DesiredResource[]
  /** Lints (see lints.ts): valid, but probably not what was meant; files relative to the working directory. */
  warnings: Problem[]
  /** With `tolerateCheckProblems`: the problems of the check files; otherwise always empty (they throw). */
  problems: Problem[]
  /**
   * Where the code exports each construct a check file exports, by `kind:logicalId`: the file
   * (relative to `rootDir`) and the export's name (`default` for a default export). What
   * `monitors import` names when imported code refers to a construct already in code.
   */
  exported: ReadonlyMap<string, ExportedConstruct>
}

/** A construct a check file exports: the file (relative to the project root) and the export's name. */
export interface ExportedConstruct {
  file: string
  name: string
}

export interface LoadProjectOptions {
  /** Config file (or directory holding one), relative to `cwd`; found upward from `cwd` when left out. */
  config?: string
  /** Working directory; problems name files relative to it. Defaults to process.cwd(). */
  cwd?: string
  /**
   * Once the config loads, problems of the check files (a file that does not load, a construct
   * that does not validate, no file at all) do not throw: they are returned in `problems`, and
   * `resources` holds the constructs that are valid. For what needs only the config (destroy).
   */
  tolerateCheckProblems?: boolean
  /**
   * A checkMatch that matches no file is no problem: the project has no resources yet (import,
   * which writes the first check file).
   */
  allowNoCheckFiles?: boolean
  /**
   * The environment asked for (`--env`, else MONITORS_ENV); see chooseEnvironment. When the
   * config declares environments and none is chosen, a NoEnvironmentError names them.
   */
  environment?: EnvironmentRequest
  /**
   * Only the config is loaded (its target, environments and lock settings): no check file is
   * searched or run, and the project has no resources (the operator's commands: checks, results,
   * incidents, …).
   */
  configOnly?: boolean
  /**
   * false: the construct cache (construct-cache.ts) is neither read nor written (`--no-cache`);
   * MONITORS_CACHE=0 in the environment does the same.
   */
  cache?: boolean
}

/**
 * Finds and loads the config and every check file it matches, one at a time, then validates
 * every construct with the shared schemas. Sends nothing. Throws a ProjectError listing every
 * problem (file › construct › field: message) when there is any.
 */
export async function loadProject(options: LoadProjectOptions = {}): Promise<LoadedProject> {
  return (await loadProjectDeferred(options)).finish()
}

/**
 * A project whose check files ran but whose constructs are not validated yet: what a command
 * needs to decide whether it can reuse what it computed before (the plan memo,
 * src/plan/memo.ts) without reading the construct cache. `finish()` validates (the rest of
 * loadProject: it throws a ProjectError as loadProject does).
 */
export interface DeferredProject {
  configFile: string
  rootDir: string
  config: ResolvedConfig
  /**
   * A hash of everything the loaded resources are a function of (this build, Node.js, the
   * config written out, each construct's file and construct cache key, in order); undefined
   * when any of it is not plain data (a construct referring to another, a code field) or a
   * check file had a problem.
   */
  constructsKey(): string | undefined
  /**
   * The parts of constructsKey: a hash of what every construct shares (this build, Node.js, the
   * working directory, the config), and each check file's hash and lock keys (by its path
   * relative to the project root); undefined as constructsKey is.
   */
  constructsParts(): { scope: string; files: ReadonlyMap<string, FileKey> } | undefined
  /**
   * Validates the constructs of these check files only (paths relative to the project root),
   * with the construct cache of those files: what a plan kept for the other files stands for theirs (the
   * plan memo, src/cli/plan-memo.ts). Their resources, their problems and their lints; the rules
   * across files are not checked (the caller knows they cannot have changed). `only`: of those
   * files' constructs, these (by lock key, `kind:logicalId`) alone.
   */
  validateFiles(files: ReadonlySet<string>, only?: ReadonlySet<string>): { resources: DesiredResource[]; problems: Problem[]; warnings: Problem[] }
  finish(): Promise<LoadedProject>
}

/** Where a project is loaded from, and how its paths are shown. */
interface LoadPlace {
  cwd: string
  rootDir: string
  configFile: string
  configShown: string
  checklyConfig: boolean
  cwdRel: (abs: string) => string
}

/**
 * Runs the config, then each check file, in the session (what they make registers there);
 * their problems are pushed to `problems`, their exports noted. No config when it has problems.
 */
async function loadFiles(
  session: LoadingSession,
  options: LoadProjectOptions,
  { cwd, rootDir, configFile, configShown, checklyConfig, cwdRel }: LoadPlace,
  problems: Problem[],
  exports: Map<AnyConstruct, ExportedConstruct[]>,
): Promise<{ config?: ResolvedConfig; files: string[] }> {
  let config: ResolvedConfig | undefined
  let files: string[] = []
  session.current = configFile
  const loaded = await importFile(configFile, cwdRel)
  if ('problem' in loaded) {
    problems.push(loaded.problem)
    return { config, files }
  }
  const mod = loaded.module
  const exported = mod && typeof mod === 'object' && 'default' in mod ? mod.default : undefined
  const resolved = resolveConfig(exported, configShown)
  if ('problems' in resolved) {
    problems.push(...resolved.problems)
    return { config, files }
  }
  const chosen = chooseEnvironment(resolved.config, options.environment, configShown)
  if ('problem' in chosen) {
    if (chosen.noneChosen) throw new NoEnvironmentError(chosen.problem, chosen.noneChosen)
    problems.push(chosen.problem)
    return { config, files }
  }
  config = chosen.config
  // check files may ask which environment they are loaded for (currentEnvironment())
  if (config.environment) session.environment = config.environment.name
  if (config.checkly) session.checklyDefaults = config.checkly.defaults
  if (options.configOnly) return { config, files }
  files = findFiles(rootDir, config.checkMatch, config.ignore).filter((f) => path.join(rootDir, f) !== configFile)
  const specs = config.checkly ? specFilesOf(config.checkly, rootDir, config.ignore) : undefined
  const declared = specs
    ? specs.browser.length + specs.multiStep.length + config.checkly!.playwrightChecks.length + (config.checkly!.playwrightConfigPath ? 1 : 0)
    : 0
  if (files.length === 0 && declared === 0 && !options.allowNoCheckFiles) {
    problems.push({
      file: configShown,
      field: config.checkly ? 'checks.checkMatch' : 'checkMatch',
      message: `matches no files in ${rootDir === cwd ? 'this directory' : cwdRel(rootDir)} (${config.checkMatch.join(', ')}); node_modules and .git are never searched`,
    })
    return { config, files }
  }
  session.matched = new Set([...files.map((f) => path.join(rootDir, f)), ...(checklyConfig ? [configFile] : [])])
  for (const file of files) {
    const abs = path.join(rootDir, file)
    session.current = abs
    const result = await importFile(abs, cwdRel)
    if ('problem' in result) problems.push(result.problem)
    else noteExports(result.module, file, exports)
  }
  if (config.checkly && specs) makeChecklyChecks(session, config.checkly, rootDir, configFile, specs)
  return { config, files }
}

/** loadProject up to the validation of the constructs, which `finish()` does (see DeferredProject). */
export async function loadProjectDeferred(options: LoadProjectOptions = {}): Promise<DeferredProject> {
  const cwd = path.resolve(options.cwd ?? process.cwd())
  const found = findConfigFile(cwd, options.config)
  if ('problem' in found) throw new ProjectError([found.problem])
  const configFile = found.file
  const rootDir = path.dirname(configFile)
  const cwdRel = (abs: string) => {
    const rel = path.relative(cwd, abs)
    return (rel === '' ? path.basename(abs) : rel).split(path.sep).join('/')
  }
  const rootRel = (abs: string) => path.relative(rootDir, abs).split(path.sep).join('/')
  const configShown = cwdRel(configFile)

  const session = new LoadingSession()
  session.rootDir = rootDir
  // a hosted CLI's config may make constructs (its default alert channels): they are the project's
  const checklyConfig = isChecklyConfig(configFile)
  if (checklyConfig) {
    session.matched = new Set([configFile])
    session.helperModulesInProject = true
  }
  const problems: Problem[] = []
  const exports = new Map<AnyConstruct, ExportedConstruct[]>()
  const { config, files } = await withSession(session, () =>
    loadFiles(session, options, { cwd, rootDir, configFile, configShown, checklyConfig, cwdRel }, problems, exports),
  )
  if (!config) throw new ProjectError(problems)
  const resolved: ResolvedConfig = config

  // browser and multi-step checks: their code bundled into the API's script fields first
  const unbundled = await bundleScripts(session.registrations, { rootDir, cwd, cwdRel }, problems)
  const registrations = unbundled.size === 0 ? session.registrations : session.registrations.filter((r) => !unbundled.has(r))
  const useCache = options.cache !== false && process.env.MONITORS_CACHE !== '0'
  const scope = { configFile, environment: resolved.environment?.name, defaults: resolved.defaults, buildId: buildId(), version: PACKAGE_VERSION }
  // made only when asked (plan): other commands key each construct as they validate it
  const keyed = memoKey(() => (useCache && problems.length === 0 ? constructsKey(registrations, scope, resolved, rootRel) : undefined))
  const validateFiles = (chosen: ReadonlySet<string>, only?: ReadonlySet<string>) => {
    // the cache of a file holds what its last load validated: not read, nor written, for a few of its constructs
    const cache = useCache && !only ? openConstructCache(compileCacheDir(rootDir), scope) : undefined
    const built = validateChosen(
      registrations,
      chosen,
      only,
      { config: resolved, rootRel, cwdRel, configFile: configShown, cache, keys: keyed.keys() },
      rootDir,
    )
    return { ...built, problems: [...problems, ...built.problems] }
  }
  const finish = async (): Promise<LoadedProject> => {
    const cache = useCache ? openConstructCache(compileCacheDir(rootDir), scope) : undefined
    const built = buildResources(registrations, { config: resolved, rootRel, cwdRel, configFile: configShown, cache, keys: keyed.keys() })
    cache?.save()
    problems.push(...built.problems)
    if (problems.length > 0 && !options.tolerateCheckProblems) throw new ProjectError(problems)
    const warnings = [...built.warnings, ...lintResources(built.resources)].map((w) => ({ ...w, file: cwdRel(path.join(rootDir, w.file)) }))
    return {
      configFile,
      rootDir,
      config: resolved,
      files,
      resources: built.resources,
      warnings,
      problems,
      exported: exportedConstructs(registrations, exports, rootRel),
    }
  }
  return { configFile, rootDir, config: resolved, constructsKey: keyed.hash, constructsParts: keyed.parts, validateFiles, finish }
}

/** constructsKey made once, when first asked; `keys()` gives what it made so far (each construct's key), for validation to reuse. */
function memoKey(make: () => ReturnType<typeof constructsKey>) {
  let made: ReturnType<typeof constructsKey>
  let done = false
  const get = () => {
    if (!done) made = make()
    done = true
    return made
  }
  return {
    hash: () => get()?.hash,
    parts: () => {
      const keys = get()
      return keys && { scope: keys.scope, files: keys.files }
    },
    keys: () => made?.keys,
  }
}

/** DeferredProject.validateFiles: the constructs of the `chosen` check files (relative to `rootDir`), of `only` among them when given, validated. */
function validateChosen(
  registrations: readonly Registration[],
  chosen: ReadonlySet<string>,
  only: ReadonlySet<string> | undefined,
  context: Parameters<typeof buildResources>[1],
  rootDir: string,
): { resources: DesiredResource[]; problems: Problem[]; warnings: Problem[] } {
  const inChosen = new Map<string, boolean>()
  const own = registrations.filter((r) => {
    let is = inChosen.get(r.file)
    if (is === undefined) inChosen.set(r.file, (is = chosen.has(context.rootRel(r.file))))
    return is && (!only || only.has(`${r.construct.__monitorsKind}:${String(r.construct.logicalId)}`))
  })
  const built = buildResources(own, context)
  context.cache?.save()
  const warnings = [...built.warnings, ...lintResources(built.resources)].map((w) => ({ ...w, file: context.cwdRel(path.join(rootDir, w.file)) }))
  return { resources: built.resources, problems: built.problems, warnings }
}

/** Records the constructs a check file's module exports (any construct value among its exports). */
function noteExports(module: Record<string, unknown>, file: string, into: Map<AnyConstruct, ExportedConstruct[]>): void {
  if (!module || typeof module !== 'object') return
  for (const name of Object.keys(module)) {
    const value = module[name]
    if (!isConstruct(value)) continue
    const list = into.get(value)
    if (list) list.push({ file, name })
    else into.set(value, [{ file, name }])
  }
}

/** Each exported construct of the project by `kind:logicalId`: the export of the file that makes it, else the first. */
function exportedConstructs(
  registrations: readonly Registration[],
  exports: ReadonlyMap<AnyConstruct, ExportedConstruct[]>,
  rootRel: (abs: string) => string,
): Map<string, ExportedConstruct> {
  const out = new Map<string, ExportedConstruct>()
  if (exports.size === 0) return out
  for (const r of registrations) {
    const found = r.outside ? undefined : exports.get(r.construct)
    if (!found || typeof r.construct.logicalId !== 'string') continue
    const own = rootRel(r.file)
    const key = `${r.construct.__monitorsKind}:${r.construct.logicalId}`
    if (!out.has(key)) out.set(key, found.find((e) => e.file === own) ?? found[0])
  }
  return out
}

/** Counts of resources per construct, in RESOURCE_KINDS order: `2 DnsCheck, 1 IcmpCheck`. */
export function summarizeResources(resources: DesiredResource[]): string {
  const counts = new Map<string, number>()
  for (const r of resources) counts.set(r.construct, (counts.get(r.construct) ?? 0) + 1)
  return [...counts].map(([name, n]) => `${n} ${name}`).join(', ')
}
