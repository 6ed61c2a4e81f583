/**
 * Analytics of DNS, ICMP and heartbeat checks (the reference's routes and metric names), the
 * metrics listing, and analytics of API checks run for real by the server's runner against a
 * local HTTP server with a controlled delay. Figures are computed by hand from known runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { startHttpServer, type HttpServerHandle } from '../../helpers/http-server.js'
import { caller, expect400, icmpBody, startTestServer, type Call } from '../helpers.js'
import { recordRuns, seriesOf } from './analytics-helpers.js'

const T0 = Date.parse('2026-03-01T10:00:00Z')
const S = 1000
const at = (seconds: number) => new Date(T0 + seconds * S).toISOString()
let now = T0
const clock = { get: () => now, set: (ms: number) => void (now = ms) }
let server: LocalServer
let call: Call
const WINDOW = `from=${T0 / 1000}&to=${T0 / 1000 + 3600}`

beforeAll(async () => {
  // no runner and no scheduler: results come from posted runs and pings; the clock is the test's
  server = await startTestServer({ clock: () => now })
  call = caller(server)
})
afterAll(async () => {
  await server?.close()
})

describe('analytics of DNS, ICMP and heartbeat checks', () => {
  it('DNS: total query time, availability and retries; grouped by runLocation only', async () => {
    const check = await call('POST', '/v1/checks/dns', { name: 'Shop DNS', locations: ['eu-west-1'], request: { query: 'shop.example.com' } })
    expect(check.status, check.text).toBe(201)
    const id = check.json.id
    await recordRuns(
      call,
      id,
      [
        { at: at(60), location: 'eu-west-1', passed: true, responseTime: 10, details: { kind: 'DNS' } },
        { at: at(120), location: 'eu-west-1', passed: true, responseTime: 20, details: { kind: 'DNS' } },
        { at: at(180), location: 'us-east-1', passed: true, responseTime: 30, retries: 1, details: { kind: 'DNS' } },
        { at: at(240), location: 'us-east-1', passed: false, responseTime: 40, details: { kind: 'DNS' } },
      ],
      clock,
    )
    const answer = await call('GET', `/v1/analytics/dns/${id}?${WINDOW}&metrics=total,total_p50,total_p90,total_stddev,total_sum,availability,retries`)
    expect(answer.json).toMatchObject({ checkId: id, checkType: 'DNS', name: 'Shop DNS' })
    expect(answer.json.metadata.total).toEqual({ unit: 'milliseconds', label: 'DNS query time (average)', aggregation: 'avg' })
    // 10 20 30 40: mean 25, p50 rank 2 → 20, p90 rank 4 → 40, variance (225+25+25+225)/4 = 125
    expect(seriesOf(answer)).toEqual([
      { bucketStart: at(0), total: 25, total_p50: 20, total_p90: 40, total_stddev: 11.18, total_sum: 100, availability: 75, retries: 1 },
    ])
    expect(seriesOf(await call('GET', `/v1/analytics/dns/${id}?${WINDOW}&groupBy=runLocation&metrics=total_max,availability`))).toEqual([
      { bucketStart: at(0), runLocation: 'eu-west-1', total_max: 20, availability: 100 },
      { bucketStart: at(0), runLocation: 'us-east-1', total_max: 40, availability: 50 },
    ])
    const grouped = await call('GET', `/v1/analytics/dns/${id}?metrics=total&groupBy=statusCode`)
    expect(expect400(grouped, 'query')).toEqual(['groupBy'])
    expect(grouped.json.message).toContain('groupBy: must be one of runLocation')
    const apiMetric = await call('GET', `/v1/analytics/dns/${id}?metrics=responseTime`)
    expect(expect400(apiMetric, 'query')).toEqual(['metrics'])
    expect(apiMetric.json.message).toContain('"responseTime" is not a metric of DNS checks: use total, availability or retries')
  })

  it('ICMP: packet loss and latency figures of each run', async () => {
    const check = await call('POST', '/v1/checks/icmp', icmpBody({ name: 'Edge ping', locations: ['eu-west-1'] }))
    expect(check.status, check.text).toBe(201)
    const id = check.json.id
    await recordRuns(
      call,
      id,
      [
        {
          at: at(60),
          location: 'eu-west-1',
          passed: true,
          responseTime: 2,
          details: { kind: 'ICMP', packetLoss: 0, latency: { min: 1, max: 3, avg: 2, stddev: 0.5 } },
        },
        {
          at: at(120),
          location: 'eu-west-1',
          passed: true,
          responseTime: 4,
          details: { kind: 'ICMP', packetLoss: 20, latency: { min: 2, max: 6, avg: 4, stddev: 1.5 } },
        },
        { at: at(180), location: 'eu-west-1', passed: false, responseTime: null, details: { kind: 'ICMP', packetLoss: 100, latency: null } },
      ],
      clock,
    )
    const answer = await call(
      'GET',
      `/v1/analytics/icmp/${id}?${WINDOW}&metrics=packetLoss,packetLoss_max,packetLoss_p50,latencyAvg,latencyMin_min,latencyMax_max,latencyStdDev,latencyAvg_stddev,availability`,
    )
    expect(answer.json.metadata.packetLoss).toEqual({ unit: 'percentage', label: 'Packet loss (average)', aggregation: 'avg' })
    expect(answer.json.metadata.latencyMax_max).toEqual({ unit: 'milliseconds', label: 'Latency (max) (max)', aggregation: 'max' })
    // packet loss 0 20 100: mean 40, p50 rank 2 → 20; latency of the two runs that had replies
    expect(seriesOf(answer)).toEqual([
      {
        bucketStart: at(0),
        packetLoss: 40,
        packetLoss_max: 100,
        packetLoss_p50: 20,
        latencyAvg: 3,
        latencyMin_min: 1,
        latencyMax_max: 6,
        latencyStdDev: 1,
        latencyAvg_stddev: 1,
        availability: 66.667,
      },
    ])
  })

  it('heartbeat: availability from pings on time, in grace and missed; filtered by event state', async () => {
    now = T0
    const check = await call('POST', '/v1/checks/heartbeat', {
      name: 'Nightly backup',
      heartbeat: { period: 1, periodUnit: 'minutes', grace: 30, graceUnit: 'seconds' },
    })
    expect(check.status, check.text).toBe(201)
    const { id } = check.json
    const ping = async (seconds: number) => {
      now = T0 + seconds * S
      expect((await caller(server, null)('GET', `/ping/${check.json.heartbeat.pingToken}`)).status).toBe(200)
    }
    await ping(50) // RECEIVED
    await ping(120) // GRACE (50 + 60 < 120 <= 50 + 90)
    await ping(320) // LATE: two periods missed, FAILING recorded at 120 + 90 = 210 and 120 + 150 = 270, then the late ping
    const heartbeat = (query: string) => call('GET', `/v1/analytics/heartbeat-checks/${id}?${WINDOW}&${query}`)
    const answer = await heartbeat('metrics=availability,retries')
    expect(answer.json).toMatchObject({ checkType: 'HEARTBEAT', name: 'Nightly backup' })
    expect(answer.json.metadata).toEqual({
      availability: { unit: 'percentage', label: 'Availability (passing runs out of all runs)', aggregation: 'avg' },
      retries: { unit: 'count', label: 'Retries (attempts retried before the final result)', aggregation: 'sum' },
    })
    // RECEIVED and GRACE pass, FAILING fails, LATE counts in neither (as in the availability route)
    expect(seriesOf(answer)).toEqual([{ bucketStart: at(0), availability: 50, retries: 0 }])
    const route = await call('GET', `/v1/checks/heartbeats/${id}/availability?startTime=${T0}&endTime=${T0 + 3600 * S}`)
    expect(route.json.successRatio.currentPeriod).toBe(50)

    expect(seriesOf(await heartbeat('metrics=availability&filterByStatus=FAILING'))).toEqual([{ bucketStart: at(0), availability: 0 }])
    expect(seriesOf(await heartbeat('metrics=availability&filterByStatus=RECEIVED,GRACE'))).toEqual([{ bucketStart: at(0), availability: 100 }])
    expect(seriesOf(await heartbeat('metrics=availability&filterByStatus=LATE'))).toEqual([{ bucketStart: at(0), availability: null }])
    // minute buckets: the pings at 50 s, 120 s and 320 s and the FAILING at 210 s and 270 s
    expect(seriesOf(await heartbeat('metrics=availability&aggregationInterval=1'))).toEqual([
      { bucketStart: at(0), availability: 100 },
      { bucketStart: at(120), availability: 100 },
      { bucketStart: at(180), availability: 0 },
      { bucketStart: at(240), availability: 0 },
      { bucketStart: at(300), availability: null },
    ])
    const grouped = await heartbeat('metrics=availability&groupBy=runLocation')
    expect(expect400(grouped, 'query')).toEqual(['groupBy'])
    expect(grouped.json.message).toContain('heartbeat analytics are not grouped')
    const badState = await heartbeat('metrics=availability&filterByStatus=success')
    expect(badState.json.message).toContain('must be one of FAILING, EARLY, RECEIVED, GRACE, LATE')
    const badMetric = await heartbeat('metrics=responseTime')
    expect(badMetric.json.message).toContain('"responseTime" is not a metric of HEARTBEAT checks: use availability or retries')
  })

  it('lists the metric names of each check type; 400 for an unknown type', async () => {
    const list = async (type: string) => {
      const answer = await call('GET', `/v1/analytics/metrics?checkType=${type}`)
      expect(answer.status, answer.text).toBe(200)
      return answer.json as string[]
    }
    expect(await list('DNS')).toEqual([
      'total',
      'availability',
      'retries',
      'total_avg',
      'total_max',
      'total_median',
      'total_min',
      'total_p50',
      'total_p90',
      'total_p95',
      'total_p99',
      'total_stddev',
      'total_sum',
    ])
    expect(await list('HEARTBEAT')).toEqual(['availability', 'retries'])
    const api = await list('API')
    expect(api).toHaveLength(68)
    expect(api.slice(0, 10)).toEqual([
      'responseTime',
      'wait',
      'dns',
      'tcp',
      'firstByte',
      'download',
      'availability',
      'retries',
      'responseTime_avg',
      'responseTime_max',
    ])
    expect(api).toContain('download_sum')
    const icmp = await list('ICMP')
    expect(icmp).toHaveLength(57)
    expect(icmp.slice(0, 7)).toEqual(['packetLoss', 'latencyMin', 'latencyMax', 'latencyAvg', 'latencyStdDev', 'availability', 'retries'])
    expect(icmp).toContain('latencyStdDev_p99')
    // browser checks: web vitals and error counts, as the reference names them
    const browser = await list('BROWSER')
    expect(browser).toEqual(expect.arrayContaining(['consoleErrors', 'networkErrors', 'userScriptErrors', 'documentErrors', 'availability']))
    // Playwright checks: the reference's list for GET /v1/analytics/playwright-checks/{id}, in its order
    expect(await list('PLAYWRIGHT')).toEqual([
      'responseTime',
      'availability',
      'retries',
      'responseTime_avg',
      'responseTime_max',
      'responseTime_median',
      'responseTime_min',
      'responseTime_p50',
      'responseTime_p90',
      'responseTime_p95',
      'responseTime_p99',
      'responseTime_stddev',
      'responseTime_sum',
    ])
    const unknown = await call('GET', '/v1/analytics/metrics?checkType=SMOKE')
    expect(expect400(unknown, 'query')).toEqual(['checkType'])
    expect(unknown.json.message).toContain('checkType: must be one of API, BROWSER, HEARTBEAT, ICMP, MULTI_STEP, TCP, PLAYWRIGHT, URL, DNS')
    expect(expect400(await call('GET', '/v1/analytics/metrics'), 'query')).toEqual(['checkType'])
  })
})

describe('browser check analytics grouped by page, from known runs', () => {
  const vitals = (TTFB: number) => ({ TTFB, FCP: TTFB + 50, LCP: TTFB + 80, CLS: 0, TBT: 0 })
  const browserRun = (seconds: number, passed: boolean, responseTime: number, ttfbs: number[], retries = 0) => ({
    at: at(seconds),
    location: 'eu-west-1',
    passed,
    responseTime,
    retries,
    details: {
      kind: 'BROWSER',
      webVitals: vitals(ttfbs[0]),
      errors: { consoleErrors: 2, networkErrors: 0, userScriptErrors: 0, documentErrors: 0 },
      pages: ttfbs.map((ttfb, index) => ({ index, testIndex: 0, url: `http://shop.test/${index}`, webVitals: vitals(ttfb) })),
    },
  })

  it('one series per page, exactly, whether rows are read whole, run by run or cut by the window; other types answer 400', async () => {
    const script = "import { test } from '@playwright/test'\ntest('x', async () => {})\n"
    const check = await call('POST', '/v1/checks/browser', { name: 'Shop pages', locations: ['eu-west-1'], script })
    expect(check.status, check.text).toBe(201)
    const id = check.json.id
    await recordRuns(
      call,
      id,
      [browserRun(60, true, 1000, [100, 500]), browserRun(120, true, 2000, [200]), browserRun(1900, false, 4000, [300, 700], 1)],
      clock,
    )
    const get = async (query: string) => seriesOf(await call('GET', `/v1/analytics/browser-checks/${id}?${query}`))
    // whole rows (their totals): page 0 of three runs, page 1 of the two that opened it
    expect(await get(`${WINDOW}&groupBy=pageIndex&metrics=TTFB,TTFB_max,FCP_min,availability,retries,responseTime,consoleErrors_sum`)).toEqual([
      {
        bucketStart: at(0),
        pageIndex: 0,
        TTFB: 200,
        TTFB_max: 300,
        FCP_min: 150,
        availability: 66.667,
        retries: 1,
        responseTime: 2333.333,
        consoleErrors_sum: null,
      },
      { bucketStart: at(0), pageIndex: 1, TTFB: 600, TTFB_max: 700, FCP_min: 550, availability: 50, retries: 1, responseTime: 2500, consoleErrors_sum: null },
    ])
    // run by run (a percentile): nearest rank over each page's runs
    expect(await get(`${WINDOW}&groupBy=pageIndex&metrics=TTFB_p50,LCP_p90`)).toEqual([
      { bucketStart: at(0), pageIndex: 0, TTFB_p50: 200, LCP_p90: 380 },
      { bucketStart: at(0), pageIndex: 1, TTFB_p50: 500, LCP_p90: 780 },
    ])
    // half-hour buckets, in start order then page order
    expect(await get(`${WINDOW}&aggregationInterval=30&groupBy=pageIndex&metrics=TTFB,availability`)).toEqual([
      { bucketStart: at(0), pageIndex: 0, TTFB: 150, availability: 100 },
      { bucketStart: at(0), pageIndex: 1, TTFB: 500, availability: 100 },
      { bucketStart: at(1800), pageIndex: 0, TTFB: 300, availability: 0 },
      { bucketStart: at(1800), pageIndex: 1, TTFB: 700, availability: 0 },
    ])
    // a window that cuts the hour: only the third run
    expect(await get(`from=${T0 / 1000 + 1000}&to=${T0 / 1000 + 3600}&groupBy=pageIndex&metrics=TTFB,retries`)).toEqual([
      { bucketStart: at(1000), pageIndex: 0, TTFB: 300, retries: 1 },
      { bucketStart: at(1000), pageIndex: 1, TTFB: 700, retries: 1 },
    ])
    // ungrouped: the runs' first pages, their error counts
    expect(await get(`${WINDOW}&metrics=TTFB,consoleErrors_sum,availability`)).toEqual([
      { bucketStart: at(0), TTFB: 200, consoleErrors_sum: 6, availability: 66.667 },
    ])
    const multi = await call('POST', '/v1/checks/multistep', { name: 'No pages', locations: ['eu-west-1'], script })
    const refused = await call('GET', `/v1/analytics/multistep-checks/${multi.json.id}?metrics=responseTime&groupBy=pageIndex`)
    expect(expect400(refused, 'query')).toEqual(['groupBy'])
    expect(refused.json.message).toContain('groupBy: must be one of runLocation')
  })
})

describe('analytics of API checks run by the server', () => {
  let http: HttpServerHandle
  let runner: LocalServer
  let run: Call
  beforeAll(async () => {
    http = await startHttpServer()
    http.route('/slow', { status: 200, body: 'ok', delayBeforeHeadersMs: 150 })
    http.route('/broken', { status: 503, body: 'down' })
    runner = await startTestServer({ runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
    run = caller(runner)
  })
  afterAll(async () => {
    await runner?.close()
    await http?.close()
  })

  async function runOnce(checkId: string): Promise<void> {
    const trigger = await run('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } })
    expect(trigger.status, trigger.text).toBe(201)
    const done = await run('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
    expect(done.status, done.text).toBe(200)
  }

  it('answers the figures of the recorded runs: phases, percentiles, status codes', async () => {
    const create = (path: string) =>
      run('POST', '/v1/checks/api', {
        name: `runs ${path}`,
        activated: false,
        locations: ['eu-west-1'],
        request: { method: 'GET', url: `${http.origin}${path}`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
      })
    const slow = (await create('/slow')).json.id
    for (let i = 0; i < 3; i++) await runOnce(slow)
    const broken = (await create('/broken')).json.id
    await runOnce(broken)

    const results = (await run('GET', `/v1/check-results/${slow}?resultType=FINAL`)).json as Array<{
      responseTime: number
      result: { details: { timings: Record<string, number> } }
    }>
    expect(results).toHaveLength(3)
    const times = results.map((r) => r.responseTime).sort((a, b) => a - b)
    const phase = (name: string) => results.map((r) => r.result.details.timings[name])
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)
    const round3 = (value: number) => Math.round(value * 1000) / 1000

    const answer = await run(
      'GET',
      `/v1/analytics/api-checks/${slow}?metrics=responseTime,responseTime_min,responseTime_p50,responseTime_max,firstByte_min,dns_sum,download_sum,availability&groupBy=statusCode`,
    )
    const [entry] = seriesOf(answer)
    expect(entry).toEqual({
      bucketStart: answer.json.from,
      statusCode: 200,
      responseTime: round3(sum(times) / 3),
      responseTime_min: times[0],
      responseTime_p50: times[1],
      responseTime_max: times[2],
      firstByte_min: Math.min(...phase('firstByte')),
      dns_sum: round3(sum(phase('dns'))),
      download_sum: round3(sum(phase('download'))),
      availability: 100,
    })
    // the server waited 150 ms before its headers: every run's time to first byte shows it
    expect(entry.firstByte_min as number).toBeGreaterThanOrEqual(145)

    expect(seriesOf(await run('GET', `/v1/analytics/api-checks/${broken}?metrics=availability,responseTime_max&groupBy=statusCode`))).toEqual([
      expect.objectContaining({ statusCode: 503, availability: 0 }),
    ])
  })
})

describe('analytics rollups and the results retention', () => {
  it('prunes the hours older than the retention, keeps the newer ones', async () => {
    const H = Date.parse('2026-03-01T10:00:00Z')
    let clock = H + 3 * 3600 * S
    // the scheduler prunes every 50 ms (of the test's clock), keeping 1 day of results
    const pruned = await startTestServer({ clock: () => clock, scheduler: true, retentionDays: 1, schedulerOptions: { tickMs: 20, pruneEveryMs: 50 } })
    try {
      const p = caller(pruned)
      const check = await p('POST', '/v1/checks/dns', { name: 'kept', activated: false, locations: ['eu-west-1'], request: { query: 'shop.example.com' } })
      await recordRuns(
        p,
        check.json.id,
        [
          { at: new Date(H + 5 * 60 * S).toISOString(), location: 'eu-west-1', passed: true, responseTime: 10, details: { kind: 'DNS' } },
          { at: new Date(H + 2 * 3600 * S).toISOString(), location: 'eu-west-1', passed: true, responseTime: 30, details: { kind: 'DNS' } },
        ],
        { get: () => clock, set: (ms) => void (clock = ms) },
      )
      const window = `from=${H / 1000}&to=${H / 1000 + 3 * 3600}&metrics=total,availability`
      expect(seriesOf(await p('GET', `/v1/analytics/dns/${check.json.id}?${window}`))).toEqual([
        { bucketStart: new Date(H).toISOString(), total: 20, availability: 100 },
      ])
      // a day and an hour later the hour of the first run (10:00-11:00) has left the retention; the hour of the second (12:00) has not
      clock = H + 25 * 3600 * S
      let series: Array<Record<string, unknown>> = []
      for (let i = 0; i < 100; i++) {
        series = seriesOf(await p('GET', `/v1/analytics/dns/${check.json.id}?${window}`))
        if (series[0]?.total === 30) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(series).toEqual([{ bucketStart: new Date(H).toISOString(), total: 30, availability: 100 }])
    } finally {
      await pruned.close()
    }
  })
})
