import type { AssertionResult, Comparison } from './types.js'

/**
 * Assertions: a source value, an optional property (a JSON path or a latency field), a
 * comparison and a target string. Every comparison of API.md works on any source; values
 * that are not text are compared as numbers when both sides are numeric, and as their JSON
 * text otherwise.
 */

/** Reads a JSON path: `$.Answer[0].data`, `Answer[0].data`, `$['Answer'][0]`, `$.a.b`, `$`. */
export function readJsonPath(root: unknown, path: string): { found: boolean; value: unknown } {
  const steps = parseJsonPath(path)
  if (!steps) return { found: false, value: undefined }
  let current: unknown = root
  for (const step of steps) {
    if (current === null || typeof current !== 'object') return { found: false, value: undefined }
    if (typeof step === 'number') {
      if (!Array.isArray(current)) return { found: false, value: undefined }
      const index = step < 0 ? current.length + step : step
      if (index < 0 || index >= current.length) return { found: false, value: undefined }
      current = current[index]
    } else {
      if (Array.isArray(current) && step === 'length') {
        current = current.length
        continue
      }
      if (!Object.hasOwn(current, step)) return { found: false, value: undefined }
      current = (current as Record<string, unknown>)[step]
    }
  }
  return { found: true, value: current }
}

/** Splits a JSON path into keys and indexes; null when it cannot be read. */
export function parseJsonPath(path: string): Array<string | number> | null {
  let rest = path.trim()
  if (rest.startsWith('$')) rest = rest.slice(1)
  const steps: Array<string | number> = []
  while (rest.length > 0) {
    if (rest.startsWith('.')) {
      rest = rest.slice(1)
      continue
    }
    if (rest.startsWith('[')) {
      const close = rest.indexOf(']')
      if (close < 0) return null
      const inner = rest.slice(1, close).trim()
      rest = rest.slice(close + 1)
      const quoted = /^(['"])(.*)\1$/.exec(inner)
      if (quoted) steps.push(quoted[2])
      else if (/^-?\d+$/.test(inner)) steps.push(Number(inner))
      else if (inner.length > 0) steps.push(inner)
      else return null
      continue
    }
    const match = /^[^.[]+/.exec(rest)
    if (!match) return null
    steps.push(match[0])
    rest = rest.slice(match[0].length)
  }
  return steps
}

function asText(value: unknown): string | null {
  if (value === undefined || value === null) return null
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return JSON.stringify(value)
}

function asNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value)
  return null
}

function looselyEqual(actual: unknown, target: string): boolean {
  const a = asNumber(actual)
  const t = asNumber(target)
  if (a !== null && t !== null) return a === t
  const text = asText(actual)
  return text !== null && text === target
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true
  if (typeof value === 'string') return value.length === 0
  if (Array.isArray(value)) return value.length === 0
  if (typeof value === 'object') return Object.keys(value).length === 0
  return false
}

function hasKey(value: unknown, key: string): boolean {
  if (value === null || typeof value !== 'object') return false
  if (Array.isArray(value)) return /^\d+$/.test(key) && Number(key) < value.length
  return Object.hasOwn(value, key)
}

function hasValue(value: unknown, target: string): boolean {
  if (value === null || typeof value !== 'object') return looselyEqual(value, target)
  const values = Array.isArray(value) ? value : Object.values(value)
  return values.some((v) => looselyEqual(v, target))
}

function contains(value: unknown, target: string): boolean {
  if (Array.isArray(value)) return value.some((v) => looselyEqual(v, target) || (typeof v === 'string' && v.includes(target)))
  const text = asText(value)
  return typeof text === 'string' && text.includes(target)
}

/** Applies one comparison; `actual` undefined means the value was not found. */
export function compare(comparison: Comparison, actual: unknown, target: string): boolean {
  switch (comparison) {
    case 'EQUALS':
      return looselyEqual(actual, target)
    case 'NOT_EQUALS':
      return !looselyEqual(actual, target)
    case 'HAS_KEY':
      return hasKey(actual, target)
    case 'NOT_HAS_KEY':
      return !hasKey(actual, target)
    case 'HAS_VALUE':
      return hasValue(actual, target)
    case 'NOT_HAS_VALUE':
      return !hasValue(actual, target)
    case 'IS_EMPTY':
      return isEmpty(actual)
    case 'NOT_EMPTY':
      return !isEmpty(actual)
    case 'GREATER_THAN': {
      const a = asNumber(actual)
      const t = asNumber(target)
      return a !== null && t !== null && a > t
    }
    case 'LESS_THAN': {
      const a = asNumber(actual)
      const t = asNumber(target)
      return a !== null && t !== null && a < t
    }
    case 'CONTAINS':
      return contains(actual, target)
    case 'NOT_CONTAINS':
      return !contains(actual, target)
    case 'IS_NULL':
      return actual === null || actual === undefined
    case 'NOT_NULL':
      return actual !== null && actual !== undefined
  }
}

const NO_TARGET: ReadonlySet<Comparison> = new Set(['IS_EMPTY', 'NOT_EMPTY', 'IS_NULL', 'NOT_NULL'])

function shorten(text: string, max = 200): string {
  const oneLine = text.replace(/\s*\n\s*/g, ' | ')
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine
}

/** Evaluates one assertion against the value its source (and property) resolved to. */
export function evaluateAssertion(
  assertion: { source: string; comparison: Comparison; target: string; property?: string | null },
  actual: unknown,
  unit = '',
): AssertionResult {
  const property = assertion.property ? assertion.property : null
  const passed = compare(assertion.comparison, actual, assertion.target)
  const actualText = asText(actual)
  const subject = property ? `${assertion.source} ${property}` : assertion.source
  const expectation = NO_TARGET.has(assertion.comparison)
    ? `${subject} ${assertion.comparison}`
    : `${subject} ${assertion.comparison} ${JSON.stringify(assertion.target)}${unit}`
  const got =
    actual === undefined
      ? property
        ? `nothing at ${property}`
        : 'no value'
      : actualText === null
        ? 'null'
        : typeof actual === 'number'
          ? `${actual}${unit}`
          : `${JSON.stringify(shorten(actualText))}`
  return {
    source: assertion.source,
    property,
    comparison: assertion.comparison,
    target: assertion.target,
    actual: actualText,
    passed,
    message: passed ? `${expectation} passed` : `${expectation} failed: got ${got}`,
  }
}

/** What an API check's response offers its assertions. */
export interface ApiResponseView {
  statusCode: number
  /** Header names in lower case. */
  headers: Record<string, string>
  body: string
  responseTime: number
}

function applyRegex(text: string | undefined, regex: string | null | undefined): string | undefined {
  if (text === undefined || !regex) return text
  const match = new RegExp(regex).exec(text)
  if (!match) return undefined
  return match[1] ?? match[0]
}

/**
 * The value an API assertion looks at: STATUS_CODE the status (number), HEADERS the header
 * named in `property` (case-insensitive; all headers when empty), TEXT_BODY the body,
 * JSON_BODY the body parsed as JSON at the path in `property`, RESPONSE_TIME the total in ms.
 * `regex` narrows HEADERS and TEXT_BODY to its first capture group (or whole match).
 */
export function evaluateApiAssertion(
  assertion: { source: string; comparison: Comparison; target: string; property?: string | null; regex?: string | null },
  response: ApiResponseView,
): AssertionResult {
  const property = assertion.property ?? ''
  switch (assertion.source) {
    case 'STATUS_CODE':
      return evaluateAssertion(assertion, response.statusCode)
    case 'RESPONSE_TIME':
      return evaluateAssertion(assertion, response.responseTime, ' ms')
    case 'TEXT_BODY':
      return evaluateAssertion(assertion, applyRegex(response.body, assertion.regex))
    case 'HEADERS': {
      if (property === '') return evaluateAssertion(assertion, response.headers)
      const value = response.headers[property.toLowerCase()]
      return evaluateAssertion(assertion, applyRegex(value, assertion.regex))
    }
    case 'JSON_BODY': {
      let document: unknown
      try {
        document = JSON.parse(response.body)
      } catch {
        const result = evaluateAssertion(assertion, undefined)
        return result.passed ? result : { ...result, message: `${result.message.replace(/: got .*$/, '')}: the body is not JSON` }
      }
      if (property.trim() === '' || property.trim() === '$') return evaluateAssertion(assertion, document)
      const found = readJsonPath(document, property)
      return evaluateAssertion(assertion, found.found ? found.value : undefined)
    }
    default:
      return evaluateAssertion(assertion, undefined)
  }
}
