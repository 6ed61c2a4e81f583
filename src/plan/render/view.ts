import type { z } from 'zod'
import type { ResourceKind } from '../../resources/types.js'
import { RESOURCE_KINDS, RESOURCE_SCHEMAS } from '../../resources/registry.js'
import { SECRET_CHANGED, SECRET_MASK } from '../../resources/secrets.js'
import { stableStringify } from '../../resources/stable-json.js'
import { suiteFileBytes } from '../../schema/playwright-check.js'
import type { FieldDiff, Plan, PlanChange, PlanReference, RenameHint } from '../types.js'
import { isMultiline, textDiff, textLines } from './text-diff.js'

/**
 * What the text and markdown renderers share: a change's fields as lines of nested blocks
 * (Terraform style), `locked: true` values masked, references named by their construct, and a
 * create's fields cut down to what a reviewer needs.
 */

/** What output shows instead of the value of a `locked: true` variable (or header, env var). */
export const LOCKED_MASK = '(locked)'
/** What a field diff of a locked value that changed shows. */
export const LOCKED_CHANGED = '(locked value changed)'

/** Values printed as they are, not quoted: masks stand for a value, they are not one. */
const MASKS = new Set([SECRET_MASK, SECRET_CHANGED, LOCKED_MASK, LOCKED_CHANGED])

const PLACEHOLDER = new RegExp(`^(${RESOURCE_KINDS.join('|')}):(.+)$`)

export type Sign = '+' | '-' | '~' | ''

/** One output line: a sign (none for comments and closing brackets), a nesting depth, the text. */
export interface Line {
  sign: Sign
  depth: number
  text: string
  comment?: boolean
}

export interface ViewOptions {
  /** Every field of a create, defaults too (`plan --verbose`). */
  verbose?: boolean
  references?: Plan['references']
  refreshOnly?: boolean
}

// ---------------------------------------------------------------------------------------------
// Locked values

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The bytes a binary file's base64 holds. */
const binaryBytes = (base64: string): number => suiteFileBytes({ content: base64, encoding: 'base64' }).length

/** A deep copy with the `value` of every object marked `locked: true` replaced by the mask. */
export function maskLockedValues<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => maskLockedValues(v)) as T
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) out[key] = maskLockedValues(v)
  if (value.locked === true && typeof value.value === 'string' && !MASKS.has(value.value)) out.value = LOCKED_MASK
  return out as T
}

/** `a.b[KEY].c` → its parts; a bracket names an item of a keyed array (or its index). */
function pathParts(path: string): Array<{ name: string; bracket: boolean }> {
  const parts: Array<{ name: string; bracket: boolean }> = []
  for (const m of path.matchAll(/([^.[\]]+)|\[([^\]]*)\]/g)) parts.push(m[1] !== undefined ? { name: m[1], bracket: false } : { name: m[2], bracket: true })
  return parts
}

function valueAt(root: unknown, path: string): unknown {
  let node = root
  for (const part of pathParts(path)) {
    if (Array.isArray(node)) {
      const found: unknown = node.find(
        (item) => isObject(item) && ['key', 'name', 'id', 'alertChannelId'].some((k) => item[k] !== undefined && String(item[k]) === part.name),
      )
      node = found ?? (/^\d+$/.test(part.name) ? node[Number(part.name)] : undefined)
    } else if (isObject(node)) node = node[part.name]
    else return undefined
  }
  return node
}

/**
 * The change with every locked value masked: in its payload and in its field diffs. A locked
 * value that changed reads `(locked value changed)`; the change itself stays visible.
 */
