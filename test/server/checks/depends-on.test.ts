/**
 * `dependsOn` from real runs: DNS checks run by the server's own runner fail and recover as a
 * local DNS server says; their alerts go to a local webhook receiver. While a dependency fails,
 * its dependent's failures are recorded (result, status, error group) but deliver nothing, and
 * the status and the dashboard say why; once the dependency recovers, the dependent's next
 * failure alerts. A check without dependsOn alerts as always. Cycles are refused with a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { startAlertsBench, startReceiver, type AlertsBench, type Receiver } from '../alerts/alerts-helpers.js'
import { KEY_A, KEY_B, caller, expect400 } from '../helpers.js'
import { readExposition } from '../../helpers/prometheus.js'

let dns: DnsServerHandle
let hooks: Receiver
let bench: AlertsBench

const ok = (query: string) => dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
const fail = (query: string) => dns.set(query, 'A', { rcode: 'SERVFAIL' })

beforeAll(async () => {
  dns = await startDnsServer()
  hooks = await startReceiver()
  bench = await startAlertsBench(dns, { alerts: { pollMs: 50, timeoutMs: 5000 } })
})
afterAll(async () => {
  await bench?.close()
  await hooks?.close()
  await dns?.close()
})

const hook = (path: string) => ({ alertChannels: { webhook: [{ name: 'ops', url: `${hooks.url}${path}` }] } })

async function notifications(checkId: string): Promise<string[]> {
  const answer = await bench.call('GET', `/v1/alert-notifications?checkId=${checkId}`)
  expect(answer.status).toBe(200)
  return answer.json.map((n: { alertType?: string; kind?: string }) => n.alertType ?? n.kind)
}

async function suppressedGauge(checkId: string): Promise<number> {
  const text = await (await fetch(`${bench.server.url}/metrics`, { headers: { authorization: `Bearer ${KEY_A}` } })).text()
  return readExposition(text).value('monitors_check_alerts_suppressed', { check_id: checkId })
}

async function dashboard(path: string): Promise<string> {
  const login = await fetch(`${bench.server.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: bench.server.url },
    body: new URLSearchParams({ apiKey: KEY_A }).toString(),
  })
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]
  return (await fetch(`${bench.server.url}${path}`, { headers: { cookie } })).text()
}

describe('dependsOn', () => {
  it("a failing dependency holds back its dependent's alerts (recorded, not delivered, said why); once it recovers, the dependent's next failure alerts", async () => {
    const db = await bench.createCheck('db.depends.test', { name: 'Database', ...hook('/db') })
    const app = await bench.createCheck('app.depends.test', { name: 'Shop app', dependsOn: [db], ...hook('/app') })
    expect((await bench.call('GET', `/v1/checks/${app}`)).json.dependsOn).toEqual([db])

    fail('db.depends.test')
    fail('app.depends.test')
    expect((await bench.runOnce(db)).status).toBe('FAILED')
    expect((await bench.runOnce(app)).status).toBe('FAILED')
    await hooks.waitFor('/db', 1)
    // notifications are recorded with the result: none for the dependent, so none is ever delivered
    expect(await notifications(db)).toEqual(['ALERT_FAILURE'])
    expect(await notifications(app)).toEqual([])
    expect(await bench.deliveries(app)).toEqual([])
    expect(hooks.received('/app')).toHaveLength(0)
    // recorded as usual
    const status = (await bench.call('GET', `/v1/check-statuses/${app}`)).json
    expect(status).toMatchObject({ checkId: app, hasFailures: true, alertsSuppressedBy: [{ checkId: db, name: 'Database' }] })
    const listed = (await bench.call('GET', '/v1/check-statuses')).json.find((s: { checkId: string }) => s.checkId === app)
    expect(listed.alertsSuppressedBy).toEqual([{ checkId: db, name: 'Database' }])
    expect((await bench.call('GET', `/v1/check-statuses/${db}`)).json.alertsSuppressedBy).toBeUndefined()
    expect((await bench.call('GET', `/v1/error-groups/checks/${app}`)).json).toHaveLength(1)
    expect((await bench.call('GET', `/v1/check-results/${app}?resultType=FINAL`)).json).toHaveLength(1)
    // the dashboard says why, on the list and on the check's page
    const suppressed = 'alerts suppressed: depends on &quot;Database&quot;, which is failing'
    expect(await dashboard('/')).toContain(suppressed)
    expect(await dashboard(`/dashboard/checks/${app}`)).toContain(suppressed)
    // and the metrics
    expect(await suppressedGauge(app)).toBe(1)
    expect(await suppressedGauge(db)).toBe(0)

    // the dependency recovers; the dependent still fails: it alerts now
    ok('db.depends.test')
    expect((await bench.runOnce(db)).status).toBe('PASSED')
    expect((await bench.runOnce(app)).status).toBe('FAILED')
    const [alert] = await hooks.waitFor('/app', 1)
    expect(alert.json).toMatchObject({ alertType: 'ALERT_FAILURE', checkId: app, checkName: 'Shop app' })
    expect(await notifications(app)).toEqual(['ALERT_FAILURE'])
    expect((await bench.call('GET', `/v1/check-statuses/${app}`)).json.alertsSuppressedBy).toBeUndefined()
    expect(await dashboard(`/dashboard/checks/${app}`)).not.toContain('alerts suppressed')
    expect(await suppressedGauge(app)).toBe(0)
  })

  it('without dependsOn, the same failure alongside a failing check delivers', async () => {
    const db = await bench.createCheck('db2.depends.test', { name: 'Database 2', ...hook('/db2') })
    const solo = await bench.createCheck('solo.depends.test', { name: 'Solo app', ...hook('/solo') })
    fail('db2.depends.test')
    fail('solo.depends.test')
    expect((await bench.runOnce(db)).status).toBe('FAILED')
    expect((await bench.runOnce(solo)).status).toBe('FAILED')
    const [alert] = await hooks.waitFor('/solo', 1)
    expect(alert.json).toMatchObject({ alertType: 'ALERT_FAILURE', checkId: solo })
    expect((await bench.call('GET', `/v1/check-statuses/${solo}`)).json.alertsSuppressedBy).toBeUndefined()
  })

  it("refuses cycles, itself, unknown and other accounts' checks with a 400 naming dependsOn", async () => {
    const a = await bench.createCheck('a.cycle.test', { name: 'Cycle A' })
    const b = await bench.createCheck('b.cycle.test', { name: 'Cycle B', dependsOn: [a] })
    const c = await bench.createCheck('c.cycle.test', { name: 'Cycle C', dependsOn: [b] })
    const body = (name: string, query: string, dependsOn: string[]) => ({
      name,
      activated: false,
      dependsOn,
      request: { query, recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
    })
    // A → C → B → A
    const cycle = await bench.call('PUT', `/v1/checks/dns/${a}`, body('Cycle A', 'a.cycle.test', [c]))
    expect(expect400(cycle, 'payload')).toEqual(['dependsOn.0'])
    expect(cycle.json.message).toContain('cycle of dependencies: "Cycle A" → "Cycle C" → "Cycle B" → "Cycle A"')
    // nothing was written
    expect((await bench.call('GET', `/v1/checks/${a}`)).json.dependsOn).toBeUndefined()

    const self = await bench.call('PUT', `/v1/checks/dns/${a}`, body('Cycle A', 'a.cycle.test', [a]))
    expect(expect400(self, 'payload')).toEqual(['dependsOn.0'])
    expect(self.json.message).toContain('cannot depend on itself')

    const other = (await caller(bench.server, KEY_B)('POST', '/v1/checks/dns', body('B check', 'x.cycle.test', []))).json.id
    const foreign = await bench.call('POST', '/v1/checks/dns', body('Foreign', 'f.cycle.test', [b, other]))
    expect(expect400(foreign, 'payload')).toEqual(['dependsOn.1'])
    expect(foreign.json.message).toContain('refers to a check that does not exist')

    const twice = await bench.call('POST', '/v1/checks/dns', body('Twice', 't.cycle.test', [b, b]))
    expect(expect400(twice, 'payload')).toEqual(['dependsOn.1'])
  })
})
