/** computePlan is pure: desired + lock + remote → plan. These cases need no server. */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { computePlan } from '../../src/plan/plan.js'
import { renderPlanText } from '../../src/plan/render/text.js'
import { renderPlanMarkdown } from '../../src/plan/render/markdown.js'
import { planToJson } from '../../src/plan/render/json.js'
import { selectTargets } from '../../src/plan/select.js'
import type { RemoteState } from '../../src/api/resources.js'
import { RESOURCE_KINDS } from '../../src/resources/registry.js'
import { appliedHash, secretHashOf } from '../../src/resources/hashes.js'
import { emptyLock, entriesByKind, readLock, writeLock, assertLockTarget, type LockFile } from '../../src/state/lock.js'
import { kindsToRead } from '../../src/plan/index.js'
import { desired, dns, icmp, tempDir } from './helpers.js'

const target = { id: 'https://api.example.com', baseUrl: 'https://api.example.com', accountId: 'acc' }

function remote(records: Partial<RemoteState['records']> = {}, foreign: Record<string, number> = {}): RemoteState {
  return {
    records: { ...(Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, {}])) as RemoteState['records']), ...records },
    foreign,
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
      ...(e.payload ? { secretHash: secretHashOf(e.kind as never, e.payload) } : {}),
    }
  }
  return lock
}

