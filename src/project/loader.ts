import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Jiti } from 'jiti'
import { LOADING_KEY, type AnyConstruct, type LoadingRegistry } from '../../constructs/construct.js'
import * as ownConstructs from '../../constructs/index.js'
import * as checklyRoot from '../../constructs/checkly/index.js'
import * as checklyConstructs from '../../constructs/checkly/constructs.js'
import { importCompiled, privateTempDir, type RunningScope } from './compile-cache.js'
import { transpiled } from './transpile-patch.js'
import type { Problem } from './errors.js'
import { closest } from '../schema/issues.js'
import { callerSite, callSites, isInternalFrame, parseStack, type CallSite, type Frame } from './stack.js'

/** A construct created while the project was loading, and where. */
export interface Registration {
  construct: AnyConstruct
  /** Absolute path of the file the construct belongs to (see `placeRegistration`). */
  file: string
  /** Line of the `new` expression (or of the call leading to it) in `file`. */
  line?: number
  /** The check file being imported when it was created. */
  loadingFile: string
  /** True when it was created in a file that checkMatch does not match: not part of the project. */
  outside: boolean
}

/**
 * The package's own root: constructs loaded from here stay cached between loads. Found by
 * walking up to our package.json, so it holds from src/, from dist/ and from the CLI bundle.
 */
const PACKAGE_NAME = 'monitors-as-code'
const PACKAGE_ROOT = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)))

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      if ((JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string }).name === PACKAGE_NAME) return dir
    } catch {
      /* no package.json here */
    }
    if (path.dirname(dir) === dir) return from
  }
}

let sharedJiti: Jiti | undefined

const placements = { withoutStack: 0, fromStack: 0 }

/** This module's own file (in the CLI bundle, the bundle): its frames are never a project's code. */
const LOADER_FILE = fileURLToPath(import.meta.url)

/** How constructs were placed in this process: by the running check file, or from the stack. */
export function placementCounts(): Readonly<typeof placements> {
  return { ...placements }
}

type TransformOptions = Parameters<Jiti['transform']>[0]
type SucraseTransform = (code: string, options: Record<string, unknown>) => { code: string }

const require = createRequire(import.meta.url)
/** jiti, loaded when a file is first imported: commands that load no project never pay for it. */
const createJiti: typeof import('jiti').createJiti = (...args) => (require('jiti') as typeof import('jiti')).createJiti(...args)
let sucrase: SucraseTransform | undefined
let babelJiti: Jiti | undefined

/**
 * Transpiles check files with sucrase, which strips types and rewrites imports about six times
 * faster than jiti's own babel pipeline (1,000 checks: 0.27 s against 1.5 s uncached). Babel
 * still handles what sucrase's output cannot carry into jiti's CommonJS wrapper (import.meta,
 * JSX), and any file sucrase cannot parse, so syntax errors keep jiti's usual location.
 */
function transform(options: TransformOptions): { code: string } {
  const file = options.filename ?? ''
  if (!options.source.includes('import.meta') && !/\.[jt]sx$/.test(file)) {
    try {
      const transforms = options.ts ? ['typescript', 'imports'] : ['imports']
      const dir = sharedJiti?.options.fsCache
      // an edit of one value: the last JavaScript of the file, that value written anew (transpile-patch.ts)
      const code = transpiled(typeof dir === 'string' ? dir : undefined, file, options.source, transforms.join(','), () => {
        sucrase ??= (require('sucrase') as { transform: SucraseTransform }).transform
        return sucrase(options.source, { transforms, filePath: file, disableESTransforms: true, production: true }).code
      })
      return { code }
    } catch {
      /* babel below reports it */
    }
  }
  babelJiti ??= createJiti(import.meta.url, { fsCache: false, moduleCache: false, interopDefault: true })
  return { code: babelJiti.transform(options) }
}

