/**
 * Alert deliveries from real runs: DNS checks run by the server's own runner fail and recover
 * as a local DNS server says; their notifications are delivered by the server's background
 * worker to a local webhook receiver (a real HTTP server counting what it gets), and every
 * attempt is read back through GET /v1/alert-deliveries and /v1/alert-notifications.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { startTlsServer } from '../../helpers/http-server.js'
import { eventually, gate, startAlertsBench, startReceiver, type AlertsBench, type Receiver } from './alerts-helpers.js'

let dns: DnsServerHandle
let hooks: Receiver
let bench: AlertsBench

const ok = (query: string) => dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
const fail = (query: string) => dns.set(query, 'A', { rcode: 'SERVFAIL' })
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/

beforeAll(async () => {
  dns = await startDnsServer()
  hooks = await startReceiver()
  // the default backoff (1 s, 2 s, …) and a short poll
  bench = await startAlertsBench(dns, { alerts: { pollMs: 100, timeoutMs: 5000 } })
})
afterAll(async () => {
  await bench?.close()
  await hooks?.close()
  await dns?.close()
})

describe('webhook deliveries', () => {
  it("sends the documented JSON with the channel's method, headers and query parameters; a 500 is retried after 1 s; every attempt is readable", async () => {
    const query = 'webhook.test'
    hooks.answer('/hook', 500, 200)
    const id = await bench.createCheck(query, {
      name: 'Shop resolver',
      tags: ['shop', 'dns'],
      alertChannels: {
        webhook: [
          {
            name: 'ops',
            url: `${hooks.url}/hook`,
            method: 'PUT',
            headers: [{ key: 'Authorization', value: 'Bearer s3cret-token', locked: true, secret: true }],
            queryParameters: [
              { key: 'team', value: 'shop' },
              { key: 'env', value: 'prod' },
            ],
          },
        ],
      },
    })
    // a secret header is sent with the alert, never answered
    expect((await bench.call('GET', `/v1/checks/${id}`)).text).not.toContain('s3cret-token')
    fail(query)
    const run = await bench.runOnce(id)
    expect(run.status).toBe('FAILED')

    const [first, second] = await hooks.waitFor('/hook', 2)
    for (const request of [first, second]) {
      expect(request.method).toBe('PUT')
      expect(request.url).toBe('/hook?team=shop&env=prod')
      expect(request.headers.authorization).toBe('Bearer s3cret-token')
      expect(request.headers['content-type']).toBe('application/json')
      expect(request.headers['x-monitors-alert-type']).toBe('ALERT_FAILURE')
    }
    // the retry is the same delivery, one backoff (1 s) after the first answer
    expect(second.headers['x-monitors-delivery-id']).toBe(first.headers['x-monitors-delivery-id'])
    expect([first.headers['x-monitors-attempt'], second.headers['x-monitors-attempt']]).toEqual(['1', '2'])
    expect(second.at - first.at).toBeGreaterThanOrEqual(950)
    expect(second.json).toEqual(first.json)

    const payload = first.json
    expect(payload).toMatchObject({
      alertType: 'ALERT_FAILURE',
      title: 'Shop resolver is failing',
      checkId: id,
      checkName: 'Shop resolver',
      checkType: 'DNS',
      tags: ['shop', 'dns'],
      checkResultId: run.results[0].checkResultId,
      runLocation: 'local',
      statusCode: null,
      hasFailures: true,
      isDegraded: false,
      sslDaysRemaining: null,
      incidentId: null,
    })
    expect(payload.errorMessage).toContain('SERVFAIL')
    expect(typeof payload.id).toBe('string')
    expect(typeof payload.responseTime).toBe('number')
    for (const time of [payload.startedAt, payload.stoppedAt, payload.notifiedAt]) expect(time).toMatch(ISO)
    // the result it names is readable
    expect((await bench.call('GET', `/v1/check-results/${id}/${payload.checkResultId}`)).status).toBe(200)

    const deliveries = await eventually(
      () => bench.deliveries(id),
      (list) => list[0]?.status === 'DELIVERED',
    )
    expect(deliveries).toHaveLength(1)
    const [delivery] = deliveries
    expect(delivery).toMatchObject({
      id: first.headers['x-monitors-delivery-id'],
      notificationId: payload.id,
      checkId: id,
      alertType: 'ALERT_FAILURE',
      channelType: 'WEBHOOK',
      channel: { name: 'ops', method: 'PUT', url: `${hooks.url}/hook` },
      status: 'DELIVERED',
      reason: null,
      attemptCount: 2,
      nextAttemptAt: null,
    })
    expect(delivery.attempts.map((a: any) => [a.attempt, a.statusCode, a.outcome])).toEqual([
      [1, 500, 'RETRY'],
      [2, 200, 'DELIVERED'],
    ])
    expect(delivery.attempts[0].error).toBe('HTTP 500: receiver says 500')
    expect(delivery.attempts[1].error).toBeNull()
    for (const attempt of delivery.attempts) {
      expect(attempt.startedAt).toMatch(ISO)
      expect(attempt.durationMs).toBeGreaterThanOrEqual(0)
    }
    expect(delivery.event).toEqual(payload)
    // the channel's header and query values are not shown
    const text = (await bench.call('GET', `/v1/alert-deliveries/${delivery.id}`)).text
    expect(text).not.toContain('s3cret-token')
    expect(text).not.toContain('team=shop')

    // the notification lists its deliveries
    const notifications = (await bench.call('GET', `/v1/alert-notifications?checkId=${id}`)).json
    expect(notifications).toHaveLength(1)
    expect(notifications[0]).toMatchObject({ id: payload.id, checkId: id, alertType: 'ALERT_FAILURE', checkResultId: payload.checkResultId })
    expect(notifications[0].deliveries.map((d: any) => d.id)).toEqual([delivery.id])

    // the recovery is delivered too
    ok(query)
    expect((await bench.runOnce(id)).status).toBe('PASSED')
    const [, , recovery] = await hooks.waitFor('/hook', 3)
    expect(recovery.json).toMatchObject({
      alertType: 'ALERT_RECOVERY',
      title: 'Shop resolver has recovered',
      checkId: id,
      hasFailures: false,
      errorMessage: null,
    })
    const all = (await bench.call('GET', `/v1/alert-notifications?checkId=${id}`)).json
    expect(all.map((n: any) => n.alertType)).toEqual(['ALERT_RECOVERY', 'ALERT_FAILURE'])
  })

  it('a degraded run is delivered as ALERT_DEGRADED', async () => {
    const query = 'degraded.test'
    dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }], delayMs: 150 })
    const id = await bench.createCheck(query, {
      degradedResponseTime: 50,
      maxResponseTime: 3000,
      alertChannels: { webhook: [{ name: 'd', url: `${hooks.url}/degraded` }] },
    })
    expect((await bench.runOnce(id)).status).toBe('DEGRADED')
    const [request] = await hooks.waitFor('/degraded', 1)
    expect(request.method).toBe('POST')
    expect(request.json).toMatchObject({ alertType: 'ALERT_DEGRADED', isDegraded: true, hasFailures: false, title: `check ${query} is degraded` })
  })

  it('a slow receiver blocks no run: runs complete while a delivery is in flight', async () => {
    const query = 'slow.test'
    const release = gate()
    hooks.answer('/slow', { status: 200, hold: release.wait })
    const id = await bench.createCheck(query, { alertChannels: { webhook: [{ name: 'slow', url: `${hooks.url}/slow` }] } })
    fail(query)
    await bench.runOnce(id)
    await hooks.waitFor('/slow', 1)
    // the receiver holds the request; the check runs on, and so does another
    const other = await bench.createCheck('slow-other.test')
    ok('slow-other.test')
    expect((await bench.runOnce(id)).status).toBe('FAILED')
    expect((await bench.runOnce(other)).status).toBe('PASSED')
    expect((await bench.runOnce(id)).status).toBe('FAILED')
    const [inFlight] = await bench.deliveries(id)
    expect(inFlight).toMatchObject({ status: 'PENDING', attemptCount: 0 })
    expect(hooks.received('/slow')).toHaveLength(1)
    release.open()
    const [done] = await eventually(
      () => bench.deliveries(id),
      (list) => list[0]?.status === 'DELIVERED',
    )
    expect(done.attempts).toHaveLength(1)
  })

  it('a muted check delivers nothing', async () => {
    const muted = await bench.createCheck('muted.test', {
      muted: true,
      alertChannels: { webhook: [{ name: 'm', url: `${hooks.url}/muted` }], slack: [{ url: `${hooks.url}/muted-slack` }] },
    })
    const loud = await bench.createCheck('loud.test', { alertChannels: { webhook: [{ name: 'l', url: `${hooks.url}/loud` }] } })
    fail('muted.test')
    fail('loud.test')
    expect((await bench.runOnce(muted)).status).toBe('FAILED')
    ok('muted.test')
    expect((await bench.runOnce(muted)).status).toBe('PASSED')
    // a check failing after it is delivered: the worker has been through the outbox since
    await bench.runOnce(loud)
    await hooks.waitFor('/loud', 1)
    await eventually(
      () => bench.deliveries(loud),
      (list) => list[0]?.status === 'DELIVERED',
    )
    expect(hooks.received('/muted')).toEqual([])
    expect(hooks.received('/muted-slack')).toEqual([])
    expect(await bench.deliveries(muted)).toEqual([])
    expect((await bench.call('GET', `/v1/alert-notifications?checkId=${muted}`)).json).toEqual([])
  })
})

describe('slack, sms and email without an SMTP server', () => {
  it('Slack gets an incoming-webhook message; a GET webhook no body; SMS is recorded as not delivered; email without --smtp-url too', async () => {
    const query = 'channels.test'
    const id = await bench.createCheck(query, {
      name: 'Edge resolver',
      alertChannels: {
        slack: [{ url: `${hooks.url}/services/T000/B000/XXXX` }],
        webhook: [{ name: 'ping', url: `${hooks.url}/get`, method: 'GET', queryParameters: [{ key: 'check', value: 'edge' }] }],
        sms: [{ number: '+15550100', name: 'on call' }],
        email: [{ address: 'ops@example.test' }],
      },
    })
    fail(query)
    await bench.runOnce(id)
    // the Slack URL (its path is the token) is used, never answered
    expect((await bench.call('GET', `/v1/checks/${id}`)).json.alertChannels.slack).toEqual([{ url: `${hooks.url}/********` }])
    const [message] = await hooks.waitFor('/services/T000/B000/XXXX', 1)
    expect(message.method).toBe('POST')
    expect(message.headers['content-type']).toBe('application/json')
    expect(typeof message.json.text).toBe('string')
    expect(message.json.text).toContain('*Edge resolver is failing*')
    expect(message.json.text).toContain('SERVFAIL')
    const fields = Object.fromEntries(message.json.attachments[0].fields.map((f: { title: string; value: string }) => [f.title, f.value]))
    expect(fields).toMatchObject({ Alert: 'ALERT_FAILURE', Location: 'local' })
    expect(fields.Check).toContain(id)

    // a GET webhook carries no body: the query parameters alone
    const [get] = await hooks.waitFor('/get', 1)
    expect(get).toMatchObject({ method: 'GET', url: '/get?check=edge', body: '' })
    expect(get.headers['content-type']).toBeUndefined()

    const deliveries = await eventually(
      () => bench.deliveries(id),
      (list) => list.length === 4 && list.every((d: any) => d.status !== 'PENDING'),
    )
    const byType = Object.fromEntries(deliveries.map((d: any) => [d.channelType, d]))
    expect(byType.SLACK).toMatchObject({ status: 'DELIVERED', channel: { url: `${hooks.url}/…` }, attemptCount: 1 })
    expect(byType.SMS).toMatchObject({ status: 'NOT_DELIVERED', attemptCount: 0, channel: { name: 'on call', number: '+15550100' } })
    expect(byType.SMS.reason).toMatch(/SMS is not delivered by the local server/)
    expect(byType.EMAIL).toMatchObject({ status: 'NOT_DELIVERED', attemptCount: 0, channel: { address: 'ops@example.test' } })
    expect(byType.EMAIL.reason).toMatch(/no SMTP server configured: start the server with --smtp-url/)
  })
})

describe('the API of deliveries', () => {
  it('validates its queries and keeps accounts apart', async () => {
    const bad = await bench.call('GET', '/v1/alert-deliveries?limit=0')
    expect(bad.status).toBe(400)
    expect(bad.json.attributes.source).toBe('query')
    expect((await bench.call('GET', '/v1/alert-notifications?page=0')).status).toBe(400)
    expect((await bench.call('GET', '/v1/alert-deliveries?checkId=00000000-0000-4000-8000-000000000000')).status).toBe(404)
    expect((await bench.call('GET', '/v1/alert-deliveries/nope')).json).toMatchObject({ statusCode: 404, message: 'Alert delivery not found' })
    const mine = (await bench.call('GET', '/v1/alert-deliveries?limit=1')).json
    expect(mine).toHaveLength(1)
    const other = (await import('../helpers.js')).caller(bench.server, (await import('../helpers.js')).KEY_B)
    expect((await other('GET', `/v1/alert-deliveries/${mine[0].id}`)).status).toBe(404)
    expect((await other('GET', '/v1/alert-deliveries')).json).toEqual([])
  })
})

describe('the filters of GET /v1/alert-notifications', () => {
  it('alertChannelId, hasFailures, from and to narrow the list in the store; paging counts the filtered set', async () => {
    const started = Date.now()
    const channel = async (body: Record<string, unknown>) => {
      const answer = await bench.call('POST', '/v1/alert-channels', body)
      expect(answer.status, answer.text).toBe(201)
      return answer.json.id as number
    }
    const hook = await channel({ type: 'WEBHOOK', config: { name: 'filters', url: `${hooks.url}/filters`, method: 'POST' } })
    // an SMS is never sent by the local server: its delivery is NOT_DELIVERED, a failure
    const sms = await channel({ type: 'SMS', config: { number: '+15550123', name: 'filters' } })
    const subscribed = (id: number) => ({ alertChannelSubscriptions: [{ alertChannelId: id, activated: true }] })
    const delivered = await bench.createCheck('delivered.filters.test', subscribed(hook))
    const undelivered = await bench.createCheck('undelivered.filters.test', subscribed(sms))
    fail('delivered.filters.test')
    fail('undelivered.filters.test')
    await bench.runOnce(delivered)
    await bench.runOnce(undelivered)
    await hooks.waitFor('/filters', 1)
    await eventually(
      () => bench.deliveries(delivered),
      (list) => list.length === 1 && list[0].status === 'DELIVERED',
    )
    await eventually(
      () => bench.deliveries(undelivered),
      (list) => list.length === 1 && list[0].status === 'NOT_DELIVERED',
    )

    const list = async (query: string) => {
      const answer = await bench.call('GET', `/v1/alert-notifications?limit=100${query}`)
      expect(answer.status, answer.text).toBe(200)
      return { checks: answer.json.map((n: { checkId: string }) => n.checkId), total: Number(/\/(\d+)$/.exec(answer.headers.get('content-range') ?? '')?.[1]) }
    }
    expect(await list(`&alertChannelId=${hook}`)).toEqual({ checks: [delivered], total: 1 })
    expect(await list(`&alertChannelId=${sms}`)).toEqual({ checks: [undelivered], total: 1 })
    expect((await list(`&alertChannelId=${sms + hook + 1000}`)).checks).toEqual([])
    const ours = (answer: { checks: string[] }) => answer.checks.filter((id) => id === delivered || id === undelivered)
    expect(ours(await list('&hasFailures=true'))).toEqual([undelivered])
    expect(ours(await list('&hasFailures=false'))).toEqual([delivered])
    expect(await list(`&checkId=${undelivered}&hasFailures=true`)).toEqual({ checks: [undelivered], total: 1 })
    expect(await list(`&checkId=${undelivered}&hasFailures=false`)).toEqual({ checks: [], total: 0 })
    // from and to: UNIX seconds (or an ISO date-time)
    const seconds = (ms: number) => String(Math.floor(ms / 1000))
    expect(ours(await list(`&from=${seconds(started)}`))).toEqual([undelivered, delivered])
    expect(ours(await list(`&from=${seconds(Date.now() + 60_000)}`))).toEqual([])
    expect(ours(await list(`&to=${seconds(started)}`))).toEqual([])
    expect(ours(await list(`&from=${new Date(started - 1000).toISOString()}&to=${seconds(Date.now() + 60_000)}`))).toEqual([undelivered, delivered])
    // a page of the filtered set
    const page = await bench.call('GET', `/v1/alert-notifications?from=${seconds(started)}&alertChannelId=${sms}&limit=1&page=1`)
    expect(page.headers.get('content-range')).toBe('0-0/1')
    expect(page.json[0].deliveries.map((d: { status: string }) => d.status)).toEqual(['NOT_DELIVERED'])

    const bad = await bench.call('GET', `/v1/alert-notifications?from=${seconds(Date.now())}&to=${seconds(started - 3_600_000)}`)
    expect(bad.status).toBe(400)
    expect(bad.json.attributes.keys).toEqual(['from', 'to'])
    expect((await bench.call('GET', '/v1/alert-notifications?alertChannelId=abc')).json.attributes.keys).toEqual(['alertChannelId'])
    expect((await bench.call('GET', '/v1/alert-notifications?hasFailures=1')).json.attributes.keys).toEqual(['hasFailures'])
    expect((await bench.call('GET', `/v1/alert-notifications?from=${started}`)).json.message).toMatch(/^from: must be a UNIX timestamp in seconds/)
  })
})

describe('reminders', () => {
  it("a REMINDER is delivered too (the server's clock moved past the reminder interval)", async () => {
    let offset = 0
    const clocked = await startAlertsBench(dns, { clock: () => Date.now() + offset, alerts: { pollMs: 100 } })
    try {
      const query = 'reminder.test'
      fail(query)
      const id = await clocked.createCheck(query, {
        name: 'Nagging',
        useGlobalAlertSettings: false,
        alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, reminders: { amount: 1, interval: 5 } },
        alertChannels: { webhook: [{ name: 'r', url: `${hooks.url}/reminder` }] },
      })
      await clocked.runOnce(id)
      // the clock moves once the first is delivered: a lease it held would be over, and it sent again
      await eventually(
        () => clocked.deliveries(id),
        (list) => list.length === 1 && list[0].status === 'DELIVERED',
      )
      offset = 5 * 60_000 + 5_000
      await clocked.runOnce(id)
      const requests = await hooks.waitFor('/reminder', 2)
      expect(requests.map((r) => [r.json.alertType, r.json.title])).toEqual([
        ['ALERT_FAILURE', 'Nagging is failing'],
        ['REMINDER', 'Nagging is still failing'],
      ])
      expect(requests[1].headers['x-monitors-alert-type']).toBe('REMINDER')
    } finally {
      await clocked.close()
    }
  })
})

describe('API checks', () => {
  it("the event of an https API check carries its status code and the certificate's days left", async () => {
    const tls = await startTlsServer({ validDays: 12, extraHours: 3 })
    try {
      tls.route('/health', { status: 500, body: 'down' })
      const created = await bench.call('POST', '/v1/checks/api', {
        name: 'Health API',
        activated: false,
        doubleCheck: false,
        request: { method: 'GET', url: `${tls.origin}/health`, skipSSL: true, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
        alertChannels: { webhook: [{ name: 'api', url: `${hooks.url}/api` }] },
      })
      expect(created.status).toBe(201)
      expect((await bench.runOnce(created.json.id)).status).toBe('FAILED')
      const [request] = await hooks.waitFor('/api', 1)
      expect(request.json).toMatchObject({
        alertType: 'ALERT_FAILURE',
        checkType: 'API',
        checkName: 'Health API',
        statusCode: 500,
        sslDaysRemaining: 12,
        hasFailures: true,
      })
      expect(request.json.errorMessage).toContain('500')
    } finally {
      await tls.close()
    }
  })
})
