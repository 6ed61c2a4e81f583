import type { AnalyticsSample, MetricTotals, RollupRuns } from './index.js'

/*
 * What both stores do with analytics rollup rows besides the SQL: the row a sample belongs to
 * (check, UTC hour, location, status code, status), the samples grouped by row, and the
 * merge of samples into a row's values.
 */

const HOUR = 3_600_000

export interface Key {
  hourStart: number
  runLocation: string
  statusCode: number
  status: string
}

export const keyOf = (s: AnalyticsSample): Key => ({
  hourStart: Math.floor(s.at / HOUR) * HOUR,
  runLocation: s.runLocation,
  statusCode: s.statusCode ?? -1,
  status: s.status,
})

/** Adds samples (oldest first) to a row's values; the runs stay in time order. */
export function merge(
  row: { runs: number; retries: number; totals: Record<string, MetricTotals>; samples: RollupRuns },
  hourStart: number,
  added: AnalyticsSample[],
): void {
  const runs = row.samples
  for (const s of added) {
    row.runs++
    row.retries += s.retries
    const second = Math.floor((s.at - hourStart) / 1000)
    let at = runs.seconds.length
    while (at > 0 && runs.seconds[at - 1] > second) at--
    const count = runs.seconds.length
    runs.seconds.splice(at, 0, second)
    runs.retries.splice(at, 0, s.retries)
    for (const name of Object.keys(s.values)) {
      if (!Number.isFinite(s.values[name])) continue
      runs.values[name] ??= new Array<number | null>(count).fill(null)
    }
    for (const [name, column] of Object.entries(runs.values)) {
      const value = s.values[name]
      const measured = value !== undefined && Number.isFinite(value)
      column.splice(at, 0, measured ? value : null)
      if (!measured) continue
      const t = row.totals[name]
      if (t === undefined) row.totals[name] = [1, value, value * value, value, value]
      else {
        t[0]++
        t[1] += value
        t[2] += value * value
        t[3] = Math.min(t[3], value)
        t[4] = Math.max(t[4], value)
      }
    }
  }
}

/** Samples grouped by the row they go to, each group with its key, in first-seen order. */
export function groupByRow(samples: readonly AnalyticsSample[]): Array<{ key: Key; samples: AnalyticsSample[] }> {
  const groups = new Map<string, { key: Key; samples: AnalyticsSample[] }>()
  for (const sample of samples) {
    const key = keyOf(sample)
    const id = `${key.hourStart}\u0000${key.runLocation}\u0000${key.statusCode}\u0000${key.status}`
    const group = groups.get(id)
    if (group) group.samples.push(sample)
    else groups.set(id, { key, samples: [sample] })
  }
  return [...groups.values()]
}
