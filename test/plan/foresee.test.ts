/** What computePlan foresees before any request: reorders, 409 deletes, duplicates. No server. */
import { describe, expect, it } from 'vitest'
import { computePlan } from '../../src/plan/plan.js'
import { assertNoDuplicates, assertNotBlocked } from '../../src/plan/select.js'
import type { RemoteState } from '../../src/api/resources.js'
import { RESOURCE_KINDS } from '../../src/resources/registry.js'
import { appliedHash } from '../../src/resources/hashes.js'
import { emptyLock, type LockFile } from '../../src/state/lock.js'
import { desired, dns } from './helpers.js'

const target = { id: 'https://api.example.com', baseUrl: 'https://api.example.com' }

function remote(records: Partial<RemoteState['records']> = {}): RemoteState {
  return {
    records: { ...(Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, {}])) as RemoteState['records']), ...records },
    foreign: {},
    requests: {},
  }
}

function lockWith(...entries: Array<{ kind: string; logicalId: string; remoteId: string; payload?: Record<string, unknown> }>): LockFile {
  const lock = emptyLock(target)
  for (const e of entries) {
    lock.resources[`${e.kind}:${e.logicalId}`] = {
      kind: e.kind as never,
      logicalId: e.logicalId,
      remoteId: e.remoteId,
      appliedHash: e.payload ? appliedHash(e.kind as never, e.payload) : 'sha256:x',
    }
  }
  return lock
}

describe('reorders', () => {
  it('shows a new order of cards beside a change of another field', () => {
    const page = desired('status-page', 'p', {
      name: 'P',
      url: 'p',
      defaultTheme: 'DARK',
      cards: [
        { name: 'B', services: [] },
        { name: 'A', services: [] },
      ],
    })
    const record = {
      id: 'p1',
      name: 'P',
      url: 'p',
      defaultTheme: 'AUTO',
      cards: [
        { id: 'c1', name: 'A', services: [] },
        { id: 'c2', name: 'B', services: [] },
      ],
    }
    const plan = computePlan({
      desired: [page],
      lock: lockWith({ kind: 'status-page', logicalId: 'p', remoteId: 'p1' }),
      remote: remote({ 'status-page': { p1: record } }),
      target,
    })
    expect(plan.changes[0].fieldDiffs).toEqual([
      { path: 'cards', old: ['A', 'B'], new: ['B', 'A'] },
      { path: 'defaultTheme', old: 'AUTO', new: 'DARK' },
    ])
  })
})

describe('deletes the service would refuse (409)', () => {
  it('names a check that stays and still triggers incidents on a service being deleted', () => {
    const check = {
      id: 'c1',
      checkType: 'DNS',
      name: 'Unmanaged',
      request: { query: 'x.example.com' },
      triggerIncident: { serviceId: 's1', severity: 'MAJOR', name: 'x', description: 'x' },
    }
    const plan = computePlan({
      desired: [],
      lock: lockWith({ kind: 'status-page-service', logicalId: 'svc', remoteId: 's1' }),
      remote: remote({ 'status-page-service': { s1: { id: 's1', name: 'Svc' } } }),
      users: { 'dns-check': { c1: check } },
      target,
    })
    expect(plan.blocked).toEqual([expect.objectContaining({ kind: 'status-page-service', logicalId: 'svc', remoteId: 's1' })])
    expect(plan.blocked![0].usedBy[0]).toContain('triggerIncident')
    expect(() => assertNotBlocked(plan)).toThrow(/status-page-service svc .*still used by dns-check c1 "Unmanaged"/)
  })

  it('does not block a delete whose user is deleted or updated in the same plan', () => {
    const page = { id: 'p1', name: 'P', url: 'p', cards: [{ name: 'A', services: [{ id: 's1' }] }] }
    const plan = computePlan({
      desired: [],
      lock: lockWith({ kind: 'status-page-service', logicalId: 'svc', remoteId: 's1' }, { kind: 'status-page', logicalId: 'p', remoteId: 'p1' }),
      remote: remote({ 'status-page-service': { s1: { id: 's1', name: 'Svc' } }, 'status-page': { p1: page } }),
      target,
    })
    expect(plan.blocked).toBeUndefined()
  })
})

