/**
 * The one leased work loop: claim work with a lease → do it (keeping the lease while it lasts)
 * → complete it, at most `concurrency` items at a time, until stopped. The server's scheduler
 * (due runs from the store), the agent (due runs over HTTP) and the alert sender (deliveries from
 * the outbox) are this loop with a different source of work behind `WorkSource`.
 *
 * - Claims: while slots are free; a claim that found fewer items than it asked for waits
 *   `pollMs` (or a `wake()`); a full one claims again at once. With `refillAt`, a freed slot
 *   claims again only once that share of the slots is free (one claim per batch, not per item).
 *   `fill()` claims now, for its caller (a planner that just wrote due work, a timer at a due
 *   time), also before `start()`; claims never overlap, so `concurrency` holds whoever claims.
 *   `pollMs: Infinity`: the loop claims only when woken, filled or a slot frees.
 * - A failed claim (the database or the server is away) waits with a growing backoff and tries
 *   again; `onClaimError` may answer 'stop' for a failure that will not change (a refused key).
 *   The loop never ends on its own otherwise: when the source is back, work resumes by itself.
 * - Leases: every `extendEveryMs` the loop extends the lease of each item in flight; an
 *   extension that says the lease was lost aborts that item's work (another claimer has it).
 * - Stop: no new claim; items in flight get `graceMs` (default: as long as they take), then
 *   their signal aborts; `abort()` aborts them at once. Items claimed after stop began are
 *   given back through `release` when the source has it, else worked like the others.
 */

/** The reason an item's signal aborts when another claimer took its lease. */
export class LeaseLost extends Error {
  constructor() {
    super('the lease was lost: another runner has the work')
    this.name = 'LeaseLost'
  }
}

/** The reason an item's signal aborts when the loop stops (its grace ended, or abort()). */
export class Stopped extends Error {
  constructor() {
    super('stopped')
    this.name = 'Stopped'
  }
}

export interface WorkSource<W> {
  /** Claims up to `max` items, each leased to this loop; an empty array when nothing is due. */
  claim(max: number): Promise<W[]>
  /** Extends an item's lease: false when it was lost (another claimer has the item now). */
  extend?(item: W): Promise<boolean>
  /** Gives an item back, unworked (the loop is stopping). */
  release?(item: W): Promise<void>
}

export interface RunLoopOptions<W> {
  source: WorkSource<W>
  /** Does one item, completing it with the source; `signal` aborts on a lost lease or a stop. */
  work(item: W, signal: AbortSignal): Promise<void>
  /** A key of an item, unique among items in flight. */
  key(item: W): string
  /** Items in flight at most. */
  concurrency: number
  /** Wait after a claim that found fewer items than it asked for, ms. */
  pollMs: number
  /** Claims no more than this many items at once (default: every free slot). */
  maxClaim?: number
  /** Claim again when this share of the slots is free (0–1; default 0: any free slot). */
  refillAt?: number
  /** ms between extensions of the leases in flight (needs `source.extend`). */
  extendEveryMs?: number
  /** On stop, how long items in flight may take before their signal aborts, ms (default: no limit). */
  graceMs?: number
  /** Called before each claim (pruning, planning); its errors count as a failed claim. */
  beforeClaim?(): Promise<void>
  /** A claim failed `failures` times in a row (1, 2, …): 'retry' (default) or 'stop'. */
  onClaimError?(error: unknown, failures: number): 'retry' | 'stop'
  /** Claims work again after `failures` failed ones. */
  onRecovered?(failures: number): void
  /** An item's work threw (the work is expected to record its own failures). */
  onWorkError?(item: W, error: unknown): void
  /** An extension threw (a network or database error: tried again at the next interval). */
  onExtendError?(item: W, error: unknown): void
  /** Backoff after the n-th failed claim in a row, ms (default: pollMs × 2^(n−1), at most 30 s). */
  backoffMs?(failures: number): number
}

export interface RunLoopStats {
  claimed: number
  worked: number
  released: number
  lost: number
  claimFailures: number
  inFlight: number
}

interface InFlight {
  done: Promise<void>
  abort: AbortController
}

export class RunLoop<W> {
  private readonly inFlight = new Map<string, InFlight>()
  /** the items in flight, by key (for their lease extensions) */
  private readonly items = new Map<string, W>()
  private readonly extending = new Set<string>()
  private running = false
  private stopping = false
  private looping: Promise<void> | undefined
  /** the claim under way (claims are made one at a time: the loop's and fill()'s) */
  private claiming: Promise<unknown> = Promise.resolve()
  private wakeUp: (() => void) | undefined
  private woken = false
  private extender: NodeJS.Timeout | undefined
  private readonly counts = { claimed: 0, worked: 0, released: 0, lost: 0, claimFailures: 0 }
  /** why the loop ended on its own ('stop' from onClaimError), if it did */
  stoppedBy: unknown

  constructor(private readonly options: RunLoopOptions<W>) {}

  /** Starts claiming (idempotent). */
  start(): void {
    if (this.running) return
    this.running = true
    this.stopping = false
    this.looping = this.loop()
  }

  /**
   * Claims now, until the slots are full or a claim finds fewer items than it asked for, and
   * begins the items; resolves with how many it claimed (not when they are done). Works before
   * `start()` too (stop() then waits for them); nothing once stopping. A failed claim throws.
   */
  async fill(): Promise<number> {
    let total = 0
    for (;;) {
      const { asked, got } = await this.claimOnce()
      total += got
      if (asked === 0 || got < asked) return total
    }
  }

