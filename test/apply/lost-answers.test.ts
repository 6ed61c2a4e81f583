/** Creates whose answers are lost: adopted from the list, never made twice, in one run and across runs. */
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { computePlan, hasChanges, planAgainst, renderPlanText } from '../../src/plan/index.js'
import { ADOPTED_REASON, ORPHAN_REASON } from '../../src/plan/adopt.js'
import { executePlan } from '../../src/apply/execute.js'
import { emptyLock, readLock, writeLock, type LockFile } from '../../src/state/lock.js'
import { pendingCreate } from '../../src/state/pending.js'
import { fetchRemoteState } from '../../src/api/resources.js'
import { desired, dns, icmp, tempDir } from '../plan/helpers.js'
import type { DesiredResource } from '../../src/resources/types.js'

const KEY = 'lost-answers-key'
const servers: LocalServer[] = []
afterAll(async () => {
  for (const server of servers) await server.close()
})

async function setup(faults?: string, seed = 1) {
  const server = await startLocalServer({ apiKeys: [{ key: KEY, accountId: 'lost' }], faults, seed, rateLimit: { max: 100_000, timeWindowMs: 60_000 } })
  servers.push(server)
  const client = new ApiClient({ baseUrl: server.url, apiKey: KEY, accountId: 'lost', retry: { retries: 5, baseMs: 5, maxMs: 50 } })
  const target = { id: server.url, baseUrl: server.url, accountId: 'lost' }
  return { server, client, target, lockPath: join(tempDir(), 'monitoring.lock.json') }
}

function project(n: number): DesiredResource[] {
  const out: DesiredResource[] = []
  for (let i = 0; i < n; i++) {
    if (i % 4 === 0) out.push(desired('variable', `VAR_${i}`, { key: `VAR_${i}`, value: `v${i}`, secret: i % 8 === 0 }))
    else if (i % 4 === 1) out.push(icmp(`ping-${i}`))
    else out.push(dns(`dns-${i}`))
  }
  return out
}

