import { createRequire } from 'node:module'
import { join, relative } from 'node:path'
import { repo } from './cli.js'
import { TSCONFIG_TEXT } from '../../src/project/scaffold.js'

type TypeScript = typeof import('typescript')
const ts = createRequire(import.meta.url)('typescript') as TypeScript

const DECLARATIONS = new Map<string, import('typescript').SourceFile>()

/**
 * The compiler's errors for `files` (absolute) of a project whose `monitors-as-code` is linked
 * to this repository (its built types), with the options `monitors init` writes into a team's
 * tsconfig.json (src/project/scaffold.ts): what `npx tsc --noEmit` says there, one line each as
 * `file(line,col): message`, files relative to `dir`. One program for all of them, in-process.
 */
export function typeErrors(dir: string, files: readonly string[]): string[] {
  // the options init writes, read as tsc reads a tsconfig.json; Node's types from this
  // repository's node_modules, as a team installs @types/node
  const written = ts.convertCompilerOptionsFromJson(JSON.parse(TSCONFIG_TEXT).compilerOptions, dir)
  if (written.errors.length > 0)
    throw new Error(
      `the tsconfig.json init writes does not parse: ${written.errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, ' ')).join('; ')}`,
    )
  const options: import('typescript').CompilerOptions = { ...written.options, typeRoots: [join(repo, 'node_modules', '@types')] }
  const host = ts.createCompilerHost(options)
  const read = host.getSourceFile
  // the declarations of TypeScript's lib, Node's types and this package's, parsed once per process
  host.getSourceFile = (fileName, language, onError, fresh) => {
    const shared = fileName.endsWith('.d.ts') && !fileName.startsWith(dir)
    if (shared && !fresh && DECLARATIONS.has(fileName)) return DECLARATIONS.get(fileName)
    const file = read.call(host, fileName, language, onError, fresh)
    if (shared && file) DECLARATIONS.set(fileName, file)
    return file
  }
  const program = ts.createProgram({ rootNames: [...files], options, host })
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n')
    if (!d.file || d.start === undefined) return text
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start)
    return `${relative(dir, d.file.fileName)}(${line + 1},${character + 1}): ${text}`
  })
}