  /** Claims now instead of at the end of the current wait. */
  wake(): void {
    this.woken = true
    this.wakeUp?.()
  }

  /** Resolves when the loop has stopped claiming and every item in flight has finished. */
  get done(): Promise<void> {
    return (this.looping ?? Promise.resolve()).then(() => this.drain())
  }

  /** No new claim; items in flight finish within `graceMs`, then are aborted. */
  async stop(): Promise<void> {
    this.stopping = true
    this.wake()
    await this.looping
    await this.claiming
    const grace = this.options.graceMs
    if (grace === undefined || !Number.isFinite(grace)) {
      await this.drain()
    } else {
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), grace)))
      if ((await Promise.race([this.drain().then(() => 'done' as const), late])) === 'late') this.abort()
      clearTimeout(timer)
      await this.drain()
    }
    if (this.extender) clearInterval(this.extender)
    this.extender = undefined
    this.running = false
  }

  /** Aborts every item in flight now (a forced stop); claims stop too. */
  abort(): void {
    this.stopping = true
    this.wake()
    for (const item of this.inFlight.values()) item.abort.abort(new Stopped())
  }

  get size(): number {
    return this.inFlight.size
  }

  stats(): RunLoopStats {
    return { ...this.counts, inFlight: this.inFlight.size }
  }

  private async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()].map((i) => i.done))
  }

  /** Waits `ms` or until woken (a freed slot wakes a loop that waits for one). */
  private pause(ms: number): Promise<void> {
    if (this.woken || this.stopping) {
      this.woken = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(finish, ms) : undefined
      const self = this
      function finish() {
        if (timer) clearTimeout(timer)
        self.wakeUp = undefined
        self.woken = false
        resolve()
      }
      this.wakeUp = finish
    })
  }

  private freeSlots(): number {
    return this.options.concurrency - this.inFlight.size
  }

  private async loop(): Promise<void> {
    let failures = 0
    while (!this.stopping) {
      const free = this.freeSlots()
      const threshold = Math.max(1, Math.ceil(this.options.concurrency * (this.options.refillAt ?? 0)))
      if (free < threshold) {
        await this.pause(Infinity)
        continue
      }
      let claimed: { asked: number; got: number }
      try {
        claimed = await this.claimOnce()
        if (failures > 0) this.options.onRecovered?.(failures)
        failures = 0
      } catch (error) {
        failures++
        if ((this.options.onClaimError?.(error, failures) ?? 'retry') === 'stop') {
          this.stoppedBy = error
          this.stopping = true
          break
        }
        const backoff = this.options.backoffMs?.(failures) ?? Math.min(30_000, this.options.pollMs * 2 ** Math.min(failures - 1, 10))
        await this.pause(backoff)
        continue
      }
      if (this.stopping) break
      // the slots were taken meanwhile (a fill): wait for one to free
      if (claimed.asked === 0) continue
      // a full batch: more may be due, claim again at once
      if (claimed.got < claimed.asked) await this.pause(this.options.pollMs)
    }
  }

  /** One claim for the free slots, after the claim under way; begins what it brought. */
  private claimOnce(): Promise<{ asked: number; got: number }> {
    const next = this.claiming.then(() => this.claimNow())
    this.claiming = next.catch(() => undefined)
    return next
  }

  private async claimNow(): Promise<{ asked: number; got: number }> {
    const free = this.freeSlots()
    if (this.stopping || free <= 0) return { asked: 0, got: 0 }
    const max = Math.min(free, this.options.maxClaim ?? free)
    let items: W[]
    try {
      await this.options.beforeClaim?.()
      items = await this.options.source.claim(max)
    } catch (error) {
      this.counts.claimFailures++
      throw error
    }
    for (const item of items) {
      this.counts.claimed++
      if (this.stopping && this.options.source.release) {
        this.counts.released++
        await this.options.source.release(item).catch(() => undefined)
        continue
      }
      this.begin(item)
    }
    return { asked: max, got: items.length }
  }

  private begin(item: W): void {
    const key = this.options.key(item)
    const abort = new AbortController()
    const done = (async () => {
      try {
        await this.options.work(item, abort.signal)
        this.counts.worked++
      } catch (error) {
        this.options.onWorkError?.(item, error)
      }
    })().finally(() => {
      this.inFlight.delete(key)
      this.items.delete(key)
      if (!this.stopping) {
        const threshold = Math.max(1, Math.ceil(this.options.concurrency * (this.options.refillAt ?? 0)))
        if (this.freeSlots() >= threshold) this.wake()
      }
    })
    this.items.set(key, item)
    this.inFlight.set(key, { done, abort })
    // the leases are kept from the first item on (also one a fill() began before start())
    const every = this.options.extendEveryMs
    if (every !== undefined && this.options.source.extend && !this.extender) {
      this.extender = setInterval(() => this.extendAll(), every)
      this.extender.unref?.()
    }
  }

  private extendAll(): void {
    const extend = this.options.source.extend
    if (!extend) return
    for (const [key, entry] of this.inFlight) {
      if (entry.abort.signal.aborted) continue
      void this.extendOne(key, entry, extend)
    }
  }

  private async extendOne(key: string, entry: InFlight, extend: (item: W) => Promise<boolean>): Promise<void> {
    if (this.extending.has(key)) return
    const item = this.items.get(key)
    if (item === undefined) return
    this.extending.add(key)
    try {
      if (!(await extend(item))) {
        this.counts.lost++
        entry.abort.abort(new LeaseLost())
      }
    } catch (error) {
      this.options.onExtendError?.(item, error)
    } finally {
      this.extending.delete(key)
    }
  }
}
