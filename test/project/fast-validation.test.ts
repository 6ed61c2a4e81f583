/**
 * The fast path of validation (src/schema/fast.ts) against zod itself. The contract: whenever the
 * fast path accepts an input, zod accepts it too, with a deep-equal output whose keys (at every
 * depth, keys holding `undefined` included) are in the same order. When it is not sure the
 * loader asks zod, so messages are zod's. Inputs come from a seeded generator: valid bodies built
 * from each kind's schema, and many mutations of them.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { compileFast } from '../../src/schema/fast.js'
import { DESCRIPTORS, descriptorOf, RESOURCE_KINDS } from '../../src/resources/registry.js'
import { mergeDefaults, unknownFields } from '../../src/project/desired.js'
import { loadProject, ProjectError } from '../../src/project/index.js'
import { tempProject } from './helpers.js'
import type { ResourceKind } from '../../src/resources/types.js'

type Def = Record<string, unknown> & { type: string; checks?: Array<{ _zod: { def: Record<string, unknown> } }> }
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def

/** mulberry32: a small seeded generator, so every run checks the same inputs. */
function rng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)],
    chance: (p: number) => next() < p,
  }
}
type Rng = ReturnType<typeof rng>

/** Strings tried for a string field; the field's own zod schema picks those it accepts. */
const STRING_POOL = [
  'a',
  'abc',
  'Shop DNS',
  'shop.example.com',
  'API_TOKEN',
  '_x1',
  'shop-1',
  'public',
  'x9',
  'team-a',
  'https://example.com/health',
  'http://shop.example.com/a?b=1',
  'https://{{HOST}}/x',
  'NOERROR',
  'avg',
  '$.data[0].id',
  '2026-01-31T22:00:00Z',
  '2026-02-01T10:00:00+01:00',
  '2026-03-01T00:00:00.000Z',
  '#ffffff',
  'red',
  '😀',
  'é',
]

/** Numbers around the bounds of a number schema's checks, and the usual trouble. */
function numberCandidates(def: Def): number[] {
  const out = [0, 1, -1, 0.5, 1.5, -0, 2, 5, 10, 30, 60, 1440, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), 1e300]
  for (const ch of def.checks ?? []) {
    const v = ch._zod.def.value
    if (typeof v === 'number') out.push(v, v - 1, v + 1, v - 0.5, v + 0.5)
  }
  return out
}

/** Lengths around a string or array schema's min and max. */
function lengthBounds(def: Def): { min: number; max: number } {
  let min = 0
  let max = Infinity
  for (const ch of def.checks ?? []) {
    const d = ch._zod.def
    if (d.check === 'min_length') min = Math.max(min, d.minimum as number)
    if (d.check === 'max_length') max = Math.min(max, d.maximum as number)
  }
  return { min, max }
}

const accepts = (schema: z.ZodType, value: unknown) => schema.safeParse(value).success

/** A value the schema accepts (mostly: a cross-field rule may still refuse the whole). */
function valid(schema: z.ZodType, r: Rng, depth = 0): unknown {
  const def = defOf(schema)
  switch (def.type) {
    case 'optional':
      return r.chance(0.4) ? undefined : valid(def.innerType as z.ZodType, r, depth)
    case 'nullable':
      return r.chance(0.15) ? null : valid(def.innerType as z.ZodType, r, depth)
    case 'default':
      return r.chance(0.4) ? undefined : valid(def.innerType as z.ZodType, r, depth)
    case 'pipe':
      return valid(def.in as z.ZodType, r, depth)
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [key, child] of Object.entries(def.shape as Record<string, z.ZodType>)) {
        // read-only fields the service sets: sometimes sent back
        const v = valid(child, r, depth + 1)
        if (v === undefined && r.chance(0.8)) continue
        out[key] = v
      }
      // a suite's binary file carries base64 (the suite's cross-field rule)
      if (out.encoding === 'base64' && typeof out.content === 'string') out.content = Buffer.from(out.content).toString('base64')
      return out
    }
    case 'array': {
      const { min, max } = lengthBounds(def)
      const n = r.int(min, Math.min(max, min + 3))
      return Array.from({ length: n }, () => valid(def.element as z.ZodType, r, depth + 1))
    }
    case 'record': {
      const out: Record<string, unknown> = {}
      for (let i = r.int(0, 3); i > 0; i--) out[r.pick(['a', 'b', 'period', '1', 'x-y'])] = r.pick([1, 'two', null, true, [1], { k: 1 }])
      return out
    }
    case 'enum':
    case 'literal':
      return r.pick([...(schema as unknown as { _zod: { values: Set<unknown> } })._zod.values])
    case 'boolean':
      return r.chance(0.5)
    case 'unknown':
    case 'any':
      return r.pick([1, 'x', null, { a: 1 }, [1, 2]])
    case 'number': {
      const ok = numberCandidates(def).filter((n) => accepts(schema, n) && !Object.is(n, -0))
      return ok.length ? r.pick(ok) : 1
    }
    case 'string': {
      const { min, max } = lengthBounds(def)
      const candidates = [...STRING_POOL, 'x'.repeat(Math.max(min, 1)), 'y'.repeat(Math.min(max, min + 5))]
      if (Number.isFinite(max)) candidates.push('z'.repeat(max), '😀'.repeat(max))
      const ok = candidates.filter((s) => accepts(schema, s))
      return ok.length ? r.pick(ok) : r.pick(STRING_POOL)
    }
    default:
      return undefined
  }
}

