/**
 * Bundling a browser or multi-step check's script: the entrypoint (`code.entrypoint`, a file,
 * or `code.content`, inline) and the local files it imports, found by esbuild's resolver, into
 * what the API stores for it: `script` (the entry's source), `scriptPath` (the entry's path in
 * the project) and `dependencies` (every other local file, `{ path, content }`), as the hosted
 * service's check bodies have them. The runner bundles those files again when it runs them
 * (src/runner/script/build.ts), so the API keeps readable sources and a plan can show a
 * per-file diff (`files`).
 *
 * Imports of packages are checked against the runtime's declared packages: a missing file, an
 * import of a file outside the project, or a package the runtime does not provide is a problem
 * naming the importing file (and line) and the import.
 */
import { build, type Message, type Plugin } from 'esbuild'
import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { classifyImport, DEFAULT_RUNTIME_ID, findRuntime, importProblem, type Runtime } from '../schema/runtimes.js'
import type { Problem } from './errors.js'

export interface ScriptSourceInput {
  /** The entry file, relative to the check file's folder (or absolute). */
  entrypoint?: string
  /** The script inline, instead of an entry file; it may import packages, not the project's files. */
  content?: string
  /** The check file the construct is in (absolute or relative to `cwd`). */
  checkFile: string
  /** The project's root: `scriptPath` and the dependencies' paths are relative to it. */
  projectDir: string
  runtimeId?: string | null
  /** For problems: construct class, logical id and the field (default `code`). */
  construct?: string
  logicalId?: string
  field?: string
  /** Problems' file names are relative to this (default process.cwd()). */
  cwd?: string
}

export interface BundledScript {
  script: string
  /** The entry's path relative to the project (posix); null for inline content. */
  scriptPath: string | null
  /** Every local file the entry imports (directly or not), relative to the project, sorted. */
  dependencies: Array<{ path: string; content: string }>
  /** The entry (`(inline)` for inline content) and its dependencies: what a plan diffs. */
  files: Array<{ path: string; content: string }>
}

export type BundleOutcome = { ok: true; value: BundledScript } | { ok: false; problems: Problem[] }

const toPosix = (p: string) => p.split(path.sep).join('/')

/** The line (1-based) where `file` first names `specifier` in quotes. */
function lineOf(file: string, specifier: string): number | undefined {
  try {
    const source = readFileSync(file, 'utf8')
    const at = ['"', "'", '`']
      .map((q) => source.indexOf(`${q}${specifier}${q}`))
      .filter((i) => i >= 0)
      .sort((a, b) => a - b)[0]
    return at === undefined ? undefined : source.slice(0, at).split('\n').length
  } catch {
    return undefined
  }
}

/** What the checks of one bundling share: where problems point, and the project's bounds. */
interface Bundling {
  input: ScriptSourceInput
  projectDir: string
  checkFile: string
  /** the entry file; null for inline content */
  entry: string | null
  where: { construct?: string; logicalId?: string }
  field: string
  /** a file as problems name it: relative to cwd */
  shown: (file: string) => string
  /** whether a file is outside the project folder */
  outside: (file: string) => boolean
  problems: Problem[]
}

export async function bundleScript(input: ScriptSourceInput): Promise<BundleOutcome> {
  const opened = openBundling(input)
  if ('problems' in opened) return { ok: false, problems: opened.problems }
  const { bundling, runtime } = opened
  const built = await bundledInputs(bundling, importChecker(bundling, runtime))
  if (!built || bundling.problems.length > 0) return { ok: false, problems: bundling.problems }
  return { ok: true, value: bundledFiles(bundling, built.inputs) }
}

/**
 * A snippet's entry file with the local files it imports, as one script (esbuild's bundle, ES
 * module syntax: packages stay imports, the project's files are inlined): a snippet is one
 * `script` in the API, with no dependencies beside it. The same problems as bundleScript.
 */
export async function bundleIntoOne(input: ScriptSourceInput): Promise<{ ok: true; script: string } | { ok: false; problems: Problem[] }> {
  const opened = openBundling(input)
  if ('problems' in opened) return { ok: false, problems: opened.problems }
  const { bundling, runtime } = opened
  const built = await bundledInputs(bundling, importChecker(bundling, runtime))
  if (!built || bundling.problems.length > 0) return { ok: false, problems: bundling.problems }
  return { ok: true, script: built.text }
}

