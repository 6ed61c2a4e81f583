/**
 * The leased work loop on its own, with a source of work held in memory: concurrency, claiming
 * again as slots free, backing off while the source is away and resuming by itself, lost
 * leases, and stopping (grace, abort, giving back what was claimed while stopping). The
 * scheduler's, the agent's and the alert sender's tests run it against their real sources.
 */
import { describe, expect, it } from 'vitest'
import { RunLoop, type WorkSource } from '../../src/runner/run-loop.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await sleep(5)
  }
}

/** Items 1..n to claim; a claim may be made to fail; extends answer `leased`. */
function queue(n: number) {
  const waiting = Array.from({ length: n }, (_, i) => i + 1)
  const state = { failing: false, claims: 0, maxAsked: 0, leased: new Set<number>(), lost: new Set<number>(), released: [] as number[], extended: 0 }
  const source: WorkSource<number> = {
    claim: async (max) => {
      state.claims++
      state.maxAsked = Math.max(state.maxAsked, max)
      if (state.failing) throw new Error('the database is away')
      const items = waiting.splice(0, max)
      for (const i of items) state.leased.add(i)
      return items
    },
    extend: async (item) => {
      state.extended++
      return !state.lost.has(item)
    },
    release: async (item) => {
      state.released.push(item)
      waiting.unshift(item)
    },
  }
  return { source, state, waiting }
}

