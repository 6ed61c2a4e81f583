import { Counter, Gauge, Histogram, SECONDS_BUCKETS, header, runPhases, runStatus, sampleLine } from '../runner/metrics.js'
import type { AgentStats } from './index.js'

/*
 * The agent's GET /metrics, beside its health probes (docs/metrics.md): the runs it ran, by
 * check (id, name, type), location and status, the phases of each check's last run, how late
 * runs started after their due time, and its counts of claims and posted, dropped and lost
 * results. Kept in memory since the agent started.
 */
export class AgentMetrics {
  readonly runs = new Counter('monitors_agent_check_runs_total', 'Runs this agent finished, by check, location and status (passed, degraded, failed).', [
    'check_id',
    'check_name',
    'check_type',
    'location',
    'status',
  ])
  readonly phases = new Gauge('monitors_agent_check_phase_duration_seconds', "Phases of the check's last run on this agent, by location.", [
    'check_id',
    'check_name',
    'check_type',
    'location',
    'phase',
  ])
  readonly lag = new Histogram('monitors_agent_run_lag_seconds', "Delay from a run's due time to its start on this agent.", [], SECONDS_BUCKETS)
  readonly startedAt = Date.now()

  /** A run this agent finished. */
  recordRun(
    check: { id: string; name: string; checkType: string },
    location: string,
    result: { hasFailures: boolean; hasErrors: boolean; isDegraded: boolean; details?: unknown },
  ): void {
    const labels = { check_id: check.id, check_name: check.name, check_type: check.checkType, location }
    // a renamed check: its series under the old name end
    const renamed = (l: Record<string, string>) => l.check_id === check.id && (l.check_name !== check.name || l.check_type !== check.checkType)
    this.runs.forget(renamed)
    this.runs.inc({ ...labels, status: runStatus(result) })
    const phases = runPhases(result.details)
    if (Object.keys(phases).length === 0) return
    this.phases.forget((l) => renamed(l) || (l.check_id === check.id && l.location === location))
    for (const [phase, ms] of Object.entries(phases)) this.phases.set({ ...labels, phase }, ms / 1000)
  }

  render(stats: AgentStats, ready: boolean): string {
    const counter = (name: string, help: string, value: number) => `${header(name, 'counter', help)}\n${sampleLine(name, {}, value)}`
    const gauge = (name: string, help: string, value: number) => `${header(name, 'gauge', help)}\n${sampleLine(name, {}, value)}`
    return `${[
      this.runs.render(),
      this.phases.render(),
      this.lag.render(),
      counter('monitors_agent_runs_claimed_total', 'Runs this agent claimed.', stats.claimed),
      counter('monitors_agent_results_posted_total', 'Results the server accepted.', stats.posted),
      counter('monitors_agent_results_dropped_total', 'Results the server refused because another runner had the run, or did not know it.', stats.dropped),
      counter('monitors_agent_results_lost_total', 'Results that could not be delivered.', stats.lost),
      counter('monitors_agent_runs_skipped_total', 'Runs of a check type this agent does not run.', stats.skipped),
      gauge('monitors_agent_runs_in_flight', 'Runs running now.', stats.inFlight),
      gauge('monitors_agent_ready', 'Whether the agent takes runs (1) or is shutting down (0).', ready ? 1 : 0),
      gauge('monitors_agent_start_time_seconds', 'When this agent started, seconds since the epoch.', Math.floor(this.startedAt / 1000)),
    ].join('\n')}\n`
  }
}
