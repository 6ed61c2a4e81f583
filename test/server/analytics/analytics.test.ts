/**
 * GET /v1/analytics/api-checks/{id} on the real server, from runs with known timings recorded
 * the way the server records every result (agent routes). Every figure below is computed by
 * hand from the runs in the table; percentiles are nearest-rank, deviations population ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { caller, expect400, startTestServer, type Call } from '../helpers.js'
import { recordRuns, seriesOf, type KnownRun } from './analytics-helpers.js'

const H = Date.parse('2026-03-01T10:00:00Z')
const MIN = 60_000
const at = (minutes: number) => new Date(H + minutes * MIN).toISOString()
let now = H + 3 * 60 * MIN
const clock = { get: () => now, set: (ms: number) => void (now = ms) }
let server: LocalServer
let call: Call
let checkId: string

const timings = (dns: number, tcp: number, firstByte: number, download: number, total: number) => ({ dns, tcp, tls: 0, firstByte, download, total })

/*
 * | run | start  | location  | status | ms  | dns | tcp | firstByte | download | wait | retries |
 * | r1  | +0:05  | eu-west-1 | 200 ok | 100 | 10  | 20  | 50        | 15       | 5    | 0       |
 * | r5  | +0:10  | us-east-1 | 500 ✗  | 50  | 5   | 5   | 30        | 10       | 0    | 1       |
 * | r2  | +0:15  | eu-west-1 | 200 ok | 200 | 20  | 30  | 100       | 40       | 10   | 0       |
 * | r3  | +0:25  | eu-west-1 | 200 ok | 300 | 30  | 40  | 150       | 60       | 20   | 0       |
 * | r4  | +1:05  | eu-west-1 | 200 ok | 400 | 40  | 50  | 200       | 80       | 30   | 0       |
 * | r6  | +1:10  | us-east-1 | none ✗ | -   | -   | -   | -         | -        | -    | 2       |
 */
const RUNS: KnownRun[] = [
  { at: at(5), location: 'eu-west-1', passed: true, responseTime: 100, details: { kind: 'API', statusCode: 200, timings: timings(10, 20, 50, 15, 100) } },
  {
    at: at(10),
    location: 'us-east-1',
    passed: false,
    responseTime: 50,
    retries: 1,
    details: { kind: 'API', statusCode: 500, timings: timings(5, 5, 30, 10, 50) },
  },
  { at: at(15), location: 'eu-west-1', passed: true, responseTime: 200, details: { kind: 'API', statusCode: 200, timings: timings(20, 30, 100, 40, 200) } },
  { at: at(25), location: 'eu-west-1', passed: true, responseTime: 300, details: { kind: 'API', statusCode: 200, timings: timings(30, 40, 150, 60, 300) } },
  { at: at(65), location: 'eu-west-1', passed: true, responseTime: 400, details: { kind: 'API', statusCode: 200, timings: timings(40, 50, 200, 80, 400) } },
  { at: at(70), location: 'us-east-1', passed: false, responseTime: null, retries: 2, details: { kind: 'API', statusCode: null, timings: null } },
]

const WINDOW = `from=${H / 1000}&to=${(H + 2 * 60 * MIN) / 1000}`
const analytics = (query: string) => call('GET', `/v1/analytics/api-checks/${checkId}?${query}`)

beforeAll(async () => {
  // no runner: results come only from the posted runs; the clock is the test's
  server = await startTestServer({ clock: () => now })
  call = caller(server)
  const created = await call('POST', '/v1/checks/api', {
    name: 'Checkout API',
    tags: ['shop'],
    frequency: 5,
    locations: ['eu-west-1'],
    request: { method: 'GET', url: 'http://127.0.0.1:9/health' },
  })
  expect(created.status, created.text).toBe(201)
  checkId = created.json.id
  await recordRuns(call, checkId, RUNS, clock)
})
afterAll(async () => {
  await server?.close()
})

