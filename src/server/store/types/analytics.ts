/** Analytics rollups. (Re-exported by ../index.ts.) */

// --- analytics rollups: one row per check, hour, location, status code and status -------------

/** One FINAL result as analytics keep it. */
export interface AnalyticsSample {
  /** when the run started, ms */
  at: number
  runLocation: string
  /** an API check's response status; null for other types or when no response came */
  statusCode: number | null
  /** 'success' or 'failure'; a heartbeat's event state (RECEIVED, GRACE, LATE, FAILING) */
  status: string
  /** attempts retried before this final result */
  retries: number
  /** measured metric name -> value (ms or percent); a metric not measured is left out */
  values: Record<string, number>
}

/** count, sum, sum of squares, min and max of one metric's values in a rollup row */
export type MetricTotals = [n: number, sum: number, sumOfSquares: number, min: number, max: number]

/**
 * The runs of a rollup row, oldest first, column by column: run i started `seconds[i]` after
 * the row's hour, had `retries[i]` retries and measured `values[metric][i]` (null: not measured).
 */
export interface RollupRuns {
  seconds: number[]
  retries: number[]
  values: Record<string, Array<number | null>>
}

export interface AnalyticsRollupRow {
  /** ms, a whole UTC hour */
  hourStart: number
  runLocation: string
  statusCode: number | null
  status: string
  runs: number
  retries: number
  totals: Record<string, MetricTotals>
  /** every run of the row; only when asked for */
  samples?: RollupRuns
}

export interface AnalyticsStore {
  /**
   * Adds one result to its row. Called inside the transaction that records the result (see
   * ../results), so a result lands in analytics exactly when it is recorded; an
   * implementation makes the read and write of the row one step (SQLite: the transaction's
   * write lock; PostgreSQL: SELECT … FOR UPDATE, or an upsert).
   */
  record(account: string, checkId: string, sample: AnalyticsSample): Promise<void>
  /** Many results of one check at once (fills, imports): the same rows as one `record` each, fewer writes. */
  recordMany(account: string, checkId: string, samples: AnalyticsSample[]): Promise<void>
  /** Rows of a check with fromHour <= hourStart < toHour (ms), oldest first; `samples` filled when withSamples. */
  rows(account: string, checkId: string, fromHour: number, toHour: number, withSamples: boolean): Promise<AnalyticsRollupRow[]>
  /** The rows of every check of the account with fromHour <= hourStart < toHour, by check id, each check's oldest first (one query). */
  rowsOfAccount(account: string, fromHour: number, toHour: number, withSamples: boolean): Promise<Map<string, AnalyticsRollupRow[]>>
  /**
   * Rows of hours that ended before `before` (ms) are no longer answered, with the results' retention, `now` the clock's time (ms);
   * answers how many rows went (SQLite deletes them; PostgreSQL drops the days wholly before, the rest of a day when it is past).
   */
  prune(before: number, now?: number): Promise<number>
}

// --- end of analytics rollups ---------------------------------------------------------------------
