import type { FastifyReply } from 'fastify'
import type { Clock } from '../runner/clock.js'
import { HttpError } from './errors.js'

/** What the `x-ratelimit-*` headers say: the limit, what is left, seconds until the window resets. */
export interface RateWindow {
  limit: number
  remaining: number
  resetSeconds: number
}

/**
 * A fixed window per API key (API.md: 600 requests per 60 s by default). Requests spend quota
 * only once authenticated, so a 401 or 403 costs nothing; every answer still carries the
 * headers (see `unspent` and `peek`).
 *
 * The counts live in this process: several servers on one SQLite file each count their own
 * requests, so a key gets the limit from each. On PostgreSQL the servers share one count
 * (`SharedRateLimiter`).
 */
export class RateLimiter implements Limiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>()
  private nextSweep = 0

  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly clock: Clock,
  ) {}

  private window(key: string, now: number) {
    if (now >= this.nextSweep) {
      // forget expired windows, so the map holds only keys seen in the current window
      for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k)
      this.nextSweep = now + this.windowMs
    }
    let window = this.windows.get(key)
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + this.windowMs }
      this.windows.set(key, window)
    }
    return window
  }

  private figures(count: number, resetAt: number, now: number): RateWindow {
    return { limit: this.max, remaining: Math.max(0, this.max - count), resetSeconds: Math.max(1, Math.ceil((resetAt - now) / 1000)) }
  }

  /** Spends one request of the key's window; `allowed` is false once the window is used up. */
  consume(key: string, now = this.clock.now()): RateWindow & { allowed: boolean } {
    const window = this.window(key, now)
    if (window.count >= this.max) return { ...this.figures(window.count, window.resetAt, now), allowed: false }
    window.count++
    return { ...this.figures(window.count, window.resetAt, now), allowed: true }
  }

  /** The key's window as it stands, spending nothing (a 403: the key is known but refused). */
  peek(key: string, now = this.clock.now()): RateWindow {
    const window = this.windows.get(key)
    if (!window || window.resetAt <= now) return this.figures(0, now + this.windowMs, now)
    return this.figures(window.count, window.resetAt, now)
  }

  /** For a request without a known key (401): the whole limit of a fresh window, nothing spent. */
  unspent(now = this.clock.now()): RateWindow {
    return this.figures(0, now + this.windowMs, now)
  }
}

/** What the auth hook needs of a limiter: this process's counts, or the database's. */
export interface Limiter {
  /** `now`: the clock of the caller (default the limiter's clock) */
  consume(key: string, now?: number): (RateWindow & { allowed: boolean }) | Promise<RateWindow & { allowed: boolean }>
  peek(key: string, now?: number): RateWindow | Promise<RateWindow>
  unspent(): RateWindow
}

/**
 * The same fixed window per key, counted in the database (`Store.rateWindows`): with several
 * servers on one PostgreSQL database a key gets the limit once in all, not once per server.
 */
export class SharedRateLimiter implements Limiter {
  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly windows: { hit(keyHash: string, max: number, windowMs: number, now: number, spend: boolean): Promise<{ count: number; resetAt: number }> },
    private readonly clock: Clock,
  ) {}

  private figures(count: number, resetAt: number, now: number): RateWindow {
    return { limit: this.max, remaining: Math.max(0, this.max - count), resetSeconds: Math.max(1, Math.ceil((resetAt - now) / 1000)) }
  }

  async consume(key: string, now = this.clock.now()): Promise<RateWindow & { allowed: boolean }> {
    const window = await this.windows.hit(key, this.max, this.windowMs, now, true)
    return { ...this.figures(Math.min(window.count, this.max), window.resetAt, now), allowed: window.count <= this.max }
  }

  async peek(key: string, now = this.clock.now()): Promise<RateWindow> {
    const window = await this.windows.hit(key, this.max, this.windowMs, now, false)
    return this.figures(window.count, window.resetAt, now)
  }

  unspent(now = this.clock.now()): RateWindow {
    return this.figures(0, now + this.windowMs, now)
  }
}

export function rateHeaders(window: RateWindow): Record<string, string> {
  return { 'x-ratelimit-limit': String(window.limit), 'x-ratelimit-remaining': String(window.remaining), 'x-ratelimit-reset': String(window.resetSeconds) }
}

export function setRateHeaders(reply: FastifyReply, window: RateWindow): void {
  reply.headers(rateHeaders(window))
}

export function tooManyRequests(window: RateWindow, now: number): HttpError {
  const seconds = window.resetSeconds
  return new HttpError(
    429,
    `Rate limit exceeded, retry in ${seconds} second${seconds === 1 ? '' : 's'}`,
    { limit: window.limit, remaining: 0, reset: Math.ceil(now / 1000) + seconds },
    { 'retry-after': String(seconds), ...rateHeaders({ ...window, remaining: 0 }) },
  )
}