/** The schema of the field at `path` below `schema`, through wrappers; undefined when unknown. */
function schemaAt(schema: z.ZodType, path: readonly (string | number)[]): z.ZodType | undefined {
  let s: z.ZodType | undefined = schema
  for (let i = 0; ; ) {
    if (!s) return undefined
    const def = defOf(s)
    if (['optional', 'nullable', 'default'].includes(def.type)) {
      s = def.innerType as z.ZodType
      continue
    }
    if (def.type === 'pipe') {
      s = def.in as z.ZodType
      continue
    }
    if (i === path.length) return s
    const key = path[i++]
    if (def.type === 'object') s = (def.shape as Record<string, z.ZodType>)[key]
    else if (def.type === 'array') s = def.element as z.ZodType
    else return undefined
  }
}

/** Every place in a value: [path, value]. */
function places(value: unknown, path: (string | number)[] = [], out: Array<[(string | number)[], unknown]> = []) {
  out.push([path, value])
  if (Array.isArray(value)) value.forEach((v, i) => places(v, [...path, i], out))
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) places(v, [...path, k], out)
  return out
}

const clone = <T>(v: T): T => structuredClone(v)

function setAt(root: unknown, path: readonly (string | number)[], f: (parent: Record<string | number, unknown>, key: string | number) => void): unknown {
  const copy = clone(root)
  if (path.length === 0) return copy
  let node = copy as Record<string | number, unknown>
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>
  f(node, path[path.length - 1])
  return copy
}

/** An object like `value` with the prototype `proto` (own keys the same). */
function withProto(value: Record<string, unknown>, proto: object | null): Record<string, unknown> {
  return Object.assign(Object.create(proto), value)
}

