import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { icmpCheckSchema, type IcmpCheckInput } from '../../src/schema/check.js'
import { parsePingOutput, runCheck, type IcmpDetails } from '../../src/runner/index.js'

const FAKE_PING = fileURLToPath(new URL('./fixtures/fake-ping.mjs', import.meta.url))

const pingInstalled = spawnSync('ping', ['-V'], { encoding: 'utf8' }).status === 0
const ipv4Works = pingInstalled && spawnSync('ping', ['-n', '-4', '-c', '1', '-W', '1', '127.0.0.1']).status === 0
const ipv6Works = pingInstalled && spawnSync('ping', ['-n', '-6', '-c', '1', '-W', '1', '::1']).status === 0
if (!pingInstalled) console.warn('ICMP tests against loopback skipped: ping is not installed (apt-get install iputils-ping)')
else if (!ipv4Works) console.warn('ICMP IPv4 tests skipped: this machine cannot ping 127.0.0.1')
if (pingInstalled && !ipv6Works) console.warn('ICMP IPv6 tests skipped: this machine cannot ping ::1 (no IPv6 loopback)')

function icmpCheck(request: Partial<IcmpCheckInput['request']> & { hostname: string }, rest: Partial<IcmpCheckInput> = {}) {
  return {
    id: 'check-icmp',
    ...icmpCheckSchema.parse({ name: 'icmp check', heartbeat: {}, script: '', doubleCheck: false, ...rest, request }),
  }
}

function details(result: { details: unknown }): IcmpDetails {
  return result.details as IcmpDetails
}

