/**
 * Running one check, once, in one location: through its type's prober (probers.ts: DNS, ICMP,
 * API), its assertions, the outcome of a run and its retries. Shared by the server's scheduler, the agent and
 * `monitors test`; it depends only on the schemas.
 */
import { checkDomainCertificate } from './certificate.js'
import { judge } from './outcome.js'
import { probe } from './probers.js'
import { NO_RETRY_PLAN, retryLocation, retryPlan, shouldRetry, sleep as realSleep } from './retry.js'
import type { CheckRunResult, RunnableCheck, RunOptions, RunResult } from './types.js'
import { systemClock } from './clock.js'

export * from './types.js'
export { compare, evaluateApiAssertion, evaluateAssertion, readJsonPath } from './assertions.js'
export { daysRemaining, DEFAULT_API_TIMEOUT_MS, MAX_BODY_BYTES, MAX_REDIRECTS } from './api.js'
export { judge, type Verdict } from './outcome.js'
export { retryPlan, shouldRetry, retryLocation, type RetryPlan } from './retry.js'
export { parsePingOutput, PING_INSTALL_HINT } from './icmp.js'
export { checkDomainCertificate, SSL_CHECK_PORT, SSL_CHECK_TIMEOUT_MS } from './certificate.js'
export { parseResolvConf, systemNameServers } from './dns.js'
export { PROBERS, probe, type Prober, type ProbeContext } from './probers.js'
export { DEFAULT_TCP_TIMEOUT_MS, MAX_TCP_RESPONSE_BYTES, TCP_READ_QUIET_MS } from './tcp.js'
export { guardedConnector, nonPublicAddress, parseAllowedTarget, PRIVATE_TARGETS, refusalIn, type PrivateTargets, type TargetPolicy } from './targets.js'

export { defaultScriptConcurrency, detachRunArtifacts, discardFolders, Semaphore, runScriptAttempt } from './script-probe.js'

export const DEFAULT_LOCATION = 'local'

/** Runs one attempt and turns it into a result record. */
export async function runAttempt(check: RunnableCheck, options: RunOptions & { attempt?: number } = {}): Promise<RunResult> {
  const now = options.now ?? systemClock.now
  const startedAt = now()
  const { location = DEFAULT_LOCATION, ...context } = options
  // the certificate of `sslCheckDomain` is read alongside the check's own work
  const domain = 'sslCheckDomain' in check && typeof check.sslCheckDomain === 'string' && check.sslCheckDomain !== '' ? check.sslCheckDomain : null
  const [outcome, sslCheck] = await Promise.all([probe(check, location, context), domain === null ? undefined : checkDomainCertificate(domain, options)])
  const stoppedAt = Math.max(now(), startedAt)
  const verdict = judge(outcome, check.shouldFail)
  return {
    checkId: check.id ?? null,
    name: check.name,
    checkType: check.checkType,
    runLocation: options.location ?? DEFAULT_LOCATION,
    resultType: 'FINAL',
    attempt: options.attempt ?? 1,
    startedAt: new Date(startedAt).toISOString(),
    stoppedAt: new Date(stoppedAt).toISOString(),
    responseTime: outcome.responseTime,
    hasFailures: verdict.hasFailures,
    hasErrors: verdict.hasErrors,
    isDegraded: verdict.isDegraded,
    timedOut: verdict.timedOut,
    aborted: verdict.aborted,
    status: verdict.status,
    failureKind: verdict.failureKind,
    error: verdict.error,
    assertions: outcome.assertions,
    details: outcome.details,
    ...(sslCheck ? { sslDaysRemaining: sslCheck.daysRemaining, sslCheck } : {}),
  }
}

/**
 * Runs a check once in one location, with the retries its strategy asks for. The result is
 * the FINAL run; the attempts that were retried come with it as `ATTEMPT` results. Never
 * throws for a run that went wrong: that is in the result (`hasFailures`, `hasErrors`).
 */
export async function runCheck(check: RunnableCheck, options: RunOptions = {}): Promise<CheckRunResult> {
  const now = options.now ?? systemClock.now
  const sleep = options.sleep ?? realSleep
  const plan = options.retries === false ? NO_RETRY_PLAN : retryPlan(check.retryStrategy, check.doubleCheck)
  const firstLocation = options.location ?? DEFAULT_LOCATION
  const firstStart = now()
  const attempts: RunResult[] = []
  let location = firstLocation
  for (let n = 1; ; n += 1) {
    const result = await runAttempt(check, { ...options, location, attempt: n })
    const retriesDone = n - 1
    const verdict = { ...result }
    if (!shouldRetry(verdict, plan, retriesDone, now() - firstStart) || options.signal?.aborted) {
      return { ...result, resultType: 'FINAL', attempts }
    }
    attempts.push({ ...result, resultType: 'ATTEMPT' })
    await sleep(plan.backoffMs(n), options.signal)
    if (options.signal?.aborted) {
      const last = attempts.pop() as RunResult
      return { ...last, resultType: 'FINAL', attempts }
    }
    location = retryLocation(plan, firstLocation, check.locations, n)
  }
}