/** Line (1-based) and column (0-based) of a syntax error in a file, from babel's parser. */
function locateSyntaxError(file: string): { line: number; column: number; message: string } | undefined {
  try {
    babelJiti ??= createJiti(import.meta.url, { fsCache: false, moduleCache: false, interopDefault: true })
    const code = babelJiti.transform({ source: readFileSync(file, 'utf8'), filename: file, ts: /\.[cm]?tsx?$/.test(file) })
    const marker = /^exports\.__JITI_ERROR__ = (\{.*\})\s*$/.exec(code)
    if (!marker) return undefined
    const error = JSON.parse(marker[1]) as { line?: number; column?: number; message?: string }
    if (typeof error.line !== 'number') return undefined
    return { line: error.line, column: error.column ?? 0, message: (error.message ?? 'invalid syntax').trim() }
  } catch {
    return undefined
  }
}

/** This package's version: part of the compile cache's folder, so an upgrade never reuses another version's output. */
export const PACKAGE_VERSION = (() => {
  try {
    return String((JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown')
  } catch {
    return 'unknown'
  }
})()

/**
 * This build of monitors: `dist/build-id`, a hash of the compiled code the build writes
 * (scripts/bundle.mjs); undefined when there is none. What is cached of validated constructs
 * (construct-cache.ts) is for one build only, so a changed schema never reuses an entry.
 */
export function buildId(): string | undefined {
  try {
    const id = readFileSync(path.join(PACKAGE_ROOT, 'dist', 'build-id'), 'utf8').trim()
    return /^[0-9a-f]{16,64}$/.test(id) ? id : undefined
  } catch {
    return undefined
  }
}

/**
 * Where transpiled check files (and their V8 code cache, see compile-cache.ts) are kept between
 * runs: `node_modules/.cache/monitors-as-code/<version>/` in the nearest node_modules at or above
 * `from` (the config's folder; node_modules is never committed), else `<version>/` in a folder of
 * the user's own (mode 0700) under the system's temporary directory; false when there is none. A
 * file's entry is found by its path and used only while its content hash matches.
 */
export function compileCacheDir(from: string): string | false {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const modules = path.join(dir, 'node_modules')
    if (existsSync(modules)) return path.join(modules, '.cache', PACKAGE_NAME, PACKAGE_VERSION)
    if (path.dirname(dir) === dir) {
      const own = privateTempDir('monitors-as-code-cache')
      return own ? path.join(own, PACKAGE_VERSION) : false
    }
  }
}

/**
 * One jiti instance for the process: its file cache keeps transpiled TypeScript between runs
 * (in `compileCacheDir` of the first file loaded) and its module cache lets check files share
 * imported modules.
 */
function getJiti(firstFile: string): Jiti {
  sharedJiti ??= createJiti(import.meta.url, {
    fsCache: compileCacheDir(path.dirname(firstFile)),
    moduleCache: true,
    interopDefault: true,
    transform,
    virtualModules,
  })
  return sharedJiti
}

/**
 * The modules jiti hands out without loading a file (jiti reads this object at every import).
 * `checkly` and `checkly/constructs`, the hosted service's CLI, are always this package's
 * compatibility entry (constructs/checkly/), whether or not that CLI is installed: a project
 * written for it loads unchanged, and the hosted CLI itself never runs.
 */
const virtualModules: Record<string, unknown> = {
  checkly: checklyRoot,
  'checkly/constructs': checklyConstructs,
}

/** The modules whose exports a check file imports by name, for missingExportProblem. */
const NAMED_MODULES: Record<string, Record<string, unknown>> = {
  [PACKAGE_NAME]: ownConstructs,
  [`${PACKAGE_NAME}/checkly`]: checklyRoot,
  [`${PACKAGE_NAME}/checkly/constructs`]: checklyConstructs,
  checkly: checklyRoot,
  'checkly/constructs': checklyConstructs,
}

/**
 * `import ... from 'monitors-as-code'` in a file whose folder resolves that package to this very
 * package (the usual case: the CLI runs from the project's own dependency) gets the constructs
 * this process already has, instead of jiti resolving, transforming and running the package's
 * eleven modules again (30 to 50 ms of every command that loads a project). Where the folder
 * resolves it elsewhere (another version), or not at all, jiti loads it as before.
 */
function shareOwnConstructs(file: string): void {
  const dir = path.dirname(file)
  let own = ownPackageFrom.get(dir)
  if (own === undefined) {
    own = resolvesToOwnPackage(dir)
    ownPackageFrom.set(dir, own)
  }
  for (const [name, module] of [
    [PACKAGE_NAME, ownConstructs],
    [`${PACKAGE_NAME}/checkly`, checklyRoot],
    [`${PACKAGE_NAME}/checkly/constructs`, checklyConstructs],
  ] as const) {
    if (own) virtualModules[name] = module
    else delete virtualModules[name]
  }
}

const ownPackageFrom = new Map<string, boolean>()
let ownRoot: string | undefined

function resolvesToOwnPackage(dir: string): boolean {
  try {
    const manifest = createRequire(path.join(dir, 'noop.js')).resolve(`${PACKAGE_NAME}/package.json`)
    ownRoot ??= realpathSync(PACKAGE_ROOT)
    return realpathSync(path.dirname(manifest)) === ownRoot
  } catch {
    return false
  }
}

/**
 * The registry constructs find through `globalThis[Symbol.for('monitors-as-code.loading')]`
 * while files are imported, one at a time. Each construct is placed in a file when it
 * registers: the first check file on its creation stack. One created at the top level of
 * another file (a helper module, the config) is outside the project, even when a check file
 * imports that file.
 */
export class LoadingSession implements LoadingRegistry, RunningScope {
  /** Absolute path of the file being imported. */
  current = ''
  /** Absolute paths of the files checkMatch matches; set before they are imported. */
  matched: ReadonlySet<string> = new Set()
  /**
   * The check file whose own top-level code runs right now, outside any module it imports (set
   * by compile-cache.ts while it runs one): a construct made then belongs to that file, which
   * the stack would only confirm at about 8 µs a construct.
   */
  running: string | undefined = undefined
  /** The environment the project is loaded for (`--env`); see currentEnvironment(). */
  environment: string | undefined = undefined
  /** The project's folder. */
  rootDir: string | undefined = undefined
  /** A `checkly.config.ts`'s check defaults, for the hosted service's constructs (LoadingRegistry.checklyDefaults). */
  checklyDefaults: Readonly<Record<string, unknown>> | undefined = undefined
  /**
   * Constructs made at the top level of a module the check files import (`alert-channels.ts`),
   * in the project's folder, are part of the project, as the hosted service's CLI has them
   * (a `checkly.config.ts` project); otherwise they are outside it.
   */
  helperModulesInProject = false
  readonly registrations: Registration[] = []
  /** The first construct of each kind and logical id, to notice a duplicate as it is made. */
  readonly #first = new Map<string, Registration>()
  /** Lines of files, read when a construct placed without a stack needs its line. */
  readonly #lines = new Map<string, string[] | undefined>()

  register(construct: AnyConstruct, constructor: Function): void {
    const key = typeof construct.logicalId === 'string' ? `${construct.__monitorsKind}\u0000${construct.logicalId}` : undefined
    const first = key !== undefined ? this.#first.get(key) : undefined
    if (this.running !== undefined && first === undefined) {
      const registration = new PlacedRegistration(construct, this.running, this.current, this)
      placements.withoutStack++
      this.registrations.push(registration)
      if (key !== undefined) this.#first.set(key, registration)
      return
    }
    // a duplicate, or code the running file did not make itself: the stack tells where
    const registration = this.#inProject(this.#placeFromStack(construct, constructor))
    placements.fromStack++
    this.registrations.push(registration)
    if (key !== undefined && first === undefined) this.#first.set(key, registration)
  }

  /**
   * The line of `file` holding `logicalId` as a string literal, for a construct placed without a
   * stack; lines where other constructs with that id are known to be made do not count.
   * Undefined unless exactly one line is left.
   */
  lineOf(file: string, construct: AnyConstruct, self: Registration): number | undefined {
    if (!this.#lines.has(file)) {
      let text: string | undefined
      try {
        text = readFileSync(file, 'utf8')
      } catch {
        text = undefined
      }
      this.#lines.set(file, text?.split('\n'))
    }
    const lines = this.#lines.get(file)
    if (!lines) return undefined
    const id = construct.logicalId
    const others = new Set<number>()
    for (const r of this.registrations) {
      if (
        r === self ||
        r.file !== file ||
        r instanceof PlacedRegistration ||
        r.construct.logicalId !== id ||
        r.construct.__monitorsKind !== construct.__monitorsKind
      )
        continue
      if (r.line) others.add(r.line)
    }
    const literals = [`'${id}'`, `"${id}"`, `\`${id}\``]
    let found: number | undefined
    for (let i = 0; i < lines.length; i++) {
      if (others.has(i + 1) || !literals.some((literal) => lines[i].includes(literal))) continue
      if (found !== undefined) return undefined
      found = i + 1
    }
    return found
  }

  /** A registration outside the project made part of it (see helperModulesInProject), when it is in the project's folder. */
  #inProject(r: Registration): Registration {
    if (!r.outside || !this.helperModulesInProject || this.rootDir === undefined) return r
    const rel = path.relative(this.rootDir, r.file)
    if (rel.startsWith('..') || path.isAbsolute(rel) || rel.split(path.sep).includes('node_modules')) return r
    return { ...r, outside: false }
  }

  #placeFromStack(construct: AnyConstruct, constructor: Function): Registration {
    // most constructs are created right in a check file: the caller's frame tells
    const caller = callerSite(constructor)
    if (caller && this.matched.has(caller.file)) return new DirectRegistration(construct, caller.file, caller.site, this.current)
    return placeRegistration(construct, caller ? callSites(constructor, 16) : [], this.current, this.matched)
  }
}

