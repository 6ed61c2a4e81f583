/**
 * The engine's core loop against the real local server: plan → apply → plan says no changes,
 * then an edit, a removal, secrets and references, all through the library (no CLI).
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { planAgainst, renderPlanText, type Plan } from '../../src/plan/index.js'
import { executePlan } from '../../src/apply/execute.js'
import { emptyLock, readLock, type LockFile } from '../../src/state/lock.js'
import type { DesiredResource } from '../../src/resources/types.js'
import { desired, dns, icmp, tempDir } from './helpers.js'

let server: LocalServer
let client: ApiClient

beforeAll(async () => {
  server = await startLocalServer({ apiKeys: [{ key: 'loop-key', accountId: 'loop' }] })
  client = new ApiClient({ baseUrl: server.url, apiKey: 'loop-key', accountId: 'loop' })
})
afterAll(async () => {
  await client?.close()
  await server?.close()
})

const target = () => ({ id: server.url, baseUrl: server.url, accountId: 'loop' })

async function cycle(lockPath: string, resources: DesiredResource[]): Promise<{ before: Plan; after: Plan; lock: LockFile }> {
  const lock = readLock(lockPath) ?? emptyLock(target())
  const { plan: before } = await planAgainst({ client, desired: resources, lock, target: target() })
  const result = await executePlan({ plan: before, desired: resources, client, lock, lockPath })
  expect(result.failed.map((f) => f.error?.message)).toEqual([])
  const written = readLock(lockPath)!
  const { plan: after } = await planAgainst({ client, desired: resources, lock: written, target: target() })
  return { before, after, lock: written }
}

describe('plan and apply against the local server', () => {
  it('creates, then reports no changes, updates one field, deletes what left the code', async () => {
    const lockPath = join(tempDir(), 'monitoring.lock.json')
    const first = await cycle(lockPath, [dns('shop', { tags: ['b', 'a'], locations: ['eu-west-1', 'us-east-1'] }), icmp('edge')])
    expect(first.before.summary).toMatchObject({ create: 2, update: 0, delete: 0 })
    expect(renderPlanText(first.before)).toContain('Plan: 2 to create, 0 to update, 0 to delete.')
    expect(first.after.summary).toMatchObject({ create: 0, update: 0, delete: 0, noop: 2 })
    expect(renderPlanText(first.after)).toContain('No changes.')
    expect(Object.keys(first.lock.resources).sort()).toEqual(['dns-check:shop', 'icmp-check:edge'])

    const second = await cycle(lockPath, [dns('shop', { tags: ['a', 'b'], locations: ['us-east-1', 'eu-west-1'], frequency: 5 }), icmp('edge')])
    expect(second.before.summary).toMatchObject({ create: 0, update: 1, delete: 0 })
    const update = second.before.changes.find((c) => c.action === 'update')!
    expect(update.fieldDiffs).toEqual([{ path: 'frequency', old: 10, new: 5 }])
    expect(renderPlanText(second.before)).toContain('~ frequency: 10 → 5')
    expect(second.after.summary.update).toBe(0)

    const third = await cycle(lockPath, [dns('shop', { tags: ['a', 'b'], locations: ['us-east-1', 'eu-west-1'], frequency: 5 })])
    expect(third.before.summary).toMatchObject({ create: 0, update: 0, delete: 1 })
    expect(third.lock.resources['icmp-check:edge']).toBeUndefined()
    const remote = await client.get<unknown[]>('/v1/checks', { limit: 100 })
    expect(remote.body).toHaveLength(1)
  })

  it('never shows an unchanged secret as a change, and shows a changed one masked', async () => {
    const lockPath = join(tempDir(), 'monitoring.lock.json')
    const secret = (value: string) => desired('variable', 'TOKEN', { key: 'TOKEN', value, secret: true })
    const first = await cycle(lockPath, [secret('s3cr3t-one')])
    expect(first.after.summary.update).toBe(0)
    expect(JSON.stringify(first.lock)).not.toContain('s3cr3t-one')
    expect(JSON.stringify(first.before)).not.toContain('s3cr3t-one')

    const second = await cycle(lockPath, [secret('s3cr3t-two')])
    expect(second.before.summary.update).toBe(1)
    const text = renderPlanText(second.before)
    expect(text).toContain('value: (secret changed)')
    expect(text).not.toContain('s3cr3t')
    expect(second.after.summary.update).toBe(0)
  })

  it('resolves references to services created in the same apply and keeps the page stable', async () => {
    const lockPath = join(tempDir(), 'monitoring.lock.json')
    const service = desired('status-page-service', 'checkout', { name: 'Checkout' })
    const page = desired(
      'status-page',
      'main',
      { name: 'Main', url: `main-${Date.now()}`, cards: [{ name: 'Shop', services: [{ id: 'status-page-service:checkout' }] }] },
      [{ path: 'cards.0.services.0.id', kind: 'status-page-service', logicalId: 'checkout' }],
    )
    const first = await cycle(lockPath, [page, service])
    expect(first.before.changes.map((c) => `${c.action} ${c.kind}`)).toEqual(['create status-page-service', 'create status-page'])
    expect(renderPlanText(first.before)).toContain('status-page-service:checkout "Checkout" (known after apply)')
    expect(first.after.summary).toMatchObject({ create: 0, update: 0, delete: 0, noop: 2 })
  })

  it('recreates a resource deleted outside monitors, marked as drift, and counts unmanaged ones', async () => {
    const lockPath = join(tempDir(), 'monitoring.lock.json')
    const { lock } = await cycle(lockPath, [dns('drifty')])
    await client.delete(`/v1/checks/${lock.resources['dns-check:drifty'].remoteId}`)
    await client.post('/v1/checks/dns', { name: 'made by hand', request: { query: 'hand.example.com' } })
    const { before, after } = await cycle(lockPath, [dns('drifty')])
    expect(before.changes[0]).toMatchObject({ action: 'create', drift: true })
    expect(before.unmanaged['dns-check']).toBeGreaterThanOrEqual(1)
    expect(renderPlanText(before)).toMatch(/not in the lock were left alone/)
    expect(after.summary.create).toBe(0)
  })
})