describe('ICMP checks with the system ping', () => {
  it.skipIf(!ipv4Works)('pings 127.0.0.1 pingCount times and reports latency and loss', async () => {
    const result = await runCheck(icmpCheck({ hostname: '127.0.0.1', pingCount: 3 }), { location: 'us-east-1' })
    expect(result.status).toBe('PASSED')
    expect(result.checkType).toBe('ICMP')
    expect(result.hasFailures).toBe(false)
    expect(result.hasErrors).toBe(false)
    const d = details(result)
    expect(d.ipAddress).toBe('127.0.0.1')
    expect(d.packetsSent).toBe(3)
    expect(d.packetsReceived).toBe(3)
    expect(d.packetLoss).toBe(0)
    expect(d.pings.map((p) => p.seq)).toEqual([1, 2, 3])
    expect(d.latency).not.toBeNull()
    const { min, avg, max, stddev } = d.latency!
    expect(min).toBeGreaterThan(0)
    expect(min).toBeLessThanOrEqual(avg)
    expect(avg).toBeLessThanOrEqual(max)
    expect(stddev).toBeGreaterThanOrEqual(0)
    expect(result.responseTime).toBe(avg)
  })

  it.skipIf(!ipv6Works)('pings ::1 over IPv6', async () => {
    const result = await runCheck(icmpCheck({ hostname: '::1', ipFamily: 'IPv6', pingCount: 2 }))
    expect(result.status).toBe('PASSED')
    expect(details(result).ipAddress).toBe('::1')
    expect(details(result).packetsReceived).toBe(2)
    expect(details(result).ipFamily).toBe('IPv6')
  })

  it.skipIf(!ipv4Works)('fails an IPv6 check of an IPv4 address with what ping said', async () => {
    const result = await runCheck(icmpCheck({ hostname: '127.0.0.1', ipFamily: 'IPv6', pingCount: 1 }))
    expect(result.status).toBe('FAILED')
    expect(result.hasFailures).toBe(true)
    expect(result.hasErrors).toBe(false)
    expect(result.error).toBe('ping 127.0.0.1 (IPv6) failed: 127.0.0.1: Address family for hostname not supported')
  })

  it.skipIf(!ipv4Works)('evaluates LATENCY and JSON_RESPONSE assertions', async () => {
    const result = await runCheck(
      icmpCheck({
        hostname: '127.0.0.1',
        pingCount: 2,
        assertions: [
          { source: 'LATENCY', property: 'avg', comparison: 'LESS_THAN', target: '500' },
          { source: 'LATENCY', property: 'min', comparison: 'GREATER_THAN', target: '0' },
          { source: 'LATENCY', property: 'stddev', comparison: 'NOT_NULL', target: '' },
          { source: 'JSON_RESPONSE', property: '$.packetLoss', comparison: 'EQUALS', target: '0' },
          { source: 'JSON_RESPONSE', property: '$.pings.length', comparison: 'EQUALS', target: '2' },
          { source: 'JSON_RESPONSE', property: '$.latency', comparison: 'HAS_KEY', target: 'max' },
          { source: 'LATENCY', property: 'max', comparison: 'GREATER_THAN', target: '10000' },
        ],
      }),
    )
    expect(result.assertions.map((a) => a.passed)).toEqual([true, true, true, true, true, true, false])
    expect(result.status).toBe('FAILED')
    expect(result.failureKind).toBe('ASSERTION')
    expect(result.error).toMatch(/^LATENCY max GREATER_THAN "10000" ms failed: got [\d.]+ ms$/)
  })

  it.skipIf(!ipv4Works)('is DEGRADED above degradedResponseTime', async () => {
    const result = await runCheck(icmpCheck({ hostname: '127.0.0.1', pingCount: 1 }, { degradedResponseTime: 0 }))
    expect(result.status).toBe('DEGRADED')
    expect(result.isDegraded).toBe(true)
    expect(result.hasFailures).toBe(false)
  })

  it.skipIf(!ipv4Works)('times out at the runner limit with the packets sent so far', async () => {
    const started = Date.now()
    const result = await runCheck(icmpCheck({ hostname: '127.0.0.1', pingCount: 20 }), { timeoutMs: 500 })
    expect(Date.now() - started).toBeLessThan(2000)
    expect(result.status).toBe('TIMED_OUT')
    expect(result.timedOut).toBe(true)
    expect(result.hasFailures).toBe(true)
    expect(details(result).packetsSent).toBeGreaterThan(0)
    expect(details(result).packetsSent).toBeLessThan(20)
    expect(result.error).toMatch(/^ping did not finish within 500 ms \(\d+ of 20 packets sent\)$/)
  })

  it.skipIf(!ipv4Works)('stops when the run is aborted: hasErrors, aborted', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 300)
    const result = await runCheck(icmpCheck({ hostname: '127.0.0.1', pingCount: 20 }, { doubleCheck: true }), { signal: controller.signal })
    expect(result.aborted).toBe(true)
    expect(result.hasErrors).toBe(true)
    expect(result.attempts).toEqual([])
    expect(result.error).toBe('run aborted while pinging')
  })

  it('ends with hasErrors and what to install when ping is missing, without throwing', async () => {
    const result = await runCheck(icmpCheck({ hostname: '127.0.0.1', pingCount: 1 }), { pingPath: '/nonexistent/bin/ping' })
    expect(result.hasErrors).toBe(true)
    expect(result.hasFailures).toBe(false)
    expect(result.status).toBe('FAILED')
    expect(result.failureKind).toBe('RUNNER_ERROR')
    expect(result.error).toBe('ping is not installed on this machine (/nonexistent/bin/ping not found): install iputils-ping (apt-get install iputils-ping)')
    expect(result.resultType).toBe('FINAL')
    expect(details(result)).toMatchObject({ packetsSent: 0, packetsReceived: 0, packetLoss: null, latency: null })
    expect(result.responseTime).toBeNull()
  })
})