describe('computePlan', () => {
  it('treats server-side fields, null vs missing and the order of sets as no change', () => {
    const check = dns('a', { tags: ['x', 'y'], locations: ['us-east-1', 'eu-west-1'] })
    const record = {
      ...check.payload,
      id: 'id-a',
      created_at: '2026-01-01',
      updated_at: null,
      groupId: null,
      runtimeId: null,
      tags: ['y', 'x'],
      locations: ['eu-west-1', 'us-east-1'],
    }
    const plan = computePlan({
      desired: [check],
      lock: lockWith({ kind: 'dns-check', logicalId: 'a', remoteId: 'id-a' }),
      remote: remote({ 'dns-check': { 'id-a': record } }),
      target,
    })
    expect(plan.changes).toMatchObject([{ action: 'noop', remoteId: 'id-a' }])
    expect(renderPlanText(plan)).toMatch(/^No changes\./)
  })

  it('hashes the desired payload of the changes to run only, not of the unchanged resources', () => {
    const same = dns('same')
    const changed = dns('changed', { frequency: 5 })
    const plan = computePlan({
      desired: [same, changed, dns('new')],
      lock: lockWith({ kind: 'dns-check', logicalId: 'same', remoteId: 'id-s' }, { kind: 'dns-check', logicalId: 'changed', remoteId: 'id-c' }),
      remote: remote({ 'dns-check': { 'id-s': { ...same.payload, id: 'id-s' }, 'id-c': { ...changed.payload, frequency: 10, id: 'id-c' } } }),
      target,
    })
    const byId = Object.fromEntries(plan.changes.map((c) => [c.logicalId, c]))
    expect(byId.same).toMatchObject({ action: 'noop' })
    expect(byId.same.desiredHash).toBeUndefined()
    expect(byId.changed).toMatchObject({ action: 'update', desiredHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) })
    expect(byId.new).toMatchObject({ action: 'create', desiredHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) })
  })

  it('fills defaults a remote record leaves out before comparing', () => {
    const check = dns('a')
    const { activated: _a, muted: _m, doubleCheck: _d, ...sparse } = check.payload
    const plan = computePlan({
      desired: [check],
      lock: lockWith({ kind: 'dns-check', logicalId: 'a', remoteId: 'id-a' }),
      remote: remote({ 'dns-check': { 'id-a': { id: 'id-a', ...sparse } } }),
      target,
    })
    expect(plan.summary).toMatchObject({ update: 0, noop: 1 })
  })

  it('orders creates by dependency and deletes in reverse, and counts what the lock does not know', () => {
    const plan = computePlan({
      desired: [dns('b'), desired('variable', 'V', { key: 'V', value: '1' })],
      lock: lockWith({ kind: 'status-page', logicalId: 'old-page', remoteId: 'p1' }, { kind: 'status-page-service', logicalId: 'old-service', remoteId: 's1' }),
      remote: remote(
        { 'status-page': { p1: { id: 'p1', name: 'Old' } }, 'status-page-service': { s1: { id: 's1', name: 'S' }, s2: { id: 's2', name: 'T' } } },
        { 'api-check': 2 },
      ),
      target,
    })
    expect(plan.changes.map((c) => `${c.action} ${c.kind}`)).toEqual([
      'create variable',
      'create dns-check',
      'delete status-page',
      'delete status-page-service',
    ])
    expect(plan.unmanaged).toEqual({ 'status-page-service': 1, 'api-check': 2 })
    expect(plan.summary).toMatchObject({ create: 2, update: 0, delete: 2 })
  })

  it('forgets a resource gone from both the code and the service, marked as drift', () => {
    const plan = computePlan({ desired: [], lock: lockWith({ kind: 'dns-check', logicalId: 'gone', remoteId: 'x' }), remote: remote(), target })
    expect(plan.changes).toMatchObject([{ action: 'delete', drift: true }])
    expect(renderPlanText(plan)).toContain('only forgotten from the lock')
  })

  it('hints at aliases for a delete and a create of one kind with the same name (a rename without aliases), in text, markdown and JSON', () => {
    const old = dns('shop-dns', { name: 'Shop DNS' })
    const renamed = { ...dns('shop-dns-v2', { name: 'Shop DNS' }), file: 'checks/shop.check.ts' }
    const lock = lockWith(
      { kind: 'dns-check', logicalId: 'shop-dns', remoteId: 'r1', payload: old.payload },
      { kind: 'dns-check', logicalId: 'gone', remoteId: 'r2', payload: dns('gone').payload },
    )
    lock.resources['dns-check:shop-dns'].name = 'Shop DNS'
    // another kind of the same name, a create of another name and a delete already gone outside monitors: no hint
    const records = { 'dns-check': { r1: { ...old.payload, id: 'r1' }, r2: { ...dns('gone').payload, id: 'r2' } } }
    const plan = computePlan({ desired: [renamed, dns('new-one'), icmp('shop-dns', { name: 'Shop DNS' })], lock, remote: remote(records), target })
    expect(
      plan.changes
        .filter((c) => c.action !== 'noop')
        .map((c) => `${c.action} ${c.kind}:${c.logicalId}`)
        .sort(),
    ).toEqual(['create dns-check:new-one', 'create dns-check:shop-dns-v2', 'create icmp-check:shop-dns', 'delete dns-check:gone', 'delete dns-check:shop-dns'])
    expect(plan.renames).toEqual([{ kind: 'dns-check', from: 'shop-dns', to: 'shop-dns-v2', name: 'Shop DNS', file: 'checks/shop.check.ts' }])
    const sentence =
      'dns-check shop-dns is deleted and dns-check shop-dns-v2 created, both named "Shop DNS": ' +
      "if it is a rename, add aliases: ['shop-dns'] to shop-dns-v2 (checks/shop.check.ts) to keep the resource (its id and history) instead"
    expect(renderPlanText(plan)).toContain(`Hint: ${sentence}.`)
    expect(renderPlanMarkdown(plan)).toContain(
      `> **Hint:** dns-check shop-dns is deleted and dns-check shop-dns-v2 created, both named "Shop DNS": if it is a rename, add aliases: \\['shop-dns'\\] to shop-dns-v2`,
    )
    expect(planToJson(plan).renames).toEqual([
      { kind: 'dns-check', from: 'shop-dns', to: 'shop-dns-v2', name: 'Shop DNS', file: 'checks/shop.check.ts', hint: sentence },
    ])
    // a --target selection keeps the hint only with both sides in it
    expect(selectTargets(plan, ['dns-check:shop-dns-v2']).renames).toBeUndefined()
    expect(selectTargets(plan, ['dns-check:shop-dns-v2', 'dns-check:shop-dns']).renames).toHaveLength(1)

    // with the alias, a rename (an update: the query differs) and no hint
    const moved = computePlan({ desired: [{ ...renamed, options: { aliases: ['shop-dns'] } }], lock, remote: remote(records), target })
    expect(moved.changes.find((c) => c.logicalId === 'shop-dns-v2')).toMatchObject({ action: 'update', movedFrom: 'shop-dns' })
    expect(moved.renames).toBeUndefined()
    expect(planToJson(moved).renames).toEqual([])
    expect(renderPlanText(moved)).not.toContain('Hint:')
  })

  it('replaces a variable whose key changed and one that stops being secret', () => {
    const lock = lockWith(
      { kind: 'variable', logicalId: 'token', remoteId: 'OLD_KEY' },
      { kind: 'variable', logicalId: 'pw', remoteId: 'PW', payload: { key: 'PW', value: 'p', locked: false, secret: true } },
    )
    const plan = computePlan({
      desired: [desired('variable', 'token', { key: 'NEW_KEY', value: 'v' }), desired('variable', 'pw', { key: 'PW', value: 'p' })],
      lock,
      remote: remote({
        variable: { OLD_KEY: { key: 'OLD_KEY', value: 'v', locked: false, secret: false }, PW: { key: 'PW', value: '', locked: false, secret: true } },
      }),
      target,
    })
    expect(plan.changes.map((c) => [c.logicalId, c.action])).toEqual([
      ['pw', 'replace'],
      ['token', 'replace'],
    ])
    expect(plan.summary).toMatchObject({ create: 2, delete: 2 })
    const text = renderPlanText(plan)
    expect(text).toContain('the key of a variable cannot change (OLD_KEY → NEW_KEY)')
    expect(text).toContain('a secret variable cannot be made non-secret')
  })

  it('keeps secret values out of the plan data, even for a new secret', () => {
    const plan = computePlan({ desired: [desired('variable', 'S', { key: 'S', value: 'hunter2', secret: true })], lock: undefined, remote: remote(), target })
    expect(JSON.stringify(plan)).not.toContain('hunter2')
    expect(renderPlanText(plan)).toContain('+ value: (secret)')
  })

  it('is deterministic: the same inputs give the same plan', () => {
    const input = { desired: [dns('a'), dns('b', { frequency: 5 })], lock: undefined, remote: remote(), target }
    expect(JSON.stringify(computePlan(input))).toBe(JSON.stringify(computePlan(input)))
  })
})