describe('analytics of an API check', () => {
  it('answers the spec body: check fields, window, paging, metadata with unit, label and aggregation', async () => {
    const answer = await analytics(`${WINDOW}&metrics=responseTime,responseTime_p95,availability,retries`)
    expect(answer.status, answer.text).toBe(200)
    expect(answer.json).toMatchObject({
      checkId,
      name: 'Checkout API',
      checkType: 'API',
      activated: true,
      muted: false,
      frequency: 5,
      tags: ['shop'],
      from: new Date(H).toISOString(),
      to: new Date(H + 2 * 60 * MIN).toISOString(),
      pagination: { page: 1, limit: 10 },
    })
    expect(answer.json.metadata).toEqual({
      responseTime: { unit: 'milliseconds', label: 'Response time (average)', aggregation: 'avg' },
      responseTime_p95: { unit: 'milliseconds', label: 'Response time (p95)', aggregation: 'p95' },
      availability: { unit: 'percentage', label: 'Availability (passing runs out of all runs)', aggregation: 'avg' },
      retries: { unit: 'count', label: 'Retries (attempts retried before the final result)', aggregation: 'sum' },
    })
    expect(seriesOf(answer)).toEqual([{ bucketStart: new Date(H).toISOString(), responseTime: 210, responseTime_p95: 400, availability: 66.667, retries: 3 }])
  })

  it('computes every aggregation of every phase exactly from the runs', async () => {
    const names = ['responseTime', 'wait', 'dns', 'tcp', 'firstByte', 'download']
    const all = names.flatMap((m) => ['avg', 'max', 'median', 'min', 'p50', 'p90', 'p95', 'p99', 'stddev', 'sum'].map((a) => `${m}_${a}`))
    const [entry] = seriesOf(await analytics(`${WINDOW}&metrics=${all.join(',')}`))
    // responseTime 50 100 200 300 400: mean 210, deviations² 25600+12100+100+8100+36100 = 82000, /5 = 16400
    expect(entry).toMatchObject({
      responseTime_avg: 210,
      responseTime_sum: 1050,
      responseTime_min: 50,
      responseTime_max: 400,
      responseTime_median: 200,
      responseTime_p50: 200,
      responseTime_p90: 400,
      responseTime_p95: 400,
      responseTime_p99: 400,
      responseTime_stddev: 128.062,
    })
    // wait = total − dns − tcp − firstByte − download: 5 0 10 20 30 → mean 13, variance (64+169+9+49+289)/5 = 116
    expect(entry).toMatchObject({ wait_avg: 13, wait_sum: 65, wait_min: 0, wait_max: 30, wait_p50: 10, wait_p90: 30, wait_stddev: 10.77 })
    // dns 5 10 20 30 40: mean 21, variance (256+121+1+81+361)/5 = 164
    expect(entry).toMatchObject({ dns_avg: 21, dns_sum: 105, dns_min: 5, dns_max: 40, dns_median: 20, dns_p90: 40, dns_stddev: 12.806 })
    // tcp 5 20 30 40 50 → mean 29, p50 30; firstByte 30 50 100 150 200 → mean 106; download 10 15 40 60 80 → mean 41
    expect(entry).toMatchObject({
      tcp_avg: 29,
      tcp_p50: 30,
      tcp_min: 5,
      firstByte_avg: 106,
      firstByte_p50: 100,
      firstByte_p99: 200,
      download_avg: 41,
      download_p90: 80,
      download_sum: 205,
    })
  })

  it('gives the same figures whether whole hours are read from their totals or run by run', async () => {
    // no percentile and whole hours: the rows' totals; with a percentile: every run
    const totals = seriesOf(await analytics(`${WINDOW}&metrics=responseTime_stddev,responseTime_avg,dns_sum,availability`))
    const runs = seriesOf(await analytics(`${WINDOW}&metrics=responseTime_stddev,responseTime_avg,dns_sum,availability,responseTime_p50`))
    expect(totals).toEqual([
      { bucketStart: new Date(H).toISOString(), responseTime_stddev: 128.062, responseTime_avg: 210, dns_sum: 105, availability: 66.667 },
    ])
    expect(runs[0]).toMatchObject(totals[0])
  })

  it('buckets by aggregationInterval (UTC-aligned), whole hours and sub-hour ones', async () => {
    const hourly = seriesOf(await analytics(`${WINDOW}&aggregationInterval=60&metrics=responseTime,responseTime_p95,responseTime_stddev,availability,retries`))
    // hour 1: 100 200 300 50 (mean 162.5; p95 rank 4 → 300); hour 2: 400 and a run without a response
    expect(hourly).toEqual([
      { bucketStart: at(0), responseTime: 162.5, responseTime_p95: 300, responseTime_stddev: 96.014, availability: 75, retries: 1 },
      { bucketStart: at(60), responseTime: 400, responseTime_p95: 400, responseTime_stddev: 0, availability: 50, retries: 2 },
    ])
    const twenty = seriesOf(await analytics(`${WINDOW}&aggregationInterval=20&metrics=responseTime,responseTime_max,availability`))
    expect(twenty).toEqual([
      { bucketStart: at(0), responseTime: 116.667, responseTime_max: 200, availability: 66.667 },
      { bucketStart: at(20), responseTime: 300, responseTime_max: 300, availability: 100 },
      { bucketStart: at(60), responseTime: 400, responseTime_max: 400, availability: 50 },
    ])
  })

  it('groups by runLocation and by statusCode', async () => {
    expect(seriesOf(await analytics(`${WINDOW}&groupBy=runLocation&metrics=responseTime,availability,retries`))).toEqual([
      { bucketStart: at(0), runLocation: 'eu-west-1', responseTime: 250, availability: 100, retries: 0 },
      { bucketStart: at(0), runLocation: 'us-east-1', responseTime: 50, availability: 0, retries: 3 },
    ])
    expect(seriesOf(await analytics(`${WINDOW}&groupBy=statusCode&metrics=responseTime_p50,availability`))).toEqual([
      { bucketStart: at(0), statusCode: 200, responseTime_p50: 200, availability: 100 },
      { bucketStart: at(0), statusCode: 500, responseTime_p50: 50, availability: 0 },
      // no response: no response time to report
      { bucketStart: at(0), statusCode: null, responseTime_p50: null, availability: 0 },
    ])
  })

  it('filters by status', async () => {
    expect(seriesOf(await analytics(`${WINDOW}&filterByStatus=failure&metrics=responseTime,availability,retries`))).toEqual([
      { bucketStart: at(0), responseTime: 50, availability: 0, retries: 3 },
    ])
    expect(seriesOf(await analytics(`${WINDOW}&filterByStatus=success&metrics=responseTime,availability`))).toEqual([
      { bucketStart: at(0), responseTime: 250, availability: 100 },
    ])
    expect(seriesOf(await analytics(`${WINDOW}&filterByStatus=success,failure&metrics=responseTime`))).toEqual([{ bucketStart: at(0), responseTime: 210 }])
  })

  it('counts only the runs inside a window cut inside hours', async () => {
    // [+0:10, +1:06): r5 (at the start, included), r2, r3, r4; not r1 (+0:05) nor r6 (+1:10)
    const from = (H + 10 * MIN) / 1000
    const to = (H + 66 * MIN) / 1000
    expect(seriesOf(await analytics(`from=${from}&to=${to}&metrics=responseTime,responseTime_min,availability`))).toEqual([
      { bucketStart: at(10), responseTime: 237.5, responseTime_min: 50, availability: 75 },
    ])
    // ISO dates are accepted too
    expect(seriesOf(await analytics(`from=${at(10)}&to=${at(66)}&metrics=responseTime`))).toEqual([{ bucketStart: at(10), responseTime: 237.5 }])
  })

  it('pages the series with limit and page, in bucket then group order', async () => {
    const query = `${WINDOW}&aggregationInterval=20&groupBy=runLocation&metrics=responseTime`
    // entries: (0, eu) (0, us) (20, eu) (60, eu) (60, us)
    const page2 = await analytics(`${query}&limit=2&page=2`)
    expect(seriesOf(page2)).toEqual([
      { bucketStart: at(20), runLocation: 'eu-west-1', responseTime: 300 },
      { bucketStart: at(60), runLocation: 'eu-west-1', responseTime: 400 },
    ])
    expect(page2.json.pagination).toEqual({ page: 2, limit: 2 })
    expect(page2.headers.get('content-range')).toBe('2-3/5')
    expect(seriesOf(await analytics(`${query}&limit=2&page=3`))).toEqual([{ bucketStart: at(60), runLocation: 'us-east-1', responseTime: null }])
    expect(seriesOf(await analytics(`${query}&limit=2&page=4`))).toEqual([])
    // default limit 10
    expect(seriesOf(await analytics(query))).toHaveLength(5)
  })

  it('takes the window from quickRange on the server clock; from and to override it', async () => {
    now = H + 3 * 60 * MIN
    const day = await analytics('metrics=responseTime,availability')
    expect(day.json).toMatchObject({ from: new Date(now - 86_400_000).toISOString(), to: new Date(now).toISOString() })
    expect(seriesOf(day)).toEqual([{ bucketStart: new Date(now - 86_400_000).toISOString(), responseTime: 210, availability: 66.667 }])
    // 2026-03-01 is a Sunday: this week started on Monday 2026-02-23, last month is February
    expect((await analytics('quickRange=thisWeek&metrics=retries')).json).toMatchObject({ from: '2026-02-23T00:00:00.000Z', to: new Date(now).toISOString() })
    expect((await analytics('quickRange=lastWeek&metrics=retries')).json).toMatchObject({ from: '2026-02-16T00:00:00.000Z', to: '2026-02-23T00:00:00.000Z' })
    expect((await analytics('quickRange=thisMonth&metrics=retries')).json).toMatchObject({ from: '2026-03-01T00:00:00.000Z' })
    const lastMonth = await analytics('quickRange=lastMonth&metrics=retries')
    expect(lastMonth.json).toMatchObject({ from: '2026-02-01T00:00:00.000Z', to: '2026-03-01T00:00:00.000Z' })
    expect(seriesOf(lastMonth)).toEqual([])
    // from alone: up to now, whatever quickRange says
    expect((await analytics(`quickRange=lastMonth&from=${H / 1000}&metrics=retries`)).json).toMatchObject({ from: at(0), to: new Date(now).toISOString() })
  })

  it('refuses bad parameters with a 400 naming the parameter and what is allowed', async () => {
    const bad = async (query: string, key: string, text: string) => {
      const answer = await analytics(query)
      expect(expect400(answer, 'query')).toContain(key)
      expect(answer.json.message).toContain(text)
    }
    await bad('', 'metrics', 'metrics: is required: one or more of responseTime, wait, dns, tcp, firstByte, download, availability or retries')
    await bad('metrics=latency', 'metrics', 'metrics: "latency" is not a metric of API checks')
    await bad('metrics=responseTime_p42', 'metrics', '"responseTime_p42" is not a metric of API checks')
    await bad('metrics=total', 'metrics', '"total" is not a metric of API checks')
    await bad(
      'metrics=responseTime&aggregationInterval=0',
      'aggregationInterval',
      'aggregationInterval: must be a whole number of minutes from 1 to 43200 (got "0")',
    )
    await bad('metrics=responseTime&aggregationInterval=43201', 'aggregationInterval', 'from 1 to 43200')
    await bad('metrics=responseTime&aggregationInterval=1.5', 'aggregationInterval', 'whole number of minutes')
    await bad(
      'metrics=responseTime&quickRange=yesterday',
      'quickRange',
      'quickRange: must be one of last24Hours, last7Days, last30Days, thisWeek, thisMonth, lastWeek, lastMonth',
    )
    await bad('metrics=responseTime&groupBy=region', 'groupBy', 'groupBy: must be one of runLocation, statusCode')
    await bad('metrics=responseTime&filterByStatus=degraded', 'filterByStatus.0', 'must be one of success, failure')
    await bad('metrics=responseTime&limit=101', 'limit', 'limit: must be at most 100')
    await bad('metrics=responseTime&limit=0', 'limit', 'limit: must be at least 1')
    await bad('metrics=responseTime&page=0', 'page', 'page: must be at least 1')
    await bad('metrics=responseTime&from=yesterday', 'from', 'from: must be a unix timestamp in seconds or an ISO 8601 date or date-time')
    await bad(`metrics=responseTime&from=${H / 1000}&to=${H / 1000}`, 'from', 'from must be before to')
  })

  it('answers 404 for an unknown check or a check of another type, and 401 without a key', async () => {
    const unknown = await call('GET', '/v1/analytics/api-checks/00000000-0000-4000-8000-000000000000?metrics=responseTime')
    expect(unknown.status).toBe(404)
    expect(unknown.json.message).toBe('API check not found')
    const dns = await call('POST', '/v1/checks/dns', { name: 'dns', request: { query: 'example.com' } })
    const wrongType = await call('GET', `/v1/analytics/api-checks/${dns.json.id}?metrics=responseTime`)
    expect(wrongType.status).toBe(404)
    expect((await caller(server, null)('GET', `/v1/analytics/api-checks/${checkId}?metrics=responseTime`)).status).toBe(401)
  })

  it('counts a result once when an agent posts it twice', async () => {
    const created = await call('POST', '/v1/checks/api', {
      name: 'posted twice',
      locations: ['eu-west-1'],
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
    })
    const id = created.json.id
    // (the run is claimed and posted at +0:30 on the server's clock: a result is dated inside its claim)
    const saved = clock.get()
    clock.set(Date.parse(at(30)))
    await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
    const [claimed] = (await call('POST', '/v1/agent/claim', { agentId: 'twice', locations: ['eu-west-1'] })).json.runs
    const result = {
      runLocation: 'eu-west-1',
      resultType: 'FINAL',
      status: 'PASSED',
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      responseTime: 120,
      startedAt: at(30),
      stoppedAt: at(30),
      error: null,
      attempts: [],
      details: { kind: 'API', statusCode: 200, timings: null },
    }
    for (let i = 0; i < 2; i++) expect((await call('POST', `/v1/agent/runs/${encodeURIComponent(claimed.runId)}/result`, { result })).status).toBe(204)
    clock.set(saved)
    expect(seriesOf(await call('GET', `/v1/analytics/api-checks/${id}?${WINDOW}&metrics=responseTime_sum,availability`))).toEqual([
      { bucketStart: at(0), responseTime_sum: 120, availability: 100 },
    ])
  })

  it('forgets the rollups of a deleted check', async () => {
    const created = await call('POST', '/v1/checks/api', {
      name: 'short-lived',
      locations: ['eu-west-1'],
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
    })
    await recordRuns(call, created.json.id, [RUNS[0]], clock)
    expect(seriesOf(await call('GET', `/v1/analytics/api-checks/${created.json.id}?${WINDOW}&metrics=responseTime`))).toEqual([
      { bucketStart: at(0), responseTime: 100 },
    ])
    expect((await call('DELETE', `/v1/checks/${created.json.id}`)).status).toBe(204)
    expect((await call('GET', `/v1/analytics/api-checks/${created.json.id}?${WINDOW}&metrics=responseTime`)).status).toBe(404)
  })
})
