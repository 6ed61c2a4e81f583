/**
 * Builds what the sandboxed child runs: the check's stored files (`script` at `scriptPath`, and
 * its `dependencies`, as the API keeps them) bundled with the harness into one CommonJS file.
 * Imports of the check's own files resolve among the stored files only (never the disk);
 * `@playwright/test` resolves to the harness; Node's built-ins and the runtime's packages stay
 * outside the bundle, as absolute paths into the prepared runtime; anything else is refused,
 * naming the file and the import.
 */
import { build, type Plugin } from 'esbuild'
import { createHash } from 'node:crypto'
import { existsSync, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { classifyImport, importProblem, type Runtime } from '../../schema/runtimes.js'
import { CODE_CACHE_FOLDER } from './code-cache.js'
import { resolveInRuntime } from './runtimes.js'

export interface ScriptFiles {
  /** The entry's source. */
  script: string
  /** The entry's path in the project (`checks/login.spec.ts`); default `script.spec.ts`. */
  scriptPath?: string | null
  /** The other files the entry imports, as the API stores them. */
  dependencies?: ReadonlyArray<{ path: string; content: string }> | null
}

const EXTENSIONS = ['', '.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.json']
const LOADERS: Record<string, 'ts' | 'tsx' | 'js' | 'jsx' | 'json'> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.jsx': 'jsx',
  '.json': 'json',
}

/** The harness's source: next to this module (src/ or dist/src/), else in the package's dist (the CLI bundle). */
export function harnessFile(): string {
  return scriptModule('harness', true)
}

/** A module of this folder, built (`name.js`), or its source too (`ts`): next to this module, else in the package's dist. */
export function scriptModule(name: string, ts = false): string {
  const here = path.dirname(fileURLToPath(import.meta.url))
  for (const candidate of [path.join(here, `${name}.js`), ...(ts ? [path.join(here, `${name}.ts`)] : [])]) if (existsSync(candidate)) return candidate
  for (let dir = here; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'dist', 'src', 'runner', 'script', `${name}.js`)
    if (existsSync(candidate)) return candidate
    if (path.dirname(dir) === dir) break
  }
  throw new Error(`the script ${name === 'harness' ? 'harness' : `module ${name}`} is missing (looked next to ${here} and in dist/src/runner/script/)`)
}

function normalize(p: string): string {
  return path.posix.normalize(`/${p.replace(/\\/g, '/')}`)
}

export type BuildResult = { ok: true; code: string } | { ok: false; problem: string }

/** What the bundle's plugin resolves against: the stored files, the harness and the runtime's Playwright modules. */
interface BundleSources {
  entryPath: string
  sources: Map<string, string>
  harness: string
  testModule: string
  coreModule: string
  runtime: Runtime
  runtimeDir: string
  /** the problems found while resolving, named by the importing file */
  problems: string[]
}

/**
 * The bundles built last (at most BUNDLES_KEPT, the least recently used dropped first), by
 * everything a bundle is made of: the check's files, the runtime, the harness's file and its
 * version on disk, and the runtime's modules it names. A check runs the same files at every
 * run: built once, not once a run.
 */
const bundles = new Map<string, string>()
const BUNDLES_KEPT = 32

/** How many bundles are kept, and how many builds found theirs among them (for the tests and benches). */
export const bundleCache = {
  get size() {
    return bundles.size
  },
  hits: 0,
}

/** Bundles `files` with the harness for `runtime`, prepared in `runtimeDir` (a bundle built before is answered again). */
export async function buildRunBundle(files: ScriptFiles, runtime: Runtime, runtimeDir: string): Promise<BuildResult> {
  const entryPath = normalize(files.scriptPath || 'script.spec.ts')
  const sources = new Map<string, string>([[entryPath, files.script]])
  for (const d of files.dependencies ?? []) sources.set(normalize(d.path), d.content)
  const harness = harnessFile()
  const problems: string[] = []
  const runtimeModule = (specifier: string): string => {
    const resolved = resolveInRuntime(runtimeDir, specifier)
    if (!resolved) throw new Error(`runtime ${runtime.name} in ${runtimeDir} has no ${specifier}: prepare it again`)
    return resolved
  }
  let testModule: string
  let coreModule: string
  try {
    testModule = runtimeModule('@playwright/test')
    coreModule = runtimeModule('playwright-core')
  } catch (error) {
    return { ok: false, problem: (error as Error).message }
  }
  const key = createHash('sha256')
    .update(
      JSON.stringify([entryPath, [...sources], runtime.name, runtime.dependencies, runtimeDir, harness, statSync(harness).mtimeMs, testModule, coreModule]),
    )
    .digest('hex')
  const kept = bundles.get(key)
  if (kept !== undefined) {
    bundles.delete(key)
    bundles.set(key, kept)
    bundleCache.hits += 1
    return { ok: true, code: kept }
  }
  const plugin = scriptPlugin({ entryPath, sources, harness, testModule, coreModule, runtime, runtimeDir, problems })
  try {
    const result = await build({
      entryPoints: ['monitors:entry'],
      bundle: true,
      write: false,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      sourcemap: 'inline',
      sourcesContent: false,
      logLevel: 'silent',
      plugins: [plugin],
      // the harness's own imports are Node built-ins; nothing else may come from the disk
      absWorkingDir: path.dirname(harness),
    })
    const code = result.outputFiles[0].text
    bundles.set(key, code)
    if (bundles.size > BUNDLES_KEPT) bundles.delete(bundles.keys().next().value as string)
    return { ok: true, code }
  } catch (error) {
    return { ok: false, problem: buildProblem(error, problems) }
  }
}

