import type { z } from 'zod'

/** One validation problem: the dotted path of the field and what is wrong with it. */
export interface FieldIssue {
  path: string
  message: string
}

/**
 * Dotted path of a zod issue, `request.assertions.0.source`; the empty path is the body itself.
 * A key that is the empty string is written `""`, so that it is still a name.
 */
export function issuePath(path: readonly PropertyKey[]): string {
  return path.map((p) => (p === '' ? '""' : String(p))).join('.')
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return `an array of ${value.length}`
  if (typeof value === 'object') return 'an object'
  return String(value)
}

function typeName(value: unknown): string {
  if (value === null) return 'null'
  // NaN and ±Infinity are numbers to JavaScript; saying so would contradict "must be a number"
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value)
  if (Array.isArray(value)) return 'array'
  return typeof value
}

/**
 * The candidate nearest to a misspelt word, when one is near enough: the fewest edits (at most
 * a quarter of the word, and at least 2) when no other is as near, else the one candidate the word starts (before a `-`,
 * `_`, `.` or `/`: `monitors` → `monitors-as-code`). Case is ignored. The one helper behind
 * every "did you mean" (fields, config settings, enum values, locations, exports, the package).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(word.length / 4)) + 1
  let tied = false
  const lower = word.toLowerCase()
  for (const c of candidates) {
    const d = distance(lower, c.toLowerCase())
    if (d < bestDistance) {
      best = c
      bestDistance = d
      tied = false
    } else if (d === bestDistance && best !== undefined && best.toLowerCase() !== c.toLowerCase()) tied = true
  }
  // two as near (eu-west-9: eu-west-1, eu-west-2 …): naming one would be a guess
  if (best !== undefined) return tied ? undefined : best
  if (lower.length < 3) return undefined
  const started = candidates.filter((c) => {
    const other = c.toLowerCase()
    return other.length > lower.length && other.startsWith(lower) && '-_./'.includes(other[lower.length])
  })
  return started.length === 1 ? started[0] : undefined
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = tmp
    }
  }
  return row[b.length]
}

/** `; did you mean X?` after a misspelt string value of an enum, or nothing. */
function didYouMean(input: unknown, values: readonly unknown[]): string {
  if (typeof input !== 'string' || input === '') return ''
  const near = closest(
    input,
    values.filter((v): v is string => typeof v === 'string'),
  )
  return near !== undefined && near !== input ? `; did you mean ${near}?` : ''
}

/** A message for one zod issue, worded for a person: what is allowed and what was given. */
export function issueMessage(issue: z.core.$ZodIssue): string {
  const input = (issue as { input?: unknown }).input
  switch (issue.code) {
    case 'invalid_type':
      if (input === undefined) return 'is required'
      if (typeof input === 'number' && !Number.isFinite(input) && issue.expected === 'number') return `must be a finite number (got ${input})`
      // "must be an integer (got number)" would not say what is wrong with it
      if (typeof input === 'number' && Number.isFinite(input) && issue.expected === 'int') return `must be an integer (got ${input})`
      return `must be ${issue.expected === 'int' ? 'an integer' : `${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`} (got ${typeName(input)})`
    case 'invalid_value':
      // a schema's own message (see runFrequencySchema) says more than the list of values
      if (issue.message && !/^Invalid (input|option)/.test(issue.message)) return issue.message
      return `must be one of ${issue.values.map((v) => (typeof v === 'string' ? v : String(v))).join(', ')} (got ${show(input)}${didYouMean(input, issue.values)})`
    case 'too_small': {
      const min = Number(issue.minimum)
      if (issue.origin === 'string') return `must be at least ${min} character${min === 1 ? '' : 's'} long`
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at least ${min} item${min === 1 ? '' : 's'}`
      return `must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${min} (got ${show(input)})`
    }
    case 'too_big': {
      const max = Number(issue.maximum)
      if (issue.origin === 'string') return `must be at most ${max} characters long`
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at most ${max} items (got ${Array.isArray(input) ? input.length : '?'})`
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${max} (got ${show(input)})`
    }
    case 'invalid_format':
      return issue.message && !issue.message.startsWith('Invalid') ? issue.message : `must be a valid ${issue.format} (got ${show(input)})`
    case 'unrecognized_keys':
      return `has unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.join(', ')}`
    default:
      return issue.message
  }
}

/**
 * zod's own bound of `.int()`: a whole number outside ±(2^53 − 1). Beside a rule of the
 * schema's own (`min(1)`) it only repeats that the number is out of range, with a bound nobody
 * wrote: it is left out then.
 */
function isSafeIntegerBound(issue: z.core.$ZodIssue): boolean {
  return (
    (issue.code === 'too_small' || issue.code === 'too_big') &&
    issue.origin === 'int' &&
    Math.abs(Number(issue.code === 'too_small' ? issue.minimum : issue.maximum)) === Number.MAX_SAFE_INTEGER
  )
}

/** Flattens a zod error into field issues, in order. */
export function fieldIssues(error: z.ZodError): FieldIssue[] {
  const out: FieldIssue[] = []
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        out.push({
          path: issuePath([...issue.path, key]),
          message: key === '' ? 'is not a known field (a field name cannot be empty)' : 'is not a known field',
        })
      continue
    }
    if (isSafeIntegerBound(issue)) {
      const same = issuePath(issue.path)
      if (error.issues.some((other) => other !== issue && issuePath(other.path) === same && (other.code === 'too_small' || other.code === 'too_big'))) continue
      const input = (issue as { input?: unknown }).input
      out.push({ path: same, message: `must be a whole number from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER} (got ${show(input)})` })
      continue
    }
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // report the branch that got furthest, so the message names a real field
      const best = [...issue.errors].sort((a, b) => a.length - b.length)[0]
      for (const inner of best) out.push({ path: issuePath([...issue.path, ...inner.path]), message: issueMessage(inner) })
      continue
    }
    out.push({ path: issuePath(issue.path), message: issueMessage(issue) })
  }
  return out
}

/** `path: message` for one issue, or the message alone for the body itself. */
export function formatFieldIssue(issue: FieldIssue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message
}

export type Validation<T> = { ok: true; data: T } | { ok: false; issues: FieldIssue[] }

/** Parses with a schema and returns every problem, each with the offending input recorded. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): Validation<z.output<S>> {
  const result = schema.safeParse(input, { reportInput: true })
  if (result.success) return { ok: true, data: result.data }
  return { ok: false, issues: fieldIssues(result.error) }
}