describe('packet loss and latency thresholds (ping output from a stand-in binary)', () => {
  const run = (hostname: string, rest: Partial<IcmpCheckInput> = {}) => runCheck(icmpCheck({ hostname, pingCount: 5 }, rest), { pingPath: FAKE_PING })

  it("ping is given the process's environment without the server's and the agent's secrets", async () => {
    const names = [
      'MONITORING_SERVER_API_KEYS',
      'MONITORING_SERVER_METRICS_TOKEN',
      'MONITORING_SERVER_DB',
      'MONITORING_SMTP_URL',
      'MONITORING_API_KEY',
      'AGENT_METRICS_TOKEN',
      'PGPASSWORD',
    ]
    const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]))
    for (const name of names) process.env[name] = 'a-secret-0123456789'
    try {
      const result = await run('env.test')
      expect(result.error).toBe('ping env.test (IPv4) failed: env.test: given no secret, LC_ALL=C, PATH set')
    } finally {
      for (const name of names) {
        if (saved[name] === undefined) delete process.env[name]
        else process.env[name] = saved[name]
      }
    }
  })

  it('fails over maxPacketLossThreshold', async () => {
    const result = await run('loss-40.test')
    expect(details(result).packetLoss).toBe(40)
    expect(details(result).latency).toEqual({ min: 12.1, avg: 12.533, max: 13, stddev: 0.368 })
    expect(result.status).toBe('FAILED')
    expect(result.error).toBe('packet loss 40% is over maxPacketLossThreshold 20%')
  })

  it('is degraded between the two loss thresholds', async () => {
    const result = await run('loss-15.test')
    expect(details(result).packetLoss).toBe(15)
    expect(result.status).toBe('DEGRADED')
    expect(result.isDegraded).toBe(true)
  })

  it('follows the check thresholds, not the defaults', async () => {
    expect((await run('loss-40.test', { maxPacketLossThreshold: 50, degradedPacketLossThreshold: 30 })).status).toBe('DEGRADED')
    expect((await run('loss-40.test', { maxPacketLossThreshold: 50, degradedPacketLossThreshold: 50 })).status).toBe('PASSED')
    expect((await run('loss-15.test', { degradedPacketLossThreshold: null })).status).toBe('PASSED')
  })

  it('fails above maxResponseTime and degrades above degradedResponseTime on the average latency', async () => {
    const failed = await run('slow.test', { maxResponseTime: 150, degradedResponseTime: 100 })
    expect(failed.status).toBe('FAILED')
    expect(failed.error).toBe('average latency 200.3 ms is over maxResponseTime 150 ms')
    const degraded = await run('slow.test', { maxResponseTime: 250, degradedResponseTime: 100 })
    expect(degraded.status).toBe('DEGRADED')
    expect(degraded.responseTime).toBe(200.3)
  })

  it('fails with a network error when no reply comes back, whatever the thresholds', async () => {
    const result = await run('none.test', { maxPacketLossThreshold: 100 })
    expect(result.status).toBe('FAILED')
    expect(result.failureKind).toBe('NETWORK_ERROR')
    expect(result.responseTime).toBeNull()
    expect(result.error).toBe('no reply from none.test (192.0.2.7): 5 packets sent, 100% packet loss')
  })

  it('fails with what ping said for an unknown host', async () => {
    const result = await run('unknown.test')
    expect(result.status).toBe('FAILED')
    expect(result.failureKind).toBe('NETWORK_ERROR')
    expect(result.error).toBe('ping unknown.test (IPv4) failed: unknown.test: Name or service not known')
  })
})

describe('ping output parsing', () => {
  it('reads iputils output with errors and duplicates', () => {
    const out = [
      'PING example.test (192.0.2.1) 56(84) bytes of data.',
      '64 bytes from 192.0.2.1: icmp_seq=1 ttl=57 time=10.0 ms',
      '64 bytes from 192.0.2.1: icmp_seq=1 ttl=57 time=11.0 ms (DUP!)',
      'From 192.0.2.254 icmp_seq=2 Destination Host Unreachable',
      '64 bytes from 192.0.2.1: icmp_seq=3 ttl=57 time=14.0 ms',
      '',
      '--- example.test ping statistics ---',
      '3 packets transmitted, 2 received, +1 duplicates, +1 errors, 33.3333% packet loss, time 2003ms',
      'rtt min/avg/max/mdev = 10.000/12.000/14.000/2.000 ms',
    ].join('\n')
    expect(parsePingOutput(out)).toEqual({
      ipAddress: '192.0.2.1',
      packetsSent: 3,
      packetsReceived: 2,
      packetLoss: 33.3333,
      latency: { min: 10, avg: 12, max: 14, stddev: 2 },
      pings: [
        { seq: 1, ttl: 57, time: 10 },
        { seq: 3, ttl: 57, time: 14 },
      ],
    })
  })

  it('reads IPv6 output and nothing from an error', () => {
    expect(
      parsePingOutput(
        'PING ::1(::1) 56 data bytes\n64 bytes from ::1: icmp_seq=1 ttl=64 time=0.053 ms\n\n--- ::1 ping statistics ---\n1 packets transmitted, 1 received, 0% packet loss, time 0ms\nrtt min/avg/max/mdev = 0.053/0.053/0.053/0.000 ms\n',
      )?.ipAddress,
    ).toBe('::1')
    expect(parsePingOutput('')).toBeNull()
  })
})
