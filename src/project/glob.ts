import { readdirSync } from 'node:fs'
import path from 'node:path'

/*
 * A small glob matcher and directory walker for `checkMatch` and `ignore`. Node 20 has no
 * fs.glob or path.matchesGlob, and the glob libraries in node_modules are only there as
 * dependencies of the test tools; check-file patterns need little: `**`, `*`, `?`, `{a,b}`
 * and `[...]`.
 */

/** Directories never searched. */
const NEVER_DESCEND = new Set(['node_modules', '.git'])

function escape(ch: string): string {
  return /[.+^${}()|[\]\\]/.test(ch) ? `\\${ch}` : ch
}

/** Converts a glob over `/`-separated relative paths into a regular expression. */
export function globToRegExp(glob: string): RegExp {
  let re = ''
  let braces = 0
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]
    if (ch === '*') {
      if (glob[i + 1] === '*') {
        const atStart = i === 0 || glob[i - 1] === '/'
        const atEnd = i + 2 === glob.length || glob[i + 2] === '/'
        if (atStart && atEnd) {
          if (i + 2 === glob.length) re += '.*'
          else {
            re += '(?:[^/]*(?:/|$))*'
            i++ // the slash after ** is part of the group
          }
          i++
          continue
        }
        i++
      }
      re += '[^/]*'
    } else if (ch === '?') re += '[^/]'
    else if (ch === '{') {
      braces++
      re += '(?:'
    } else if (ch === '}' && braces > 0) {
      braces--
      re += ')'
    } else if (ch === ',' && braces > 0) re += '|'
    else if (ch === '[') {
      const close = glob.indexOf(']', i + 1)
      if (close === -1) re += '\\['
      else {
        let body = glob.slice(i + 1, close)
        if (body.startsWith('!')) body = `^${body.slice(1)}`
        re += `[${body.replace(/\\/g, '\\\\')}]`
        i = close
      }
    } else if (ch === '\\' && i + 1 < glob.length) re += escape(glob[++i])
    else re += escape(ch)
  }
  return new RegExp(`^${re}$`)
}

/** The leading part of a glob without wildcards: the directory the walk can start from. */
function globBase(glob: string): string {
  const parts = glob.split('/')
  const base: string[] = []
  for (const part of parts.slice(0, -1)) {
    if (/[*?{}[\]]/.test(part)) break
    base.push(part)
  }
  return base.join('/')
}

function normalizeGlob(glob: string): string {
  let g = glob.replace(/\\/g, '/')
  while (g.startsWith('./')) g = g.slice(2)
  return g
}

/**
 * Files under `rootDir` matching any of `patterns` and none of `ignore`, as sorted paths
 * relative to `rootDir` with `/` separators.
 */
export function findFiles(rootDir: string, patterns: string[], ignore: string[] = []): string[] {
  const includes = patterns.map(normalizeGlob)
  const matchers = includes.map(globToRegExp)
  const ignores = ignore.map((g) => globToRegExp(normalizeGlob(g)))
  const bases = [...new Set(includes.map(globBase))].sort()
  // start from the shortest bases only: a base inside another is walked anyway
  const starts = bases.filter((b, i) => !bases.slice(0, i).some((o) => o === '' || b === o || b.startsWith(`${o}/`)))
  const found = new Set<string>()
  const walk = (rel: string) => {
    let entries
    try {
      entries = readdirSync(path.join(rootDir, rel), { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      const child = rel ? `${rel}/${entry.name}` : entry.name
      if (entry.isDirectory()) {
        if (NEVER_DESCEND.has(entry.name)) continue
        if (ignores.some((m) => m.test(child) || m.test(`${child}/`))) continue
        walk(child)
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        if (matchers.some((m) => m.test(child)) && !ignores.some((m) => m.test(child))) found.add(child)
      }
    }
  }
  for (const start of starts) walk(start)
  return [...found].sort()
}
