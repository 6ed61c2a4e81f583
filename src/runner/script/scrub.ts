/** What a secret becomes in everything a run keeps. */
export const SCRUBBED = '********'

/** Secrets shorter than this are not searched for in base64 (three characters match too much by chance). */
const MIN_BASE64_SECRET = 4

function base64Cores(value: string): string[] {
  // A secret inside a longer base64 text is encoded at one of three alignments; the characters
  // that depend on the secret's bytes alone are the same wherever it sits at that alignment.
  const bytes = Buffer.from(value, 'utf8')
  if (bytes.length < MIN_BASE64_SECRET) return []
  const out: string[] = []
  for (let k = 0; k < 3; k++) {
    const buf = Buffer.concat([Buffer.alloc(k), bytes])
    const b64 = buf.toString('base64').replace(/=+$/, '')
    const first = Math.ceil((8 * k) / 6)
    const last = Math.floor((8 * (k + bytes.length)) / 6)
    const core = b64.slice(first, last)
    if (core.length >= 4) out.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'))
  }
  return out
}

/**
 * Every form a secret takes in what a run keeps: as is, URL-encoded (encodeURIComponent,
 * encodeURI, form encoding), JSON-escaped, and base64 / base64url (at every alignment, so that
 * `Basic base64(user:secret)` loses the secret too).
 */
export function secretForms(value: string): string[] {
  if (!value) return []
  const forms = new Set<string>([
    value,
    encodeURIComponent(value),
    encodeURI(value),
    new URLSearchParams({ v: value }).toString().slice(2),
    JSON.stringify(value).slice(1, -1),
    JSON.stringify(JSON.stringify(value).slice(1, -1)).slice(1, -1),
    // a query string decoded: `+` read as a space
    value.replace(/\+/g, ' '),
    ...base64Cores(value),
  ])
  return [...forms].filter((f) => f.length > 0)
}

export interface Scrubber {
  /** True when there is nothing to scrub (no secret values). */
  readonly empty: boolean
  /** Every form of every secret (secretForms), longest first: what a scrubber elsewhere (a worker's) is made from. */
  readonly forms: readonly string[]
  text(text: string): string
  /** Every string (and key) of a JSON-like value. */
  deep<T>(value: T): T
  /** A file's bytes: text is scrubbed, binary left as is (answers whether it changed). */
  bytes(data: Uint8Array): { data: Uint8Array; changed: boolean }
}

const AUTH_HEADERS = /^(authorization|proxy-authorization)$/i
// `Authorization: value` inside a JSON string: the value runs to the string's end or an escaped newline
const AUTH_IN_TEXT = /((?:proxy-)?authorization:[ \t]*)(?:[^"\\\n]|\\[^n])+/gi

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** A scrubber for the given secret values (empty strings ignored). */
export function createScrubber(secrets: Iterable<string>): Scrubber {
  const forms = new Set<string>()
  for (const s of secrets) for (const f of secretForms(s)) forms.add(f)
  return scrubberOf([...forms])
}

/** A scrubber for these forms of the secrets (createScrubber's, given again: a worker's). */
export function scrubberOf(given: readonly string[]): Scrubber {
  // longest first, so that a secret containing another is replaced whole
  const sorted = [...new Set(given)].filter((f) => f.length > 0).sort((a, b) => b.length - a.length)
  const pattern = sorted.length > 0 ? new RegExp(sorted.map(escapeRegExp).join('|'), 'g') : null
  const text = (t: string): string => (pattern ? t.replace(pattern, SCRUBBED) : t)
  const deep = <T>(value: T): T => {
    if (!pattern) return value
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return text(v)
      if (Array.isArray(v)) return v.map(walk)
      if (v && typeof v === 'object' && !(v instanceof Uint8Array)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [text(k), walk(x)]))
      return v
    }
    return walk(value) as T
  }
  const bytes = (data: Uint8Array): { data: Uint8Array; changed: boolean } => {
    if (!pattern || !looksLikeText(data)) return { data, changed: false }
    const before = Buffer.from(data).toString('utf8')
    const after = text(before)
    return after === before ? { data, changed: false } : { data: Buffer.from(after, 'utf8'), changed: true }
  }
  return { empty: !pattern, forms: sorted, text, deep, bytes }
}

/**
 * One of a trace's event lines (JSON, one a line): the values of Authorization headers are
 * removed whatever they hold, then every secret form. A line that is not JSON is scrubbed as text.
 */
export function scrubTraceLine(line: string, text: (t: string) => string): string {
  if (!line) return line
  let out: string
  try {
    out = JSON.stringify(dropAuthorization(JSON.parse(line)))
  } catch {
    out = line
  }
  // the headers as Playwright's call log prints them ("  Authorization: Bearer …")
  return text(out.replace(AUTH_IN_TEXT, `$1${SCRUBBED}`))
}

function dropAuthorization(v: unknown): unknown {
  if (Array.isArray(v)) {
    return v.map((item) => {
      if (
        item &&
        typeof item === 'object' &&
        typeof (item as { name?: unknown }).name === 'string' &&
        'value' in item &&
        AUTH_HEADERS.test((item as { name: string }).name)
      ) {
        return { ...item, value: SCRUBBED }
      }
      return dropAuthorization(item)
    })
  }
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, AUTH_HEADERS.test(k) && typeof x === 'string' ? SCRUBBED : dropAuthorization(x)]))
  }
  return v
}

/** UTF-8 text without NUL bytes in its first 8 KiB (images, fonts and zips have them). */
export function looksLikeText(data: Uint8Array): boolean {
  const n = Math.min(data.length, 8192)
  for (let i = 0; i < n; i++) if (data[i] === 0) return false
  // PNG, JPEG, GIF, WebP, zip signatures
  if (
    data[0] === 0x89 ||
    data[0] === 0xff ||
    (data[0] === 0x47 && data[1] === 0x49) ||
    (data[0] === 0x52 && data[1] === 0x49) ||
    (data[0] === 0x50 && data[1] === 0x4b)
  )
    return false
  return true
}