/**
 * The entry (the harness, given the runtime's Playwright and the check's script), the harness
 * as `@playwright/test`, and the check's imports: its own files from the stored ones, Node's
 * built-ins and the runtime's packages left outside.
 */
function scriptPlugin(bundle: BundleSources): Plugin {
  const { entryPath, sources, harness, testModule, coreModule, problems } = bundle
  return {
    name: 'monitors-script',
    setup(b) {
      b.onResolve({ filter: /^monitors:entry$/ }, () => ({ path: 'entry', namespace: 'monitors-entry' }))
      b.onLoad({ filter: /.*/, namespace: 'monitors-entry' }, () => ({
        loader: 'js',
        resolveDir: path.dirname(harness),
        contents: [
          `const harness = require(${JSON.stringify(harness)});`,
          'harness.main({',
          `  loadTest: () => require(${JSON.stringify(testModule)}),`,
          `  loadCore: () => require(${JSON.stringify(coreModule)}),`,
          `  loadScript: () => require(${JSON.stringify(`script:${entryPath}`)}),`,
          `  codeCache: ${JSON.stringify({ base: path.join(bundle.runtimeDir, CODE_CACHE_FOLDER), within: realpathSync(path.join(bundle.runtimeDir, 'node_modules')) })},`,
          '});',
        ].join('\n'),
      }))
      // the runtime's packages, named by their absolute path in the entry: never bundled
      b.onResolve({ filter: /.*/, namespace: 'monitors-entry' }, (args) =>
        args.path === testModule || args.path === coreModule ? { path: args.path, external: true } : undefined,
      )
      b.onResolve({ filter: /^script:/ }, (args) => ({ path: args.path.slice(7), namespace: 'script' }))
      b.onResolve({ filter: /^@playwright\/test$/, namespace: 'script' }, () => ({ path: 'api', namespace: 'monitors-api' }))
      b.onLoad({ filter: /.*/, namespace: 'monitors-api' }, () => ({
        loader: 'js',
        resolveDir: path.dirname(harness),
        contents: `module.exports = require(${JSON.stringify(harness)}).api;`,
      }))
      b.onResolve({ filter: /.*/, namespace: 'script' }, (args) => {
        const kind = classifyImport(args.path)
        if ('builtin' in kind) return { path: args.path, external: true }
        if ('package' in kind) return runtimePackage(bundle, args.path, args.importer)
        const base = args.path.startsWith('/') ? normalize(args.path) : path.posix.join(path.posix.dirname(args.importer), args.path)
        const candidates = [...EXTENSIONS.map((e) => base + e), ...EXTENSIONS.slice(1).map((e) => `${base}/index${e}`)]
        // TypeScript's own convention: `./util.js` names `util.ts`
        if (/\.[cm]?js$/.test(base)) candidates.push(base.replace(/\.([cm]?)js$/, '.$1ts'), base.replace(/\.js$/, '.tsx'))
        const found = candidates.find((c) => sources.has(c))
        if (found) return { path: found, namespace: 'script' }
        const text = `imports "${args.path}", which is not among the check's files (${[...sources.keys()].map((s) => s.slice(1)).join(', ')})`
        problems.push(`${args.importer.slice(1)}: ${text}`)
        return { errors: [{ text }] }
      })
      b.onLoad({ filter: /.*/, namespace: 'script' }, (args) => ({
        contents: sources.get(args.path) ?? '',
        loader: LOADERS[path.posix.extname(args.path)] ?? 'ts',
        resolveDir: path.posix.dirname(args.path),
      }))
    },
  }
}

/** A package the script imports: left outside the bundle, at its path in the prepared runtime, when the runtime declares it. */
function runtimePackage(bundle: BundleSources, specifier: string, importer: string): { path: string; external: true } | { errors: Array<{ text: string }> } {
  const { runtime, runtimeDir, problems } = bundle
  const problem = importProblem(runtime, specifier)
  if (problem) {
    problems.push(`${importer.slice(1)}: ${problem}`)
    return { errors: [{ text: problem }] }
  }
  const resolved = resolveInRuntime(runtimeDir, specifier)
  if (!resolved) {
    const text = `imports "${specifier}", which runtime ${runtime.name} declares but its prepared folder ${runtimeDir} does not hold: prepare it again`
    problems.push(`${importer.slice(1)}: ${text}`)
    return { errors: [{ text }] }
  }
  return { path: resolved, external: true }
}

/** Why the bundle could not be built: the imports refused, else esbuild's first error with its place. */
function buildProblem(error: unknown, problems: readonly string[]): string {
  if (problems.length > 0) return problems.join('; ')
  const e = error as { errors?: Array<{ text: string; location?: { file: string; line: number; column: number } | null }> }
  const first = e.errors?.[0]
  if (first) {
    const where = first.location ? `${first.location.file.replace(/^script:\/?/, '')}:${first.location.line}:${first.location.column + 1}: ` : ''
    return `${where}${first.text}`
  }
  return (error as Error).message
}
