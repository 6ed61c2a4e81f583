/**
 * Analytics rollups written by several processes on one database: samples of the same check,
 * hour and location added at the same moment through two stores (the server's and a second
 * one, as another server or an agent's server would hold) all count; none is written over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../../../src/server/index.js'
import type { AnalyticsSample, Store } from '../../../src/server/store/index.js'
import { startResultsBench, type ResultsBench } from '../results/results-helpers.js'
import { seriesOf } from './analytics-helpers.js'

const H = Date.parse('2026-03-01T10:00:00Z')

let bench: ResultsBench
let other: Store

beforeAll(async () => {
  bench = await startResultsBench()
  other = await openStore(bench.dbPath)
})
afterAll(async () => {
  await other?.close()
  await bench?.close()
})

const sample = (n: number): AnalyticsSample => ({
  at: H + n * 1000,
  runLocation: 'eu-west-1',
  statusCode: null,
  status: 'success',
  retries: n % 2,
  values: { total: n },
})

describe('analytics rollups shared by two processes', () => {
  it('counts every sample added at the same moment through both stores, runs kept in time order', async () => {
    const id = await bench.createCheck('shared.test', { activated: false })
    const numbers = Array.from({ length: 24 }, (_, i) => i + 1)
    // one at a time (each in its own transaction), and in batches, from both stores at once
    await Promise.all([
      ...numbers.slice(0, 16).map((n) => (n % 2 === 0 ? bench.store : other).analytics.record('acc-a', id, sample(n))),
      bench.store.analytics.recordMany('acc-a', id, numbers.slice(16, 20).map(sample)),
      other.analytics.recordMany('acc-a', id, numbers.slice(20).map(sample)),
    ])

    const rows = await other.analytics.rows('acc-a', id, H, H + 3_600_000, true)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ hourStart: H, runLocation: 'eu-west-1', statusCode: null, status: 'success', runs: 24, retries: 12 })
    expect(rows[0].samples?.seconds).toEqual(numbers)
    expect(rows[0].samples?.values.total).toEqual(numbers)
    expect(rows[0].totals.total).toEqual([24, 300, 4900, 1, 24])

    // and the API answers the figures of all 24 runs
    const answer = await bench.call('GET', `/v1/analytics/dns/${id}?from=${H / 1000}&to=${H / 1000 + 3600}&metrics=total_sum,total_max,retries,availability`)
    expect(seriesOf(answer)).toEqual([{ bucketStart: new Date(H).toISOString(), total_sum: 300, total_max: 24, retries: 12, availability: 100 }])
  })
})
