import type { z } from 'zod'
import type { retryStrategySchema } from '../schema/check.js'
import type { Verdict } from './outcome.js'

export type RetryStrategy = z.output<typeof retryStrategySchema>

/**
 * Retries of a failed run (`retryStrategy`, or the deprecated `doubleCheck` when no strategy is set).
 *
 * Waits before retry n (1-based), with b = baseBackoffSeconds:
 * - FIXED: b, b, b, …
 * - LINEAR: b, 2b, 3b, …
 * - EXPONENTIAL: b, b², b³, … (5 s, 25 s, 125 s)
 * - SINGLE_RETRY: one retry after b
 * - NO_RETRIES: none
 * Defaults: baseBackoffSeconds 60, maxRetries 2 (1 for SINGLE_RETRY), maxDurationSeconds 600,
 * sameRegion true. No retry starts when it would begin after maxDurationSeconds from the
 * first attempt. `onlyOn: ['NETWORK_ERROR']` retries only runs that could not reach the target
 * (timeout, refused, unreachable, no reply), not failed assertions.
 * `doubleCheck: true` without a strategy retries once, right away, from another location when
 * the check has one.
 */
export interface RetryPlan {
  maxRetries: number
  maxDurationMs: number
  sameRegion: boolean
  onlyOnNetworkError: boolean
  /** Wait before retry `n` (1-based), in ms. */
  backoffMs: (n: number) => number
}

export const NO_RETRY_PLAN: RetryPlan = {
  maxRetries: 0,
  maxDurationMs: 0,
  sameRegion: true,
  onlyOnNetworkError: false,
  backoffMs: () => 0,
}

export function retryPlan(strategy: RetryStrategy | undefined, doubleCheck: boolean): RetryPlan {
  if (!strategy) {
    if (!doubleCheck) return NO_RETRY_PLAN
    return { maxRetries: 1, maxDurationMs: 600_000, sameRegion: false, onlyOnNetworkError: false, backoffMs: () => 0 }
  }
  if (strategy.type === 'NO_RETRIES') return NO_RETRY_PLAN
  const base = strategy.baseBackoffSeconds ?? 60
  const common = {
    maxDurationMs: (strategy.maxDurationSeconds ?? 600) * 1000,
    sameRegion: strategy.sameRegion ?? true,
    onlyOnNetworkError: (strategy.onlyOn ?? []).includes('NETWORK_ERROR'),
  }
  switch (strategy.type) {
    case 'SINGLE_RETRY':
      return { ...common, maxRetries: Math.min(1, strategy.maxRetries ?? 1), backoffMs: () => base * 1000 }
    case 'FIXED':
      return { ...common, maxRetries: strategy.maxRetries ?? 2, backoffMs: () => base * 1000 }
    case 'LINEAR':
      return { ...common, maxRetries: strategy.maxRetries ?? 2, backoffMs: (n) => base * n * 1000 }
    case 'EXPONENTIAL':
      return { ...common, maxRetries: strategy.maxRetries ?? 2, backoffMs: (n) => base ** n * 1000 }
  }
}

/** Whether a run with this verdict is retried; `retriesDone` retries already ran. */
export function shouldRetry(verdict: Verdict, plan: RetryPlan, retriesDone: number, elapsedMs: number): boolean {
  if (verdict.aborted) return false
  if (verdict.status === 'PASSED' || verdict.status === 'DEGRADED') return false
  if (retriesDone >= plan.maxRetries) return false
  if (plan.onlyOnNetworkError && verdict.failureKind !== 'NETWORK_ERROR') return false
  return elapsedMs + plan.backoffMs(retriesDone + 1) <= plan.maxDurationMs
}

/** Location of retry `n` (1-based): the same one, or the check's next other location. */
export function retryLocation(plan: RetryPlan, first: string, locations: readonly string[] | null | undefined, n: number): string {
  if (plan.sameRegion) return first
  const others = (locations ?? []).filter((l) => l !== first)
  if (others.length === 0) return first
  return others[(n - 1) % others.length]
}

/** A real wait that ends early (resolving) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}
