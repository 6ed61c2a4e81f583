import { NotFoundError } from '../api/errors.js'
import { deleteResource, updateResource } from '../api/resources.js'
import type { PlanChange } from '../plan/types.js'
import type { ApplyContext } from './context.js'
import { createSafely, intentOf } from './create.js'
import type { PendingCreate } from '../state/lock.js'

export type OperationVerb = 'created' | 'updated' | 'replaced' | 'deleted' | 'forgotten' | 'moved'

/** What one step did: the apply report's line for it. */
export interface OperationOutcome {
  change: PlanChange
  ok: boolean
  verb?: OperationVerb
  remoteId?: string
  ms: number
  error?: Error
  /** DELETE answered 404: the resource was already gone. */
  alreadyGone?: boolean
  /** The create's answer was lost; the resource it made was found and recorded. */
  recovered?: boolean
}

/**
 * One change of a plan as an object that applies itself: `run` sends its requests and records
 * its change in the lock (a rename's lock entry moves first). It fills `outcome` as it goes; the
 * executor times it and records a failure.
 */
export abstract class Step {
  readonly outcome: OperationOutcome
  constructor(readonly change: PlanChange) {
    this.outcome = { change, ok: false, ms: 0 }
  }

  /** Set when this step's pending create is being written ahead with others' (see executor.ts). */
  ready: Promise<void> | undefined

  async run(ctx: ApplyContext): Promise<void> {
    if (this.ready) await this.ready
    if (this.change.movedFrom) await ctx.move(this.change, this.change.movedFrom)
    await this.apply(ctx)
  }

  /** The pending create this step will write before its POST, when it is a create (written ahead with others'). */
  intent(_ctx: ApplyContext): PendingCreate | undefined {
    return undefined
  }

  protected abstract apply(ctx: ApplyContext): Promise<void>

  protected done(verb: OperationVerb, remoteId: string | undefined): void {
    this.outcome.verb = verb
    this.outcome.remoteId = remoteId
  }
}

/** A rename through `aliases` with nothing else changed: only the lock entry moves. */
export class MoveStep extends Step {
  protected async apply(): Promise<void> {
    this.done('moved', this.change.remoteId)
  }
}

/** Removed from the code with `retainOnDelete`: left running remotely, only dropped from the lock. */
export class ForgetStep extends Step {
  protected async apply(ctx: ApplyContext): Promise<void> {
    this.done('forgotten', this.change.remoteId)
    await ctx.forget(this.change)
  }
}

/** DELETE, then dropped from the lock; already gone (404) counts as deleted. Drift: gone already, only forgotten. */
export class DeleteStep extends Step {
  protected async apply(ctx: ApplyContext): Promise<void> {
    if (this.change.drift) {
      this.outcome.verb = 'forgotten'
    } else {
      try {
        await deleteResource(ctx.client, this.change.kind, this.change.remoteId!)
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error
        this.outcome.alreadyGone = true
      }
      this.outcome.verb = 'deleted'
    }
    this.outcome.remoteId = this.change.remoteId
    await ctx.forget(this.change)
  }
}

/** POST through a pending create (see createSafely), then recorded. */
export class CreateStep extends Step {
  private payload: Record<string, unknown> | undefined

  intent(ctx: ApplyContext): PendingCreate | undefined {
    try {
      this.payload = ctx.payloadFor(this.change)
    } catch {
      return undefined // its own run reports why
    }
    return intentOf(this.change, this.payload)
  }

  protected async apply(ctx: ApplyContext): Promise<void> {
    const payload = this.payload ?? ctx.payloadFor(this.change)
    const result = await createSafely(ctx, this.change, payload)
    await ctx.record(this.change, result.remoteId, payload, { appliedHash: result.appliedHash, wait: false })
    this.done('created', result.remoteId)
    if (result.recovered) this.outcome.recovered = true
  }
}

/** PUT, then recorded. */
export class UpdateStep extends Step {
  protected async apply(ctx: ApplyContext): Promise<void> {
    const payload = ctx.payloadFor(this.change)
    await updateResource(ctx.client, this.change.kind, this.change.remoteId!, payload)
    await ctx.record(this.change, this.change.remoteId!, payload)
    this.done('updated', this.change.remoteId)
  }
}

/**
 * An update that sends nothing, only records: a change of resource options alone (`lockOnly`),
 * or a lost create adopted (`adopted`) whose remote already holds what the code wants.
 */
export class RecordStep extends Step {
  protected async apply(ctx: ApplyContext): Promise<void> {
    const payload = ctx.payloadFor(this.change)
    await ctx.record(this.change, this.change.remoteId!, payload)
    this.done('updated', this.change.remoteId)
  }
}

/** DELETE (already gone is fine), dropped from the lock, then created anew through a pending create. */
export class ReplaceStep extends Step {
  protected async apply(ctx: ApplyContext): Promise<void> {
    const payload = ctx.payloadFor(this.change)
    try {
      await deleteResource(ctx.client, this.change.kind, this.change.remoteId!)
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error
    }
    await ctx.forget(this.change)
    const result = await createSafely(ctx, this.change, payload)
    await ctx.record(this.change, result.remoteId, payload)
    this.done('replaced', result.remoteId)
  }
}

/** The step that applies `change`; undefined for a no-op. */
export function stepFor(change: PlanChange): Step | undefined {
  switch (change.action) {
    case 'move':
      return new MoveStep(change)
    case 'forget':
      return new ForgetStep(change)
    case 'delete':
      return new DeleteStep(change)
    case 'create':
      return new CreateStep(change)
    case 'replace':
      return new ReplaceStep(change)
    case 'update': {
      const remoteDiffs = (change.fieldDiffs ?? []).filter((d) => !d.lockOnly).length
      return change.lockOnly || (change.adopted && remoteDiffs === 0) ? new RecordStep(change) : new UpdateStep(change)
    }
    case 'noop':
      return undefined
  }
}
