import { z } from 'zod'

/**
 * A fast path for valid input: what zod's `safeParse` gives, without its per-field allocations.
 *
 * `compileFast(schema)` walks the zod schema's own definitions once and builds a plain function
 * that checks a value and builds zod's output, or answers "not sure". It answers `{ ok: true,
 * data }` only when zod accepts the same input with a deep-equal output whose keys are in the
 * same order at every depth; for anything else (a failed rule, an input shape it does not
 * handle: an object with another prototype, a getter in a record, ...) it answers `{ ok: false }`
 * and the caller asks zod, so every message stays zod's. A schema holding a part this module does
 * not understand does not compile (`undefined`): it always goes through zod.
 *
 * Mirrors zod 4's core (node_modules/zod/v4/core: schemas.js, checks.js, util.js): object keys
 * are tested with `key in input` and each field and array item is read once, as zod reads it (a
 * getter gives the value it would give zod); the output is built in shape order with zod's
 * rules for optional, defaulted and required keys; numbers are finite; `.int()` means a safe integer;
 * string lengths count code points; defaults are read from the definition on every parse (a
 * fresh shallow clone of an array or object default each time); transforms and custom checks
 * (`superRefine`, `refine`) are zod's own functions, run on the value zod would give them: an
 * issue added means "not sure".
 */
export type FastResult = { ok: true; data: unknown; exact: boolean } | { ok: false }

/** The answer "not sure": one shared object, nothing allocated. */
const NOT_SURE: FastResult = Object.freeze({ ok: false })

/** What a compiled node returns when it is not sure; never a value of the input. */
const FAIL: unique symbol = Symbol('not sure')

/**
 * Set by an object's parser that met an own key its shape does not name (which zod strips):
 * `exact` in the result is false then. With `exact` true, every object of the input the parsers
 * went through held only keys of its shape, so a walk for unknown fields has nothing to find.
 */
const EXTRA = { found: false }
type Node = (value: unknown) => unknown

/** A check over a node's parsed value: true when it passes (or zod would skip it). */
type Check = (value: unknown) => boolean

interface Internals {
  def: Record<string, unknown> & { type: string; checks?: CheckLike[] }
  traits: Set<string>
  optin?: 'optional' | 'defaulted'
  optout?: 'optional'
  values?: Set<unknown>
  parse: (payload: Payload, ctx: object) => unknown
  check?: (payload: Payload) => unknown
}
interface SchemaLike {
  _zod: Internals
}
interface CheckLike {
  _zod: { def: Record<string, unknown> & { check?: string; when?: (payload: Payload) => boolean }; check: (payload: Payload) => unknown }
}
interface Payload {
  value: unknown
  issues: unknown[]
}

const util = z.core.util
const getPrototypeOf = Object.getPrototypeOf
const OBJECT_PROTOTYPE = Object.prototype
const ARRAY_PROTOTYPE = Array.prototype
const isArray = Array.isArray
/** The getter of an own (or inherited) property, without allocating a descriptor. */
const lookupGetter = (Object.prototype as unknown as { __lookupGetter__: (this: object, key: PropertyKey) => unknown }).__lookupGetter__
const propertyIsEnumerable = Object.prototype.propertyIsEnumerable

/**
 * Compiles `schema` into a function that answers `{ ok: true, data }` exactly when it is sure
 * zod would accept the input with that output, else `{ ok: false }`. `undefined` when the schema
 * holds a part this module does not mirror.
 */
export function compileFast(schema: z.ZodType): ((input: unknown) => FastResult) | undefined {
  let node: Node | undefined
  try {
    node = compile(schema as unknown as SchemaLike, new Map())
  } catch {
    // e.g. code generation from strings disallowed (--disallow-code-generation-from-strings): zod it is
    return undefined
  }
  if (!node) return undefined
  return (input) => {
    // a transform may validate something else with a fast path of its own: its keys are not this input's
    const outer = EXTRA.found
    EXTRA.found = false
    let out: unknown
    try {
      out = node(input)
    } catch {
      // a transform or check that throws: zod throws the same way, from its own stack
      out = FAIL
    }
    const extra = EXTRA.found
    EXTRA.found = outer
    return out === FAIL ? NOT_SURE : { ok: true, data: out, exact: !extra }
  }
}

