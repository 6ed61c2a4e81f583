/**
 * Keeps a client under the server's rate limit, so a large apply meets no 429 at all.
 *
 * Two guards: a token bucket (capacity = limit, refilled at limit per window) smooths bursts,
 * and the server's own figures (`x-ratelimit-remaining`, `x-ratelimit-reset`) stop the client
 * before the window is spent, counting requests still in flight. The server's window is a fixed
 * one, so the bucket alone could allow up to twice the limit across a window boundary; the
 * remaining count is what makes it exact. A 429 anyway pauses everything for Retry-After.
 */
export interface RateLimitFigures {
  limit?: number
  remaining?: number
  /** Seconds until the server's window resets. */
  resetSeconds?: number
}

/** A wait from this long on is shown (`waiting N s for the rate limit`). */
const LONG_WAIT_MS = 1000

export class Pacer {
  private limit: number
  private readonly defaultWindowMs: number
  /** Longest reset the server has announced: the best estimate of its window length. */
  private observedWindowMs: number | undefined
  private tokens: number
  private refilledAt: number
  private remaining: number | undefined
  private resetAt = 0
  private pausedUntil = 0
  private inFlight = 0
  private queue: Promise<void> = Promise.resolve()
  /** Total time spent waiting, for reports. */
  waitedMs = 0
  /** When the wait under way ends, while it is one a person would notice (see waitingUntil). */
  private longWaitUntil = 0

  constructor(
    options: { limit?: number; windowMs?: number } = {},
    private readonly now: () => number = Date.now,
  ) {
    this.limit = options.limit ?? 600
    this.defaultWindowMs = options.windowMs ?? 60_000
    this.tokens = this.limit
    this.refilledAt = this.now()
  }

  /** Waits for a slot; call `done()` on the result when the response (or error) arrives. */
  acquire(): Promise<{ done(figures?: RateLimitFigures): void }> {
    const slot = this.queue.then(() => this.waitForSlot())
    this.queue = slot.catch(() => undefined)
    return slot.then(() => {
      this.inFlight++
      let finished = false
      return {
        done: (figures?: RateLimitFigures) => {
          if (finished) return
          finished = true
          this.inFlight--
          if (figures) this.update(figures)
        },
      }
    })
  }

  /**
   * While requests are held back by the rate limit for a second or more (the window is spent,
   * or a 429's Retry-After): when they may go again (ms since the epoch, on this pacer's clock);
   * undefined otherwise. The short waits that spread a burst over the window do not count.
   */
  waitingUntil(): number | undefined {
    return this.longWaitUntil > this.now() ? this.longWaitUntil : undefined
  }

  /** The server said 429: nobody sends before Retry-After has passed. */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + ms)
    // Retry-After is the authority: the window's figures are stale until the next answer (a 429
    // that does not come from a spent window, a proxy's or a fault's, must not hold everything
    // until the window's end)
    this.remaining = undefined
    this.resetAt = 0
  }

  update(figures: RateLimitFigures): void {
    const now = this.now()
    if (figures.limit !== undefined && figures.limit > 0 && figures.limit !== this.limit) {
      this.limit = figures.limit
      this.tokens = Math.min(this.tokens, this.limit)
    }
    if (figures.resetSeconds !== undefined && figures.remaining !== undefined) {
      const resetAt = now + figures.resetSeconds * 1000
      if (figures.resetSeconds > 0) this.observedWindowMs = Math.max(this.observedWindowMs ?? 0, figures.resetSeconds * 1000)
      // the server has not counted the requests still in flight; within one window the
      // smallest estimate is the truest, as answers arrive out of order
      const estimate = figures.remaining - this.inFlight
      if (resetAt > this.resetAt + 1000 || this.remaining === undefined || estimate < this.remaining) {
        this.remaining = estimate
      }
      this.resetAt = Math.max(this.resetAt, resetAt)
    }
  }

  private get windowMs(): number {
    return this.observedWindowMs ?? this.defaultWindowMs
  }

  private refill(now: number) {
    const rate = this.limit / this.windowMs
    this.tokens = Math.min(this.limit, this.tokens + (now - this.refilledAt) * rate)
    this.refilledAt = now
  }

  private async waitForSlot(): Promise<void> {
    for (;;) {
      const now = this.now()
      this.refill(now)
      if (this.remaining !== undefined && now >= this.resetAt) this.remaining = undefined
      let waitMs = 0
      if (now < this.pausedUntil) waitMs = this.pausedUntil - now
      else if (this.remaining !== undefined && this.remaining <= 0) waitMs = this.resetAt - now + 50
      else if (this.tokens < 1) waitMs = (1 - this.tokens) / (this.limit / this.windowMs)
      if (waitMs <= 0) {
        this.tokens -= 1
        if (this.remaining !== undefined) this.remaining -= 1
        return
      }
      this.waitedMs += waitMs
      const until = now + waitMs
      if (waitMs >= LONG_WAIT_MS) this.longWaitUntil = Math.max(this.longWaitUntil, until)
      await new Promise((r) => setTimeout(r, Math.ceil(waitMs)))
    }
  }
}

/** Reads the rate-limit headers of an answer (API.md: limit, remaining, reset in seconds). */
export function rateLimitFigures(headers: Record<string, string | string[] | undefined>): RateLimitFigures {
  const num = (name: string) => {
    const raw = headers[name]
    const value = Number(Array.isArray(raw) ? raw[0] : raw)
    return raw === undefined || Number.isNaN(value) ? undefined : value
  }
  return { limit: num('x-ratelimit-limit'), remaining: num('x-ratelimit-remaining'), resetSeconds: num('x-ratelimit-reset') }
}

/** Retry-After in ms: seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value
  if (raw === undefined || raw === '') return undefined
  const seconds = Number(raw)
  if (!Number.isNaN(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(raw)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
