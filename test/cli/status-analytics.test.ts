/**
 * `monitors status` shows each check's last 24 hours from the target's analytics: the share of
 * passing runs and the p95 response time, `-` where there is no data. Runs with known times
 * are recorded through the server's agent routes; the built CLI reads them. A run of a private
 * location is shown by the location's name (status and trigger), read only when one is shown.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../src/server/index.js'
import { caller, KEY_A, startTestServer, type Call } from '../server/helpers.js'
import { recordRuns } from '../server/analytics/analytics-helpers.js'
import { makeProject, monitors, STACK_LINE } from '../helpers/cli.js'

let server: LocalServer
let call: Call
const requests: string[] = []
// the server's clock: the real one, moved back while past runs are recorded (a result is dated inside its claim)
let offset = 0
const clock = { get: () => Date.now() + offset, set: (ms: number) => void (offset = ms - Date.now()) }

beforeAll(async () => {
  // no runner: the only runs are the ones posted below
  server = await startTestServer({ clock: clock.get, log: (line) => requests.push(line) })
  call = caller(server)
})
afterAll(async () => {
  await server?.close()
})

describe('monitors status with analytics', () => {
  it('shows 24 h availability and p95 response time per check, in the table and in JSON', async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A }
    const project = makeProject({
      'checks/shop.check.ts': `import { ApiCheck, DnsCheck, HeartbeatCheck } from 'monitors-as-code'
new ApiCheck('shop-api', { name: 'Shop API', locations: ['eu-west-1'], activated: false, request: { method: 'GET', url: 'http://127.0.0.1:9/health' } })
new DnsCheck('shop-dns', { name: 'Shop DNS', locations: ['eu-west-1'], activated: false, request: { query: 'shop.example.com' } })
new HeartbeatCheck('backup', { name: 'Backup', heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' } })
`,
    })
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    const lock = JSON.parse(readFileSync(join(project, 'monitoring.lock.json'), 'utf8')) as { resources: Record<string, { remoteId: string }> }
    const apiId = lock.resources['api-check:shop-api'].remoteId
    const heartbeatId = lock.resources['heartbeat-check:backup'].remoteId

    // 100 200 300 400 ms, one of four failing: 75 %, p95 (nearest rank 4 of 4) 400 ms
    const hourAgo = (minutes: number) => new Date(Date.now() - 60 * 60_000 + minutes * 60_000).toISOString()
    await recordRuns(
      call,
      apiId,
      [100, 200, 300, 400].map((ms, i) => ({
        at: hourAgo(i),
        location: 'eu-west-1',
        passed: i !== 1,
        responseTime: ms,
        details: { kind: 'API', statusCode: i !== 1 ? 200 : 500, timings: { dns: 1, tcp: 1, tls: 0, firstByte: ms - 3, download: 1, total: ms } },
      })),
      clock,
    )
    const pingUrl = (await call('GET', `/v1/checks/${heartbeatId}`)).json.heartbeat.pingUrl as string
    expect((await fetch(pingUrl)).status).toBe(200)

    const text = await monitors(project, ['status'], env)
    expect(text.code, text.output).toBe(0)
    expect(text.output).not.toMatch(STACK_LINE)
    expect(text.stdout).toMatch(/CHECK\s+STATE\s+LAST LOCATION\s+RUN TIMES\s+AVAILABILITY 24H\s+P95 24H\s+BADGE/)
    const lineOf = (key: string) => text.stdout.split('\n').find((l) => l.includes(`${key} `)) ?? ''
    expect(lineOf('api-check:shop-api')).toMatch(/paused\s+eu-west-1\s+100–400 ms\s+75%\s+400 ms\s+http/)
    // a check that never ran has no figures; a heartbeat check has availability but no response time
    expect(lineOf('dns-check:shop-dns')).toMatch(/paused\s+-\s+-\s+-\s+-\s+http/)
    expect(lineOf('heartbeat-check:backup')).toMatch(/passing\s+heartbeat\s+-\s+100%\s+-\s+http/)

    // only public regions: the names of private locations are not asked for
    expect(requests.filter((l) => l.includes('/v1/private-locations'))).toEqual([])

    const json = await monitors(project, ['status', '--format', 'json'], env)
    expect(json.code, json.output).toBe(0)
    const checks = Object.fromEntries((JSON.parse(json.stdout).checks as Array<Record<string, unknown>>).map((c) => [c.logicalId, c]))
    expect(checks['shop-api']).toMatchObject({ availability24h: 75, p95ResponseTime24h: 400 })
    expect(checks['shop-dns']).toMatchObject({ availability24h: null, p95ResponseTime24h: null })
    expect(checks.backup).toMatchObject({ availability24h: 100, p95ResponseTime24h: null })
  })
})

describe('a private location in monitors status and monitors trigger', () => {
  it('shows a run of a private location by its name with its slug, a public region as it is', async () => {
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY_A }
    const project = makeProject({
      'checks/office.check.ts': `import { ApiCheck, PrivateLocation } from 'monitors-as-code'
const office = new PrivateLocation('office', { name: 'Office Berlin', slugName: 'office-berlin' })
new ApiCheck('office-api', { name: 'Office API', privateLocations: [office], activated: false, request: { method: 'GET', url: 'http://127.0.0.1:9/health' } })
new ApiCheck('public-api', { name: 'Public API', locations: ['eu-west-1'], activated: false, request: { method: 'GET', url: 'http://127.0.0.1:9/health' } })
`,
    })
    const applied = await monitors(project, ['apply', '--yes'], env)
    expect(applied.code, applied.output).toBe(0)
    const lock = JSON.parse(readFileSync(join(project, 'monitoring.lock.json'), 'utf8')) as { resources: Record<string, { remoteId: string }> }
    const officeId = lock.resources['private-location:office'].remoteId
    const key = await call('POST', `/v1/private-locations/${officeId}/keys`)
    expect(key.status, key.text).toBe(201)
    const agent = caller(server, key.json.rawKey as string)
    const publicAgent = caller(server)
    // an agent of each location: claims its location's runs and posts a passing result
    let serving = true
    const serve = async (as: Call, location: string) => {
      while (serving) {
        const claim = await as('POST', '/v1/agent/claim', { agentId: `agent-${location}`, locations: [location], max: 10 })
        expect(claim.status, claim.text).toBe(200)
        for (const run of claim.json.runs as Array<{ runId: string }>) {
          const at = new Date(clock.get()).toISOString()
          const result = {
            runLocation: location,
            resultType: 'FINAL',
            attempt: 1,
            status: 'PASSED',
            hasFailures: false,
            hasErrors: false,
            isDegraded: false,
            responseTime: 12,
            startedAt: at,
            stoppedAt: at,
            error: null,
            assertions: [],
            details: {},
            attempts: [],
          }
          const posted = await as('POST', `/v1/agent/runs/${encodeURIComponent(run.runId)}/result`, { result })
          expect(posted.status, posted.text).toBe(204)
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    const agents = Promise.all([serve(agent, 'office-berlin'), serve(publicAgent, 'eu-west-1')].map((s) => s.finally(() => void (serving = false))))
    const triggered = await monitors(project, ['trigger', 'office-api', 'public-api', '--max-wait', '20'], env).finally(() => void (serving = false))
    await agents
    expect(triggered.code, triggered.output).toBe(0)
    expect(triggered.stdout).toMatch(/Office API \(office-api\)\s+API\s+PASSED\s+Office Berlin \(office-berlin\)\s+\d+ ms/)
    expect(triggered.stdout).toMatch(/Public API \(public-api\)\s+API\s+PASSED\s+eu-west-1\s+\d+ ms/)

    const before = requests.length
    const text = await monitors(project, ['status'], env)
    expect(text.code, text.output).toBe(0)
    const lineOf = (k: string) => text.stdout.split('\n').find((l) => l.includes(`${k} `)) ?? ''
    expect(lineOf('api-check:office-api')).toMatch(/paused\s+Office Berlin \(office-berlin\)\s+12 ms/)
    expect(lineOf('api-check:public-api')).toMatch(/paused\s+eu-west-1\s+12 ms/)
    // the names are read once for the command
    expect(requests.slice(before).filter((l) => l.includes('/v1/private-locations'))).toHaveLength(1)
    // the JSON keeps the slug, as the API answers it
    const json = await monitors(project, ['status', '--format', 'json'], env)
    const office = (JSON.parse(json.stdout).checks as Array<Record<string, unknown>>).find((c) => c.logicalId === 'office-api')
    expect(office).toMatchObject({ lastRunLocation: 'office-berlin' })
  })
})