function compile(schema: SchemaLike, seen: Map<SchemaLike, Node | null>): Node | undefined {
  if (seen.has(schema)) return seen.get(schema) ?? undefined
  // a schema met again while it is being compiled is recursive: zod's memoizer takes over there
  seen.set(schema, null)
  const node = compileWithChecks(schema, seen)
  if (node) seen.set(schema, node)
  return node
}

function compileWithChecks(schema: SchemaLike, seen: Map<SchemaLike, Node | null>): Node | undefined {
  const zod = schema._zod
  if (!zod?.def || !(zod.traits instanceof Set)) return undefined
  const base = compileType(schema, seen)
  if (!base) return undefined
  // zod runs a schema that is itself a check (a string format, z.custom) as its first check
  const list: CheckLike[] = zod.traits.has('$ZodCheck') ? [schema as unknown as CheckLike, ...(zod.def.checks ?? [])] : [...(zod.def.checks ?? [])]
  if (list.length === 0) return base
  const checks: Check[] = []
  for (const ch of list) {
    const check = compileCheck(ch, zod.def.type)
    if (!check) return undefined
    checks.push(check)
  }
  if (checks.length === 1) {
    const only = checks[0]
    return (value) => {
      const out = base(value)
      return out === FAIL || !only(out) ? FAIL : out
    }
  }
  return (value) => {
    const out = base(value)
    if (out === FAIL) return FAIL
    for (let i = 0; i < checks.length; i++) if (!checks[i](out)) return FAIL
    return out
  }
}

function compileType(schema: SchemaLike, seen: Map<SchemaLike, Node | null>): Node | undefined {
  const zod = schema._zod
  const def = zod.def
  switch (def.type) {
    case 'string':
      if (def.coerce) return undefined
      return (v) => (typeof v === 'string' ? v : FAIL)
    case 'number':
      if (def.coerce) return undefined
      // zod: typeof number, not NaN, finite; -0 passes as it is
      return (v) => (typeof v === 'number' && Number.isFinite(v) ? v : FAIL)
    case 'boolean':
      if (def.coerce) return undefined
      return (v) => (typeof v === 'boolean' ? v : FAIL)
    case 'unknown':
    case 'any':
      return (v) => v
    case 'enum':
    case 'literal': {
      // zod's own set of allowed values (SameValueZero: NaN matches NaN, -0 matches 0)
      const values = zod.values
      if (!(values instanceof Set)) return undefined
      return (v) => (values.has(v) ? v : FAIL)
    }
    case 'optional': {
      if (zod.traits.has('$ZodExactOptional')) return undefined
      const innerSchema = def.innerType as SchemaLike
      const inner = compile(innerSchema, seen)
      if (!inner) return undefined
      // only a defaulted inner substitutes a value for undefined; the rest leave it as it is
      if (innerSchema._zod.optin === 'defaulted') return inner
      return (v) => (v === undefined ? undefined : inner(v))
    }
    case 'nullable': {
      const inner = compile(def.innerType as SchemaLike, seen)
      if (!inner) return undefined
      return (v) => (v === null ? null : inner(v))
    }
    case 'default': {
      if (!zod.traits.has('$ZodDefault')) return undefined
      const inner = compile(def.innerType as SchemaLike, seen)
      if (!inner) return undefined
      // read on every parse: classic `.default()` answers a fresh shallow clone of an array or object each time
      return (v) => {
        if (v === undefined) return def.defaultValue
        const out = inner(v)
        if (out === FAIL) return FAIL
        return out === undefined ? def.defaultValue : out
      }
    }
    case 'pipe': {
      if (zod.traits.has('$ZodCodec') || zod.traits.has('$ZodPreprocess') || 'transform' in def) return undefined
      const left = compile(def.in as SchemaLike, seen)
      const right = compile(def.out as SchemaLike, seen)
      if (!left || !right) return undefined
      return (v) => {
        const mid = left(v)
        return mid === FAIL ? FAIL : right(mid)
      }
    }
    case 'transform': {
      if (typeof def.transform !== 'function' || typeof zod.parse !== 'function') return undefined
      // zod's own parse of the transform (it gives the function its ctx with addIssue); checks are added by the caller
      return (v) => {
        const payload: Payload = { value: v, issues: [] }
        const result = zod.parse(payload, { async: false })
        if (result !== payload || payload.issues.length > 0) {
          if (result instanceof Promise) result.catch(() => {})
          return FAIL
        }
        return payload.value
      }
    }
    case 'array':
      return compileArray(def, seen)
    case 'object':
      return compileObject(def, seen)
    case 'record':
      return compileRecord(def, seen)
    default:
      return undefined
  }
}