export function maskLocked(change: PlanChange): PlanChange {
  const out: PlanChange = { ...change }
  if (change.payload) out.payload = maskLockedValues(change.payload)
  if (change.fieldDiffs) {
    const paths = new Set(change.fieldDiffs.map((d) => d.path))
    out.fieldDiffs = change.fieldDiffs.map((d) => {
      if (d.secret) return d
      const leaf = /^(?:(.*)\.)?value$/.exec(d.path)
      if (leaf) {
        const parent = leaf[1] ?? ''
        const lockedNow = valueAt(change.payload ?? {}, parent)
        const lockPath = parent ? `${parent}.locked` : 'locked'
        if ((isObject(lockedNow) && lockedNow.locked === true) || paths.has(lockPath)) {
          const masked: FieldDiff = { path: d.path }
          if ('old' in d && 'new' in d) masked.new = LOCKED_CHANGED
          else if ('old' in d) masked.old = LOCKED_MASK
          else masked.new = LOCKED_MASK
          return masked
        }
        return d
      }
      const masked: FieldDiff = { ...d }
      if ('old' in d) masked.old = maskLockedValues(d.old)
      if ('new' in d) masked.new = maskLockedValues(d.new)
      return masked
    })
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// A create's fields: what the code sets and the defaults a reviewer needs

/** Shown even at their default value: what a reviewer checks first. */
const ALWAYS_SHOWN = new Set([
  'name',
  'key',
  'value',
  'url',
  'frequency',
  'locations',
  'degradedResponseTime',
  'maxResponseTime',
  'degradedPacketLossThreshold',
  'maxPacketLossThreshold',
  'request.query',
  'request.recordType',
  'request.hostname',
])
/** Never shown outside --verbose: implied by the kind. */
const NEVER_SHOWN = new Set(['checkType'])
/**
 * Per kind, fields a create shows only with --verbose, whatever their value: an ICMP check's
 * `script` and `heartbeat`, which the construct fills because the API requires them and the check
 * does not use; a heartbeat check's run settings, which it is sent (often from the config's
 * defaults) but never runs by (it is judged by its pings).
 */
const IMPLIED_BY_KIND: Partial<Record<ResourceKind, ReadonlySet<string>>> = {
  'icmp-check': new Set(['script', 'heartbeat']),
  'heartbeat-check': new Set(['locations', 'frequency', 'frequencyOffset', 'runParallel']),
}

interface DefaultsNode {
  hasDefault?: boolean
  value?: unknown
  fields?: Record<string, DefaultsNode>
  element?: DefaultsNode
}

const defaultsCache = new Map<ResourceKind, DefaultsNode>()

function defaultsOf(schema: z.ZodType): DefaultsNode {
  const def = schema.def as unknown as Record<string, unknown>
  switch (def.type) {
    case 'pipe':
      return defaultsOf(def.in as z.ZodType)
    case 'optional':
    case 'nullable':
    case 'readonly':
    case 'nonoptional':
    case 'catch':
      return defaultsOf(def.innerType as z.ZodType)
    case 'default':
    case 'prefault':
      return { ...defaultsOf(def.innerType as z.ZodType), hasDefault: true, value: def.defaultValue }
    case 'object':
      return { fields: Object.fromEntries(Object.entries(def.shape as Record<string, z.ZodType>).map(([k, v]) => [k, defaultsOf(v)])) }
    case 'array':
      return { element: defaultsOf(def.element as z.ZodType) }
    default:
      return {}
  }
}

function defaultsFor(kind: ResourceKind): DefaultsNode {
  let node = defaultsCache.get(kind)
  if (!node) {
    node = defaultsOf(RESOURCE_SCHEMAS[kind])
    defaultsCache.set(kind, node)
  }
  return node
}

/**
 * A create's payload without the fields a reviewer does not need: those equal to the schema's
 * default (unless ALWAYS_SHOWN), empty objects, and fields implied by the kind. Returns how many
 * were left out.
 */
export function reviewPayload(kind: ResourceKind, payload: Record<string, unknown>): { payload: Record<string, unknown>; hidden: number } {
  const implied = IMPLIED_BY_KIND[kind]
  let hidden = 0
  const out = withoutDefaults(payload, defaultsFor(kind), '', (here, atDefault, empty) => {
    const hide = NEVER_SHOWN.has(here) || implied?.has(here) === true || (!ALWAYS_SHOWN.has(here) && (atDefault || empty))
    if (hide) hidden++
    return hide
  }) as Record<string, unknown>
  return { payload: out, hidden }
}

/** `value` (at `path` of its payload) without the fields `hide` says a reader does not need. */
function withoutDefaults(
  value: unknown,
  node: DefaultsNode | undefined,
  path: string,
  hide: (path: string, atDefault: boolean, empty: boolean) => boolean,
): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutDefaults(item, node?.element, path, hide))
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || v === null) continue
    const here = path ? `${path}.${key}` : key
    const child = node?.fields?.[key]
    const atDefault = child?.hasDefault === true && stableStringify(v) === stableStringify(child.value)
    const empty = isObject(v) && Object.keys(v).length === 0
    if (hide(here, atDefault, empty)) continue
    out[key] = withoutDefaults(v, child, here, hide)
  }
  return out
}

