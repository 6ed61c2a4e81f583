/**
 * The retry policy of alert deliveries, against a local webhook receiver: 408, 429 and 5xx are
 * retried with exponential backoff up to 5 attempts, other 4xx are final, a receiver that does
 * not answer times out; stopping the server does not wait for a receiver, and the abandoned
 * delivery is sent by the next start. (Short backoff and timeout here; the defaults are 1 s and 10 s.)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { expect400 } from '../helpers.js'
import { eventually, gate, startAlertsBench, startReceiver, type AlertsBench, type Receiver } from './alerts-helpers.js'

let dns: DnsServerHandle
let hooks: Receiver
let bench: AlertsBench
const BACKOFF = 200
const TIMEOUT = 1500

beforeAll(async () => {
  dns = await startDnsServer()
  hooks = await startReceiver()
  bench = await startAlertsBench(dns, { alerts: { pollMs: 50, backoffMs: BACKOFF, timeoutMs: TIMEOUT } })
})
afterAll(async () => {
  await bench?.close()
  await hooks?.close()
  await dns?.close()
})

/** A failing check with one webhook to `path`, run once; answers its id. */
async function failingWith(path: string, url = `${hooks.url}${path}`): Promise<string> {
  const query = `${path.slice(1)}.test`
  dns.set(query, 'A', { rcode: 'SERVFAIL' })
  const id = await bench.createCheck(query, { alertChannels: { webhook: [{ name: path, url }] } })
  expect((await bench.runOnce(id)).status).toBe('FAILED')
  return id
}

const finished = (list: any[]) => list.length === 1 && list[0].status !== 'PENDING'

describe('retries', () => {
  it('a 5xx is retried with doubling waits, 5 attempts at most, then the delivery has FAILED', async () => {
    hooks.answer('/down', 503)
    const id = await failingWith('/down')
    const [delivery] = await eventually(() => bench.deliveries(id), finished)
    expect(delivery.status).toBe('FAILED')
    expect(delivery.attempts.map((a: any) => [a.attempt, a.statusCode, a.outcome, a.error])).toEqual([
      ...[1, 2, 3, 4].map((n) => [n, 503, 'RETRY', 'HTTP 503: receiver says 503']),
      [5, 503, 'FAILED', 'HTTP 503: receiver says 503'],
    ])
    const times = hooks.received('/down').map((r) => r.at)
    expect(times).toHaveLength(5)
    // each wait at least the backoff: 200, 400, 800, 1600 ms (never shorter; a loaded machine may make it longer)
    times.slice(1).forEach((at, i) => expect(at - times[i]).toBeGreaterThanOrEqual(BACKOFF * 2 ** i - 20))
  })

  it('408 and 429 are retried (Retry-After honoured); a 404 is final at once', async () => {
    hooks.answer('/busy', 408, { status: 429, headers: { 'retry-after': '1' } }, 200)
    const busy = await failingWith('/busy')
    const [delivered] = await eventually(() => bench.deliveries(busy), finished)
    expect(delivered.attempts.map((a: any) => [a.statusCode, a.outcome])).toEqual([
      [408, 'RETRY'],
      [429, 'RETRY'],
      [200, 'DELIVERED'],
    ])
    expect(delivered.status).toBe('DELIVERED')
    // the 429's Retry-After (1 s) is longer than the backoff (400 ms): it is honoured
    const [, second, third] = hooks.received('/busy')
    expect(third.at - second.at).toBeGreaterThanOrEqual(950)

    hooks.answer('/gone', 404, 200)
    const gone = await failingWith('/gone')
    const [refused] = await eventually(() => bench.deliveries(gone), finished)
    expect(refused).toMatchObject({ status: 'FAILED', attemptCount: 1, nextAttemptAt: null })
    expect(refused.attempts[0]).toMatchObject({ statusCode: 404, outcome: 'FAILED', error: 'HTTP 404: receiver says 404' })
    expect(hooks.received('/gone')).toHaveLength(1)
  })

  it('a receiver that does not answer times out and is tried again', async () => {
    hooks.answer('/hang', { status: 200, hold: new Promise(() => undefined) }, 200)
    const id = await failingWith('/hang')
    const [delivery] = await eventually(() => bench.deliveries(id), finished)
    expect(delivery.status).toBe('DELIVERED')
    expect(delivery.attempts[0]).toMatchObject({ attempt: 1, statusCode: null, outcome: 'RETRY', error: `timed out after ${TIMEOUT} ms` })
    expect(delivery.attempts[0].durationMs).toBeGreaterThanOrEqual(TIMEOUT - 20)
    expect(delivery.attempts[1]).toMatchObject({ attempt: 2, statusCode: 200, outcome: 'DELIVERED' })
  })

  it('an unusable URL or header and a refused connection: the first is refused when written, the second final, the last retried', async () => {
    // a URL that is not http(s) is never stored, so never attempted
    const bad = await bench.call('POST', '/v1/checks/dns', {
      name: 'bad url',
      request: { query: 'bad.test' },
      alertChannels: { webhook: [{ name: 'b', url: 'not a url' }] },
    })
    expect(expect400(bad, 'payload')).toEqual(['alertChannels.webhook.0.url'])

    // a header HTTP does not allow: final too
    dns.set('badheader.test', 'A', { rcode: 'SERVFAIL' })
    const header = await bench.createCheck('badheader.test', {
      alertChannels: { webhook: [{ name: 'h', url: `${hooks.url}/badheader`, headers: [{ key: 'X-Two\nLines', value: 'v' }] }] },
    })
    await bench.runOnce(header)
    const [unsendable] = await eventually(() => bench.deliveries(header), finished)
    expect(unsendable).toMatchObject({ status: 'FAILED', attemptCount: 1 })
    expect(unsendable.attempts[0].error).toBe('the request cannot be sent: invalid header key')
    expect(hooks.received('/badheader')).toEqual([])

    // a port nobody listens on (the receiver's own, once closed)
    const closed = await startReceiver()
    const url = `${closed.url}/nobody`
    await closed.close()
    const refused = await failingWith('/refused', url)
    const [gaveUp] = await eventually(() => bench.deliveries(refused), finished)
    expect(gaveUp.status).toBe('FAILED')
    expect(gaveUp.attempts).toHaveLength(5)
    expect(gaveUp.attempts[0].error).toMatch(/ECONNREFUSED/)
  })
})

