/** An apply larger than the server's rate limit completes: paced, and a 429 waits and retries. */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { planAgainst } from '../../src/plan/index.js'
import { executePlan } from '../../src/apply/execute.js'
import { emptyLock, readLock } from '../../src/state/lock.js'
import { dns, tempDir } from '../plan/helpers.js'

let server: LocalServer

beforeAll(async () => {
  server = await startLocalServer({ apiKeys: [{ key: 'rl-key', accountId: 'rl' }], rateLimit: { max: 6, timeWindowMs: 1000 } })
})
afterAll(async () => {
  await server?.close()
})

describe('apply under a rate limit', () => {
  it('creates more resources than one window allows, without a single failure', async () => {
    const client = new ApiClient({ baseUrl: server.url, apiKey: 'rl-key', accountId: 'rl' })
    const target = { id: server.url, baseUrl: server.url, accountId: 'rl' }
    const desired = Array.from({ length: 14 }, (_, i) => dns(`rl-${i}`))
    const lockPath = join(tempDir(), 'monitoring.lock.json')
    const { plan } = await planAgainst({ client, desired, lock: undefined, target })
    const result = await executePlan({ plan, desired, client, lock: emptyLock(target), lockPath, concurrency: 8 })
    expect(result.failed.map((f) => f.error?.message)).toEqual([])
    expect(Object.keys(readLock(lockPath)!.resources)).toHaveLength(14)
    const listed = await client.get<unknown[]>('/v1/checks', { limit: 100 })
    expect(listed.body).toHaveLength(14)
    await client.close()
  })

  it('without pacing, a burst over the limit reads as one clear 429 line per refused request', async () => {
    await new Promise((r) => setTimeout(r, 1100))
    const client = new ApiClient({ baseUrl: server.url, apiKey: 'rl-key', accountId: 'rl', pacer: false })
    const burst = await Promise.allSettled(Array.from({ length: 10 }, () => client.get('/v1/variables')))
    // pacing off and no retries without a pacer: some answers are 429, as one clear error each
    const refused = burst.filter((r) => r.status === 'rejected') as PromiseRejectedResult[]
    expect(refused.length).toBeGreaterThan(0)
    expect(refused[0].reason.message).toMatch(/^GET \/v1\/variables was rate limited \(429 .+\)\. Retry in \d+ s, or lower --concurrency\.$/)
    await client.close()
  })
})