/**
 * An update's added or removed item (`+ request.assertions[2] { ... }`) without its fields at
 * their schema defaults (an assertion's `regex: ""`): a reviewer sees what the item says.
 */
function reviewDiff(kind: ResourceKind, d: FieldDiff): FieldDiff {
  if ('old' in d && 'new' in d) return d
  const value = 'new' in d ? d.new : d.old
  if (!isObject(value) && !(Array.isArray(value) && value.some(isObject))) return d
  let node: DefaultsNode | undefined = defaultsFor(kind)
  for (const part of pathParts(d.path)) node = part.bracket ? node?.element : node?.fields?.[part.name]
  if (!node) return d
  const trimmed = withoutDefaults(value, node, '', (_here, atDefault, empty) => atDefault || empty)
  return 'new' in d ? { ...d, new: trimmed } : { ...d, old: trimmed }
}

// ---------------------------------------------------------------------------------------------
// Values as lines

function referenceText(value: string, references: Plan['references']): string | undefined {
  const ref: PlanReference | undefined = references?.[value]
  const placeholder = PLACEHOLDER.test(value)
  if (!ref) return placeholder ? `${value} (known after apply)` : undefined
  const name = ref.name !== undefined ? ` ${JSON.stringify(ref.name)}` : ''
  if (!ref.logicalId) return `${ref.kind} ${value}${name} (not managed by monitors)`
  return `${ref.kind}:${ref.logicalId}${name}${placeholder ? ' (known after apply)' : ''}`
}

export class ValueView {
  constructor(private readonly references: Plan['references']) {}

  /** A scalar in one line: strings quoted, masks as they are, references by construct. */
  scalar(value: unknown): string {
    if (typeof value === 'string') {
      if (MASKS.has(value)) return value
      return referenceText(value, this.references) ?? JSON.stringify(value)
    }
    if (value === undefined) return 'null'
    return JSON.stringify(value) ?? String(value)
  }