/**
 * A construct made by a check file's own top-level code (see LoadingSession.running), placed
 * without a stack. Its line, wanted only when a problem names it, is the one line of the file
 * that holds its logical id as a string literal, when there is exactly one.
 */
class PlacedRegistration implements Registration {
  readonly outside = false
  #line: number | undefined | null = null
  constructor(
    readonly construct: AnyConstruct,
    readonly file: string,
    readonly loadingFile: string,
    private readonly session: LoadingSession,
  ) {}
  get line(): number | undefined {
    if (this.#line === null) this.#line = this.session.lineOf(this.file, this.construct, this)
    return this.#line
  }
}

/**
 * A construct created right in a check file. Its line is worked out only when a problem names it
 * (see callSites); a class keeps that getter on its prototype, not a closure per construct.
 */
class DirectRegistration implements Registration {
  readonly outside = false
  #site: CallSite | undefined
  #line: number | undefined
  constructor(
    readonly construct: AnyConstruct,
    readonly file: string,
    site: CallSite,
    readonly loadingFile: string,
  ) {
    this.#site = site
  }
  get line(): number {
    if (this.#site) {
      this.#line = this.#site.getLineNumber() ?? 0
      this.#site = undefined
    }
    return this.#line ?? 0
  }
}

/** This package's own code (the CLI bundle, the compiled constructs, their sources): a construct it makes belongs to its caller. */
const OWN_CODE = ['dist', 'constructs', 'src'].map((dir) => path.join(PACKAGE_ROOT, dir) + path.sep)
const isOwnCode = (frame: Frame) => OWN_CODE.some((dir) => frame.file.startsWith(dir))

function placeRegistration(construct: AnyConstruct, stack: Frame[], loadingFile: string, matched: ReadonlySet<string>): Registration {
  // a construct made by another this package has (a group's spec files' checks): placed where that one is made
  const frames = stack.length > 0 && isOwnCode(stack[0]) ? stack.filter((f) => !isOwnCode(f)) : stack
  const site = frames[0]
  if (!site) return { construct, file: loadingFile, loadingFile, outside: !matched.has(loadingFile) }
  if (matched.has(site.file)) return { construct, file: site.file, line: site.line, loadingFile, outside: false }
  const caller = frames[1]
  // run by jiti, or by the wrapper watchModuleRuns puts around what jiti runs: a module's top level
  const topLevel = !caller || isInternalFrame(caller) || caller.file === LOADER_FILE
  if (!topLevel) {
    const inProject = frames.find((f) => matched.has(f.file))
    if (inProject) return { construct, file: inProject.file, line: inProject.line, loadingFile, outside: false }
  }
  return { construct, file: site.file, line: site.line, loadingFile, outside: true }
}

/**
 * While a project loads, every module jiti runs (it compiles each with `vm.runInThisContext`)
 * clears `session.running` while its top level runs, whoever imports it (a check file, or a
 * helper's function that loads one lazily): constructs made there are placed from the stack,
 * which reports those at the top of a file checkMatch does not match. Returns the undo.
 */
function watchModuleRuns(session: LoadingSession): () => void {
  const vm = require('node:vm') as { runInThisContext: (code: string, options?: unknown) => unknown }
  const original = vm.runInThisContext
  vm.runInThisContext = function runInThisContext(this: unknown, code: string, options?: unknown) {
    const compiled = original.call(this, code, options)
    if (typeof compiled !== 'function') return compiled
    return function (this: unknown, ...args: unknown[]) {
      const was = session.running
      session.running = undefined
      try {
        return (compiled as (...a: unknown[]) => unknown).apply(this, args)
      } finally {
        session.running = was
      }
    }
  }
  return () => {
    vm.runInThisContext = original
  }
}

/** Runs `body` with `session` published for constructs to find; loads are sequential. */
export async function withSession<T>(session: LoadingSession, body: () => Promise<T>): Promise<T> {
  const slot = globalThis as unknown as Record<symbol, LoadingRegistry | undefined>
  const previous = slot[LOADING_KEY]
  slot[LOADING_KEY] = session
  // jiti is made by the first import (it learns the cache folder from that file)
  const before = new Set(Object.keys(sharedJiti?.cache ?? {}))
  const restoreVm = watchModuleRuns(session)
  try {
    return await body()
  } finally {
    restoreVm()
    slot[LOADING_KEY] = previous
    // forget the project's own modules so that loading again (watch, tests) runs them again
    const cache = sharedJiti?.cache ?? {}
    for (const key of Object.keys(cache)) {
      if (before.has(key) || key.includes(`${path.sep}node_modules${path.sep}`) || key.startsWith(`${PACKAGE_ROOT}${path.sep}dist${path.sep}`)) continue
      delete cache[key]
    }
  }
}

/** Imports one file with jiti; resolves to its module namespace or to the problem. */
export async function importFile(file: string, rel: (abs: string) => string): Promise<{ module: Record<string, unknown> } | { problem: Problem }> {
  try {
    const session = (globalThis as unknown as Record<symbol, unknown>)[LOADING_KEY]
    const jiti = getJiti(file)
    shareOwnConstructs(file)
    const module = (await importCompiled(jiti, file, session instanceof LoadingSession ? session : undefined)) as Record<string, unknown>
    return { module }
  } catch (error) {
    return { problem: importProblem(error, file, rel) }
  }
}

/**
 * A bare module name near this package's own (`monitors`, `monitor-as-code`): the constructs
 * come from `monitors-as-code`. A relative path or another package gets no hint.
 */
function packageHint(module: string): string {
  if (module.startsWith('.') || module.startsWith('/')) return ''
  const name = module.startsWith('@') ? module : module.split('/')[0]
  if (name === PACKAGE_NAME) return ''
  return closest(name, [PACKAGE_NAME]) !== undefined ? ` (did you mean '${PACKAGE_NAME}'? the constructs are imported from '${PACKAGE_NAME}')` : ''
}

/** A failed import as a problem: syntax errors with line and column, throws with the line. */
function importProblem(error: unknown, file: string, rel: (abs: string) => string): Problem {
  if (!(error instanceof Error)) return { file: rel(file), message: `threw ${describeThrown(error)} while loading` }
  const message = error.message ?? ''
  // jiti's parse errors: "ParseError: Unexpected token \n /abs/file.ts:3:0" (0-based column)
  const parse = /^(?:ParseError|SyntaxError): ([\s\S]*?)\s*\n\s*(\S+?):(\d+):(\d+)\s*$/.exec(message)
  if (parse) {
    return { file: rel(parse[2]), line: Number(parse[3]), column: Number(parse[4]) + 1, message: `syntax error: ${parse[1].trim()}` }
  }
  const frames = parseStack(error.stack).filter((f) => !isInternalFrame(f))
  const code = (error as { code?: unknown }).code
  if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') {
    const where = frames.find((f) => f.file === file)
    const what = /Cannot find (?:module|package) ['"]([^'"]+)['"]/.exec(message)?.[1]
    return { file: rel(file), line: where?.line, message: what ? `cannot find module "${what}"${packageHint(what)}` : firstLine(message) }
  }
  if (error.name === 'SyntaxError') {
    // sucrase let it through and V8 refused it without a location: ask babel where it is
    const located = locateSyntaxError(file)
    if (located) return { file: rel(file), line: located.line, column: located.column + 1, message: `syntax error: ${located.message}` }
    return { file: rel(file), message: `syntax error: ${firstLine(message)}` }
  }
  const inFile = frames.find((f) => f.file === file)
  const where = inFile ?? frames.find((f) => !f.file.startsWith(`${PACKAGE_ROOT}${path.sep}dist`))
  const misspelt = missingExportProblem(error, where?.file ?? file, rel)
  if (misspelt) return misspelt
  const name = error.name && error.name !== 'Error' ? `${error.name}: ` : 'an error: '
  return {
    file: rel(where?.file ?? file),
    line: where?.line,
    message: `threw ${name}${firstLine(message)}${inFile || !where ? '' : ` (while loading ${rel(file)})`}`,
  }
}

