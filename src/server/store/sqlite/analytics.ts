import type { Db } from './migrations.js'
import type { AnalyticsRollupRow, AnalyticsSample, AnalyticsStore, MetricTotals, RollupRuns } from '../index.js'
import type { Exec } from './index.js'
import { groupByRow, merge } from '../analytics-rows.js'

/*
 * Analytics rollups: one row per check, UTC hour, location, status code and status. A result
 * is added by reading its row and writing it back, inside the transaction that records the
 * result (BEGIN IMMEDIATE: no other writer, of this process or another, runs in between).
 * The SQL is plain: a primary-key read, an upsert, a range read, a delete.
 */

const HOUR = 3_600_000

/** hour_start, run_location, status_code, status, runs, retries, totals (and samples) */
type RollupRowData = [number, string, number, string, number, number, string, string?]

export function analyticsRepository(db: Db, exec: Exec): AnalyticsStore {
  const read = db.prepare(`SELECT runs, retries, totals, samples FROM analytics_rollups
    WHERE check_id = @checkId AND hour_start = @hourStart AND run_location = @runLocation AND status_code = @statusCode AND status = @status`)
  const write = db.prepare(`INSERT INTO analytics_rollups
    (check_id, account_id, hour_start, run_location, status_code, status, runs, retries, totals, samples)
    VALUES (@checkId, @account, @hourStart, @runLocation, @statusCode, @status, @runs, @retries, @totals, @samples)
    ON CONFLICT (check_id, hour_start, run_location, status_code, status) DO UPDATE SET
      runs = excluded.runs, retries = excluded.retries, totals = excluded.totals, samples = excluded.samples`)
  const columns = 'hour_start, run_location, status_code, status, runs, retries, totals'
  // rows as arrays (raw): a 30-day read is thousands of rows, and no object per row is made twice
  const range = db
    .prepare(`SELECT ${columns} FROM analytics_rollups
    WHERE check_id = ? AND account_id = ? AND hour_start >= ? AND hour_start < ? ORDER BY hour_start`)
    .raw(true)
  const rangeWithSamples = db
    .prepare(`SELECT ${columns}, samples FROM analytics_rollups
    WHERE check_id = ? AND account_id = ? AND hour_start >= ? AND hour_start < ? ORDER BY hour_start`)
    .raw(true)
  const accountRange = db
    .prepare(`SELECT check_id, ${columns} FROM analytics_rollups
    WHERE account_id = ? AND hour_start >= ? AND hour_start < ? ORDER BY check_id, hour_start, run_location, status_code, status`)
    .raw(true)
  const accountRangeWithSamples = db
    .prepare(`SELECT check_id, ${columns}, samples FROM analytics_rollups
    WHERE account_id = ? AND hour_start >= ? AND hour_start < ? ORDER BY check_id, hour_start, run_location, status_code, status`)
    .raw(true)
  const prune = db.prepare(`DELETE FROM analytics_rollups WHERE hour_start < ?`)

  /** Adds samples (of one check) to their rows: one read and one write per row. */
  function add(account: string, checkId: string, samples: AnalyticsSample[]): void {
    for (const { key, samples: added } of groupByRow(samples)) {
      const params = { checkId, ...key }
      const old = read.get(params) as { runs: number; retries: number; totals: string; samples: string } | undefined
      const row = old
        ? {
            runs: old.runs,
            retries: old.retries,
            totals: JSON.parse(old.totals) as Record<string, MetricTotals>,
            samples: JSON.parse(old.samples) as RollupRuns,
          }
        : { runs: 0, retries: 0, totals: {}, samples: { seconds: [], retries: [], values: {} } }
      merge(
        row,
        key.hourStart,
        added.sort((a, b) => a.at - b.at),
      )
      write.run({ ...params, account, runs: row.runs, retries: row.retries, totals: JSON.stringify(row.totals), samples: JSON.stringify(row.samples) })
    }
  }

  const addMany = db.transaction(add)

  return {
    record: (account, checkId, sample) => exec(() => add(account, checkId, [sample])),
    recordMany: (account, checkId, samples) => exec(() => (db.inTransaction ? add(account, checkId, samples) : addMany.immediate(account, checkId, samples))),
    rows: (account, checkId, fromHour, toHour, withSamples) =>
      exec(() => {
        const rows = (withSamples ? rangeWithSamples : range).all(checkId, account, fromHour, toHour) as RollupRowData[]
        return rows.map(rollupRow)
      }),
    rowsOfAccount: (account, fromHour, toHour, withSamples) =>
      exec(() => {
        const rows = (withSamples ? accountRangeWithSamples : accountRange).all(account, fromHour, toHour) as Array<[string, ...RollupRowData]>
        const byCheck = new Map<string, AnalyticsRollupRow[]>()
        for (const [checkId, ...data] of rows) {
          let list = byCheck.get(checkId)
          if (!list) byCheck.set(checkId, (list = []))
          list.push(rollupRow(data as RollupRowData))
        }
        return byCheck
      }),
    prune: (before) => exec(() => prune.run(before - HOUR + 1).changes),
  }
}

function rollupRow([hourStart, runLocation, statusCode, status, runs, retries, totals, samples]: RollupRowData): AnalyticsRollupRow {
  return {
    hourStart,
    runLocation,
    statusCode: statusCode === -1 ? null : statusCode,
    status,
    runs,
    retries,
    totals: JSON.parse(totals) as Record<string, MetricTotals>,
    ...(samples !== undefined ? { samples: JSON.parse(samples) as RollupRuns } : {}),
  }
}
