import type { ApplyContext } from './context.js'
import type { OperationOutcome, Step } from './steps.js'

export interface ExecutorOptions {
  /** Steps in flight at once. */
  concurrency: number
  onOutcome?: (outcome: OperationOutcome) => void
  /** Aborting stops new steps (Ctrl-C); those in flight finish and are recorded. */
  signal?: AbortSignal
}

export interface ExecutorResult {
  outcomes: OperationOutcome[]
  /** Steps that never started because an earlier one failed or the run was interrupted. */
  notStarted: Step[]
}

/**
 * Runs batches of steps one after the other, the steps of a batch up to `concurrency` at a time.
 * After the first failure (or an abort) no new step starts; those in flight finish.
 */
export async function runSteps(ctx: ApplyContext, batches: readonly Step[][], options: ExecutorOptions): Promise<ExecutorResult> {
  const outcomes: OperationOutcome[] = []
  const notStarted: Step[] = []
  let stopped = options.signal?.aborted ?? false
  const onAbort = () => {
    stopped = true
  }
  options.signal?.addEventListener('abort', onAbort)
  for (const batch of batches) {
    if (stopped) {
      notStarted.push(...batch)
      continue
    }
    let next = 0
    const ahead = Math.max(16, options.concurrency * 4)
    const worker = async () => {
      while (next < batch.length) {
        if (stopped) return
        const at = next++
        if (batch[at].ready === undefined) writeAhead(ctx, batch, at, ahead)
        const outcome = await runStep(ctx, batch[at])
        outcomes.push(outcome)
        if (!outcome.ok) stopped = true
        options.onOutcome?.(outcome)
      }
    }
    await Promise.all(Array.from({ length: Math.min(options.concurrency, batch.length) }, worker))
    if (stopped) notStarted.push(...batch.slice(next))
  }
  options.signal?.removeEventListener('abort', onAbort)
  return { outcomes, notStarted }
}

const NOTHING_TO_WRITE = Promise.resolve()

/**
 * The pending creates of the next `count` steps from `from` that are creates, written in one
 * flush: their POSTs then wait for no disk write of their own.
 */
function writeAhead(ctx: ApplyContext, batch: readonly Step[], from: number, count: number): void {
  const steps: Step[] = []
  const intents = []
  for (let i = from; i < batch.length && i < from + count; i++) {
    const step = batch[i]
    if (step.ready !== undefined) continue
    const intent = step.intent(ctx)
    if (!intent) {
      step.ready = NOTHING_TO_WRITE
      continue
    }
    steps.push(step)
    intents.push(intent)
  }
  if (intents.length === 0) return
  const written = ctx.preparePending(intents)
  // a failed write fails each of these steps when it runs
  written.catch(() => undefined)
  for (const step of steps) step.ready = written
}

/** One step, timed; a failure is its outcome's error, never a throw. */
async function runStep(ctx: ApplyContext, step: Step): Promise<OperationOutcome> {
  const started = performance.now()
  const outcome = step.outcome
  try {
    await step.run(ctx)
    outcome.ok = true
  } catch (error) {
    outcome.error = error instanceof Error ? error : new Error(String(error))
  }
  outcome.ms = Math.round(performance.now() - started)
  return outcome
}
