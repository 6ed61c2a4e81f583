import { StorePoolSaturated, StoreUnavailable } from './store/index.js'

/*
 * What the background work of a server (the scheduler, its runner, the alert sender) does
 * while the database is away: it keeps the process up, says so once, tries again on its own,
 * and says once that it resumed.
 */

/** One line when a loop first meets the outage, one when it works again; other errors pass through. */
export class OutageLog {
  private since: number | undefined
  /** the outage is the pool saturated (the database up), not the database away */
  private saturated = false

  constructor(
    private readonly name: string,
    private readonly log: (line: string) => void,
  ) {}

  /** True (and reported once) when the error is the database being away, or its pool saturated. */
  failed(error: unknown): boolean {
    if (!(error instanceof StoreUnavailable)) return false
    const saturated = error instanceof StorePoolSaturated
    // a saturation that turns into the database going away is told again
    if (this.since === undefined || (this.saturated && !saturated)) {
      this.since ??= performance.now()
      this.saturated = saturated
      this.log(`${this.name}: ${error.message}; ${saturated ? 'waiting for a free connection' : 'waiting for it'}, trying again on its own`)
    }
    return true
  }

  /** A call to the database worked: the end of an outage is reported. */
  ok(): void {
    if (this.since === undefined) return
    const seconds = Math.round((performance.now() - this.since) / 100) / 10
    this.since = undefined
    this.log(`${this.name}: ${this.saturated ? 'the database pool has free connections again' : 'the database is back'} after ${seconds} s; resumed`)
    this.saturated = false
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Calls `fn` until it answers or fails with anything but StoreUnavailable, waiting 250 ms after
 * the first failure, doubling up to `maxWaitMs`. Gives up (throws the last StoreUnavailable)
 * once `stopped()` says so. For work already done that must be recorded once: a run's result,
 * a delivery's attempt.
 */
export async function untilAvailable<T>(fn: () => Promise<T>, stopped: () => boolean, options: { maxWaitMs?: number; outage?: OutageLog } = {}): Promise<T> {
  let wait = 250
  for (;;) {
    try {
      const value = await fn()
      options.outage?.ok()
      return value
    } catch (error) {
      if (!(error instanceof StoreUnavailable) || stopped()) throw error
      options.outage?.failed(error)
    }
    await sleep(wait)
    wait = Math.min(wait * 2, options.maxWaitMs ?? 2000)
  }
}
