/**
 * A check file edited in one value is not transpiled whole again. Sucrase (loader.ts) keeps every
 * line where it was and copies string and number literals as they are written; so when the
 * source differs from the one transpiled last only inside one string or number literal, the new
 * JavaScript is the last one with that literal written anew: about 5 ms where transpiling a file
 * of 1,000 checks again costs 250 to 400 ms of a cold process (loading sucrase, then running it
 * once, before V8 has optimized it). The last source and its JavaScript are kept per check file
 * beside the compile cache (`transpiled.<hash>.cache`, see src/resources/cache-file.ts: written
 * whole, read only when whole and for this file, this sucrase and these options).
 *
 * Only an edit that cannot change how anything else is transpiled is patched: the changed
 * characters lie within one literal on one line, hold no quote, backslash, `$`, `*` or `/`, and
 * the literal (quotes included, or the whole number) is written once on that line of the source
 * and once on that line of the JavaScript, with the same text before it or after it on the line
 * in both (so it is the one sucrase copied, not one it wrote); a string stays a string, a number a decimal number;
 * the line names none of `import`, `export`, `require`, `declare`, `module`, `enum` and
 * `namespace` (where sucrase reads a string's value: module names), and a string does not start
 * with `use ` (a directive). Anything else is transpiled whole, as always.
 */
import path from 'node:path'
import { createRequire } from 'node:module'
import { readCacheFile, sha256, writeCacheFile } from '../resources/cache-file.js'

const FORMAT = 'monitors-transpiled-1'
const MAX_BYTES = 32 * 1024 * 1024
const MAX_FILES = 4096

const counts = { patched: 0, whole: 0 }
/** How often a check file's JavaScript was patched, or transpiled whole, in this process. */
export function transpileCounts(): Readonly<typeof counts> {
  return { ...counts }
}

let sucraseVersion: string | undefined
function versionOfSucrase(): string {
  try {
    sucraseVersion ??= String((createRequire(import.meta.url)('sucrase/package.json') as { version?: unknown }).version)
  } catch {
    sucraseVersion = 'unknown'
  }
  return sucraseVersion
}

/**
 * The JavaScript of `source` (the check file `file`, transpiled with `options` by `whole`): the
 * last JavaScript of this file patched when the edit allows it (see above), else `whole()`. The
 * result is kept as the file's last one. No folder: `whole()`.
 */
export function transpiled(dir: string | undefined, file: string, source: string, options: string, whole: () => string): string {
  if (!dir) return whole()
  const identity = sha256(`${FORMAT}\0${file}\0${options}\0${versionOfSucrase()}`)
  const entry = path.join(dir, `transpiled.${identity.slice(0, 24)}.cache`)
  const read = readCacheFile(entry, FORMAT, identity)
  const last =
    'data' in read && Array.isArray(read.data) && typeof read.data[0] === 'string' && typeof read.data[1] === 'string'
      ? (read.data as [string, string])
      : undefined
  let code = last && last[0] === source ? last[1] : last ? patchLiteral(last[0], last[1], source) : undefined
  if (code !== undefined) {
    counts.patched++
    if (process.env.MONITORS_DEBUG_CODE_CACHE) process.stderr.write(`transpile: patched ${path.relative(process.cwd(), file) || file}\n`)
  } else {
    code = whole()
    counts.whole++
  }
  writeCacheFile(entry, FORMAT, identity, [source, code], { maxBytes: MAX_BYTES, prefix: 'transpiled.', maxFiles: MAX_FILES }, last === undefined)
  return code
}

const FORBIDDEN = /['"`\\$*/\r\n\u2028\u2029]/
const NUMBER = /^(?:0|[1-9]\d*)(?:\.\d+)?$/
const WORD = /[\w$.]/
const READS_STRINGS = /\b(?:import|export|require|declare|module|enum|namespace)\b/

/**
 * `code` (the JavaScript of `before`) with the one literal that `after` changed written anew;
 * undefined when the edit is not of one literal alone (see the module's comment).
 */
export function patchLiteral(before: string, code: string, after: string): string | undefined {
  const shorter = Math.min(before.length, after.length)
  // the longest common start and end, by halving (the strings are compared natively, not char by char)
  const p = longest(shorter, (n) => before.startsWith(after.slice(0, n)))
  const q = longest(shorter - p, (n) => before.endsWith(after.slice(after.length - n)))
  const was = before.slice(p, before.length - q)
  const now = after.slice(p, after.length - q)
  if (FORBIDDEN.test(was) || FORBIDDEN.test(now)) return undefined
  const literal = literalAround(before, p, before.length - q, after.length - before.length)
  if (!literal) return undefined
  const { start, end } = literal
  const oldText = before.slice(start, end)
  const newText = after.slice(start, end + after.length - before.length)
  if (literal.number ? !NUMBER.test(newText) : newText.slice(1).startsWith('use ') || oldText.slice(1).startsWith('use ')) return undefined
  const line = lineAt(before, start)
  if (READS_STRINGS.test(line.text) || READS_STRINGS.test(lineAt(after, start).text)) return undefined
  if (occurrences(line.text, oldText, literal.number).length !== 1) return undefined
  if (countLines(before) !== countLines(code)) return undefined
  const out = lineNumbered(code, line.number)
  if (!out) return undefined
  const found = occurrences(out.text, oldText, literal.number)
  if (found.length !== 1) return undefined
  // and where the line of the source has it: the same text before it on the line, or after it
  const inSource = occurrences(line.text, oldText, literal.number)[0]
  const sameBefore = line.text.slice(0, inSource) === out.text.slice(0, found[0])
  const sameAfter = line.text.slice(inSource + oldText.length) === out.text.slice(found[0] + oldText.length)
  if (!sameBefore && !sameAfter) return undefined
  const at = out.start + found[0]
  return code.slice(0, at) + newText + code.slice(at + oldText.length)
}

/** The largest n in [0, most] for which `holds(n)`, when it holds for every smaller n too. */
function longest(most: number, holds: (n: number) => boolean): number {
  let low = 0
  let high = most
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    if (holds(mid)) low = mid
    else high = mid - 1
  }
  return low
}