function compileArray(def: Internals['def'], seen: Map<SchemaLike, Node | null>): Node | undefined {
  const element = compile(def.element as SchemaLike, seen)
  if (!element) return undefined
  return (v) => {
    if (!isArray(v) || getPrototypeOf(v) !== ARRAY_PROTOTYPE) return FAIL
    const n = v.length
    const out = new Array(n)
    for (let i = 0; i < n; i++) {
      const item = element(v[i])
      if (item === FAIL) return FAIL
      out[i] = item
    }
    return out
  }
}

interface Field {
  key: string
  /** Statements that check `r<i>` (the field's value) and set it to zod's output for it, or return FAIL. */
  code: string
  /** How zod's object parser places the key in its output (its JIT's three cases). */
  mode: 'present' | 'defined-or-present' | 'always' | 'required'
}

function compileObject(def: Internals['def'], seen: Map<SchemaLike, Node | null>): Node | undefined {
  // strict, loose and catchall objects check or copy unknown keys: not mirrored
  if (def.catchall !== undefined) return undefined
  const shape = def.shape as Record<string, SchemaLike>
  if (!shape || typeof shape !== 'object' || Object.getOwnPropertySymbols(shape).length > 0) return undefined
  const fields: Field[] = []
  const emit: Emitter = { consts: [], seen, names: 0 }
  for (const key of Object.keys(shape)) {
    // zod skips __proto__; a key Object.prototype has would be "present" in every plain object
    if (key === '__proto__' || key in OBJECT_PROTOTYPE) return undefined
    const child = shape[key]
    const code = inline(child, `r${fields.length}`, emit)
    if (code === undefined) return undefined
    const optin = child._zod.optin
    const optout = child._zod.optout
    let mode: Field['mode']
    if (optin !== undefined && optout === 'optional') mode = optin === 'optional' ? 'present' : 'defined-or-present'
    else if (optin === undefined) mode = 'required'
    else mode = optin === 'defaulted' ? 'always' : 'defined-or-present'
    fields.push({ key, code, mode })
  }
  return objectParser(fields, emit.consts)
}

/**
 * The parser of one object shape, generated like zod's own object parser: property reads with
 * literal keys, so V8 keeps one inline cache per field instead of a megamorphic keyed access in
 * a loop. Same steps as zod: `key in input`, one read of `input[key]` per field. The output has
 * zod's keys in zod's order (shape order, each key by zod's rule for its kind of field); it is
 * made by an object literal of exactly the keys this input gets (one per combination of the
 * optional keys, made when first met), so V8 allocates it once at its full size instead of
 * growing it key by key.
 */
function objectParser(fields: Field[], consts: unknown[]): Node {
  const lines: string[] = [
    "if (typeof v !== 'object' || v === null || isArray(v)) return FAIL",
    'const proto = getPrototypeOf(v)',
    'if (proto !== OBJECT_PROTOTYPE && proto !== null) return FAIL',
  ]
  const writes: string[] = ['const out = {}']
  const included: string[] = []
  let bit = 0
  fields.forEach((field, i) => {
    const k = JSON.stringify(field.key)
    lines.push(`const p${i} = ${k} in v`, `let r${i} = v[${k}]`, field.code)
    // zod's object parser, case by case (schemas.js, $ZodObjectJIT)
    if (field.mode === 'required') lines.push(`if (!p${i}) return FAIL`)
    const write = `out[${k}] = r${i}`
    let condition: string | undefined
    if (field.mode === 'present') condition = `p${i}`
    else if (field.mode === 'defined-or-present') condition = `r${i} !== undefined || p${i}`
    if (condition === undefined) writes.push(write)
    else {
      writes.push(`if (${condition}) ${write}`)
      included.push(`if (${condition}) mask += ${2 ** bit}`)
      bit++
    }
  })
  // every own enumerable key (what the walk for unknown fields goes through) is a key of the shape
  const shapeKeys = `c[${consts.push(new Set(fields.map((field) => field.key))) - 1}]`
  lines.push('const keys = objectKeys(v)', `for (let k = 0; k < keys.length; k++) if (!${shapeKeys}.has(keys[k])) {\nEXTRA.found = true\nbreak\n}`)
  const args = fields.map((_, i) => `r${i}`).join(', ')
  // up to 2^30 combinations fit a small integer; past that (or past the cache) key by key
  const literal =
    bit <= 30 ? ['let mask = 0', ...included, 'const build = builders.get(mask) ?? builderFor(mask)', `if (build !== undefined) return build(${args})`] : []
  const body = [...lines, ...literal, ...writes, 'return out'].join('\n')
  const builders = new Map<number, Node>()
  const builderFor = (mask: number): Node | undefined => {
    if (builders.size >= MAX_BUILDERS) return undefined
    let b = 0
    const entries: string[] = []
    fields.forEach((field, i) => {
      const conditional = field.mode === 'present' || field.mode === 'defined-or-present'
      if (!conditional || (mask & (2 ** b++)) !== 0) entries.push(`${JSON.stringify(field.key)}: r${i}`)
    })
    const build = new Function(...fields.map((_, i) => `r${i}`), `return { ${entries.join(', ')} }`) as Node
    builders.set(mask, build)
    return build
  }
  const make = new Function('c', 'builders', 'builderFor', ...Object.keys(SCOPE), `return function parseObject(v) {\n${body}\n}`)
  return make(consts, builders, builderFor, ...Object.values(SCOPE)) as Node
}