describe('the lock file', () => {
  it('is sorted JSON with a trailing newline, written without leaving temporary files', () => {
    const dir = tempDir()
    const path = join(dir, 'monitoring.lock.json')
    const lock = lockWith({ kind: 'variable', logicalId: 'Z', remoteId: 'Z' }, { kind: 'dns-check', logicalId: 'a', remoteId: '1' })
    writeLock(path, lock)
    const text = readFileSync(path, 'utf8')
    expect(text.endsWith('}\n')).toBe(true)
    expect(text.indexOf('"dns-check:a"')).toBeLessThan(text.indexOf('"variable:Z"'))
    expect(text.indexOf('"resources"')).toBeLessThan(text.indexOf('"target"'))
    expect(readdirSync(dir)).toEqual(['monitoring.lock.json'])
    expect(readLock(path)).toEqual(lock)
  })

  it('refuses a broken lock with a message that says what to do', () => {
    const dir = tempDir()
    const path = join(dir, 'monitoring.lock.json')
    writeLock(path, emptyLock(target))
    writeFileSync(path, '<<<<<<< HEAD\n{}')
    expect(() => readLock(path)).toThrow(/not valid JSON .*conflict markers/)
  })

  it('accepts its own target and refuses another', () => {
    const lock = emptyLock(target)
    expect(() => assertLockTarget(lock, { ...target }, 'x.json')).not.toThrow()
    expect(() => assertLockTarget(lock, { id: 'local', baseUrl: 'embedded:.monitors/local.db', accountId: 'local' }, 'x.json')).toThrow(
      /belongs to https:\/\/api.example.com \(account acc\), but the target is the embedded local server/,
    )
  })
})

describe('the kinds a plan reads', () => {
  it('reads the kinds in the code, in the lock and in its pending creates; the lock is indexed once per lock object', () => {
    const lock = lockWith(
      { kind: 'icmp-check', logicalId: 'ping', remoteId: 'r1' },
      { kind: 'variable', logicalId: 'KEY', remoteId: 'KEY' },
      { kind: 'icmp-check', logicalId: 'ping-2', remoteId: 'r2' },
    )
    lock.pending = {
      'status-page:home': { kind: 'status-page', logicalId: 'home', appliedHash: 'sha256:x', identity: { url: 'home' } },
    } as unknown as LockFile['pending']
    expect(kindsToRead([dns('homepage-dns')], lock).sort()).toEqual(['dns-check', 'icmp-check', 'status-page', 'variable'])
    const index = entriesByKind(lock)
    expect(index.get('icmp-check')?.map((e) => e.logicalId)).toEqual(['ping', 'ping-2'])
    expect(index.get('dns-check')).toBeUndefined()
    expect(entriesByKind(lock)).toBe(index)
    expect(entriesByKind(undefined).size).toBe(0)
  })
})
