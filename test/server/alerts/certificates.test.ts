/**
 * Certificate alerts on the real server: URL and API checks against HTTPS servers on 127.0.0.1
 * with certificates the test makes (5 days, 90 days, expired), alertSettings.sslCertificates as
 * the threshold: ALERT_SSL when a certificate enters it, once, ALERT_SSL_RECOVERY when it is
 * renewed, the days in the check's status and on the dashboard; an account-level channel's
 * sslExpiry and sslExpiryThreshold alone, with the server's clock moved on.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { startTlsServer, type TlsServerHandle } from '../../helpers/http-server.js'
import { eventually, startReceiver, type Receiver } from './alerts-helpers.js'
import { KEY_A, caller, expect400, startTestServer, type Call } from '../helpers.js'

let dir: string
let fiveDays: TlsServerHandle
let ninetyDays: TlsServerHandle
let expired: TlsServerHandle
let server: LocalServer
let call: Call
/** ms the server's clock is ahead of this machine's (the certificate's days are counted on it) */
let shift = 0

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-certificates-'))
  fiveDays = await startTlsServer({ validDays: 5, extraHours: 3 })
  ninetyDays = await startTlsServer({ validDays: 90, extraHours: 3 })
  expired = await startTlsServer({ validDays: -2, extraHours: -3 })
  for (const s of [fiveDays, ninetyDays, expired]) s.route('/', { status: 200, body: 'ok' })
  server = await startTestServer({
    dbPath: join(dir, 'certs.db'),
    runner: true,
    privateTargets: 'allow',
    clock: () => Date.now() + shift,
    schedulerOptions: { tickMs: 50 },
  })
  call = caller(server)
})
afterAll(async () => {
  await server?.close()
  for (const s of [fiveDays, ninetyDays, expired]) await s?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function run(id: string) {
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })
  expect(trigger.status, trigger.text).toBe(201)
  const done = await call('GET', `/v1/check-sessions/${trigger.json.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`)
  expect(done.status, done.text).toBe(200)
  return done.json
}

/** The check's alert notifications, oldest first. */
const kinds = async (id: string) =>
  ((await call('GET', `/v1/alert-notifications?checkId=${id}`)).json as Array<{ alertType: string; created_at: string }>)
    .sort((a, b) => a.created_at.localeCompare(b.created_at))
    .map((n) => n.alertType)

const urlCheck = (origin: string, sslCertificates?: Record<string, unknown>) => ({
  name: `TLS ${origin}`,
  activated: false,
  doubleCheck: false,
  request: { url: `${origin}/`, skipSSL: true },
  ...(sslCertificates ? { alertSettings: { sslCertificates } } : {}),
})

