import { DESCRIPTORS, descriptorOf, KEYED_ARRAYS, SET_ARRAYS, UNORDERED_KEYED } from './registry.js'
import type { ResourceKind } from './types.js'

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
  const x = typeof a === 'string' ? a : JSON.stringify(a) ?? ''
  const y = typeof b === 'string' ? b : JSON.stringify(b) ?? ''
  return x < y ? -1 : x > y ? 1 : 0
}