/** What a bundling of `input` shares, or the problems that keep it from starting (no runtime, no entry file, one outside the project). */
function openBundling(input: ScriptSourceInput): { bundling: Bundling; runtime: Runtime } | { problems: Problem[] } {
  const cwd = input.cwd ?? process.cwd()
  const projectDir = path.resolve(cwd, input.projectDir)
  const checkFile = path.resolve(cwd, input.checkFile)
  const where = { construct: input.construct, logicalId: input.logicalId }
  const field = input.field ?? 'code'
  const shown = (file: string) => toPosix(path.relative(cwd, file)) || file
  const runtime = findRuntime(input.runtimeId ?? DEFAULT_RUNTIME_ID)
  if (!runtime) return { problems: [{ file: shown(checkFile), ...where, field: 'runtimeId', message: `runtime ${input.runtimeId} does not exist` }] }
  if ((input.entrypoint === undefined) === (input.content === undefined)) {
    return {
      problems: [
        { file: shown(checkFile), ...where, field, message: 'give either entrypoint (a file) or content (the script inline), not both and not neither' },
      ],
    }
  }
  let entry: string | null = null
  if (input.entrypoint !== undefined) {
    entry = path.resolve(path.dirname(checkFile), input.entrypoint)
    if (!existsSync(entry) || !statSync(entry).isFile()) {
      return {
        problems: [
          { file: shown(checkFile), ...where, field: `${field}.entrypoint`, message: `file ${input.entrypoint} does not exist (looked for ${shown(entry)})` },
        ],
      }
    }
  }
  const outside = (file: string) => path.relative(projectDir, file).startsWith('..') || path.isAbsolute(path.relative(projectDir, file))
  if (entry && outside(entry)) {
    return {
      problems: [
        {
          file: shown(checkFile),
          ...where,
          field: `${field}.entrypoint`,
          message: `${input.entrypoint} is outside the project folder ${shown(projectDir) || '.'}`,
        },
      ],
    }
  }
  return { bundling: { input, projectDir, checkFile, entry, where, field, shown, outside, problems: [] }, runtime }
}

/**
 * Checks each import as esbuild meets it: built-ins and the runtime's packages stay outside;
 * the project's files are followed (inline content may import none); anything else is a
 * problem naming the importing file and line.
 */
function importChecker(bundling: Bundling, runtime: Runtime): Plugin {
  const { checkFile, where, shown, outside, problems } = bundling
  return {
    name: 'monitors-imports',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point') return undefined
        const kind = classifyImport(args.path)
        const inline = !args.importer || args.importer.endsWith('<stdin>') || args.importer.endsWith('<inline>')
        const importer = inline ? checkFile : args.importer
        const at = (message: string): Problem => ({ file: shown(importer), line: inline ? undefined : lineOf(importer, args.path), ...where, message })
        if ('builtin' in kind) return { path: args.path, external: true }
        if ('package' in kind) {
          const problem = importProblem(runtime, args.path)
          if (problem) problems.push(at(problem))
          return { path: args.path, external: true }
        }
        if (args.pluginData === 'resolving') return undefined
        if (inline) {
          problems.push(at(`imports "${args.path}": inline content cannot import the project's files; put the script in a file and give it as entrypoint`))
          return { path: args.path, external: true }
        }
        const resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'resolving' })
        if (resolved.errors.length > 0) {
          problems.push(at(`imports "${args.path}", which does not exist`))
          return { path: args.path, external: true }
        }
        if (outside(resolved.path)) {
          problems.push(at(`imports "${args.path}", which is outside the project folder (${shown(resolved.path)})`))
          return { path: args.path, external: true }
        }
        return { path: resolved.path }
      })
    },
  }
}

/** The files esbuild read to bundle the entry (as its metafile names them) and the bundle; undefined when it failed (its errors among the problems). */
async function bundledInputs(bundling: Bundling, plugin: Plugin): Promise<{ inputs: string[]; text: string } | undefined> {
  const { input, projectDir, checkFile, entry, where, field, shown, problems } = bundling
  try {
    const result = await build({
      ...(entry
        ? { entryPoints: [entry] }
        : { stdin: { contents: input.content ?? '', resolveDir: path.dirname(checkFile), sourcefile: '<inline>', loader: 'ts' as const } }),
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'silent',
      absWorkingDir: projectDir,
      plugins: [plugin],
    })
    return { inputs: Object.keys(result.metafile.inputs), text: result.outputFiles[0]?.text ?? '' }
  } catch (error) {
    const messages = (error as { errors?: Message[] }).errors ?? []
    for (const m of messages) {
      if (m.pluginName === 'monitors-imports') continue
      const file = m.location ? path.resolve(projectDir, m.location.file) : (entry ?? checkFile)
      problems.push({
        file: m.location?.file === '<inline>' ? shown(checkFile) : shown(file),
        line: m.location?.line,
        column: m.location ? m.location.column + 1 : undefined,
        ...where,
        message: m.text,
      })
    }
    if (problems.length === 0) problems.push({ file: shown(entry ?? checkFile), ...where, field, message: (error as Error).message })
    return undefined
  }
}

/** The entry and the local files it imports, read from the project, as the API stores them. */
function bundledFiles(bundling: Bundling, inputs: string[]): BundledScript {
  const { input, projectDir, entry } = bundling
  const files = inputs
    .filter((i) => !i.endsWith('<stdin>') && !i.endsWith('<inline>') && !i.includes(':'))
    .map((i) => path.resolve(projectDir, i))
    .map((abs) => ({ path: toPosix(path.relative(projectDir, abs)), content: readFileSync(abs, 'utf8') }))
    .sort((a, b) => a.path.localeCompare(b.path, 'en'))
  const scriptPath = entry ? toPosix(path.relative(projectDir, entry)) : null
  const script = entry ? readFileSync(entry, 'utf8') : (input.content ?? '')
  return {
    script,
    scriptPath,
    dependencies: files.filter((f) => f.path !== scriptPath),
    files: [{ path: scriptPath ?? '(inline)', content: script }, ...files.filter((f) => f.path !== scriptPath)],
  }
}