/** What generated code may use besides its constants. */
const SCOPE = {
  FAIL,
  EXTRA,
  objectKeys: Object.keys,
  isArray,
  getPrototypeOf,
  OBJECT_PROTOTYPE,
  ARRAY_PROTOTYPE,
  numberIsFinite: Number.isFinite,
  numberIsSafeInteger: Number.isSafeInteger,
  codePointLength: util.codePointLength,
}

interface Emitter {
  /** Values the generated code reads as `c[i]`: value sets, definitions (for defaults), patterns, compiled nodes. */
  consts: unknown[]
  seen: Map<SchemaLike, Node | null>
  /** For fresh variable names. */
  names: number
}

const constant = (e: Emitter, value: unknown): string => `c[${e.consts.push(value) - 1}]`
const literal = (e: Emitter, n: number): string => (Number.isFinite(n) && !Object.is(n, -0) ? String(n) : constant(e, n))

/**
 * zod's `when` of its length checks (`_whenHasLength`): a value with a length. Shared by every
 * length check, so comparing with it tells a default `when` (always true on a string or an
 * array) from one given by hand.
 */
const LENGTH_WHEN = (z.string().min(1) as unknown as { _zod: { def: { checks: CheckLike[] } } })._zod.def.checks[0]._zod.def.when

/**
 * The statements that check the value in variable `x` against `schema` and leave zod's output
 * for it in `x` (or return FAIL): leaves and their wrappers written out in place, so a check's
 * twenty fields cost no call each; objects, records, pipes and transforms through their own
 * compiled node. Undefined when the schema has a part this module does not mirror.
 */
function inline(schema: SchemaLike, x: string, e: Emitter): string | undefined {
  const zod = schema._zod
  if (!zod?.def || !(zod.traits instanceof Set)) return undefined
  const def = zod.def
  const checks: CheckLike[] = zod.traits.has('$ZodCheck') ? [schema as unknown as CheckLike, ...(def.checks ?? [])] : (def.checks ?? [])
  let base: string | undefined
  switch (def.type) {
    case 'string':
      if (!def.coerce) base = `if (typeof ${x} !== 'string') return FAIL`
      break
    case 'number':
      if (!def.coerce) base = `if (typeof ${x} !== 'number' || !numberIsFinite(${x})) return FAIL`
      break
    case 'boolean':
      if (!def.coerce) base = `if (typeof ${x} !== 'boolean') return FAIL`
      break
    case 'unknown':
    case 'any':
      base = ''
      break
    case 'enum':
    case 'literal':
      if (zod.values instanceof Set) base = `if (!${constant(e, zod.values)}.has(${x})) return FAIL`
      break
    case 'optional': {
      if (checks.length > 0 || zod.traits.has('$ZodExactOptional')) break
      const innerSchema = def.innerType as SchemaLike
      const inner = inline(innerSchema, x, e)
      if (inner === undefined) return undefined
      base = innerSchema._zod.optin === 'defaulted' ? inner : `if (${x} !== undefined) {\n${inner}\n}`
      break
    }
    case 'nullable': {
      if (checks.length > 0) break
      const inner = inline(def.innerType as SchemaLike, x, e)
      if (inner === undefined) return undefined
      base = `if (${x} !== null) {\n${inner}\n}`
      break
    }
    case 'default': {
      if (checks.length > 0 || !zod.traits.has('$ZodDefault')) break
      const inner = inline(def.innerType as SchemaLike, x, e)
      if (inner === undefined) return undefined
      // read on every parse: classic `.default()` answers a fresh shallow clone of an array or object each time
      const d = constant(e, def)
      base = `if (${x} === undefined) ${x} = ${d}.defaultValue\nelse {\n${inner}\nif (${x} === undefined) ${x} = ${d}.defaultValue\n}`
      break
    }
    case 'array': {
      const item = `i${e.names++}`
      const index = `j${e.names++}`
      const out = `a${e.names++}`
      const element = inline(def.element as SchemaLike, item, e)
      if (element === undefined) return undefined
      base = [
        `if (!isArray(${x}) || getPrototypeOf(${x}) !== ARRAY_PROTOTYPE) return FAIL`,
        `const ${out} = new Array(${x}.length)`,
        `for (let ${index} = 0; ${index} < ${x}.length; ${index}++) {`,
        `let ${item} = ${x}[${index}]`,
        element,
        `${out}[${index}] = ${item}`,
        '}',
        `${x} = ${out}`,
      ].join('\n')
      break
    }
  }
  if (base === undefined) {
    const node = compile(schema, e.seen)
    if (!node) return undefined
    return `${x} = ${constant(e, node)}(${x})\nif (${x} === FAIL) return FAIL`
  }
  const lines = [base]
  for (const ch of checks) {
    const code = inlineCheck(ch, def.type, x, e)
    if (code === undefined) return undefined
    lines.push(code)
  }
  return lines.join('\n')
}

