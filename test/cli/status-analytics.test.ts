/**
 * `monitors status` shows each check's last 24 hours from the target's analytics: the share of
 * passing runs and the p95 response time, `-` where there is no data. Runs with known times
 * are recorded through the server's agent routes; the built CLI reads them.
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
// the server's clock: the real one, moved back while past runs are recorded (a result is dated inside its claim)
let offset = 0
const clock = { get: () => Date.now() + offset, set: (ms: number) => void (offset = ms - Date.now()) }

beforeAll(async () => {
  // no runner: the only runs are the ones posted below
  server = await startTestServer({ clock: clock.get })
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
    await recordRuns(call, apiId, [100, 200, 300, 400].map((ms, i) => ({
      at: hourAgo(i), location: 'eu-west-1', passed: i !== 1, responseTime: ms,
      details: { kind: 'API', statusCode: i !== 1 ? 200 : 500, timings: { dns: 1, tcp: 1, tls: 0, firstByte: ms - 3, download: 1, total: ms } },
    })), clock)
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

    const json = await monitors(project, ['status', '--format', 'json'], env)
    expect(json.code, json.output).toBe(0)
    const checks = Object.fromEntries((JSON.parse(json.stdout).checks as Array<Record<string, unknown>>).map((c) => [c.logicalId, c]))
    expect(checks['shop-api']).toMatchObject({ availability24h: 75, p95ResponseTime24h: 400 })
    expect(checks['shop-dns']).toMatchObject({ availability24h: null, p95ResponseTime24h: null })
    expect(checks.backup).toMatchObject({ availability24h: 100, p95ResponseTime24h: null })
  })
})
