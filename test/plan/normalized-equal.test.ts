/**
 * The plan compares each resource with its remote record without copying either
 * (normalizedEqual); it must agree with comparing the normalized copies, whatever the records hold.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { normalizedEqual, normalizeParsed } from '../../src/resources/normalize.js'
import { jsonEqual } from '../../src/resources/stable-json.js'
import type { ResourceKind } from '../../src/resources/types.js'
import { dns } from './helpers.js'

const scalar = fc.oneof(fc.constantFrom(null, undefined, true, false, 0, 1, 'a', 'b', ''), fc.integer({ min: -3, max: 3 }))
const keys = fc.constantFrom(
  'name',
  'tags',
  'locations',
  'id',
  'created_at',
  'updated_at',
  'checkType',
  'request',
  'assertions',
  'source',
  'target',
  'frequency',
)
/** JSON-like values over the keys normalization treats specially (read-only fields, sets, nesting). */
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(keys, tie('node'), { maxKeys: 4 })),
})).node
const record = fc.dictionary(keys, value, { maxKeys: 6 })

/** A variant of a record a normalization should not tell apart, or a small real change. */
function variant(r: Record<string, unknown>, how: number): Record<string, unknown> {
  const out: Record<string, unknown> = { ...r }
  if (how === 0) out.id = 'remote-id'
  if (how === 1) out.updated_at = null
  if (how === 2 && Array.isArray(out.tags)) out.tags = [...out.tags].reverse()
  if (how === 3) out.frequency = 99
  if (how === 4) for (const key of Object.keys(out)) if (out[key] === null) delete out[key]
  return out
}

describe('normalizedEqual', () => {
  it('agrees with comparing the normalized copies', () => {
    for (const kind of ['dns-check', 'icmp-check', 'status-page'] as ResourceKind[]) {
      fc.assert(
        fc.property(record, record, fc.integer({ min: 0, max: 5 }), (a, b, how) => {
          const same = variant(a, how)
          expect(normalizedEqual(kind, a, same)).toBe(jsonEqual(normalizeParsed(kind, a), normalizeParsed(kind, same)))
          expect(normalizedEqual(kind, a, b)).toBe(jsonEqual(normalizeParsed(kind, a), normalizeParsed(kind, b)))
        }),
        { numRuns: 500 },
      )
    }
  })

  it('ignores what the service adds and the order of sets, and sees a changed field', () => {
    const check = dns('a', { tags: ['x', 'y'], locations: ['us-east-1', 'eu-west-1'] })
    const record: Record<string, unknown> = {
      ...check.payload,
      id: 'id-a',
      created_at: '2026-01-01',
      updated_at: null,
      groupId: null,
      tags: ['y', 'x'],
      locations: ['eu-west-1', 'us-east-1'],
    }
    expect(normalizedEqual('dns-check', check.payload, record)).toBe(true)
    expect(normalizedEqual('dns-check', check.payload, { ...record, request: { ...(record.request as object), query: 'b.example.com' } })).toBe(false)
  })
})
