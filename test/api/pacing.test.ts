import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Pacer, rateLimitFigures, retryAfterMs } from '../../src/api/pacing.js'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'

let server: LocalServer
beforeAll(async () => {
  server = await startLocalServer({ apiKeys: [{ key: 'pacing-key' }], rateLimit: { max: 10, timeWindowMs: 1000 } })
})
afterAll(() => server?.close())

describe('pacing under the rate limit', () => {
  it('sends 35 requests, 4 at a time, through a 10-per-second limit without a single 429', async () => {
    const pacer = new Pacer() // starts from the default figures; the server's headers correct them
    const statuses: number[] = []
    let next = 0
    const started = Date.now()
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < 35) {
          next++
          const slot = await pacer.acquire()
          const res = await request(`${server.url}/v1/runtimes`, { headers: { authorization: 'Bearer pacing-key' } })
          await res.body.dump()
          slot.done(rateLimitFigures(res.headers))
          statuses.push(res.statusCode)
        }
      }),
    )
    expect(statuses).toHaveLength(35)
    expect(statuses.filter((s) => s === 429)).toEqual([])
    expect(statuses.every((s) => s === 200)).toBe(true)
    // 35 requests at 10 per window need at least three window resets
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900)
    expect(pacer.waitedMs).toBeGreaterThan(0)
  })

  it('waits out a pause (a 429 Retry-After) before the next request', async () => {
    let clock = 0
    const pacer = new Pacer({ limit: 100, windowMs: 1000 }, () => clock)
    pacer.pause(200)
    const slot = pacer.acquire()
    let acquired = false
    void slot.then(() => (acquired = true))
    await new Promise((r) => setTimeout(r, 20))
    expect(acquired).toBe(false)
    clock = 250
    await new Promise((r) => setTimeout(r, 250))
    expect(acquired).toBe(true)
  })

  it('reads Retry-After as seconds or as a date', () => {
    expect(retryAfterMs('3')).toBe(3000)
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000)
    expect(retryAfterMs(undefined)).toBeUndefined()
    expect(retryAfterMs('soon')).toBeUndefined()
  })
})