function inlineCheck(ch: CheckLike, type: string, x: string, e: Emitter): string | undefined {
  const cdef = ch?._zod?.def
  if (!cdef || typeof ch._zod.check !== 'function') return undefined
  const sized = type === 'string' || type === 'array'
  // a check with a `when` of its own, or of a kind not written out here: zod's check, compiled
  const byCall = () => {
    const check = compileCheck(ch, type)
    return check ? `if (!${constant(e, check)}(${x})) return FAIL` : undefined
  }
  if (cdef.when !== undefined && !(cdef.when === LENGTH_WHEN && sized)) return byCall()
  switch (cdef.check) {
    case 'min_length': {
      if (!sized || typeof cdef.minimum !== 'number') return undefined
      const min = literal(e, cdef.minimum)
      if (type === 'array') return `if (${x}.length < ${min}) return FAIL`
      // strings are measured in code points; only a length between min and 2·min units is in doubt
      return `if (${x}.length < ${min} || (${x}.length < ${min} * 2 && codePointLength(${x}) < ${min})) return FAIL`
    }
    case 'max_length': {
      if (!sized || typeof cdef.maximum !== 'number') return undefined
      const max = literal(e, cdef.maximum)
      if (type === 'array') return `if (${x}.length > ${max}) return FAIL`
      return `if (${x}.length > ${max} && codePointLength(${x}) > ${max}) return FAIL`
    }
    case 'greater_than':
      if (type !== 'number' || typeof cdef.value !== 'number') return undefined
      return `if (!(${x} ${cdef.inclusive ? '>=' : '>'} ${literal(e, cdef.value)})) return FAIL`
    case 'less_than':
      if (type !== 'number' || typeof cdef.value !== 'number') return undefined
      return `if (!(${x} ${cdef.inclusive ? '<=' : '<'} ${literal(e, cdef.value)})) return FAIL`
    case 'number_format': {
      const format = cdef.format as keyof typeof util.NUMBER_FORMAT_RANGES
      const range = util.NUMBER_FORMAT_RANGES[format]
      if (type !== 'number' || !range) return undefined
      const int = format.includes('int') ? `!numberIsSafeInteger(${x}) || ` : ''
      return `if (${int}${x} < ${literal(e, range[0])} || ${x} > ${literal(e, range[1])}) return FAIL`
    }
    case 'string_format':
      if (type === 'string' && cdef.format === 'regex' && cdef.pattern instanceof RegExp) {
        const p = constant(e, cdef.pattern)
        return `${p}.lastIndex = 0\nif (!${p}.test(${x})) return FAIL`
      }
      return byCall()
    default:
      return byCall()
  }
}

/** Output literals kept per object shape; inputs with more combinations of optional keys are built key by key. */
const MAX_BUILDERS = 64

