import { atomizeChangeset, diff } from 'json-diff-ts'
import type { FieldDiff } from './types.js'
import { KEYED_ARRAYS, SET_ARRAYS, UNORDERED_KEYED } from '../resources/registry.js'
import { stableStringify } from '../resources/stable-json.js'
import { suiteFileBytes, type SuiteFile } from '../schema/playwright-check.js'

const SET_FIELDS = SET_ARRAYS

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
  // A keyed diff matches items by key wherever they are: a new order of an ordered array (the
  // cards of a page, the services of a card) is a change of its own, sent by apply.
  for (const path of Object.keys(KEYED_ARRAYS)) {
    if (UNORDERED_KEYED.has(path)) continue
    out.push(...orderDiffs(remote, desired, path.split('.'), '', path))
  }
  // Every difference apply sends is shown: a top-level field that differs in a way none of the
  // diffs above names is shown whole.
  const covered = (key: string) => out.some((d) => d.path === key || d.path.startsWith(`${key}.`) || d.path.startsWith(`${key}[`))
  for (const key of new Set([...Object.keys(remote), ...Object.keys(desired)])) {
    if (!covered(key) && stableStringify(remote[key]) !== stableStringify(desired[key])) out.push(entry(key, remote[key], desired[key]))
  }
  markBinary(out, remote, desired)
  return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0))
}

/** The size of each side of a diff of a binary file of a suite (`files[<path>]` or its `.content`), where either side is one. */
function markBinary(out: FieldDiff[], remote: Record<string, unknown>, desired: Record<string, unknown>): void {
  const itemOf = (payload: Record<string, unknown>, key: string) =>
    Array.isArray(payload.files) ? (payload.files as Array<Record<string, unknown>>).find((f) => f?.path === key) : undefined
  for (const d of out) {
    const match = /^files\[(.*)\](\.content)?$/.exec(d.path)
    if (!match) continue
    const before = itemOf(remote, match[1])
    const after = itemOf(desired, match[1])
    if (before?.encoding !== 'base64' && after?.encoding !== 'base64') continue
    const bytes = (item: Record<string, unknown> | undefined) => (typeof item?.content === 'string' ? suiteFileBytes(item as SuiteFile).length : 0)
    d.binary = {}
    if ('old' in d) d.binary.oldBytes = bytes(before)
    if ('new' in d) d.binary.newBytes = bytes(after)
  }
}

/**
 * The keyed arrays at `segments` (through keyed arrays on the way) whose common items are in
 * another order: one diff per array, old / new the item keys in order.
 */
function orderDiffs(a: unknown, b: unknown, segments: string[], at: string, keyedPath: string, depth = 0): FieldDiff[] {
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return []
  const field = segments[depth]
  const x = (a as Record<string, unknown>)[field]
  const y = (b as Record<string, unknown>)[field]
  const here = at ? `${at}.${field}` : field
  const prefix = segments.slice(0, depth + 1).join('.')
  const key = KEYED_ARRAYS[prefix]
  if (depth === segments.length - 1) {
    if (!Array.isArray(x) || !Array.isArray(y) || !key) return []
    const keysX = x.map((item) => (item as Record<string, unknown>)?.[key])
    const keysY = y.map((item) => (item as Record<string, unknown>)?.[key])
    const common = (keys: unknown[], other: unknown[]) => keys.filter((k) => other.includes(k))
    if (stableStringify(common(keysX, keysY)) === stableStringify(common(keysY, keysX))) return []
    return [entry(here, keysX, keysY)]
  }
  if (Array.isArray(x) && Array.isArray(y) && key) {
    // through a keyed array: pair the items by key
    const out: FieldDiff[] = []
    for (const itemX of x) {
      const k = (itemX as Record<string, unknown>)?.[key]
      const itemY = y.find((item) => (item as Record<string, unknown>)?.[key] === k)
      if (itemY) out.push(...orderDiffs(itemX, itemY, segments, `${here}[${String(k)}]`, keyedPath, depth + 1))
    }
    return out
  }
  return orderDiffs(x, y, segments, here, keyedPath, depth + 1)
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