/**
 * The string or number literal of `source` holding [from, to), found by reading the file from its
 * start (strings, template literals and their `${}`, comments): its bounds, quotes included.
 * Undefined when [from, to) is anywhere else, or the file has a `/` that is not a comment (a
 * regular expression or a division, which a reader that does not parse cannot tell apart).
 */
function literalAround(source: string, from: number, to: number, grown: number): { start: number; end: number; number: boolean } | undefined {
  const at = tokenAt(source, from)
  if (!at) return undefined
  if (at.kind === 'string') return at.start < from && to < at.end ? { start: at.start, end: at.end, number: false } : undefined
  // code: the whole word around the edit is a decimal number, before and after it
  let s = from
  while (s > 0 && WORD.test(source[s - 1])) s--
  let e = to
  while (e < source.length && WORD.test(source[e])) e++
  if (s < at.start || !NUMBER.test(source.slice(s, e)) || e + grown <= s) return undefined
  return { start: s, end: e, number: true }
}

/** The characters where reading code may change state. */
const SPECIAL = /['"`/{}]/g
const IN_SINGLE = /['\\\n]/g
const IN_DOUBLE = /["\\\n]/g
const IN_TEMPLATE = /[`\\]|\$\{/g

/** The first match of `pattern` in `source` from `from`: its index, or the length when there is none. */
function next(pattern: RegExp, source: string, from: number): number {
  pattern.lastIndex = from
  return pattern.exec(source)?.index ?? source.length
}

/** What holds position `pos` of `source`: a string literal (its bounds), code, or undefined (a comment, a template's text, or not known). */
function tokenAt(source: string, pos: number): { kind: 'string' | 'code'; start: number; end: number } | undefined {
  const braces: number[] = [] // per open `${`: the depth of braces inside it
  let depth = 0
  let code = 0 // where the current stretch of code began
  for (let i = next(SPECIAL, source, 0); i < source.length; i = next(SPECIAL, source, i)) {
    const c = source[i]
    const closesTemplate = c === '}' && braces.length > 0 && depth === braces[braces.length - 1]
    if (c === '{' || (c === '}' && !closesTemplate)) {
      depth += c === '{' ? 1 : -1
      i++
      continue
    }
    // the stretch of code ends here
    if (pos >= code && pos < i) return { kind: 'code', start: code, end: i }
    if (c === "'" || c === '"') {
      let j = i + 1
      const within = c === "'" ? IN_SINGLE : IN_DOUBLE
      for (j = next(within, source, j); source[j] === '\\'; j = next(within, source, j + 2));
      if (source[j] !== c) return undefined // a line end in a string: not read further
      if (pos > i && pos <= j) return { kind: 'string', start: i, end: j + 1 }
      i = j + 1
    } else if (c === '/' && (source[i + 1] === '/' || source[i + 1] === '*')) {
      const close = source[i + 1] === '/' ? source.indexOf('\n', i) : source.indexOf('*/', i + 2)
      if (close < 0 || pos < close + 2) return undefined
      i = source[i + 1] === '/' ? close : close + 2
    } else if (c === '/') {
      return undefined
    } else {
      // a template's text, up to its end or its next `${`
      if (closesTemplate) braces.pop()
      let j: number
      for (j = next(IN_TEMPLATE, source, i + 1); source[j] === '\\'; j = next(IN_TEMPLATE, source, j + 2));
      if (j >= source.length || pos <= j) return undefined
      if (source[j] === '$') {
        braces.push(depth)
        i = j + 2
      } else i = j + 1
    }
    code = i
  }
  return pos >= code ? { kind: 'code', start: code, end: source.length } : undefined
}

function lineAt(text: string, index: number): { text: string; number: number } {
  const start = text.lastIndexOf('\n', index - 1) + 1
  const end = text.indexOf('\n', index)
  let number = 0
  for (let i = text.indexOf('\n'); i >= 0 && i < start; i = text.indexOf('\n', i + 1)) number++
  return { text: text.slice(start, end < 0 ? text.length : end), number }
}

/** Line `number` (0-based) of `text` and where it starts; undefined past the end. */
function lineNumbered(text: string, number: number): { text: string; start: number } | undefined {
  let start = 0
  for (let n = 0; n < number; n++) {
    const next = text.indexOf('\n', start)
    if (next < 0) return undefined
    start = next + 1
  }
  const end = text.indexOf('\n', start)
  return { text: text.slice(start, end < 0 ? text.length : end), start }
}

function countLines(text: string): number {
  let n = 0
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++
  return n
}

/** Where `literal` is written in `line`; a number only as a whole word. */
function occurrences(line: string, literal: string, number: boolean): number[] {
  const out: number[] = []
  for (let i = line.indexOf(literal); i >= 0; i = line.indexOf(literal, i + 1)) {
    if (number && ((i > 0 && WORD.test(line[i - 1])) || (i + literal.length < line.length && WORD.test(line[i + literal.length])))) continue
    out.push(i)
  }
  return out
}
