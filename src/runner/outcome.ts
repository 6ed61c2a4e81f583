import type { AttemptOutcome, FailureKind, RunStatus } from './types.js'

export interface Verdict {
  status: RunStatus
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  timedOut: boolean
  aborted: boolean
  failureKind: FailureKind | null
  error: string | null
}

/**
 * The outcome of one attempt:
 * - an error outside the check's control (no ping, no resolver, aborted) → `hasErrors`, status
 *   FAILED; `shouldFail` does not turn it into a pass, since the target was never tried;
 * - otherwise the run fails when a threshold, the response code or an assertion fails;
 *   `shouldFail` swaps pass and fail (a degraded pass then fails too);
 * - a failed run that ran out of time is TIMED_OUT, with `hasFailures` too;
 * - a passing run over a degraded threshold is DEGRADED.
 */
export function judge(outcome: AttemptOutcome, shouldFail: boolean): Verdict {
  if (outcome.runnerError !== null) {
    return {
      status: outcome.timedOut ? 'TIMED_OUT' : 'FAILED',
      hasFailures: false,
      hasErrors: true,
      isDegraded: false,
      timedOut: outcome.timedOut,
      aborted: outcome.aborted,
      failureKind: 'RUNNER_ERROR',
      error: outcome.runnerError,
    }
  }
  const reasons = [...outcome.failures, ...outcome.assertions.filter((a) => !a.passed).map((a) => a.message)]
  const failedNaturally = reasons.length > 0
  const failed = shouldFail ? !failedNaturally : failedNaturally
  if (!failed) {
    const isDegraded = !shouldFail && outcome.degraded.length > 0
    return {
      status: isDegraded ? 'DEGRADED' : 'PASSED',
      hasFailures: false,
      hasErrors: false,
      isDegraded,
      timedOut: outcome.timedOut,
      aborted: false,
      failureKind: null,
      error: null,
    }
  }
  if (shouldFail) {
    const passedHow = outcome.degraded.length > 0 ? `passed (degraded: ${outcome.degraded.join('; ')})` : 'passed'
    return {
      status: 'FAILED',
      hasFailures: true,
      hasErrors: false,
      isDegraded: false,
      timedOut: false,
      aborted: false,
      failureKind: 'ASSERTION',
      error: `shouldFail is set, but the run ${passedHow}`,
    }
  }
  return {
    status: outcome.timedOut ? 'TIMED_OUT' : 'FAILED',
    hasFailures: true,
    hasErrors: false,
    isDegraded: false,
    timedOut: outcome.timedOut,
    aborted: false,
    failureKind: outcome.networkError ? 'NETWORK_ERROR' : 'ASSERTION',
    error: reasons.join('; '),
  }
}
