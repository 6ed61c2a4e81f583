/**
 * src/schema/fast.ts compiles zod's own schema definitions, which are zod's internals (`_zod`),
 * not its public API. zod is therefore pinned to one exact version, and this test names every
 * internal field the fast path reads: an upgrade that moves or renames one fails here, by name,
 * rather than as a slower plan (the fast path gives up and zod runs) or a wrong answer.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'

const root = join(import.meta.dirname, '..', '..')

interface Internals {
  def: Record<string, unknown>
  traits: Set<string>
  optin?: string
  optout?: string
  values?: Set<unknown>
  parse?: unknown
  check?: unknown
}
const internals = (schema: unknown): Internals => (schema as { _zod: Internals })._zod
const checkDef = (schema: unknown, i = 0) => internals((internals(schema).def.checks as unknown[])[i])

describe('the zod internals the fast validation path reads', () => {
  it('zod is pinned to the exact version installed', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    const installed = (createRequire(join(root, 'package.json'))('zod/package.json') as { version: string }).version
    expect(pkg.dependencies.zod, 'package.json pins zod exactly (fast.ts reads its internals)').toMatch(/^\d+\.\d+\.\d+$/)
    expect(installed).toBe(pkg.dependencies.zod)
  })

  it('every schema has _zod.def.type, _zod.traits (a Set), _zod.parse; checks have _zod.check', () => {
    const s = z.string()
    expect(internals(s).def.type).toBe('string')
    expect(internals(s).traits).toBeInstanceOf(Set)
    expect(internals(s).traits.has('$ZodString')).toBe(true)
    expect(typeof internals(s).parse).toBe('function')
    const min = checkDef(z.string().min(1))
    expect(min.def.check).toBe('min_length')
    expect(typeof min.check).toBe('function')
    expect(typeof min.def.when).toBe('function')
    expect(min.def.minimum).toBe(1)
    expect(checkDef(z.string().max(3)).def).toMatchObject({ check: 'max_length', maximum: 3 })
    // a check carries the $ZodCheck trait (a check used as a schema too)
    expect(min.traits).toBeInstanceOf(Set)
    expect((min as unknown as Internals).traits.has('$ZodCheck')).toBe(true)
  })

  it('string formats and patterns, numbers and their bounds', () => {
    expect(checkDef(z.string().regex(/a/)).def).toMatchObject({ check: 'string_format', format: 'regex', pattern: /a/ })
    expect(checkDef(z.string().url()).def).toMatchObject({ check: 'string_format', format: 'url' })
    expect(internals(z.number()).def.type).toBe('number')
    expect(internals(z.number()).def.coerce).toBeUndefined()
    expect(internals(z.coerce.number()).def.coerce).toBe(true)
    expect(checkDef(z.number().int()).def).toMatchObject({ check: 'number_format', format: 'safeint' })
    expect(checkDef(z.number().min(1)).def).toMatchObject({ check: 'greater_than', value: 1, inclusive: true })
    expect(checkDef(z.number().lt(5)).def).toMatchObject({ check: 'less_than', value: 5, inclusive: false })
    expect(z.core.util.NUMBER_FORMAT_RANGES.safeint).toEqual([Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER])
    expect(typeof z.core.util.isPlainObject).toBe('function')
    expect(z.core.util.codePointLength('é😀')).toBe(2)
  })

  it('wrappers: optional, nullable, default, pipe, transform, and their optin / optout', () => {
    const optional = internals(z.string().optional())
    expect(optional.def.type).toBe('optional')
    expect(internals(optional.def.innerType).def.type).toBe('string')
    expect(optional.optin).toBe('optional')
    expect(optional.optout).toBe('optional')
    expect(internals(z.string().nullable()).def).toMatchObject({ type: 'nullable' })
    const withDefault = internals(z.string().default('x'))
    expect(withDefault.def.type).toBe('default')
    expect(withDefault.def.defaultValue).toBe('x')
    expect(withDefault.traits.has('$ZodDefault')).toBe(true)
    expect(withDefault.optin).toBe('defaulted')
    const pipe = internals(z.string().transform((v) => v.length))
    expect(pipe.def.type).toBe('pipe')
    expect(internals(pipe.def.in).def.type).toBe('string')
    expect(internals(pipe.def.out).def.type).toBe('transform')
    expect(typeof internals(pipe.def.out).def.transform).toBe('function')
    expect(internals(z.string().exactOptional()).traits.has('$ZodExactOptional')).toBe(true)
    expect(internals(z.codec(z.string(), z.number(), { decode: Number, encode: String })).traits.has('$ZodCodec')).toBe(true)
    expect(internals(z.preprocess((v) => v, z.string())).traits.has('$ZodPreprocess')).toBe(true)
  })

  it('objects, arrays, records, enums and literals', () => {
    const object = internals(z.object({ a: z.string() }))
    expect(object.def.type).toBe('object')
    expect(Object.keys(object.def.shape as object)).toEqual(['a'])
    expect(object.def.catchall).toBeUndefined()
    expect(internals(z.strictObject({})).def.catchall).toBeDefined()
    const array = internals(z.array(z.number()))
    expect(array.def.type).toBe('array')
    expect(internals(array.def.element).def.type).toBe('number')
    const record = internals(z.record(z.string(), z.number()))
    expect(record.def.type).toBe('record')
    expect(internals(record.def.keyType).def.type).toBe('string')
    expect(internals(record.def.valueType).def.type).toBe('number')
    // a plain record has neither; the fast path leaves partial and loose records to zod by these two fields
    expect(record.def.mode).toBeUndefined()
    expect(record.def.partial).toBeUndefined()
    expect(internals(z.partialRecord(z.enum(['a']), z.number())).def.partial).toBe(true)
    expect(internals(z.looseRecord(z.string(), z.number())).def.mode).toBe('loose')
    const enumeration = internals(z.enum(['A', 'B']))
    expect(enumeration.def.type).toBe('enum')
    expect(enumeration.values).toEqual(new Set(['A', 'B']))
    expect(internals(z.literal('x')).values).toEqual(new Set(['x']))
    expect(internals(z.unknown()).def.type).toBe('unknown')
    expect(internals(z.any()).def.type).toBe('any')
    expect(internals(z.boolean()).def.type).toBe('boolean')
    expect(internals(z.custom(() => true)).def.type).toBe('custom')
  })
})
