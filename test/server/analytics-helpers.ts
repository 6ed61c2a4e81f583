import { expect } from 'vitest'
import type { Call } from './helpers.js'

/** A run with known figures, posted the way an agent posts results. */
export interface KnownRun {
  /** when it started (ISO) */
  at: string
  location: string
  passed: boolean
  responseTime: number | null
  /** attempts retried before it */
  retries?: number
  /** the runner's details (timings and statusCode of an API run, latency and packetLoss of an ICMP run) */
  details?: Record<string, unknown>
}

function resultOf(run: KnownRun, resultType: 'FINAL' | 'ATTEMPT') {
  return {
    runLocation: run.location,
    resultType,
    attempt: 1,
    status: run.passed ? 'PASSED' : 'FAILED',
    hasFailures: !run.passed,
    hasErrors: false,
    isDegraded: false,
    responseTime: run.responseTime,
    startedAt: run.at,
    stoppedAt: run.at,
    error: run.passed ? null : 'known failure',
    assertions: [],
    details: run.details ?? {},
  }
}

/**
 * Records each run through the server's own path for results: a session triggered for the
 * check, its run claimed on the agent routes and its FINAL result (with retried attempts) posted.
 */
export async function recordRuns(call: Call, checkId: string, runs: KnownRun[]): Promise<void> {
  for (const run of runs) {
    const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } })
    expect(trigger.status, trigger.text).toBe(201)
    const claim = await call('POST', '/v1/agent/claim', { agentId: 'analytics-agent', locations: ['eu-west-1'], max: 50 })
    expect(claim.status, claim.text).toBe(200)
    expect(claim.json.runs.length).toBeGreaterThan(0)
    for (const claimed of claim.json.runs as Array<{ runId: string }>) {
      const attempts = Array.from({ length: run.retries ?? 0 }, () => ({ ...resultOf({ ...run, passed: false }, 'ATTEMPT') }))
      const posted = await call('POST', `/v1/agent/runs/${encodeURIComponent(claimed.runId)}/result`, { result: { ...resultOf(run, 'FINAL'), attempts } })
      expect(posted.status, posted.text).toBe(204)
    }
  }
}

/** The series of an analytics answer, decoded (API.md: JSON-encoded entries). */
export function seriesOf(answer: { status: number; text: string; json: { series: string[] } }): Array<Record<string, unknown>> {
  expect(answer.status, answer.text).toBe(200)
  return answer.json.series.map((entry) => {
    expect(typeof entry).toBe('string')
    return JSON.parse(entry) as Record<string, unknown>
  })
}
