import { existsSync } from 'node:fs'
import path from 'node:path'
import { globToRegExp } from '../project/glob.js'

/*
 * Where `monitors import` writes its constructs. An import is recorded in the lock, so the file
 * must be one the project loads: matched by `checkMatch` and not left out by `ignore`. Otherwise
 * the next plan would not find the constructs and would delete what was just imported.
 */

export interface OutFileProject {
  rootDir: string
  configFile: string
  checkMatch: readonly string[]
  ignore: readonly string[]
}

const toPosix = (p: string) => p.split(path.sep).join('/')

function normalizeGlob(glob: string): string {
  let g = glob.replace(/\\/g, '/')
  while (g.startsWith('./')) g = g.slice(2)
  return g
}

/** Why the project would not load `file` (absolute), or undefined when it would. */
export function notLoadedReason(project: OutFileProject, file: string): string | undefined {
  const rel = toPosix(path.relative(project.rootDir, file))
  const shownPatterns = project.checkMatch.join(', ')
  if (rel === '' || rel.startsWith('../') || rel === '..' || path.isAbsolute(rel)) {
    return `is outside the project directory ${project.rootDir}, so checkMatch (${shownPatterns}) cannot match it`
  }
  if (path.resolve(file) === path.resolve(project.configFile)) return 'is the config file'
  if (!project.checkMatch.some((p) => globToRegExp(normalizeGlob(p)).test(rel))) {
    return `is not matched by checkMatch (${shownPatterns}), so the project would not load it`
  }
  const ignored = project.ignore.filter((g) => {
    const re = globToRegExp(normalizeGlob(g))
    // a directory pattern leaves out everything below it, as the file walk does
    const parts = rel.split('/')
    return (
      re.test(rel) ||
      parts.slice(0, -1).some((_, i) => {
        const dir = parts.slice(0, i + 1).join('/')
        return re.test(dir) || re.test(`${dir}/`)
      })
    )
  })
  if (ignored.length > 0) return `is left out by ignore (${ignored.join(', ')}), so the project would not load it`
  return undefined
}

/**
 * A project-relative file name that `pattern` matches, built from it: `**` and a directory
 * wildcard are dropped, a `*` in the file name becomes `base`, `{a,b}` its first choice (`ts`
 * when it is one: the hosted CLI's `**\/*.check.{js,ts}` gets the TypeScript file import writes).
 * Undefined when the pattern has `?` or `[...]`, or the result does not match after all.
 */
export function fileNameFor(pattern: string, base: string): string | undefined {
  const g = normalizeGlob(pattern)
  if (/[?[\]]/.test(g)) return undefined
  const firstChoice = g.replace(/\{([^{}]*)\}/g, (_all, inner: string) => {
    const choices = inner.split(',')
    return choices.includes('ts') ? 'ts' : choices[0]
  })
  if (/[{}]/.test(firstChoice)) return undefined
  const parts = firstChoice.split('/').filter((p) => p !== '' && p !== '**')
  if (parts.length === 0) return undefined
  const name = parts.pop()!
  if (parts.some((p) => p.includes('*'))) return undefined
  if (!name.includes('*')) return undefined // one fixed file: never write into it
  let used = false
  const fileName = name.replace(/\*+/g, () => {
    if (used) return ''
    used = true
    return base
  })
  const candidate = [...parts, fileName].join('/')
  return globToRegExp(g).test(candidate) ? candidate : undefined
}

/**
 * The file to write: `explicit` (relative to `cwd`) when given, else the first name derived
 * from `checkMatch` (`imported`, `imported-2`, … until one is free). Refuses a file the project
 * would not load, or an existing one.
 */
export function chooseOutFile(project: OutFileProject, explicit: string | undefined, cwd: string): { file: string } | { problem: string } {
  const shown = (abs: string) => toPosix(path.relative(cwd, abs)) || abs
  if (explicit !== undefined) {
    if (explicit.trim() === '') return { problem: '--out needs a file name, e.g. --out checks/imported.check.ts' }
    const file = path.resolve(cwd, explicit)
    const reason = notLoadedReason(project, file)
    if (reason) {
      return {
        problem: `--out ${shown(file)} ${reason}; nothing was imported. Pass an --out that checkMatch matches, or widen checkMatch in ${shown(project.configFile)}.`,
      }
    }
    if (existsSync(file)) return { problem: `${shown(file)} already exists: import writes a new file and never overwrites one. Pass --out <new file>.` }
    return { file }
  }
  for (const pattern of project.checkMatch) {
    const first = fileNameFor(pattern, 'imported')
    if (!first) continue
    for (let i = 1; i < 1000; i++) {
      const rel = i === 1 ? first : fileNameFor(pattern, `imported-${i}`)
      if (!rel) break
      const file = path.resolve(project.rootDir, rel)
      if (notLoadedReason(project, file)) break
      if (!existsSync(file)) return { file }
    }
  }
  return {
    problem: `no file name for the imported constructs can be derived from checkMatch (${project.checkMatch.join(', ')}) in ${shown(project.configFile)}; pass --out <file> with a new file that checkMatch matches.`,
  }
}