/** Mutations of a valid input, each at a random place; `plain` when the result is plain data. */
function mutate(schema: z.ZodType, input: unknown, r: Rng): { value: unknown; plain: boolean; what: string } {
  const all = places(input)
  const [path, current] = r.pick(all)
  const here = path.length ? schemaAt(schema, path) : schema
  const def = here ? defOf(here) : undefined
  const replace = (v: unknown) => setAt(input, path, (p, k) => (p[k] = v))
  const kind = r.int(0, 15)
  const at = path.join('.') || '(body)'
  switch (kind) {
    case 0:
      return { value: setAt(input, path, (p, k) => (Array.isArray(p) ? p.splice(Number(k), 1) : delete p[k])), plain: true, what: `missing ${at}` }
    case 1:
      return { value: replace(undefined), plain: true, what: `undefined at ${at}` }
    case 2:
      return { value: replace(null), plain: true, what: `null at ${at}` }
    case 3:
      return { value: replace(r.pick([1, 'text', true, false, {}, [], [1], { a: 1 }, ''])), plain: true, what: `wrong type at ${at}` }
    case 4: {
      const n = def?.type === 'number' ? r.pick(numberCandidates(def)) : r.pick([NaN, Infinity, -Infinity, -0, 1.5, 0, -1])
      return { value: replace(n), plain: true, what: `number ${Object.is(n, -0) ? '-0' : n} at ${at}` }
    }
    case 5:
      return { value: replace(r.pick([NaN, Infinity, -Infinity, -0, 1.5, 2 ** 53, -(2 ** 53)])), plain: true, what: `odd number at ${at}` }
    case 6: {
      const { min, max } = def ? lengthBounds(def) : { min: 1, max: 10 }
      const lengths = [0, 1, min - 1, min, min + 1, ...(Number.isFinite(max) ? [max - 1, max, max + 1] : [300])].filter((n) => n >= 0)
      const n = r.pick(lengths)
      const v =
        def?.type === 'array'
          ? Array.from({ length: n }, () => (Array.isArray(current) && current.length ? current[0] : 'x'))
          : r.pick(['x', '😀', 'é']).repeat(n)
      return { value: replace(v), plain: true, what: `length ${n} at ${at}` }
    }
    case 7:
      return { value: replace(r.pick(['NOPE', 'dns', 'a', 'udp', 'Get', ''])), plain: true, what: `outside the values at ${at}` }
    case 8: {
      // an extra unknown key in an object at this depth (or the body)
      const objects = all.filter(([, v]) => v && typeof v === 'object' && !Array.isArray(v))
      const [p] = r.pick(objects)
      return {
        value: setAt(input, p, (parent, k) => ((parent[k] as Record<string, unknown>).extra = r.pick([1, 'x', undefined]))),
        plain: true,
        what: `extra key in ${p.join('.') || '(body)'}`,
      }
    }
    case 9: {
      const arrays = all.filter(([, v]) => Array.isArray(v))
      if (!arrays.length) return mutate(schema, input, r)
      const [p] = r.pick(arrays)
      const bad = r.pick([null, 1, 'x', {}, [], { source: 'NOPE' }, undefined])
      return { value: setAt(input, p, (parent, k) => (parent[k] as unknown[]).push(bad)), plain: true, what: `bad item in ${p.join('.')}` }
    }
    case 10: {
      const objects = all.filter(([, v]) => v && typeof v === 'object' && !Array.isArray(v))
      const [p, v] = r.pick(objects)
      // a prototype with keys of the shape: inherited, not own
      const proto = r.pick([{ name: 'inherited' }, { frequency: 5 }, {}, { activated: false }])
      const obj = withProto(clone(v) as Record<string, unknown>, proto)
      return {
        value: p.length ? setAt(input, p, (parent, k) => (parent[k] = obj)) : obj,
        plain: false,
        what: `Object.create(proto) at ${p.join('.') || '(body)'}`,
      }
    }
    case 11: {
      const objects = all.filter(([, v]) => v && typeof v === 'object' && !Array.isArray(v))
      const [p, v] = r.pick(objects)
      const obj = withProto(clone(v) as Record<string, unknown>, null)
      return { value: p.length ? setAt(input, p, (parent, k) => (parent[k] = obj)) : obj, plain: false, what: `null prototype at ${p.join('.') || '(body)'}` }
    }
    case 12: {
      if (!path.length) return mutate(schema, input, r)
      // the same value, through a getter
      const value = setAt(input, path, (p, k) => {
        const v = p[k]
        delete p[k]
        Object.defineProperty(p, k, { get: () => v, enumerable: true, configurable: true })
      })
      return { value, plain: false, what: `getter at ${at}` }
    }
    case 13: {
      const arrays = all.filter(([, v]) => Array.isArray(v) && v.length)
      if (!arrays.length) return mutate(schema, input, r)
      const [p] = r.pick(arrays)
      return { value: setAt(input, p, (parent, k) => delete (parent[k] as unknown[])[0]), plain: false, what: `array hole in ${p.join('.')}` }
    }
    case 14:
      // a key present with the value undefined, at every optional field of an object
      return {
        value: setAt(input, path.slice(0, -1), (p, k) => {
          const o = (path.length > 1 ? p[k] : p) as Record<string, unknown>
          if (o && typeof o === 'object' && !Array.isArray(o)) for (const key of Object.keys(o)) if (r.chance(0.3)) o[key] = undefined
        }),
        plain: true,
        what: `undefined values near ${at}`,
      }
    default:
      return { value: JSON.parse(JSON.stringify(input).replace(/^\{/, '{"__proto__":{"name":"p"},')), plain: false, what: 'own __proto__ key' }
  }
}

/** Same value, strictly: Object.is for primitives, same prototype and same own keys in the same order at every depth. */
function same(a: unknown, b: unknown, path = ''): string | undefined {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) {
    return Object.is(a, b) ? undefined : `${path || '(body)'}: ${String(a)} vs ${String(b)}`
  }
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${path}: prototypes differ`
  const ka = Reflect.ownKeys(a)
  const kb = Reflect.ownKeys(b)
  if (ka.join('|') !== kb.join('|')) return `${path || '(body)'}: keys ${ka.map(String).join(',')} vs ${kb.map(String).join(',')}`
  for (const k of ka) {
    const d = same((a as Record<PropertyKey, unknown>)[k], (b as Record<PropertyKey, unknown>)[k], path ? `${path}.${String(k)}` : String(k))
    if (d) return d
  }
  return undefined
}

const fastOf = (kind: ResourceKind) => {
  const fast = compileFast(descriptorOf(kind).schema)
  if (!fast) throw new Error(`the schema of ${kind} does not compile`)
  return fast
}

describe('fast validation path', () => {
  it('compiles the schema of every resource kind', () => {
    const compiled = RESOURCE_KINDS.filter((kind) => compileFast(descriptorOf(kind).schema) !== undefined)
    expect(compiled).toEqual(
      expect.arrayContaining([
        'dns-check',
        'icmp-check',
        'api-check',
        'heartbeat-check',
        'variable',
        'status-page',
        'status-page-service',
        'maintenance-window',
      ]),
    )
    expect(compiled).toHaveLength(Object.keys(DESCRIPTORS).length)
  })

  for (const kind of RESOURCE_KINDS) {
    it(`${kind}: whenever it accepts, zod accepts with the same output, keys in the same order`, () => {
      const schema = descriptorOf(kind).schema
      const fast = fastOf(kind)
      const r = rng(0x5eed + kind.length * 7919 + kind.charCodeAt(0))
      const wrong: string[] = []
      let fastAccepted = 0
      let zodAccepted = 0
      let missedPlain = 0
      let exact = 0
      let inexact = 0
      const compare = (input: unknown, plain: boolean, what: string) => {
        const zodResult = schema.safeParse(input)
        const fastResult = fast(input)
        if (zodResult.success) zodAccepted++
        if (fastResult.ok) {
          fastAccepted++
          // "exact" lets the loader skip its walk for unknown fields: that walk must find none then
          if (fastResult.exact) exact++
          else inexact++
          const body = input as Record<string, unknown>
          const readOnlyAtTop = ['id', 'created_at', 'updated_at'].some((field) => body[field] !== undefined)
          const unknown = unknownFields(schema, body).filter((field) => field.path !== descriptorOf(kind).logicalIdField)
          if (fastResult.exact && !readOnlyAtTop && unknown.length > 0)
            wrong.push(`${what}: exact, yet unknown fields ${unknown.map((f) => f.path).join(', ')}`)
          if (!zodResult.success) wrong.push(`${what}: fast accepts, zod refuses (${zodResult.error.issues[0]?.message})`)
          else {
            const diff = same(fastResult.data, zodResult.data)
            if (diff) wrong.push(`${what}: outputs differ at ${diff}`)
          }
        } else if (zodResult.success && plain) missedPlain++
      }
      for (let i = 0; i < 200; i++) {
        const input = valid(schema, r)
        compare(input, true, `valid #${i}`)
        for (let m = 0; m < 12; m++) {
          const { value, plain, what } = mutate(schema, input, r)
          compare(value, plain, `#${i} ${what}`)
        }
      }
      expect(wrong.slice(0, 10)).toEqual([])
      // the fast path does not give up on plain data zod accepts
      expect(missedPlain).toBe(0)
      expect(fastAccepted).toBeGreaterThan(100)
      expect(zodAccepted).toBeGreaterThanOrEqual(fastAccepted)
      // both answers are given: the extra keys of the mutations are noticed, plain bodies are exact
      expect(exact).toBeGreaterThan(100)
      expect(inexact).toBeGreaterThan(0)
    })
  }

  it('accepts the checks of examples/ and of the plan bench, with the config defaults merged in as the loader does', () => {
    type Defaults = Parameters<typeof mergeDefaults>[1]
    const shopDefaults = { frequency: 5, locations: ['eu-west-1', 'us-east-1'], tags: ['shop'] } as Defaults
    const benchDefaults = { locations: ['eu-west-1', 'us-east-1'], tags: ['bench'] } as Defaults
    // the props as the constructs hold them (IcmpCheck fills in heartbeat and script)
    const bodies: Array<[ResourceKind, Record<string, unknown>]> = [
      ['dns-check', mergeDefaults({ name: 'Site DNS', request: { query: 'example.com' }, locations: ['eu-west-1'] }, {})],
      [
        'dns-check',
        mergeDefaults(
          {
            name: 'Shop DNS',
            request: { query: 'shop.example.com', recordType: 'A', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
          },
          shopDefaults,
        ),
      ],
      [
        'icmp-check',
        mergeDefaults(
          {
            name: 'Edge ping',
            request: { hostname: 'edge.example.com', assertions: [{ source: 'LATENCY', property: 'avg', comparison: 'LESS_THAN', target: '200' }] },
            frequency: 10,
            heartbeat: {},
            script: '',
          },
          shopDefaults,
        ),
      ],
      [
        'dns-check',
        mergeDefaults(
          {
            name: 'Checkout DNS',
            request: { query: 'checkout.example.com', recordType: 'CNAME' },
            tags: ['checkout'],
            triggerIncident: {
              serviceId: 'status-page-service:checkout',
              severity: 'MAJOR',
              name: 'Checkout cannot be resolved',
              description: 'checkout.example.com does not resolve from one or more locations.',
              notifySubscribers: true,
            },
          },
          shopDefaults,
        ),
      ],
      // bench/plan/fixture.mjs
      [
        'dns-check',
        mergeDefaults(
          {
            name: 'DNS 7',
            request: { query: 'host-7.example.com', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
            frequency: 15,
            tags: ['team-0'],
          },
          benchDefaults,
        ),
      ],
      ['variable', { key: 'API_TOKEN', value: '', secret: true }],
      ['status-page-service', { name: 'Checkout' }],
    ]
    for (const [kind, body] of bodies) {
      const result = fastOf(kind)(body)
      const zodResult = descriptorOf(kind).schema.safeParse(body)
      expect(zodResult.success).toBe(true)
      expect(result.ok, `${kind} ${JSON.stringify(body)}`).toBe(true)
      if (result.ok && zodResult.success) expect(same(result.data, zodResult.data)).toBeUndefined()
    }
  })

  it("loads a project into the payloads zod gives, and a project with mistakes into zod's messages", async () => {
    const config = `export default { projectName: 'p', defaults: { frequency: 5, locations: ['eu-west-1'], tags: ['shop'] } }\n`
    const dir = tempProject({
      'monitoring.config.ts': config,
      'a.check.ts': `import { DnsCheck, IcmpCheck } from 'monitors-as-code'
new DnsCheck('dns', { name: 'DNS', request: { query: 'a.example.com', port: 53, assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] }, tags: ['dns'], maxResponseTime: null })
new IcmpCheck('ping', { name: 'Ping', request: { hostname: 'a.example.com', pingCount: 5 }, frequency: 10 })
`,
    })
    const project = await loadProject({ cwd: dir })
    const payload = (id: string) => project.resources.find((r) => r.logicalId === id)?.payload
    const defaults = { frequency: 5, locations: ['eu-west-1'], tags: ['shop'] } as Parameters<typeof mergeDefaults>[1]
    const dns = descriptorOf('dns-check').schema.parse(
      mergeDefaults(
        {
          name: 'DNS',
          request: { query: 'a.example.com', port: 53, assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
          tags: ['dns'],
          maxResponseTime: null,
        },
        defaults,
      ),
    )
    const icmp = descriptorOf('icmp-check').schema.parse(
      mergeDefaults({ name: 'Ping', request: { hostname: 'a.example.com', pingCount: 5 }, frequency: 10, heartbeat: {}, script: '' }, defaults),
    )
    expect(same(payload('dns'), dns)).toBeUndefined()
    expect(same(payload('ping'), icmp)).toBeUndefined()

    const bad = tempProject({
      'monitoring.config.ts': config,
      'a.check.ts': `// @ts-nocheck
import { DnsCheck } from 'monitors-as-code'
new DnsCheck('sub-minute', { name: 'DNS', request: { query: 'a.example.com' }, frequency: 0 })
new DnsCheck('port', { name: 'DNS', request: { query: 'a.example.com', port: 1.5 } })
`,
    })
    const error = await loadProject({ cwd: bad }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ProjectError)
    const message = (error as ProjectError).message
    expect(message).toContain('DnsCheck "sub-minute" › frequency: must not be 0: sub-minute frequencies are only for API and TCP checks')
    expect(message).toContain('DnsCheck "port" › request.port: must be an integer (got 1.5)')
  })

  it('gives every result its own copy of an array default', () => {
    const fast = fastOf('dns-check')
    const body = { name: 'A', request: { query: 'a.example.com' } }
    const first = fast(body)
    const second = fast(body)
    if (!first.ok || !second.ok) throw new Error('expected the fast path to accept a minimal DNS check')
    const tags = (r: typeof first) => (r as { data: { tags: string[]; request: { assertions: unknown[] } } }).data
    expect(tags(first).tags).toEqual([])
    expect(tags(first).tags).not.toBe(tags(second).tags)
    expect(tags(first).request.assertions).not.toBe(tags(second).request.assertions)
    tags(first).tags.push('changed')
    expect(tags(second).tags).toEqual([])
    expect((descriptorOf('dns-check').schema.parse(body) as { tags: string[] }).tags).toEqual([])
  })

  it('is not sure of inherited keys, failed custom checks and transforms that add an issue', () => {
    const fast = fastOf('dns-check')
    const body = { name: 'A', request: { query: 'a.example.com' } }
    expect(fast(Object.assign(Object.create({ frequency: 5 }), body)).ok).toBe(false)
    // the cross-field rule of DNS checks: no sub-minute frequency
    expect(fast({ ...body, frequency: 0 }).ok).toBe(false)

    const refined = compileFast(
      z.object({ a: z.string() }).superRefine((v, ctx) => {
        if (v.a === 'no') ctx.addIssue({ code: 'custom', message: 'no' })
      }),
    )
    expect(refined?.({ a: 'yes' })).toEqual({ ok: true, data: { a: 'yes' }, exact: true })
    expect(refined?.({ a: 'no' }).ok).toBe(false)
    const transformed = compileFast(
      z.object({ a: z.string() }).transform((v, ctx) => {
        if (v.a === 'no') ctx.addIssue({ code: 'custom', message: 'no' })
        return { ...v, b: 1 }
      }),
    )
    expect(transformed?.({ a: 'yes', c: 2 })).toEqual({ ok: true, data: { a: 'yes', b: 1 }, exact: false })
    expect(transformed?.({ a: 'no' }).ok).toBe(false)
  })

  it('reads a getter once, as zod does, and gives what zod gives', () => {
    const fast = fastOf('dns-check')
    const schema = descriptorOf('dns-check').schema
    const reads = { fast: 0, zod: 0 }
    const withGetter = (counter: 'fast' | 'zod') => {
      const body: Record<string, unknown> = { request: { query: 'a.example.com' } }
      Object.defineProperty(body, 'name', { get: () => `read ${++reads[counter]}`, enumerable: true })
      return body
    }
    const result = fast(withGetter('fast'))
    expect(result).toMatchObject({ ok: true, exact: true })
    expect(result.ok && result.data).toEqual(schema.parse(withGetter('zod')))
    expect(reads).toEqual({ fast: 1, zod: 1 })
  })

  it('says exact only when every object it went through held nothing but keys of its shape', () => {
    const fast = fastOf('dns-check')
    const body = { name: 'A', request: { query: 'a.example.com' } }
    expect(fast(body)).toMatchObject({ ok: true, exact: true })
    expect(fast({ ...body, nmae: 'typo' })).toMatchObject({ ok: true, exact: false })
    expect(fast({ ...body, request: { query: 'a.example.com', prot: 53 } })).toMatchObject({ ok: true, exact: false })
    expect(
      fast({ ...body, request: { query: 'a.example.com', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR', x: 1 }] } }),
    ).toMatchObject({ ok: true, exact: false })
    // an own key of the shape that is not enumerable does not stand in for an unknown one
    const hidden = { request: { query: 'a.example.com' }, bogus: 1 }
    Object.defineProperty(hidden, 'name', { value: 'A', enumerable: false })
    expect(fast(hidden)).toMatchObject({ ok: true, exact: false })
    // the answer is this input's alone
    expect(fast(body)).toMatchObject({ ok: true, exact: true })
  })

  it('does not compile a schema with a part it does not mirror', () => {
    expect(compileFast(z.object({ a: z.union([z.string(), z.number()]) }))).toBeUndefined()
    expect(compileFast(z.object({ a: z.string() }).strict())).toBeUndefined()
    expect(compileFast(z.object({ a: z.string().trim() }))).toBeUndefined()
    expect(compileFast(z.object({ a: z.coerce.number() }))).toBeUndefined()
  })
})