function compileRecord(def: Internals['def'], seen: Map<SchemaLike, Node | null>): Node | undefined {
  const keyType = def.keyType as SchemaLike
  const k = keyType?._zod
  // a plain string key type only: every string key passes unchanged
  if (k?.def.type !== 'string' || k.def.coerce || (k.def.checks?.length ?? 0) > 0 || k.traits.has('$ZodCheck') || k.values !== undefined) return undefined
  if (def.mode !== undefined || def.partial) return undefined
  const valueNode = compile(def.valueType as SchemaLike, seen)
  if (!valueNode) return undefined
  return (v) => {
    if (!util.isPlainObject(v)) return FAIL
    const proto = getPrototypeOf(v)
    if (proto !== OBJECT_PROTOTYPE && proto !== null) return FAIL
    const input = v as Record<string, unknown>
    const out: Record<string, unknown> = {}
    for (const key of Reflect.ownKeys(input)) {
      // a symbol key fails a string key type
      if (typeof key !== 'string') return FAIL
      if (key === '__proto__') continue
      if (!propertyIsEnumerable.call(input, key)) continue
      if (lookupGetter.call(input, key) !== undefined) return FAIL
      const value = valueNode(input[key])
      if (value === FAIL) return FAIL
      out[key] = value
    }
    return out
  }
}

function compileCheck(ch: CheckLike, type: string): Check | undefined {
  const zod = ch?._zod
  if (!zod?.def || typeof zod.check !== 'function') return undefined
  const cdef = zod.def
  const test = checkTest(ch, type)
  if (!test) return undefined
  const when = cdef.when
  if (typeof when !== 'function') return test
  // zod asks `when` first (the length checks' default asks for a value with a length)
  const probe: Payload = { value: undefined, issues: [] }
  return (value) => {
    probe.value = value
    const run = when(probe)
    probe.value = undefined
    return !run || test(value)
  }
}

function checkTest(ch: CheckLike, type: string): Check | undefined {
  const cdef = ch._zod.def
  switch (cdef.check) {
    case 'min_length': {
      const min = cdef.minimum as number
      if (typeof min !== 'number') return undefined
      // strings are measured in code points; only a length between min and 2·min units is in doubt
      if (type === 'string')
        return (v) => {
          const units = (v as string).length
          return (units >= min && units < min * 2 ? util.codePointLength(v as string) : units) >= min
        }
      if (type === 'array') return (v) => (v as unknown[]).length >= min
      return undefined
    }
    case 'max_length': {
      const max = cdef.maximum as number
      if (typeof max !== 'number') return undefined
      if (type === 'string')
        return (v) => {
          const units = (v as string).length
          return units <= max || util.codePointLength(v as string) <= max
        }
      if (type === 'array') return (v) => (v as unknown[]).length <= max
      return undefined
    }
    case 'greater_than': {
      const bound = cdef.value
      if (type !== 'number' || typeof bound !== 'number') return undefined
      return cdef.inclusive ? (v) => (v as number) >= bound : (v) => (v as number) > bound
    }
    case 'less_than': {
      const bound = cdef.value
      if (type !== 'number' || typeof bound !== 'number') return undefined
      return cdef.inclusive ? (v) => (v as number) <= bound : (v) => (v as number) < bound
    }
    case 'number_format': {
      const format = cdef.format as keyof typeof util.NUMBER_FORMAT_RANGES
      const range = util.NUMBER_FORMAT_RANGES[format]
      if (type !== 'number' || !range) return undefined
      const [min, max] = range
      const isInt = format.includes('int')
      return (v) => (!isInt || Number.isSafeInteger(v)) && (v as number) >= min && (v as number) <= max
    }
    case 'string_format':
      if (type !== 'string') return undefined
      if (cdef.format === 'regex' && cdef.pattern instanceof RegExp) {
        const pattern = cdef.pattern
        return (v) => {
          pattern.lastIndex = 0
          return pattern.test(v as string)
        }
      }
      return runCheck(ch)
    case 'custom':
      return runCheck(ch)
    default:
      return undefined
  }
}

/** zod's own check function on a payload of its own: passes when it adds no issue and leaves the value alone. */
function runCheck(ch: CheckLike): Check {
  const check = ch._zod.check
  return (value) => {
    const payload: Payload = { value, issues: [] }
    const result = check(payload)
    if (result instanceof Promise) {
      result.catch(() => {})
      return false
    }
    return payload.issues.length === 0 && payload.value === value
  }
}