describe('shutdown and retention', () => {
  it('does not wait for a receiver that holds the request; the next start sends the delivery', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-alerts-stop-'))
    try {
      const dbPath = join(dir, 'alerts.db')
      const options = { dbPath, alerts: { pollMs: 50, timeoutMs: 60_000, shutdownGraceMs: 200 } }
      const first = await startAlertsBench(dns, options)
      const held = gate()
      hooks.answer('/stop', { status: 200, hold: held.wait }, 200)
      dns.set('stop.test', 'A', { rcode: 'SERVFAIL' })
      const id = await first.createCheck('stop.test', { alertChannels: { webhook: [{ name: 'stop', url: `${hooks.url}/stop` }] } })
      await first.runOnce(id)
      await hooks.waitFor('/stop', 1)
      const began = Date.now()
      await first.close()
      // the attempt's own timeout is a minute: closing did not wait for it
      expect(Date.now() - began).toBeLessThan(20_000)
      held.open()

      const second = await startAlertsBench(dns, options)
      try {
        const [delivery] = await eventually(() => second.deliveries(id), finished)
        expect(delivery.status).toBe('DELIVERED')
        // the abandoned request was not an attempt
        expect(delivery.attempts.map((a: any) => a.attempt)).toEqual([1])
        const requests = hooks.received('/stop')
        expect(requests).toHaveLength(2)
        expect(requests[1].headers['x-monitors-delivery-id']).toBe(requests[0].headers['x-monitors-delivery-id'])
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("finished deliveries and their notifications are pruned with the results' retention", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-alerts-prune-'))
    try {
      const dbPath = join(dir, 'alerts.db')
      const first = await startAlertsBench(dns, { dbPath, alerts: { pollMs: 50 } })
      dns.set('prune.test', 'A', { rcode: 'SERVFAIL' })
      const id = await first.createCheck('prune.test', { alertChannels: { webhook: [{ name: 'p', url: `${hooks.url}/prune` }] } })
      await first.runOnce(id)
      await eventually(() => first.deliveries(id), finished)
      expect((await first.call('GET', `/v1/alert-notifications?checkId=${id}`)).json).toHaveLength(1)
      await first.close()
      await new Promise((resolve) => setTimeout(resolve, 1500))

      // a retention of one second: the next start prunes them
      const second = await startAlertsBench(dns, { dbPath, retentionDays: 1 / 86_400, alerts: { pollMs: 50 } })
      try {
        await eventually(
          () => second.deliveries(id),
          (list) => list.length === 0,
        )
        expect((await second.call('GET', `/v1/alert-notifications?checkId=${id}`)).json).toEqual([])
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
