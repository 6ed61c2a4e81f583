import { DESCRIPTORS, descriptorOf, KEYED_ARRAYS, SET_ARRAYS, UNORDERED_KEYED } from './registry.js'
import type { ResourceKind } from './types.js'
import { jsonEqual } from './stable-json.js'

/**
 * Normalization: both sides of a comparison (the desired payload and the remote record) are
 * brought to one canonical form, so that `apply` followed by `plan` says "No changes.":
 * - both go through the resource's schema: unknown and read-only fields are dropped and the
 *   server-side defaults the schema knows are applied to the side that left them out;
 * - read-only fields the schema does keep (ids, timestamps, checkType, card ids) are dropped;
 * - null and missing are the same;
 * - arrays that are sets (locations, tags) are sorted, arrays keyed by a field are ordered by it
 *   (both from the descriptors, src/resources/kinds/);
 * - a descriptor's own `normalize` drops what is read-only inside its records.
 */

const READ_ONLY = new Set(['id', 'created_at', 'updated_at', 'createdAt', 'updatedAt', 'accountId', 'checkType', 'whiteLabel', 'isPrivate'])

/** Top-level arrays whose order means nothing. */
const SET_FIELDS = new Set(SET_ARRAYS)

export { KEYED_ARRAYS, UNORDERED_KEYED }

export function normalize(kind: ResourceKind, input: Record<string, unknown>): Record<string, unknown> {
  const parsed = DESCRIPTORS[kind].schema.safeParse(input)
  return normalizeParsed(kind, (parsed.success ? parsed.data : input) as Record<string, unknown>)
}

/**
 * The same without the schema pass, for a payload that already is the schema's output (the
 * desired state), or as the cheap first try on a remote record: when it already equals the
 * desired payload, the schema has nothing to add.
 */
export function normalizeParsed(kind: ResourceKind, base: Record<string, unknown>): Record<string, unknown> {
  const out = clean(base, '') as Record<string, unknown>
  const own = descriptorOf(kind).normalize
  return own ? own(out) : out
}

/**
 * Whether two payloads are equal once normalized without the schema pass:
 * `jsonEqual(normalizeParsed(kind, a), normalizeParsed(kind, b))`, computed by walking both
 * instead of copying them (the plan compares every resource in the code this way: at 10,000
 * checks the copies were most of the plan's garbage). Kinds with their own `normalize` compare
 * the copies unless its `normalizeNeeded` says it has nothing to do on either.
 */
export function normalizedEqual(kind: ResourceKind, a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  // a kind's own normalization that has nothing to do on either payload (a check holding no
  // secret) changes nothing in the comparison: compared without the copies
  const { normalize: own, normalizeNeeded } = descriptorOf(kind)
  if (own && (!normalizeNeeded || normalizeNeeded(a) || normalizeNeeded(b))) return jsonEqual(normalizeParsed(kind, a), normalizeParsed(kind, b))
  return cleanEqual(a, b, '')
}

/** `jsonEqual(clean(a, path), clean(b, path))` without the copies. */
function cleanEqual(a: unknown, b: unknown, path: string): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    let inOrder = true
    for (let i = 0; i < a.length && inOrder; i++) inOrder = cleanEqual(a[i], b[i], path)
    if (inOrder) return true
    // arrays whose order means nothing: equal item by item (the usual case, no copies), else compared sorted (they are short: tags, locations)
    if (SET_FIELDS.has(path) || UNORDERED_KEYED.has(path)) return jsonEqual(clean(a, path), clean(b, path))
    return false
  }
  if (Array.isArray(b)) return false
  const x = a as Record<string, unknown>
  const y = b as Record<string, unknown>
  const top = path === ''
  let count = 0
  for (const key in x) {
    const v = x[key]
    if (!kept(top, key, v)) continue
    count++
    const w = y[key]
    if (!kept(top, key, w)) return false
    if (typeof v === 'object' ? !cleanEqual(v, w, top ? key : `${path}.${key}`) : v !== w) return false
  }
  for (const key in y) if (kept(top, key, y[key])) count--
  return count === 0
}

/** Whether a field counts in a comparison: set, and not read-only (at the top level, or a timestamp below it). */
function kept(top: boolean, key: string, v: unknown): boolean {
  return v !== null && v !== undefined && !(top ? READ_ONLY.has(key) : key === 'created_at' || key === 'updated_at')
}

function clean(value: unknown, path: string): unknown {
  if (Array.isArray(value)) {
    const items = new Array(value.length)
    for (let i = 0; i < value.length; i++) items[i] = clean(value[i], path)
    if (SET_FIELDS.has(path)) return items.sort(compareScalars)
    if (UNORDERED_KEYED.has(path)) {
      const key = KEYED_ARRAYS[path]
      return items.sort((a, b) => compareScalars((a as Record<string, unknown>)?.[key], (b as Record<string, unknown>)?.[key]))
    }
    return items
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    const top = path === ''
    for (const key in value) {
      const v = (value as Record<string, unknown>)[key]
      if (v === null || v === undefined) continue
      if (top ? READ_ONLY.has(key) : key === 'created_at' || key === 'updated_at') continue
      out[key] = typeof v === 'object' ? clean(v, top ? key : `${path}.${key}`) : v
    }
    return out
  }
  return value
}

function compareScalars(a: unknown, b: unknown): number {
  const x = typeof a === 'string' ? a : (JSON.stringify(a) ?? '')
  const y = typeof b === 'string' ? b : (JSON.stringify(b) ?? '')
  return x < y ? -1 : x > y ? 1 : 0
}