describe('duplicates', () => {
  it('marks a create whose name an unmanaged check has, and not one a lock entry manages', () => {
    const a = dns('a')
    const b = dns('b')
    const records = {
      r1: { ...a.payload, id: 'r1' },
      r2: { ...b.payload, id: 'r2' },
    }
    const plan = computePlan({
      desired: [a, b],
      lock: lockWith({ kind: 'dns-check', logicalId: 'other', remoteId: 'r2' }),
      remote: remote({ 'dns-check': records }),
      target,
    })
    const byId = Object.fromEntries(plan.changes.map((c) => [c.logicalId, c]))
    expect(byId.a.duplicateOf).toEqual({ remoteId: 'r1', name: 'DNS a' })
    expect(byId.b.duplicateOf).toBeUndefined()
    expect(() => assertNoDuplicates(plan)).toThrow(/--adopt-existing.*--allow-duplicates/s)
    expect(() => assertNoDuplicates(plan, { allowDuplicates: true })).not.toThrow()

    const adopted = computePlan({ desired: [a], lock: undefined, remote: remote({ 'dns-check': records }), target, adoptExisting: true })
    expect(adopted.changes[0]).toMatchObject({ action: 'update', remoteId: 'r1', adopted: true })
    expect(adopted.changes[0].fieldDiffs ?? []).toEqual([])
    // adopting says whose it may be: never a silent take-over
    expect(adopted.changes[0].reason).toMatch(/another project/)
  })

  it('a duplicate apply refuses is counted apart, not as a create; --allow-duplicates makes it a create (a copy), never for a variable', () => {
    const a = dns('a')
    const b = dns('b')
    const token = desired('variable', 'TOKEN', { key: 'TOKEN', value: 'v' })
    const records = { 'dns-check': { r1: { ...a.payload, id: 'r1' } }, variable: { TOKEN: { key: 'TOKEN', value: 'x', id: 'TOKEN' } } }
    const plan = computePlan({ desired: [a, b, token], lock: undefined, remote: remote(records), target })
    expect(plan.summary).toMatchObject({ create: 1, duplicate: 2 })
    const byId = Object.fromEntries(plan.changes.map((c) => [c.logicalId, c]))
    // the hint says it may be another project's, and what adopting it means
    expect(byId.a.reason).toMatch(
      /which this project's lock does not record \(duplicate\): .*or it belongs to another project; .*--adopt-existing records the existing one, taking it over/,
    )
    expect(() => assertNoDuplicates(plan)).toThrow(
      /a\.check\.ts › dns-check "a" › name: already exists remotely as id r1 "DNS a", which this project's lock does not record/,
    )
    expect(() => assertNoDuplicates(plan)).toThrow(/TOKEN\.check\.ts › variable "TOKEN" › key: .*cannot exist twice/)
    expect(() => assertNoDuplicates(plan)).toThrow(/another project .* may manage them/)

    const copies = computePlan({ desired: [a, b, token], lock: undefined, remote: remote(records), target, allowDuplicates: true })
    expect(copies.summary).toMatchObject({ create: 2, duplicate: 1 })
    expect(copies.changes.find((c) => c.logicalId === 'a')!.duplicateOf).toEqual({ remoteId: 'r1', name: 'DNS a', copy: true })
    expect(copies.changes.find((c) => c.logicalId === 'TOKEN')!.duplicateOf).toEqual({ remoteId: 'TOKEN', name: 'TOKEN' })
  })
})

describe('alert channels of two projects in one account', () => {
  const email = (logicalId: string, address: string) => desired('email-alert-channel', logicalId, { type: 'EMAIL', config: { address } })
  const record = (id: number, address: string) => ({ ...email('x', address).payload, id, created_at: '2026-01-01T00:00:00Z' })

  it("another project's email channel is no duplicate: the create is made, the other named and never adopted, with or without the same address", () => {
    const mine = email('oncall', 'oncall@example.com')
    for (const address of ['oncall@example.com', 'other@example.com']) {
      const records = { 'email-alert-channel': { 7: record(7, address) } }
      for (const adoptExisting of [false, true]) {
        const plan = computePlan({ desired: [mine], lock: undefined, remote: remote(records), target, adoptExisting })
        expect(plan.changes[0]).toMatchObject({ action: 'create', logicalId: 'oncall' })
        expect(plan.changes[0].duplicateOf).toBeUndefined()
        expect(plan.changes[0].adopted).toBeUndefined()
        expect(plan.summary).toMatchObject({ create: 1, duplicate: 0 })
        expect(() => assertNoDuplicates(plan)).not.toThrow()
        // only a channel alike (the same address) is named
        if (address === 'oncall@example.com')
          expect(plan.changes[0].reason).toMatch(
            /an unmanaged one alike exists as id 7 "oncall@example.com" \(another project's, .*\): this creates one of this project's own/,
          )
        else expect(plan.changes[0].reason).toBeUndefined()
      }
    }
  })

  it("a lost create of a channel is found again by type and address, never as another project's channel of another address", () => {
    const mine = email('oncall', 'oncall@example.com')
    const lock = emptyLock(target)
    lock.pending = {
      'email-alert-channel:oncall': {
        kind: 'email-alert-channel',
        logicalId: 'oncall',
        appliedHash: appliedHash('email-alert-channel', mine.payload),
        match: { type: 'EMAIL', 'config.address': 'oncall@example.com' },
      },
    }
    const others = computePlan({ desired: [mine], lock, remote: remote({ 'email-alert-channel': { 7: record(7, 'other@example.com') } }), target })
    expect(others.changes[0]).toMatchObject({ action: 'create' })
    expect(others.changes[0].adopted).toBeUndefined()
    const found = computePlan({
      desired: [mine],
      lock,
      remote: remote({ 'email-alert-channel': { 7: record(7, 'other@example.com'), 8: record(8, 'oncall@example.com') } }),
      target,
    })
    expect(found.changes[0]).toMatchObject({ action: 'update', remoteId: '8', adopted: true })
  })
})

describe('resource options', () => {
  it('plans a change of retainOnDelete as a lock-only update, counted in the summary', () => {
    const check = dns('a')
    const lock = lockWith({ kind: 'dns-check', logicalId: 'a', remoteId: 'r1', payload: check.payload })
    lock.resources['dns-check:a'].retainOnDelete = true
    const plan = computePlan({ desired: [check], lock, remote: remote({ 'dns-check': { r1: { ...check.payload, id: 'r1' } } }), target })
    expect(plan.changes[0]).toMatchObject({ action: 'update', lockOnly: true, fieldDiffs: [{ path: 'retainOnDelete', old: true, new: false, lockOnly: true }] })
    expect(plan.summary.update).toBe(1)
  })
})
