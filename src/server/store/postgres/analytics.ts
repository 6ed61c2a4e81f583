import type { AnalyticsRollupRow, AnalyticsSample, AnalyticsStore, MetricTotals, RollupRuns } from '../index.js'
import type { Sql } from './index.js'
import { groupByRow, merge, type Key } from '../analytics-rows.js'

/*
 * Analytics rollups: one row per check, UTC hour, location, status code and status, as in
 * SQLite (the samples are merged by the same code). A result is added inside the transaction
 * that records it: the row is created empty or, when it exists, locked, by one upsert that
 * answers its values (INSERT … ON CONFLICT DO UPDATE locks the row it meets); the merged
 * values are written back before the transaction ends. Two servers recording results of the
 * same check and hour therefore add them one after the other, never over each other. Rows are
 * taken in key order, so two transactions adding several rows wait on each other, not deadlock.
 */

const HOUR = 3_600_000

const EMPTY_RUNS = JSON.stringify({ seconds: [], retries: [], values: {} })

interface Row {
  hour_start: number
  run_location: string
  status_code: number
  status: string
  runs: number
  retries: number
  totals: string
  samples?: string
}

const compare = (a: Key, b: Key): number =>
  a.hourStart - b.hourStart || (a.runLocation < b.runLocation ? -1 : a.runLocation > b.runLocation ? 1 : 0)
  || a.statusCode - b.statusCode || (a.status < b.status ? -1 : a.status > b.status ? 1 : 0)

const TAKE = `
  INSERT INTO analytics_rollups (check_id, account_id, hour_start, run_location, status_code, status, runs, retries, totals, samples)
  VALUES ($1, $2, $3, $4, $5, $6, 0, 0, '{}', $7)
  ON CONFLICT (check_id, hour_start, run_location, status_code, status) DO UPDATE SET runs = analytics_rollups.runs
  RETURNING runs, retries, totals, samples`

const WRITE = `
  UPDATE analytics_rollups SET runs = $6, retries = $7, totals = $8, samples = $9
  WHERE check_id = $1 AND hour_start = $2 AND run_location = $3 AND status_code = $4 AND status = $5`

// the order of SQLite's primary key (byte order of the text), whatever the database's collation
const ORDER = `hour_start, run_location COLLATE "C", status_code, status COLLATE "C"`

export function analyticsRepository(sql: Sql): AnalyticsStore {
  /** Adds samples (of one check) to their rows: one upsert (which locks) and one update per row. */
  async function add(tx: Sql, account: string, checkId: string, samples: AnalyticsSample[]): Promise<void> {
    for (const { key, samples: added } of groupByRow(samples).sort((a, b) => compare(a.key, b.key))) {
      const [old] = await tx.rows<{ runs: number; retries: number; totals: string; samples: string }>(TAKE,
        [checkId, account, key.hourStart, key.runLocation, key.statusCode, key.status, EMPTY_RUNS])
      const row = { runs: old.runs, retries: old.retries, totals: JSON.parse(old.totals) as Record<string, MetricTotals>, samples: JSON.parse(old.samples) as RollupRuns }
      merge(row, key.hourStart, added.sort((a, b) => a.at - b.at))
      await tx.run(WRITE, [checkId, key.hourStart, key.runLocation, key.statusCode, key.status,
        row.runs, row.retries, JSON.stringify(row.totals), JSON.stringify(row.samples)])
    }
  }

  return {
    record: (account, checkId, sample) => sql.atomic((tx) => add(tx, account, checkId, [sample])),
    recordMany: (account, checkId, samples) => sql.atomic((tx) => add(tx, account, checkId, samples)),
    rows: async (account, checkId, fromHour, toHour, withSamples) => {
      const rows = await sql.rows<Row>(`SELECT hour_start, run_location, status_code, status, runs, retries, totals${withSamples ? ', samples' : ''}
        FROM analytics_rollups WHERE check_id = $1 AND account_id = $2 AND hour_start >= $3 AND hour_start < $4 ORDER BY ${ORDER}`,
      [checkId, account, fromHour, toHour])
      return rows.map(rollupRow)
    },
    rowsOfAccount: async (account, fromHour, toHour, withSamples) => {
      const rows = await sql.rows<Row & { check_id: string }>(`SELECT check_id, hour_start, run_location, status_code, status, runs, retries, totals${withSamples ? ', samples' : ''}
        FROM analytics_rollups WHERE account_id = $1 AND hour_start >= $2 AND hour_start < $3 ORDER BY check_id COLLATE "C", ${ORDER}`,
      [account, fromHour, toHour])
      const byCheck = new Map<string, AnalyticsRollupRow[]>()
      for (const row of rows) {
        let list = byCheck.get(row.check_id)
        if (!list) byCheck.set(row.check_id, (list = []))
        list.push(rollupRow(row))
      }
      return byCheck
    },
    prune: (before) => sql.run(`DELETE FROM analytics_rollups WHERE hour_start < $1`, [before - HOUR + 1]),
  }
}

function rollupRow(row: Row): AnalyticsRollupRow {
  return {
    hourStart: row.hour_start,
    runLocation: row.run_location,
    statusCode: row.status_code === -1 ? null : row.status_code,
    status: row.status,
    runs: row.runs,
    retries: row.retries,
    totals: JSON.parse(row.totals) as Record<string, MetricTotals>,
    ...(row.samples !== undefined ? { samples: JSON.parse(row.samples) as RollupRuns } : {}),
  }
}
