import { expect } from 'vitest'
import type { Call } from '../helpers.js'

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

/** The server's clock as a test drives it. */
export interface TestClock {
  get(): number
  set(ms: number): void
}

/**
 * Records each run through the server's own path for results: a session triggered for the
 * check, its run claimed on the agent routes and its FINAL result (with retried attempts) posted.
 * The server dates a result inside its claim's window on its own clock, so the clock is set to
 * each run's start while it is claimed and posted, and put back afterwards.
 */
export async function recordRuns(call: Call, checkId: string, runs: KnownRun[], clock: TestClock): Promise<void> {
  const before = clock.get()
  try {
    for (const run of runs) {
      clock.set(Date.parse(run.at))
      await recordRun(call, checkId, run)
    }
  } finally {
    clock.set(before)
  }
}

/**
 * One run in its location: the server takes a result's location from the run it claimed, so the
 * check is moved to that one location first (PUT with the body it has), then run once there.
 */
async function recordRun(call: Call, checkId: string, run: KnownRun): Promise<void> {
  const current = await call('GET', `/v1/checks/${checkId}`)
  expect(current.status, current.text).toBe(200)
  if (JSON.stringify(current.json.locations) !== JSON.stringify([run.location])) {
    const { id: _id, checkType, created_at: _created, updated_at: _updated, ...body } = current.json
    const moved = await call('PUT', `/v1/checks/${String(checkType).toLowerCase()}/${checkId}`, { ...body, locations: [run.location] })
    expect(moved.status, moved.text).toBe(200)
  }
  {
    const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } })
    expect(trigger.status, trigger.text).toBe(201)
    const claim = await call('POST', '/v1/agent/claim', { agentId: 'analytics-agent', locations: [run.location], max: 50 })
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
