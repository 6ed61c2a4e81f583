import { createHash } from 'node:crypto'

/** JSON with object keys sorted at every level: the same data always gives the same text. */
export function stableStringify(value: unknown, indent?: number): string {
  if (indent) return JSON.stringify(sortKeys(value), null, indent)
  return compact(value) ?? 'null'
}

/** The compact form, written directly (no sorted copy): the hot path of hashing. */
function compact(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + (compact(value[i]) ?? 'null')
    return `${out}]`
  }
  const keys = Object.keys(value).sort()
  let out = '{'
  let first = true
  for (const key of keys) {
    const text = compact((value as Record<string, unknown>)[key])
    if (text === undefined) continue
    out += `${first ? '' : ','}${JSON.stringify(key)}:${text}`
    first = false
  }
  return `${out}}`
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key]
      if (v !== undefined) out[key] = sortKeys(v)
    }
    return out
  }
  return value
}

/** `sha256:<hex>` of the stable JSON of a value. */
export function hashValue(value: unknown): string {
  return `sha256:${createHash('sha256').update(stableStringify(value)).digest('hex')}`
}

/** Deep equality of JSON data; object key order does not matter, array order does. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const x = a as Record<string, unknown>
  const y = b as Record<string, unknown>
  let count = 0
  for (const key in x) {
    if (x[key] === undefined) continue
    count++
    if (!jsonEqual(x[key], y[key])) return false
  }
  for (const key in y) if (y[key] !== undefined) count--
  return count === 0
}
