/** A plan applied as steps: one object per change, run in dependency order, each recording its lock change. */
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { planAgainst } from '../../src/plan/index.js'
import { executePlan, orderSteps } from '../../src/apply/execute.js'
import { CreateStep, DeleteStep, ForgetStep, MoveStep, RecordStep, ReplaceStep, UpdateStep, stepFor } from '../../src/apply/steps.js'
import { emptyLock, readLock } from '../../src/state/lock.js'
import type { PlanChange } from '../../src/plan/types.js'
import { dns, tempDir } from '../plan/helpers.js'

const KEY = 'steps-key'
let server: LocalServer | undefined
afterAll(async () => {
  await server?.close()
})

const change = (kind: PlanChange['kind'], logicalId: string, action: PlanChange['action'], extra: Partial<PlanChange> = {}): PlanChange => ({
  kind,
  logicalId,
  action,
  ...extra,
})

describe('apply steps', () => {
  it('one step per change, of the class its action needs; a no-op has none', () => {
    expect(stepFor(change('variable', 'A', 'create'))).toBeInstanceOf(CreateStep)
    expect(stepFor(change('variable', 'A', 'update', { fieldDiffs: [{ path: 'value', old: 'a', new: 'b' }] }))).toBeInstanceOf(UpdateStep)
    expect(stepFor(change('variable', 'A', 'update', { lockOnly: true }))).toBeInstanceOf(RecordStep)
    expect(stepFor(change('variable', 'A', 'update', { adopted: true, fieldDiffs: [] }))).toBeInstanceOf(RecordStep)
    expect(stepFor(change('variable', 'A', 'update', { adopted: true, fieldDiffs: [{ path: 'value', old: 'a', new: 'b' }] }))).toBeInstanceOf(UpdateStep)
    expect(stepFor(change('dns-check', 'd', 'replace'))).toBeInstanceOf(ReplaceStep)
    expect(stepFor(change('dns-check', 'd', 'delete'))).toBeInstanceOf(DeleteStep)
    expect(stepFor(change('dns-check', 'd', 'move', { movedFrom: 'c' }))).toBeInstanceOf(MoveStep)
    expect(stepFor(change('dns-check', 'd', 'forget'))).toBeInstanceOf(ForgetStep)
    expect(stepFor(change('dns-check', 'd', 'noop'))).toBeUndefined()
  })

  it('orders what others reference first, and removals after everything, in reverse', () => {
    const batches = orderSteps([
      change('variable', 'OLD', 'delete'),
      change('status-page', 'page', 'create'),
      change('dns-check', 'd', 'update'),
      change('icmp-check', 'p', 'forget'),
      change('variable', 'NEW', 'create'),
      change('dns-check', 'same', 'noop'),
    ])
    const flat = batches.flat().map((s) => `${s.change.action} ${s.change.kind}:${s.change.logicalId}`)
    expect(flat).toEqual(['create variable:NEW', 'update dns-check:d', 'create status-page:page', 'forget icmp-check:p', 'delete variable:OLD'])
  })

  it('a change of resource options only is recorded in the lock without a request', async () => {
    server = await startLocalServer({ apiKeys: [{ key: KEY, accountId: 'steps' }], rateLimit: { max: 100_000, timeWindowMs: 60_000 } })
    const client = new ApiClient({ baseUrl: server.url, apiKey: KEY, accountId: 'steps' })
    const target = { id: server.url, baseUrl: server.url, accountId: 'steps' }
    const lockPath = join(tempDir(), 'monitoring.lock.json')
    const want = [dns('shop')]
    const { plan } = await planAgainst({ client, desired: want, lock: undefined, target })
    const created = await executePlan({ plan, desired: want, client, lock: emptyLock(target), lockPath })
    expect(created.outcomes.map((o) => [o.verb, o.ok])).toEqual([['created', true]])
    const lock = readLock(lockPath)!
    const remoteId = lock.resources['dns-check:shop'].remoteId
    const before = client.stats().requests
    const result = await executePlan({
      plan: { ...plan, changes: [change('dns-check', 'shop', 'update', { remoteId, lockOnly: true })] },
      desired: want,
      client,
      lock,
      lockPath,
    })
    expect(result.outcomes.map((o) => [o.verb, o.ok, o.remoteId])).toEqual([['updated', true, remoteId]])
    expect(client.stats().requests).toBe(before)
    expect(readLock(lockPath)!.resources['dns-check:shop'].remoteId).toBe(remoteId)
  })
})
