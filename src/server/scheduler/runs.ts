import { withGroup } from '../groups.js'
import type { CheckRunResult } from '../../runner/index.js'
import type { Clock } from '../../runner/clock.js'
import type { CheckResultRecord, ClaimedRun, CompleteOutcome, Repositories, SkipCount, Store, StoredResultInput } from '../store/index.js'

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

/** What the runs need besides the store: the clock, what to do with each FINAL result, and with runs skipped as late. */
export interface RunServices extends Clock {
  onFinalResult?: FinalResultHook
  /** the runs a claim of this process skipped as late (a newer run of their check was due), counted once */
  onSkipped?: (skipped: SkipCount[]) => void
  /**
   * a run's result, once the transaction that recorded it committed (once per result: a group
   * tried again, or refused and recorded one by one, is told after the commit that held)
   */
  onCommitted?: (outcome: Extract<CompleteOutcome, { outcome: 'completed' }>) => void
}

/** Tells the services of each result recorded, after its commit. */
function committed<T extends CompleteOutcome | CompleteOutcome[]>(services: RunServices, outcomes: T): T {
  for (const outcome of Array.isArray(outcomes) ? outcomes : [outcomes]) if (outcome.outcome === 'completed') services.onCommitted?.(outcome)
  return outcomes
}

function stored(result: object): StoredResultInput {
  const { attempts: _attempts, ...rest } = result as Record<string, unknown>
  return rest as StoredResultInput
}

/**
 * Records a run's FINAL result and its ATTEMPT results, and hands the FINAL one to the hook,
 * all in one transaction: a result is recorded with its consequences or not at all. The one
 * place every result goes through, whether the server's runner or an agent ran it. The run's
 * row is locked first, its check's rows after (the order completeRuns keeps).
 */
export async function completeRun(
  store: Store,
  services: RunServices,
  account: string | undefined,
  runId: string,
  result: CheckRunResult,
): Promise<CompleteOutcome> {
  return committed(
    services,
    await store.transaction(async (tx) => {
      const outcome = await tx.runs.complete(account, runId, stored(result), result.attempts.map(stored), services.now())
      await finalHook(tx, services, outcome)
      return outcome
    }),
  )
}

/** The FINAL result of a run just completed, handed to the hook (its statuses, rollups, alert state). */
async function finalHook(tx: Repositories, services: RunServices, outcome: CompleteOutcome): Promise<void> {
  if (outcome.outcome !== 'completed' || !services.onFinalResult) return
  // a check in a group: its alert settings, channels and muted as the group makes them
  const check = await withGroup(tx, outcome.run.account, JSON.parse(outcome.run.checkJson) as Record<string, unknown> & { id: string })
  // the result as recorded (the claim's check, location and time window), not as the runner sent it
  const recorded = {
    ...(outcome.final.details as unknown as CheckRunResult),
    resultType: 'FINAL' as const,
    attempts: outcome.attempts.map((a) => a.details as unknown as CheckRunResult),
  }
  await services.onFinalResult(tx, check, recorded, outcome)
}

/** A run to record in a group: its check's id, when the caller knows it, orders it among the others. */
export interface RunToComplete {
  account: string | undefined
  runId: string
  checkId?: string
  result: CheckRunResult
}

/** The order a group records its runs in: by check, then run (the same on every server). */
const lockOrder = (a: RunToComplete, b: RunToComplete): number =>
  (a.checkId ?? '') < (b.checkId ?? '') ? -1 : (a.checkId ?? '') > (b.checkId ?? '') ? 1 : a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0

/**
 * Records several runs' results in one transaction (a group commit: one write of the pages
 * they share instead of one per run), each exactly as completeRun does. All or nothing: when
 * one fails, none is recorded and the caller records them one by one. Answers the outcomes in
 * the order of `runs`.
 *
 * The rows are locked in one order, whichever server records which runs (two servers, or an
 * agent's result landing on the other server, would otherwise take the same checks' rows in
 * opposite orders and deadlock): first every run's row, by run id (RunStore.lock); then the runs
 * are completed (results written: new rows, nothing another transaction waits for); then each
 * FINAL result's consequences, check by check in check id order, each check's rows in the
 * hook's fixed order (status, analytics rollups, error groups, alert state, outbox). The rows
 * other transactions wait for are thus taken last and held for the shortest time.
 */
export async function completeRuns(store: Store, services: RunServices, runs: ReadonlyArray<RunToComplete>): Promise<CompleteOutcome[]> {
  const ordered = runs.map((run, index) => ({ run, index })).sort((a, b) => lockOrder(a.run, b.run))
  return committed(
    services,
    await store.transaction(async (tx) => {
      await tx.runs.lock(ordered.map(({ run }) => run.runId))
      const outcomes: CompleteOutcome[] = new Array(runs.length)
      for (const { run, index } of ordered) {
        outcomes[index] = await tx.runs.complete(run.account, run.runId, stored(run.result), run.result.attempts.map(stored), services.now())
      }
      // a run known by its id only (not by its check) is ordered by its check now
      const byCheck = ordered
        .map(({ index }) => index)
        .sort((a, b) => {
          const ca = checkOf(outcomes[a], runs[a])
          const cb = checkOf(outcomes[b], runs[b])
          return ca < cb ? -1 : ca > cb ? 1 : lockOrder(runs[a], runs[b])
        })
      for (const index of byCheck) await finalHook(tx, services, outcomes[index])
      return outcomes
    }),
  )
}

function checkOf(outcome: CompleteOutcome, run: RunToComplete): string {
  return outcome.outcome === 'completed' ? outcome.run.checkId : (run.checkId ?? '')
}
