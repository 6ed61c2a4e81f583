/** The phases of computePlan seen together: renames, adoption, duplicates, removals and protections in one plan. */
import { describe, expect, it } from 'vitest'
import { computePlan } from '../../src/plan/plan.js'
import type { RemoteState } from '../../src/api/resources.js'
import { RESOURCE_KINDS } from '../../src/resources/registry.js'
import { appliedHash } from '../../src/resources/hashes.js'
import { emptyLock } from '../../src/state/lock.js'
import { pendingCreate } from '../../src/state/pending.js'
import { desired, dns } from './helpers.js'

const target = { id: 'https://api.example.com', baseUrl: 'https://api.example.com', accountId: 'acc' }

function remote(records: Partial<RemoteState['records']>): RemoteState {
  return {
    records: { ...(Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, {}])) as RemoteState['records']), ...records },
    foreign: {},
    requests: {},
  }
}

describe('computePlan phases', () => {
  it('matches renames, adopts a lost create, marks a duplicate, and protects replaces and deletes in order', () => {
    const renamed = { ...dns('new-name'), options: { aliases: ['old-name'] } }
    const lost = dns('lost')
    const dup = dns('dup')
    const variable = { ...desired('variable', 'V', { key: 'NEW_KEY', value: '1' }), options: { protect: false } }
    const lock = emptyLock(target)
    const entry = (kind: 'dns-check' | 'variable', logicalId: string, remoteId: string, extra = {}) =>
      (lock.resources[`${kind}:${logicalId}`] = { kind, logicalId, remoteId, appliedHash: 'sha256:x', ...extra })
    entry('dns-check', 'old-name', 'r1')
    entry('variable', 'V', 'OLD_KEY', { protect: true })
    entry('dns-check', 'gone-protected', 'r3', { protect: true })
    entry('dns-check', 'gone-unprotected-in-code', 'r4', { protect: true })
    entry('dns-check', 'gone-retained', 'r5', { protect: true, retainOnDelete: true })
    lock.pending = { 'dns-check:lost': pendingCreate('dns-check', 'lost', lost.payload) }
    const record = (r: ReturnType<typeof dns>, id: string) => ({ ...r.payload, id })
    const plan = computePlan({
      desired: [renamed, lost, dup, variable],
      lock,
      remote: remote({
        'dns-check': {
          r1: { ...record(renamed, 'r1') },
          r2: record(lost, 'r2'),
          r3: { id: 'r3', name: 'x' },
          r4: { id: 'r4', name: 'y' },
          r5: { id: 'r5', name: 'z' },
          r6: record(dup, 'r6'),
        },
        variable: { OLD_KEY: { key: 'OLD_KEY', value: '1' } },
      }),
      target,
      codeOptions: new Map([['dns-check:gone-unprotected-in-code', { protect: false }]]),
    })
    const brief = plan.changes.map(
      (c) =>
        `${c.action} ${c.kind}:${c.logicalId}${c.movedFrom ? ` from ${c.movedFrom}` : ''}${c.adopted ? ' adopted' : ''}${c.duplicateOf ? ` dup of ${c.duplicateOf.remoteId}` : ''}`,
    )
    expect(brief).toEqual([
      'replace variable:V',
      'create dns-check:dup dup of r6',
      'update dns-check:lost adopted',
      expect.stringMatching(/^(move|update) dns-check:new-name from old-name$/),
      'delete dns-check:gone-unprotected-in-code',
      'forget dns-check:gone-retained',
      'delete dns-check:gone-protected',
    ])
    expect(plan.protected).toEqual([
      { kind: 'variable', logicalId: 'V', action: 'replace', file: 'V.check.ts', unrecorded: true },
      { kind: 'dns-check', logicalId: 'gone-protected', action: 'delete' },
      { kind: 'dns-check', logicalId: 'gone-unprotected-in-code', action: 'delete', unrecorded: true },
    ])
    expect(plan.summary).toMatchObject({ create: 1, duplicate: 1, delete: 3, forget: 1 })
    expect(appliedHash('dns-check', record(lost, 'r2'))).toBe(lock.pending['dns-check:lost'].appliedHash)
  })
})
