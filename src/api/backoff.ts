/**
 * Exponential backoff with full jitter: the n-th retry waits a random time in
 * [0, min(maxMs, baseMs * 2^n)], so many clients retrying at once spread out.
 */
export interface BackoffOptions {
  /** Retries after the first attempt. */
  retries: number
  baseMs: number
  maxMs: number
  random?: () => number
}

export const DEFAULT_BACKOFF: BackoffOptions = { retries: 4, baseMs: 200, maxMs: 5000 }

export function backoffDelay(attempt: number, options: BackoffOptions = DEFAULT_BACKOFF): number {
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** attempt)
  return Math.round((options.random ?? Math.random)() * cap)
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
