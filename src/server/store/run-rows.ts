import type { CheckResultRecord, RunLease, StoredResultInput } from './index.js'

/*
 * What both stores share about due runs besides the SQL: a check_runs row, the run id a
 * claim hands out ("<row id>.<claim number>"), and a result as its claim vouches for it.
 */

/** A row of check_runs. */
export interface RunRow {
  id: string
  account_id: string
  check_id: string
  location: string
  due_at: number
  session_id: string | null
  state: string
  claim_seq: number
  lease_expires_at: number | null
  lease_owner?: string | null
  done_claim: number | null
  /** ms; null for a run claimed before the column existed */
  claimed_at: number | null
}

/** The lease a run id names, as RunStore.lease answers it. */
export function leaseOf(row: RunRow, claim: number, now: number): RunLease | 'lost' | 'done' {
  if (row.state === 'done') return 'done'
  const until = row.lease_expires_at === null ? null : Number(row.lease_expires_at)
  if (row.state !== 'due' || Number(row.claim_seq) !== claim || until === null || until <= now) return 'lost'
  return { owner: row.lease_owner ?? null, until, location: row.location }
}

/** "<row id>.<claim>" → its parts; undefined when it is not a run id. */
export function parseRunId(runId: string): { id: string; claim: number } | undefined {
  const dot = runId.lastIndexOf('.')
  if (dot <= 0) return undefined
  const claim = Number(runId.slice(dot + 1))
  if (!Number.isInteger(claim) || claim < 1) return undefined
  return { id: runId.slice(0, dot), claim }
}

/** A time (ISO text) moved into [from, to] (ms); the text as sent when it was inside already. */
function clampTime(text: string, from: number, to: number): { ms: number; text: string } {
  const ms = Date.parse(text)
  const clamped = Number.isFinite(ms) ? Math.min(Math.max(ms, from), to) : to
  return { ms: clamped, text: clamped === ms ? text : new Date(clamped).toISOString() }
}

/**
 * A runner's result as its claim vouches for it. What identifies the run comes from the claim,
 * never from the runner: the check (checkId, and name and checkType when the result carries
 * them, from the check as stored) and the location. Its start and stop are moved into the
 * claim's window on the server's clock (from the claim to the completion): an agent whose clock
 * is wrong, or that lies, cannot date a result before its run was handed out or in the future,
 * where it would outrank every later run of the check. `sslDaysRemaining` and `sslCheck` are
 * kept only when the stored check names an `sslCheckDomain` and the result says it is that one.
 */
export function resultOfClaim<R extends StoredResultInput>(
  result: R,
  claim: { row: RunRow; now: number; check: { name?: unknown; checkType?: unknown } | undefined },
): R {
  const { row, now } = claim
  const from = row.claimed_at ?? row.due_at
  const to = Math.max(now, from)
  const started = clampTime(result.startedAt, from, to)
  const stopped = clampTime(result.stoppedAt, started.ms, to)
  const out: Record<string, unknown> = { ...result, checkId: row.check_id, runLocation: row.location, startedAt: started.text, stoppedAt: stopped.text }
  if ('name' in result && typeof claim.check?.name === 'string') out.name = claim.check.name
  if ('checkType' in result && typeof claim.check?.checkType === 'string') out.checkType = claim.check.checkType
  // a certificate of its own only for a check that names an sslCheckDomain, and for that domain
  const domain = (claim.check as { sslCheckDomain?: unknown } | undefined)?.sslCheckDomain
  const sslCheck = out.sslCheck as { domain?: unknown } | undefined
  if (typeof domain !== 'string' || sslCheck?.domain !== domain) {
    delete out.sslDaysRemaining
    delete out.sslCheck
  }
  return out as R
}

/**
 * The record of one result of a run, from its result as the claim vouches for it: the columns
 * both stores keep; each store gives the id it makes and the details as it keeps them.
 */
export function resultRecord(
  result: StoredResultInput,
  run: { id: string; row: RunRow; runId: string; resultType: 'FINAL' | 'ATTEMPT'; createdAt: string; details: Record<string, unknown> },
): CheckResultRecord {
  return {
    id: run.id,
    checkId: run.row.check_id,
    sessionId: run.row.session_id,
    runId: run.runId,
    runLocation: result.runLocation,
    resultType: run.resultType,
    status: result.status,
    hasFailures: result.hasFailures,
    hasErrors: result.hasErrors,
    isDegraded: result.isDegraded,
    responseTime: result.responseTime,
    startedAt: result.startedAt,
    stoppedAt: result.stoppedAt,
    error: result.error,
    details: run.details,
    created_at: run.createdAt,
  }
}
