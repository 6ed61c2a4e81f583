import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dnsCheckSchema, type DnsCheckInput } from '../../src/schema/check.js'
import { runCheck, type RunOptions } from '../../src/runner/index.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'

let server: DnsServerHandle

beforeAll(async () => {
  server = await startDnsServer()
  server.set('ok.example.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
  server.set('silent.example.test', 'A', { drop: true })
})

afterAll(async () => {
  await server.close()
})

/** Answers may take long on a loaded machine: only the silent server's test waits for a short timeout. */
function dnsCheck(query: string, rest: Partial<DnsCheckInput> = {}) {
  return {
    id: 'check-retry',
    ...dnsCheckSchema.parse({ name: 'retried', maxResponseTime: 3000, ...rest, request: { query, nameServer: server.address, port: server.port } }),
  }
}

/** A clock that only moves when the runner sleeps, and the waits it was asked for. */
function fakeTime(onSleep?: (ms: number, n: number) => void): { waits: number[]; options: RunOptions } {
  let t = Date.parse('2026-11-22T12:00:00Z')
  const waits: number[] = []
  return {
    waits,
    options: {
      now: () => t,
      sleep: async (ms) => {
        waits.push(ms)
        t += ms
        onSleep?.(ms, waits.length)
      },
    },
  }
}

describe('retry strategies', () => {
  const strategies = [
    ['FIXED', { baseBackoffSeconds: 5, maxRetries: 3 }, [5000, 5000, 5000]],
    ['LINEAR', { baseBackoffSeconds: 5, maxRetries: 3 }, [5000, 10000, 15000]],
    ['EXPONENTIAL', { baseBackoffSeconds: 5, maxRetries: 3 }, [5000, 25000, 125000]],
    ['SINGLE_RETRY', { baseBackoffSeconds: 10 }, [10000]],
    ['FIXED', {}, [60000, 60000]],
  ] as const
  for (const [type, settings, expected] of strategies) {
    it(`${type} ${JSON.stringify(settings)} waits ${expected.join(', ')} ms and keeps the retried runs as ATTEMPT results`, async () => {
      const time = fakeTime()
      const result = await runCheck(dnsCheck('missing.example.test', { retryStrategy: { type, ...settings } }), { ...time.options, location: 'eu-west-1' })
      expect(time.waits).toEqual(expected)
      expect(result.resultType).toBe('FINAL')
      expect(result.status).toBe('FAILED')
      expect(result.attempt).toBe(expected.length + 1)
      expect(result.attempts.map((a) => [a.resultType, a.attempt, a.status, a.runLocation])).toEqual(
        expected.map((_, i) => ['ATTEMPT', i + 1, 'FAILED', 'eu-west-1']),
      )
      expect(result.attempts.every((a) => a.error === `response code NXDOMAIN (expected NOERROR) from 127.0.0.1 port ${server.port}`)).toBe(true)
    })
  }

  it('stops retrying once the next retry would start after maxDurationSeconds', async () => {
    const time = fakeTime()
    const result = await runCheck(
      dnsCheck('missing.example.test', {
        retryStrategy: { type: 'EXPONENTIAL', baseBackoffSeconds: 5, maxRetries: 5, maxDurationSeconds: 100 },
      }),
      time.options,
    )
    expect(time.waits).toEqual([5000, 25000])
    expect(result.attempts).toHaveLength(2)
  })

  it('NO_RETRIES runs once, even with doubleCheck', async () => {
    const time = fakeTime()
    const result = await runCheck(dnsCheck('missing.example.test', { retryStrategy: { type: 'NO_RETRIES' }, doubleCheck: true }), time.options)
    expect(time.waits).toEqual([])
    expect(result.attempts).toEqual([])
    expect(result.status).toBe('FAILED')
  })

  it('does not retry a run that passed', async () => {
    const time = fakeTime()
    const result = await runCheck(dnsCheck('ok.example.test', { retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 2 } }), time.options)
    expect(result.status).toBe('PASSED')
    expect(result.attempts).toEqual([])
    expect(time.waits).toEqual([])
  })

  it('ends PASSED when a retry passes, keeping the failed attempt', async () => {
    server.set('flaky.example.test', 'A', { rcode: 'SERVFAIL' })
    const time = fakeTime(() => server.set('flaky.example.test', 'A', { records: [{ type: 'A', data: '192.0.2.5' }] }))
    const result = await runCheck(dnsCheck('flaky.example.test', { retryStrategy: { type: 'LINEAR', baseBackoffSeconds: 2, maxRetries: 3 } }), time.options)
    expect(result.status).toBe('PASSED')
    expect(result.attempt).toBe(2)
    expect(result.attempts.map((a) => [a.resultType, a.status, a.error])).toEqual([
      ['ATTEMPT', 'FAILED', `response code SERVFAIL (expected NOERROR) from 127.0.0.1 port ${server.port}`],
    ])
    expect(time.waits).toEqual([2000])
  })

  it('onlyOn NETWORK_ERROR retries a timeout but not a failed assertion', async () => {
    const strategy = { type: 'FIXED' as const, baseBackoffSeconds: 1, maxRetries: 2, onlyOn: ['NETWORK_ERROR' as const] }
    const timeout = fakeTime()
    const timedOut = await runCheck(dnsCheck('silent.example.test', { retryStrategy: strategy, maxResponseTime: 100 }), timeout.options)
    expect(timedOut.status).toBe('TIMED_OUT')
    expect(timedOut.attempts.map((a) => a.failureKind)).toEqual(['NETWORK_ERROR', 'NETWORK_ERROR'])
    const assertion = fakeTime()
    const failed = await runCheck(dnsCheck('missing.example.test', { retryStrategy: strategy }), assertion.options)
    expect(failed.failureKind).toBe('ASSERTION')
    expect(failed.attempts).toEqual([])
  })

  it("sameRegion: false retries in the check's other locations", async () => {
    const time = fakeTime()
    const result = await runCheck(
      dnsCheck('missing.example.test', {
        locations: ['eu-west-1', 'us-east-1', 'ap-south-1'],
        retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 3, sameRegion: false },
      }),
      { ...time.options, location: 'eu-west-1' },
    )
    expect([...result.attempts.map((a) => a.runLocation), result.runLocation]).toEqual(['eu-west-1', 'us-east-1', 'ap-south-1', 'us-east-1'])
  })

  it('the deprecated doubleCheck retries once, right away, from another location', async () => {
    const time = fakeTime()
    const result = await runCheck(dnsCheck('missing.example.test', { doubleCheck: true, locations: ['eu-west-1', 'us-east-1'] }), {
      ...time.options,
      location: 'eu-west-1',
    })
    expect(time.waits).toEqual([0])
    expect(result.attempts.map((a) => [a.resultType, a.runLocation])).toEqual([['ATTEMPT', 'eu-west-1']])
    expect(result.runLocation).toBe('us-east-1')
  })

  it('doubleCheck: false without a strategy runs once', async () => {
    const time = fakeTime()
    const result = await runCheck(dnsCheck('missing.example.test', { doubleCheck: false }), time.options)
    expect(result.attempts).toEqual([])
  })

  it('retries: false runs once whatever the strategy says', async () => {
    const time = fakeTime()
    const result = await runCheck(dnsCheck('missing.example.test', { retryStrategy: { type: 'FIXED', maxRetries: 3 } }), { ...time.options, retries: false })
    expect(result.attempts).toEqual([])
    expect(time.waits).toEqual([])
  })

  it('an abort during the backoff ends the run with the attempt it had', async () => {
    const controller = new AbortController()
    const result = await runCheck(dnsCheck('missing.example.test', { retryStrategy: { type: 'FIXED', baseBackoffSeconds: 60, maxRetries: 2 } }), {
      signal: controller.signal,
      sleep: async () => controller.abort(),
    })
    expect(result.resultType).toBe('FINAL')
    expect(result.attempt).toBe(1)
    expect(result.attempts).toEqual([])
    expect(result.status).toBe('FAILED')
  })
})
