/**
 * A construct's `code: { entrypoint } | { content }` for a kind whose descriptor names a `code`
 * field (a snippet's `script`): the file's text (or the content) put into that field, so that
 * the API body holds the script itself. See docs/constructs.md.
 */
import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'

type AddProblem = (field: string | undefined, message: string) => void

/** Longest file a `code.entrypoint` may name, in bytes. */
const MAX_CODE_BYTES = 256 * 1024

/**
 * The body with `code` replaced by `field` (the entrypoint's text, or the content); the body as
 * it is when it has no `code`. `declaredIn` is the absolute path of the file that created the
 * construct (an entrypoint is relative to it); `rootRel` gives a path relative to the project.
 */
export function codeIntoField(
  body: Record<string, unknown>,
  field: string,
  declaredIn: string,
  rootRel: (abs: string) => string,
  add: AddProblem,
): Record<string, unknown> {
  if (!('code' in body) || body.code === undefined) return body
  const { code, ...rest } = body
  if (rest[field] !== undefined) {
    add('code', `give either ${field} or code, not both`)
    return rest
  }
  const given = code as { entrypoint?: unknown; content?: unknown } | null
  if (!given || typeof given !== 'object' || Array.isArray(given)) {
    add('code', `must be { entrypoint: './file.js' } or { content: '...' } (got ${given === null ? 'null' : typeof given})`)
    return rest
  }
  const unknown = Object.keys(given).filter((k) => k !== 'entrypoint' && k !== 'content')
  if (unknown.length > 0) add(`code.${unknown[0]}`, 'is not a field of code: give entrypoint or content')
  if (given.entrypoint !== undefined && given.content !== undefined) {
    add('code', 'give either entrypoint or content, not both')
    return rest
  }
  if (given.content !== undefined) {
    if (typeof given.content !== 'string') add('code.content', `must be a string (got ${typeof given.content})`)
    return { ...rest, [field]: given.content }
  }
  if (typeof given.entrypoint !== 'string' || given.entrypoint === '') {
    add(
      'code.entrypoint',
      `must be the path of a file, relative to ${path.basename(declaredIn)} (got ${given.entrypoint === undefined ? 'nothing' : typeof given.entrypoint})`,
    )
    return rest
  }
  const text = readEntrypoint(given.entrypoint, declaredIn, rootRel, add)
  return text === undefined ? rest : { ...rest, [field]: text }
}

function readEntrypoint(entrypoint: string, declaredIn: string, rootRel: (abs: string) => string, add: AddProblem): string | undefined {
  const file = path.resolve(path.dirname(declaredIn), entrypoint)
  const shown = rootRel(file)
  if (shown.startsWith('..') || path.isAbsolute(shown)) {
    add('code.entrypoint', `file ${entrypoint} is outside the project folder (${shown})`)
    return undefined
  }
  let size: number
  try {
    const stat = statSync(file)
    if (!stat.isFile()) {
      add('code.entrypoint', `${shown} is not a file`)
      return undefined
    }
    size = stat.size
  } catch {
    add('code.entrypoint', `file ${entrypoint} does not exist (looked for ${shown})`)
    return undefined
  }
  if (size > MAX_CODE_BYTES) {
    add('code.entrypoint', `${shown} is ${size} bytes, over the limit of ${MAX_CODE_BYTES} bytes`)
    return undefined
  }
  return readFileSync(file, 'utf8')
}