describe('certificate alerts', () => {
  it('a certificate entering the threshold alerts once; renewed, it recovers', async () => {
    const check = await call('POST', '/v1/checks/url', urlCheck(fiveDays.origin, { alertThreshold: 14 }))
    expect(check.status, check.text).toBe(201)
    expect(check.json.alertSettings.sslCertificates).toEqual({ enabled: true, alertThreshold: 14 })
    const id = check.json.id
    expect((await run(id)).status).toBe('PASSED')
    expect((await call('GET', `/v1/check-statuses/${id}`)).json.sslDaysRemaining).toBe(5)
    expect(await kinds(id)).toEqual(['ALERT_SSL'])
    // still within it: no second alert
    await run(id)
    expect(await kinds(id)).toEqual(['ALERT_SSL'])
    await fiveDays.renew(90)
    await run(id)
    expect((await call('GET', `/v1/check-statuses/${id}`)).json.sslDaysRemaining).toBe(90)
    expect(await kinds(id)).toEqual(['ALERT_SSL', 'ALERT_SSL_RECOVERY'])
  })

  it('a certificate with 90 days left is outside a 30-day threshold: no alert; without the setting, no certificate alert', async () => {
    const check = await call('POST', '/v1/checks/api', {
      ...urlCheck(ninetyDays.origin, { alertThreshold: 30 }),
      request: { method: 'GET', url: `${ninetyDays.origin}/`, skipSSL: true },
    })
    await run(check.json.id)
    expect((await call('GET', `/v1/check-statuses/${check.json.id}`)).json.sslDaysRemaining).toBe(90)
    expect(await kinds(check.json.id)).toEqual([])
    const plain = await call('POST', '/v1/checks/url', urlCheck(expired.origin))
    await run(plain.json.id)
    expect(await kinds(plain.json.id)).toEqual([])
  })

  it('an expired certificate: with skipSSL the run passes and the certificate alerts; without it, the run fails naming why', async () => {
    const skipping = await call('POST', '/v1/checks/url', urlCheck(expired.origin, { alertThreshold: 7 }))
    expect((await run(skipping.json.id)).status).toBe('PASSED')
    const days = (await call('GET', `/v1/check-statuses/${skipping.json.id}`)).json.sslDaysRemaining
    expect(days).toBeLessThan(0)
    expect(await kinds(skipping.json.id)).toEqual(['ALERT_SSL'])
    const strict = await call('POST', '/v1/checks/url', { ...urlCheck(expired.origin, { alertThreshold: 7 }), request: { url: `${expired.origin}/` } })
    const done = await run(strict.json.id)
    expect(done.status).toBe('FAILED')
    const result = await call('GET', new URL(done.results[0].checkResultLink).pathname)
    expect(result.json.error).toMatch(/certificate/)
    expect(await kinds(strict.json.id)).toEqual(['ALERT_FAILURE'])
  })

  it('enabled false turns it off; a threshold out of 1-365 is a 400 naming it', async () => {
    const off = await call('POST', '/v1/checks/url', urlCheck(fiveDays.origin, { enabled: false, alertThreshold: 400 }))
    expect(expect400(off, 'payload')).toEqual(['alertSettings.sslCertificates.alertThreshold'])
    const disabled = await call('POST', '/v1/checks/url', urlCheck(ninetyDays.origin, { enabled: false, alertThreshold: 365 }))
    await run(disabled.json.id)
    expect(await kinds(disabled.json.id)).toEqual([])
  })

  it("the dashboard shows the certificate's days and whether they are within the threshold", async () => {
    const check = await call('POST', '/v1/checks/url', urlCheck(expired.origin, { alertThreshold: 10 }))
    await run(check.json.id)
    const login = await fetch(`${server.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ apiKey: KEY_A }).toString(),
    })
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]
    const page = await (await fetch(`${server.url}/dashboard/checks/${check.json.id}`, { headers: { cookie } })).text()
    expect(page).toMatch(/<p data-certificate="expiring">Certificate: expired \d+ days? ago · alert at 10 days or fewer: <strong>within it<\/strong><\/p>/)
  })
})

describe('certificate alerts to account-level channels', () => {
  let hooks: Receiver
  beforeAll(async () => {
    hooks = await startReceiver()
  })
  afterAll(async () => {
    await hooks?.close()
  })

  it('go to the channels with sslExpiry, as an incident of their own (PagerDuty and Opsgenie)', async () => {
    const channel = async (type: string, config: Record<string, unknown>, sslExpiry: boolean) => {
      const answer = await call('POST', '/v1/alert-channels', { type, config, sslExpiry, sendFailure: true, sendRecovery: true })
      expect(answer.status, answer.text).toBe(201)
      return answer.json.id as number
    }
    const pd = await channel('PAGERDUTY', { serviceKey: 'ROUTING', url: `${hooks.url}/cert-pd` }, true)
    const genie = await channel('OPSGENIE', { name: 'o', apiKey: 'GENIE', url: `${hooks.url}/cert-genie` }, true)
    const quiet = await channel('WEBHOOK', { name: 'no certificates', url: `${hooks.url}/cert-quiet` }, false)
    const tls = await startTlsServer({ validDays: 3, extraHours: 3 })
    try {
      tls.route('/', { status: 200, body: 'ok' })
      const check = await call('POST', '/v1/checks/url', {
        ...urlCheck(tls.origin, { alertThreshold: 7 }),
        alertChannelSubscriptions: [pd, genie, quiet].map((alertChannelId) => ({ alertChannelId, activated: true })),
      })
      expect(check.status, check.text).toBe(201)
      const id = check.json.id
      await run(id)
      const [trigger] = await hooks.waitFor('/cert-pd', 1)
      expect(trigger.json).toMatchObject({
        event_action: 'trigger',
        dedup_key: `monitors-check-${id}-certificate`,
        payload: { severity: 'warning', class: 'ALERT_SSL' },
      })
      const [created] = await hooks.waitFor('/cert-genie/v2/alerts', 1)
      expect(created.json).toMatchObject({ alias: `monitors-check-${id}-certificate` })
      await tls.renew(90)
      await run(id)
      const [, resolve] = await hooks.waitFor('/cert-pd', 2)
      expect(resolve.json).toMatchObject({ event_action: 'resolve', dedup_key: `monitors-check-${id}-certificate` })
      await hooks.waitFor(`/cert-genie/v2/alerts/monitors-check-${id}-certificate/close`, 1)
      const deliveries = await eventually(
        async () => (await call('GET', `/v1/alert-deliveries?checkId=${id}`)).json as Array<{ alertType: string; channel: { alertChannelId?: number } }>,
        (list) => list.length === 4,
      )
      // the channel without sslExpiry got neither
      expect(deliveries.filter((d) => d.channel.alertChannelId === quiet)).toEqual([])
      expect(hooks.received('/cert-quiet')).toEqual([])
    } finally {
      await tls.close()
    }
  })
})

describe("a channel's sslExpiry alone (the hosted service's meaning)", () => {
  it("alerts the subscribed channels with sslExpiry by their own sslExpiryThreshold, each once, without the check's sslCertificates; renewed, each recovers", async () => {
    const tls = await startTlsServer({ validDays: 25, extraHours: 3 })
    const channel = async (name: string, settings: Record<string, unknown>) => {
      const answer = await call('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name, url: `http://127.0.0.1:9/${name}` }, ...settings })
      expect(answer.status, answer.text).toBe(201)
      return answer.json.id as number
    }
    try {
      tls.route('/', { status: 200, body: 'ok' })
      const month = await channel('month', { sslExpiry: true }) // sslExpiryThreshold: 30 by default
      const fortnight = await channel('fortnight', { sslExpiry: true, sslExpiryThreshold: 20 })
      const quiet = await channel('quiet', { sslExpiry: false, sslExpiryThreshold: 30 })
      const check = await call('POST', '/v1/checks/url', {
        ...urlCheck(tls.origin),
        alertChannels: { webhook: [{ name: 'inline', url: 'http://127.0.0.1:9/inline', method: 'POST' }] },
        alertChannelSubscriptions: [month, fortnight, quiet].map((alertChannelId) => ({ alertChannelId, activated: true })),
      })
      expect(check.status, check.text).toBe(201)
      expect(check.json.alertSettings?.sslCertificates).toBeUndefined()
      const id = check.json.id
      const delivered = async () =>
        (
          (await call('GET', `/v1/alert-deliveries?checkId=${id}&limit=100`)).json as Array<{
            alertType: string
            channel: { alertChannelId?: number; name?: string }
          }>
        )
          .map((d) => `${d.alertType} ${d.channel.alertChannelId ?? d.channel.name}`)
          .sort()
      // 25 days left: within the 30 days of one channel only
      await run(id)
      expect((await call('GET', `/v1/check-statuses/${id}`)).json.sslDaysRemaining).toBe(25)
      expect(await kinds(id)).toEqual(['ALERT_SSL'])
      expect(await delivered()).toEqual([`ALERT_SSL ${month}`])
      // ten days later on the server's clock: 15 days left, within the other's 20 days too; the first is not alerted again
      shift = 10 * 86_400_000
      await run(id)
      expect((await call('GET', `/v1/check-statuses/${id}`)).json.sslDaysRemaining).toBe(15)
      expect(await kinds(id)).toEqual(['ALERT_SSL', 'ALERT_SSL'])
      await run(id)
      expect(await delivered()).toEqual([`ALERT_SSL ${fortnight}`, `ALERT_SSL ${month}`].sort())
      // renewed: both recover, in one notification; the channel without sslExpiry and the inline channel got nothing
      await tls.renew(90)
      await run(id)
      expect(await kinds(id)).toEqual(['ALERT_SSL', 'ALERT_SSL', 'ALERT_SSL_RECOVERY'])
      expect(await delivered()).toEqual(
        [`ALERT_SSL ${fortnight}`, `ALERT_SSL ${month}`, `ALERT_SSL_RECOVERY ${fortnight}`, `ALERT_SSL_RECOVERY ${month}`].sort(),
      )
    } finally {
      shift = 0
      await tls.close()
    }
  })
})
