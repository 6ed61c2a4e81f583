import type { ResourceKind } from '../resources/types.js'
import { isOutcomeUnknown } from '../api/client.js'
import { ConflictError } from '../api/errors.js'
import { backoffDelay, sleep } from '../api/backoff.js'
import { createResource, ENDPOINTS, fetchRemoteState, updateResource, type RemoteRecord } from '../api/resources.js'
import type { PlanChange } from '../plan/types.js'
import { appliedHash, appliedHashOfParsed } from '../resources/hashes.js'
import type { PendingCreate } from '../state/lock.js'
import { findCreated, pendingCreate } from '../state/pending.js'
import type { ApplyContext } from './context.js'

/**
 * POST without ever making a duplicate. The intent is written to the lock first (a pending
 * create), so a run killed before the answer is recorded is recovered by the next plan. When
 * the answer is lost, the list is read again: the resource the POST made is adopted (and
 * brought to the desired state should it differ), or, when there is none, the POST is sent
 * again, a bounded number of times.
 */
export async function createSafely(
  ctx: ApplyContext,
  change: PlanChange,
  payload: Record<string, unknown>,
): Promise<{ remoteId: string; recovered: boolean; appliedHash: string }> {
  const { client } = ctx
  const prepared = ctx.takePrepared(change.kind, change.logicalId)
  const pending = prepared ?? intentOf(change, payload)
  if (!prepared) await ctx.addPending(pending)
  let uncertain = false
  for (let attempt = 0; ; attempt++) {
    let failure: unknown
    try {
      const result = await createResource(client, change.kind, payload)
      ctx.claimed.add(result.remoteId)
      return { remoteId: result.remoteId, recovered: false, appliedHash: pending.appliedHash }
    } catch (error) {
      failure = error
    }
    if (uncertain && failure instanceof ConflictError && change.kind === 'variable' && typeof payload.key === 'string') {
      // an earlier attempt did create it: make sure it holds what was sent
      await updateResource(client, change.kind, payload.key, payload)
      ctx.claimed.add(payload.key)
      return { remoteId: payload.key, recovered: true, appliedHash: pending.appliedHash }
    }
    if (!isOutcomeUnknown(failure)) {
      if (!uncertain) {
        // refused outright: nothing was made, nothing is pending
        await ctx.dropPending(change.kind, change.logicalId)
      }
      throw failure
    }
    uncertain = true
    const found = await findAfterLostAnswer(ctx, change.kind, pending)
    if (found) {
      ctx.claimed.add(found.remoteId)
      if (appliedHash(change.kind, found.record) !== pending.appliedHash || pending.secretHash) {
        await updateResource(client, change.kind, found.remoteId, payload)
      }
      return { remoteId: found.remoteId, recovered: true, appliedHash: pending.appliedHash }
    }
    if (attempt >= ctx.createBackoff.retries) {
      const error = failure as Error
      error.message += ` (the create was tried ${attempt + 1} times and made nothing; the next apply checks again before creating)`
      throw error
    }
    await sleep(backoffDelay(attempt, ctx.createBackoff))
  }
}

/** The pending create of a POST of `payload`: the desired state's (schema output, references resolved), so no second schema pass. */
export function intentOf(change: PlanChange, payload: Record<string, unknown>): PendingCreate {
  return pendingCreate(change.kind, change.logicalId, payload, appliedHashOfParsed(change.kind, payload))
}

/** The record a POST whose answer was lost made, if any: one of its kind nobody manages or claimed. */
async function findAfterLostAnswer(ctx: ApplyContext, kind: ResourceKind, pending: PendingCreate) {
  const remote = await fetchRemoteState(ctx.client, [kind])
  const taken = new Set(ctx.claimed)
  for (const entry of Object.values(ctx.lock.resources)) if (entry.kind === kind) taken.add(entry.remoteId)
  return findCreated(pending, remote.records[kind] as Record<string, RemoteRecord>, taken, ENDPOINTS[kind].idOf)
}