  /** A path whose brackets hold a referenced id names the construct instead. */
  path(path: string): string {
    return path.replace(/\[([^\]]+)\]/g, (whole, inner: string) => {
      // an alert channel's numeric id is indexed as `#<id>` (src/plan/references.ts)
      const ref = this.references?.[inner] ?? (/^\d+$/.test(inner) ? this.references?.[`#${inner}`] : undefined)
      return ref?.logicalId ? `[${ref.kind}:${ref.logicalId}]` : whole
    })
  }

  private isReference(value: unknown): boolean {
    return typeof value === 'string' && (PLACEHOLDER.test(value) || this.references?.[value] !== undefined)
  }

  /** `{ id: <reference> }` (a card's service) reads as the reference alone. */
  private asReference(value: unknown): string | undefined {
    if (isObject(value) && Object.keys(value).length === 1 && this.isReference(value.id)) return value.id as string
    return undefined
  }

  /** The value in one line when it is a scalar, a reference or a short list of scalars. */
  private oneLine(value: unknown): string | undefined {
    const ref = this.asReference(value)
    if (ref !== undefined) return this.scalar(ref)
    if (Array.isArray(value)) {
      if (!value.every((v) => !isObject(v) && !Array.isArray(v) && !this.isReference(v))) return undefined
      const text = `[${value.map((v) => this.scalar(v)).join(', ')}]`
      return text.length <= 80 ? text : undefined
    }
    if (isObject(value)) return Object.keys(value).length === 0 ? '{}' : undefined
    return this.scalar(value)
  }

  /** `label: value`, or `label {` / `label [` with one field or item a line, each signed. */
  lines(label: string, value: unknown, sign: Sign, depth: number): Line[] {
    const head = label ? `${label}: ` : ''
    // a script or another text of several lines: its lines, one a line
    if (isMultiline(value)) {
      const lines = textLines(value)
      return [
        { sign, depth, text: `${head}<<${lines.length} ${lines.length === 1 ? 'line' : 'lines'}` },
        ...lines.map((text) => ({ sign, depth: depth + 1, text: `| ${text}` })),
      ]
    }
    const ref = this.asReference(value)
    if (ref !== undefined) return [{ sign, depth, text: `${head}${this.scalar(ref)}` }]
    if (Array.isArray(value)) {
      const oneLine = this.oneLine(value)
      if (oneLine !== undefined) return [{ sign, depth, text: `${head}${oneLine}` }]
      const out: Line[] = [{ sign, depth, text: label ? `${label} [` : '[' }]
      for (const item of value) out.push(...this.lines('', item, sign, depth + 1))
      out.push({ sign: '', depth, text: ']' })
      return out
    }
    if (isObject(value)) {
      const entries = Object.entries(value).filter(([, v]) => v !== undefined && v !== null)
      if (entries.length === 0) return [{ sign, depth, text: `${head}{}` }]
      const out: Line[] = [{ sign, depth, text: label ? `${label} {` : '{' }]
      // a suite's binary file: its size, never its base64
      const binary = value.encoding === 'base64' && typeof value.content === 'string'
      for (const [key, v] of entries) {
        if (binary && key === 'content') out.push({ sign, depth: depth + 1, text: `content: binary file (${binaryBytes(v as string)} bytes)` })
        else out.push(...this.lines(key, v, sign, depth + 1))
      }
      out.push({ sign: '', depth, text: '}' })
      return out
    }
    return [{ sign, depth, text: `${head}${this.scalar(value)}` }]
  }

  diff(d: FieldDiff, depth: number): Line[] {
    const path = this.path(d.path)
    if (!('old' in d)) {
      if (d.new === SECRET_CHANGED || d.new === LOCKED_CHANGED) return [{ sign: '~', depth, text: `${path}: ${d.new}` }]
      if (d.binary) return [{ sign: '+', depth, text: `${path}: binary file added (${d.binary.newBytes ?? 0} bytes)` }]
      return this.lines(path, d.new, '+', depth)
    }
    if (!('new' in d))
      return d.binary ? [{ sign: '-', depth, text: `${path}: binary file removed (${d.binary.oldBytes ?? 0} bytes)` }] : this.lines(path, d.old, '-', depth)
    if (d.binary) return [{ sign: '~', depth, text: `${path}: binary file changed (${d.binary.newBytes ?? 0} bytes)` }]
    // a script (or a file of one) that changed: the lines that changed, as a unified diff
    if ((isMultiline(d.old) || isMultiline(d.new)) && typeof d.old === 'string' && typeof d.new === 'string') {
      return [
        { sign: '~', depth, text: `${path}:` },
        ...textDiff(d.old, d.new).map((l) => ({ sign: l.sign, depth: depth + 1, text: l.sign === '' && l.text.startsWith('@@') ? l.text : `| ${l.text}` })),
      ]
    }
    const before = this.oneLine(d.old)
    const after = this.oneLine(d.new)
    if (before !== undefined && after !== undefined) return [{ sign: '~', depth, text: `${path}: ${before} → ${after}` }]
    return [{ sign: '~', depth, text: `${path}:` }, ...this.lines('', d.old, '-', depth + 1), ...this.lines('', d.new, '+', depth + 1)]
  }
}

/**
 * The lines under a change's title: a create's fields (those a reviewer needs unless verbose,
 * with a line counting the rest), or an update's field diffs. With `refreshOnly`, the drift of
 * a resource whose code is as last applied reads last applied → now remote.
 */
