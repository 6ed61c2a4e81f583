import { atomizeChangeset, diff } from 'json-diff-ts'
import type { FieldDiff } from './types.js'
import { KEYED_ARRAYS } from './normalize.js'
import { stableStringify } from './stable-json.js'

const SET_FIELDS = ['locations', 'tags']

/**
 * Field-level differences between two normalized payloads (remote → desired). Arrays of objects
 * with a key are compared by key; set-like arrays are shown whole.
 */
export function fieldDiffs(remote: Record<string, unknown>, desired: Record<string, unknown>): FieldDiff[] {
  const out: FieldDiff[] = []
  const a = { ...remote }
  const b = { ...desired }
  for (const field of SET_FIELDS) {
    if (stableStringify(a[field]) !== stableStringify(b[field])) out.push(entry(field, a[field], b[field]))
    delete a[field]
    delete b[field]
  }
  const changes = atomizeChangeset(diff(a, b, { embeddedObjKeys: KEYED_ARRAYS }))
  for (const change of changes) {
    const path = readablePath(change.path)
    if (change.type === 'ADD') out.push(entry(path, undefined, change.value))
    else if (change.type === 'REMOVE') out.push(entry(path, change.value, undefined))
    else out.push(entry(path, change.oldValue, change.value))
  }
  if (out.length === 0 && stableStringify(remote) !== stableStringify(desired)) {
    // Differences a keyed diff cannot name (e.g. the order of cards): show the top-level fields.
    for (const key of new Set([...Object.keys(remote), ...Object.keys(desired)])) {
      if (stableStringify(remote[key]) !== stableStringify(desired[key])) out.push(entry(key, remote[key], desired[key]))
    }
  }
  return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0))
}

function entry(path: string, old: unknown, next: unknown): FieldDiff {
  const d: FieldDiff = { path }
  if (old !== undefined) d.old = old
  if (next !== undefined) d.new = next
  return d
}

/** `$.cards[?(@.name=='Main')].services[?(@.id=='x')]` → `cards[Main].services[x]`. */
export function readablePath(path: string): string {
  return path
    .replace(/^\$\.?/, '')
    .replace(/\[\?\(@(?:\.[\w$]+)?=='((?:[^']|\\')*)'\)\]/g, '[$1]')
    .replace(/\[\?\(@(?:\.[\w$]+)?==([^)]*)\)\]/g, '[$1]')
}