/**
 * `import { DnsChek } from 'monitors-as-code'`: the name is not exported, so the transpiled file
 * fails with `(0 , _monitorsascode.DnsChek) is not a constructor`, which names the transpiler's
 * internals. Read from the file's imports instead: the name, and the export nearest to it.
 */
function missingExportProblem(error: Error, file: string, rel: (abs: string) => string): Problem | undefined {
  const used = /(?:^|[\s(])_[\w$]+\.([\w$]+)\)? is not a (?:constructor|function)/.exec(error.message)?.[1]
  if (!used) return undefined
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
  for (const match of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*(['"])([^'"]+)\2/g)) {
    const exports = NAMED_MODULES[match[3]]
    if (!exports || Object.hasOwn(exports, used)) continue
    for (const specifier of match[1].split(',')) {
      const imported = specifier
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]
        ?.trim()
      if (imported !== used) continue
      const at = (match.index ?? 0) + match[0].indexOf(specifier)
      const line = text.slice(0, at + specifier.length - specifier.trimStart().length).split('\n').length
      const exported = Object.keys(exports).filter((k) => /^[A-Z]/.test(k) || k === 'defineConfig')
      const near = closest(used, exported)
      const hosted = match[3].startsWith('checkly') || match[3].startsWith(`${PACKAGE_NAME}/checkly`)
      return {
        file: rel(file),
        line,
        message: hosted
          ? `imports ${used} from "${match[3]}", which monitors does not know${near ? ` (did you mean ${near}?)` : ''}: see docs/migrating-from-checkly.md for the hosted constructs that map`
          : `imports ${used} from "${match[3]}", which exports no such name${near ? ` (did you mean ${near}?)` : ''}; its constructs are ${exported.filter((k) => k !== 'Construct' && k !== 'defineConfig').join(', ')}`,
      }
    }
  }
  return undefined
}

function firstLine(s: string): string {
  return s.split('\n')[0].trim()
}

function describeThrown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  return String(value)
}