export function changeBody(change: PlanChange, options: ViewOptions): Line[] {
  const view = new ValueView(options.references)
  const masked = maskLocked(change)
  const out: Line[] = []
  if (change.action === 'create') {
    const full = Object.fromEntries(Object.entries(masked.payload ?? {}).filter(([, v]) => v !== undefined && v !== null))
    const { payload, hidden } = options.verbose ? { payload: full, hidden: 0 } : reviewPayload(change.kind, full)
    for (const [key, value] of Object.entries(payload)) out.push(...view.lines(key, value, '+', 0))
    if (hidden > 0)
      out.push({
        sign: '',
        depth: 0,
        text: `# ${hidden} ${hidden === 1 ? 'field' : 'fields'} at ${hidden === 1 ? 'its default' : 'their defaults'} not shown (plan --verbose shows every field)`,
        comment: true,
      })
    out.push(...groupLines(change))
    return out
  }
  if (change.action === 'update' || change.action === 'replace') {
    const swap = options.refreshOnly && change.changedOutside && !change.changedInCode
    for (const d of masked.fieldDiffs ?? []) {
      const shown = options.verbose ? d : reviewDiff(change.kind, d)
      out.push(...view.diff(swap ? swapDiff(shown) : shown, 0))
    }
    out.push(...groupLines(change))
  }
  return out
}

/** `# from group check-group:smoke "Smoke": locations ap-south-1, us-west-1`: what the check's group gives it. */
function groupLines(change: PlanChange): Line[] {
  const given = change.fromGroup
  if (!given) return []
  const text = (value: unknown): string => {
    if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) return value.join(', ')
    if (Array.isArray(value) && value.every((v) => v && typeof v === 'object' && 'alertChannelId' in v))
      return value.map((v) => `channel ${String((v as { alertChannelId: unknown }).alertChannelId)}`).join(', ')
    if (value && typeof value === 'object') return JSON.stringify(maskLockedValues(value)).slice(0, 120)
    return String(value)
  }
  const who = `${given.group}${given.name !== undefined ? ` "${given.name}"` : ''}`
  return Object.entries(given.fields).map(([field, value]) => ({
    sign: '',
    depth: 0,
    comment: true,
    text: `# from group ${who}: ${field} ${text(value)}`,
  }))
}

/** remote → code becomes last applied → remote (the code is as last applied). */
function swapDiff(d: FieldDiff): FieldDiff {
  if (!('old' in d) && MASKS.has(d.new as string)) return d
  const out: FieldDiff = { path: d.path }
  if ('new' in d) out.old = d.new
  if ('old' in d) out.new = d.old
  if (d.secret) out.secret = true
  return out
}

/** The comment under a drifted update's title. */
export function driftNote(change: PlanChange, options: ViewOptions): string | undefined {
  if (!change.changedOutside) return undefined
  if (options.refreshOnly && !change.changedInCode)
    return 'changed outside monitors since the last apply; values read last applied → now remote (apply reverts them)'
  return `${change.reason ?? 'changed outside monitors'}; values read remote → code`
}

/** `dns-check:a, dns-check:b`: what a targeted plan was limited to. */
/** One rename hint as a sentence: what is deleted and created, and the alias that keeps the resource. */
export function renameHintText(hint: RenameHint): string {
  return (
    `${hint.kind} ${hint.from} is deleted and ${hint.kind} ${hint.to} created, both named ${JSON.stringify(hint.name)}: ` +
    `if it is a rename, add aliases: ['${hint.from}'] to ${hint.to}${hint.file ? ` (${hint.file})` : ''} to keep the resource (its id and history) instead`
  )
}

export function partialNote(plan: Plan): string | undefined {
  if (!plan.targets || plan.targets.length === 0) return undefined
  return `This plan is partial: only ${plan.targets.join(', ')} and what ${plan.targets.length === 1 ? 'it depends' : 'they depend'} on (--target).`
}
