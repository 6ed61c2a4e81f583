import { withGroup } from '../groups.js'
import type { CheckRunResult } from '../../runner/index.js'
import type { CheckResultRecord, ClaimedRun, CompleteOutcome, Repositories, Store, StoredResultInput } from '../store/index.js'

/**
 * Called once for every FINAL result, inside the transaction that records it (check statuses,
 * error groups and alert state are derived here). `check` is the check as GET answers it.
 */
export type FinalResultHook = (
  tx: Repositories,
  check: Record<string, unknown> & { id: string },
  result: CheckRunResult,
  recorded: { run: ClaimedRun; final: CheckResultRecord; attempts: CheckResultRecord[] },
) => Promise<void>

/** What the runs need besides the store: the clock, and what to do with each FINAL result. */
export interface RunServices {
  now: () => number
  onFinalResult?: FinalResultHook
}

function stored(result: object): StoredResultInput {
  const { attempts: _attempts, ...rest } = result as Record<string, unknown>
  return rest as StoredResultInput
}

/**
 * Records a run's FINAL result and its ATTEMPT results, and hands the FINAL one to the hook,
 * all in one transaction: a result is recorded with its consequences or not at all. The one
 * place every result goes through, whether the server's runner or an agent ran it.
 */
export function completeRun(store: Store, services: RunServices, account: string | undefined, runId: string, result: CheckRunResult): Promise<CompleteOutcome> {
  return store.transaction((tx) => completeIn(tx, services, account, runId, result))
}

async function completeIn(tx: Repositories, services: RunServices, account: string | undefined, runId: string, result: CheckRunResult): Promise<CompleteOutcome> {
  const outcome = await tx.runs.complete(account, runId, stored(result), result.attempts.map(stored), services.now())
  if (outcome.outcome === 'completed' && services.onFinalResult) {
    // a check in a group: its alert settings, channels and muted as the group makes them
    const check = await withGroup(tx, outcome.run.account, JSON.parse(outcome.run.checkJson) as Record<string, unknown> & { id: string })
    // the result as recorded (the claim's check, location and time window), not as the runner sent it
    const recorded = { ...(outcome.final.details as unknown as CheckRunResult), resultType: 'FINAL' as const, attempts: outcome.attempts.map((a) => a.details as unknown as CheckRunResult) }
    await services.onFinalResult(tx, check, recorded, outcome)
  }
  return outcome
}

/**
 * Records several runs' results in one transaction (a group commit: one write of the pages
 * they share instead of one per run), each exactly as completeRun does. All or nothing: when
 * one fails, none is recorded and the caller records them one by one.
 */
export function completeRuns(store: Store, services: RunServices, runs: ReadonlyArray<{ account: string | undefined; runId: string; result: CheckRunResult }>): Promise<CompleteOutcome[]> {
  return store.transaction(async (tx) => {
    const outcomes: CompleteOutcome[] = []
    for (const run of runs) outcomes.push(await completeIn(tx, services, run.account, run.runId, run.result))
    return outcomes
  })
}