describe('lost answers to creates', () => {
  it('an apply under resets and 500s makes every resource exactly once', async () => {
    const { server, client, target, lockPath } = await setup('reset:0.15,500:0.1', 21)
    const want = project(40)
    let recovered = 0
    let runs = 0
    for (; runs < 5; runs++) {
      const lock = readLock(lockPath)
      const { plan } = await planAgainst({ client, desired: want, lock, target })
      if (!hasChanges(plan)) break
      const result = await executePlan({
        plan,
        desired: want,
        client,
        lock: lock ?? emptyLock(target),
        lockPath,
        concurrency: 4,
        createRetry: { baseMs: 5, maxMs: 50 },
      })
      recovered += result.recovered
    }
    expect(runs).toBeLessThan(5)
    const remote = await fetchRemoteState(client, ['variable', 'dns-check', 'icmp-check'])
    const names = [
      ...Object.values(remote.records['dns-check']).map((r) => r.name),
      ...Object.values(remote.records['icmp-check']).map((r) => r.name),
      ...Object.keys(remote.records.variable),
    ]
    expect(names).toHaveLength(40)
    expect(new Set(names).size).toBe(40)
    const lock = readLock(lockPath)!
    expect(Object.keys(lock.resources)).toHaveLength(40)
    expect(lock.pending).toBeUndefined()
    expect(server.faultCounts()!.reset).toBeGreaterThan(0)
    expect(recovered).toBeGreaterThan(0)
    await client.close()
  })

  it('the next plan adopts what a lost create made, and apply records it without a request', async () => {
    const { client, target, lockPath } = await setup()
    const a = dns('adopt-me')
    const b = dns('never-made')
    const lock: LockFile = emptyLock(target)
    lock.pending = {
      'dns-check:adopt-me': pendingCreate('dns-check', 'adopt-me', a.payload),
      'dns-check:never-made': pendingCreate('dns-check', 'never-made', b.payload),
    }
    writeLock(lockPath, lock)
    // what the lost POST made, plus a same-named check someone else manages (already in the lock)
    const made = await client.post<{ id: string }>('/v1/checks/dns', a.payload)
    const { plan } = await planAgainst({ client, desired: [a, b], lock: readLock(lockPath), target })
    const adopt = plan.changes.find((c) => c.logicalId === 'adopt-me')!
    expect(adopt).toMatchObject({ action: 'update', adopted: true, remoteId: made.body.id })
    expect(adopt.fieldDiffs ?? []).toEqual([])
    expect(plan.changes.find((c) => c.logicalId === 'never-made')!.action).toBe('create')

    const before = client.requestCount()
    const result = await executePlan({ plan, desired: [a, b], client, lock: readLock(lockPath)!, lockPath })
    expect(result.failed).toEqual([])
    expect(client.requestCount() - before).toBe(1) // the POST of never-made only
    const after = readLock(lockPath)!
    expect(after.resources['dns-check:adopt-me'].remoteId).toBe(made.body.id)
    expect(after.pending).toBeUndefined()
    const again = await planAgainst({ client, desired: [a, b], lock: after, target })
    expect(hasChanges(again.plan)).toBe(false)
    expect((await client.get<unknown[]>('/v1/checks', { limit: 100 })).body).toHaveLength(2)
    await client.close()
  })

  it('deletes what a lost create made when its construct has left the code since', async () => {
    const { client, target, lockPath } = await setup()
    const gone = dns('gone-since', { frequency: 15 })
    const made = await client.post<{ id: string }>('/v1/checks/dns', gone.payload)
    const lock = emptyLock(target)
    lock.pending = { 'dns-check:gone-since': pendingCreate('dns-check', 'gone-since', gone.payload) }
    writeLock(lockPath, lock)
    const { plan } = await planAgainst({ client, desired: [], lock, target })
    expect(plan.changes).toEqual([
      expect.objectContaining({ kind: 'dns-check', logicalId: 'gone-since', action: 'delete', remoteId: made.body.id, adopted: true, reason: ORPHAN_REASON }),
    ])
    expect(renderPlanText(plan)).toContain(`# ${ORPHAN_REASON}`)
    const result = await executePlan({ plan, desired: [], client, lock, lockPath, concurrency: 1 })
    expect(result.failed).toEqual([])
    expect((await client.get<unknown[]>('/v1/checks', { limit: 100 })).body).toEqual([])
    expect(readLock(lockPath)?.pending).toBeUndefined()
    await client.close()
  })

  it('adopts the record whose content was sent when several share the name, and never one the lock manages', async () => {
    const { client, target } = await setup()
    const want = dns('twin', { frequency: 30 })
    const managed = await client.post<{ id: string }>('/v1/checks/dns', want.payload)
    const other = await client.post<{ id: string }>('/v1/checks/dns', { ...want.payload, frequency: 60 })
    const lost = await client.post<{ id: string }>('/v1/checks/dns', want.payload)
    const lock = emptyLock(target)
    lock.resources['dns-check:first'] = { kind: 'dns-check', logicalId: 'first', remoteId: managed.body.id, appliedHash: 'sha256:x' }
    lock.pending = { 'dns-check:twin': pendingCreate('dns-check', 'twin', want.payload) }
    const remote = await fetchRemoteState(client, ['dns-check'])
    const plan = computePlan({ desired: [want, { ...dns('first'), payload: want.payload }], lock, remote, target })
    expect(plan.changes.find((c) => c.logicalId === 'twin')).toMatchObject({ adopted: true, remoteId: lost.body.id })
    expect(other.body.id).not.toBe(lost.body.id)
    // a reviewer reads why an existing resource appears under this logical id
    expect(renderPlanText(plan)).toContain(`~ dns-check twin`)
    expect(renderPlanText(plan)).toContain(`# ${ADOPTED_REASON}`)
    await client.close()
  })
})
