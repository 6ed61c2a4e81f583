/*
 * What both stores share about due runs besides the SQL: a check_runs row, and the run id a
 * claim hands out ("<row id>.<claim number>").
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
  done_claim: number | null
}

/** "<row id>.<claim>" → its parts; undefined when it is not a run id. */
export function parseRunId(runId: string): { id: string; claim: number } | undefined {
  const dot = runId.lastIndexOf('.')
  if (dot <= 0) return undefined
  const claim = Number(runId.slice(dot + 1))
  if (!Number.isInteger(claim) || claim < 1) return undefined
  return { id: runId.slice(0, dot), claim }
}