describe('the leased work loop', () => {
  it('works at most `concurrency` items at once, claims again as slots free, until the source is empty', async () => {
    const { source, state } = queue(20)
    let running = 0
    let peak = 0
    const done: number[] = []
    const loop = new RunLoop<number>({
      source,
      key: String,
      concurrency: 3,
      pollMs: 20,
      work: async (item) => {
        running++
        peak = Math.max(peak, running)
        await sleep(10)
        running--
        done.push(item)
      },
    })
    loop.start()
    await until(() => done.length === 20)
    await loop.stop()
    expect(peak).toBe(3)
    expect(state.maxAsked).toBeLessThanOrEqual(3)
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    expect(loop.stats()).toMatchObject({ claimed: 20, worked: 20, inFlight: 0 })
  })

  it('backs off while claims fail and resumes by itself when the source is back', async () => {
    const { source, state } = queue(5)
    state.failing = true
    const failures: number[] = []
    let recoveredAfter = 0
    const done: number[] = []
    const loop = new RunLoop<number>({
      source,
      key: String,
      concurrency: 2,
      pollMs: 10,
      backoffMs: () => 15,
      onClaimError: (_error, n) => {
        failures.push(n)
        return 'retry'
      },
      onRecovered: (n) => (recoveredAfter = n),
      work: async (item) => {
        done.push(item)
      },
    })
    loop.start()
    await until(() => failures.length >= 3)
    expect(done).toEqual([])
    state.failing = false
    await until(() => done.length === 5)
    await loop.stop()
    expect(failures.slice(0, 3)).toEqual([1, 2, 3])
    expect(recoveredAfter).toBeGreaterThanOrEqual(3)
    expect(loop.stats().claimFailures).toBe(failures.length)
  })

  it('ends on its own when a failed claim will not change', async () => {
    const { source, state } = queue(5)
    state.failing = true
    const loop = new RunLoop<number>({
      source,
      key: String,
      concurrency: 2,
      pollMs: 10,
      onClaimError: () => 'stop',
      work: async () => undefined,
    })
    loop.start()
    await loop.done
    expect(state.claims).toBe(1)
    expect((loop.stoppedBy as Error).message).toBe('the database is away')
  })

  it('aborts the work of an item whose lease was lost', async () => {
    const { source, state } = queue(2)
    state.lost.add(1)
    const aborted: number[] = []
    const finished: number[] = []
    const loop = new RunLoop<number>({
      source,
      key: String,
      concurrency: 2,
      pollMs: 10,
      extendEveryMs: 20,
      work: (item, signal) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            finished.push(item)
            resolve()
          }, 150)
          signal.addEventListener('abort', () => {
            clearTimeout(timer)
            aborted.push(item)
            resolve()
          })
        }),
    })
    loop.start()
    await until(() => aborted.length + finished.length === 2)
    await loop.stop()
    expect(aborted).toEqual([1])
    expect(finished).toEqual([2])
    expect(loop.stats().lost).toBe(1)
    expect(state.extended).toBeGreaterThanOrEqual(2)
  })

  it('on stop, claims nothing new, gives the items in flight their grace, then aborts them', async () => {
    const { source, state } = queue(10)
    const outcomes: string[] = []
    const loop = new RunLoop<number>({
      source,
      key: String,
      concurrency: 2,
      pollMs: 10,
      graceMs: 50,
      work: (item, signal) =>
        new Promise<void>((resolve) => {
          // item 1 finishes within the grace, item 2 would take far longer
          const timer = setTimeout(
            () => {
              outcomes.push(`${item} finished`)
              resolve()
            },
            item === 1 ? 20 : 10_000,
          )
          signal.addEventListener('abort', () => {
            clearTimeout(timer)
            outcomes.push(`${item} aborted`)
            resolve()
          })
        }),
    })
    loop.start()
    await until(() => loop.size === 2)
    const claims = state.claims
    const started = Date.now()
    await loop.stop()
    expect(Date.now() - started).toBeLessThan(5000)
    expect(outcomes.sort()).toEqual(['1 finished', '2 aborted'])
    expect(state.claims).toBe(claims)
    expect(loop.stats().inFlight).toBe(0)
  })

  it('gives back what a claim brought while stopping began', async () => {
    const { source, state } = queue(4)
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const slow: WorkSource<number> = {
      ...source,
      claim: async (max) => {
        await gate
        return source.claim(max)
      },
    }
    const worked: number[] = []
    const loop = new RunLoop<number>({ source: slow, key: String, concurrency: 2, pollMs: 10, work: async (item) => void worked.push(item) })
    loop.start()
    await sleep(20)
    const stopping = loop.stop()
    release()
    await stopping
    expect(worked).toEqual([])
    expect(state.released.sort()).toEqual([1, 2])
  })

  it('wake() claims before the poll interval ends', async () => {
    const { source, state, waiting } = queue(0)
    const worked: number[] = []
    const loop = new RunLoop<number>({ source, key: String, concurrency: 2, pollMs: 60_000, work: async (item) => void worked.push(item) })
    loop.start()
    await until(() => state.claims === 1)
    waiting.push(7)
    loop.wake()
    await until(() => worked.length === 1, 2000)
    await loop.stop()
    expect(worked).toEqual([7])
  })

  it('fill() claims now, before start() too; the leases of what it began are kept, and stop() waits for it', async () => {
    const { source, state } = queue(3)
    const worked: number[] = []
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const loop = new RunLoop<number>({
      source,
      key: String,
      concurrency: 2,
      pollMs: 60_000,
      extendEveryMs: 10,
      work: async (item) => {
        await gate
        worked.push(item)
      },
    })
    // the slots are full after one claim: fill() stops there
    expect(await loop.fill()).toBe(2)
    expect(state.claims).toBe(1)
    expect(loop.size).toBe(2)
    await until(() => state.extended >= 2)
    const stopping = loop.stop()
    release()
    await stopping
    expect(worked.sort()).toEqual([1, 2])
    // stopped: a fill claims nothing
    expect(await loop.fill()).toBe(0)
    expect(state.claims).toBe(1)
  })

  it("claims never overlap: a fill() during the loop's claim waits for it and keeps to `concurrency`", async () => {
    const { source, state } = queue(10)
    let claiming = 0
    let overlapped = false
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const slow: WorkSource<number> = {
      ...source,
      claim: async (max) => {
        if (++claiming > 1) overlapped = true
        await gate
        claiming--
        return source.claim(max)
      },
    }
    let peak = 0
    const loop = new RunLoop<number>({
      source: slow,
      key: String,
      concurrency: 3,
      pollMs: 60_000,
      work: async () => {
        peak = Math.max(peak, loop.size)
        await sleep(30)
      },
    })
    loop.start()
    await until(() => claiming === 1)
    const filled = loop.fill()
    release()
    // the loop's claim took every slot: the fill asked for none
    expect(await filled).toBe(0)
    await until(() => state.claims >= 4 && loop.size === 0)
    await loop.stop()
    expect(overlapped).toBe(false)
    expect(state.maxAsked).toBe(3)
    expect(peak).toBeLessThanOrEqual(3)
  })

  it('a fill() whose claim fails throws to its caller; with pollMs Infinity the loop claims only when woken or filled', async () => {
    const { source, state, waiting } = queue(0)
    const worked: number[] = []
    const loop = new RunLoop<number>({ source, key: String, concurrency: 2, pollMs: Infinity, work: async (item) => void worked.push(item) })
    loop.start()
    await until(() => state.claims === 1)
    waiting.push(1)
    await sleep(100)
    expect(state.claims).toBe(1)
    state.failing = true
    await expect(loop.fill()).rejects.toThrow('the database is away')
    expect(loop.stats().claimFailures).toBe(1)
    state.failing = false
    expect(await loop.fill()).toBe(1)
    await until(() => worked.length === 1)
    await loop.stop()
    expect(worked).toEqual([1])
  })
})
