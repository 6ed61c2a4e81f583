import { HttpError } from './errors.js'

/**
 * The deepest nesting of objects and arrays a body may have. Real bodies need fewer than 10
 * levels; a limit keeps a small hostile body (thousands of `[`) from exhausting the stack of
 * validation or serialization.
 */
export const MAX_BODY_DEPTH = 64

/** What no JSON text holds: control characters other than whitespace (not even in strings), and what undecodable bytes became. */
const BINARY = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffd]/

function payload400(path: string, message: string): HttpError {
  const line = path ? `${path}: ${message}` : message
  return new HttpError(400, line, { source: 'payload', keys: [path], issues: [{ path, message }] })
}

/**
 * Parses a JSON body and refuses, with a 400 naming the field, what no route accepts: nesting
 * deeper than MAX_BODY_DEPTH, and keys that change prototypes (`__proto__`, or `constructor`
 * holding `prototype`). JSON.parse keeps `__proto__` as an own key, so it is found here
 * before any code could merge it into an object.
 */
export function parseJsonBody(text: string): unknown {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    if (error instanceof RangeError) throw payload400('', `body is nested more than ${MAX_BODY_DEPTH} levels deep (objects and arrays)`)
    // never quote what is not text (a compressed body sent without its Content-Encoding)
    const message = BINARY.test(text)
      ? 'Body is not valid JSON: it is not text (a compressed body needs its Content-Encoding header: gzip, deflate or br)'
      : `Body is not valid JSON: ${(error as Error).message}`
    throw new HttpError(400, message, { source: 'payload', keys: [], issues: [{ path: '', message }] })
  }
  // depth-first, without recursion: the input is what may be deep
  const stack: Array<{ value: unknown; path: string[] }> = [{ value, path: [] }]
  while (stack.length > 0) {
    const { value: node, path } = stack.pop()!
    if (node === null || typeof node !== 'object') continue
    if (path.length >= MAX_BODY_DEPTH) {
      throw payload400(path.join('.'), `is nested too deeply: at most ${MAX_BODY_DEPTH} levels of objects and arrays are allowed`)
    }
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ value: node[i], path: [...path, String(i)] })
      continue
    }
    const keys = Object.keys(node)
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]
      const child = (node as Record<string, unknown>)[key]
      if (key === '__proto__') throw payload400([...path, key].join('.'), 'is refused: a body may not contain a "__proto__" key')
      if (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) {
        throw payload400([...path, key].join('.'), 'is refused: a body may not contain a "constructor" key holding "prototype"')
      }
      stack.push({ value: child, path: [...path, key] })
    }
  }
  return value
}
