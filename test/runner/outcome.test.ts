import { spawnSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dnsCheckSchema, icmpCheckSchema, type DnsCheckInput } from '../../src/schema/check.js'
import { runCheck } from '../../src/runner/index.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'

let server: DnsServerHandle

beforeAll(async () => {
  server = await startDnsServer()
  server.set('ok.example.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
  server.set('slow.example.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }], delayMs: 150 })
})

afterAll(async () => {
  await server.close()
})

function dnsCheck(query: string, rest: Partial<DnsCheckInput> = {}, request: Partial<DnsCheckInput['request']> = {}) {
  return dnsCheckSchema.parse({ name: 'outcome', doubleCheck: false, ...rest, request: { query, nameServer: server.address, port: server.port, ...request } })
}

describe('shouldFail inverts pass and fail', () => {
  it('passes a check that fails (NXDOMAIN expected to fail)', async () => {
    const result = await runCheck(dnsCheck('missing.example.test', { shouldFail: true }))
    expect(result.status).toBe('PASSED')
    expect(result.hasFailures).toBe(false)
    expect(result.error).toBeNull()
  })

  it('fails a check that passes, and says why', async () => {
    const result = await runCheck(dnsCheck('ok.example.test', { shouldFail: true }))
    expect(result.status).toBe('FAILED')
    expect(result.hasFailures).toBe(true)
    expect(result.error).toBe('shouldFail is set, but the run passed')
  })

  it('fails a degraded pass too, naming the degradation', async () => {
    const result = await runCheck(dnsCheck('slow.example.test', { shouldFail: true, degradedResponseTime: 50, maxResponseTime: 2000 }))
    expect(result.status).toBe('FAILED')
    expect(result.isDegraded).toBe(false)
    expect(result.error).toMatch(/^shouldFail is set, but the run passed \(degraded: response time [\d.]+ ms is over degradedResponseTime 50 ms\)$/)
  })

  it('passes a failed assertion', async () => {
    const result = await runCheck(
      dnsCheck(
        'ok.example.test',
        { shouldFail: true },
        {
          assertions: [{ source: 'JSON_ANSWER', property: '$.Answer[0].data', comparison: 'EQUALS', target: '198.51.100.1' }],
        },
      ),
    )
    expect(result.status).toBe('PASSED')
    expect(result.assertions[0].passed).toBe(false)
  })

  it('passes a timeout, still marked timedOut', async () => {
    const result = await runCheck(dnsCheck('slow.example.test', { shouldFail: true, maxResponseTime: 50 }))
    expect(result.status).toBe('PASSED')
    expect(result.timedOut).toBe(true)
  })

  it('does not turn an error outside the check into a pass', async () => {
    const result = await runCheck(dnsCheck('ok.example.test', { shouldFail: true }, { nameServer: undefined }), { systemNameServers: () => [] })
    expect(result.hasErrors).toBe(true)
    expect(result.status).toBe('FAILED')
  })

  const pingWorks = spawnSync('ping', ['-n', '-c', '1', '-W', '1', '127.0.0.1']).status === 0
  if (!pingWorks) console.warn('shouldFail ICMP test skipped: this machine cannot ping 127.0.0.1 (apt-get install iputils-ping)')
  it.skipIf(!pingWorks)('fails an ICMP check whose host answers', async () => {
    const check = icmpCheckSchema.parse({
      name: 'must be down',
      heartbeat: {},
      script: '',
      doubleCheck: false,
      shouldFail: true,
      request: { hostname: '127.0.0.1', pingCount: 1 },
    })
    const result = await runCheck(check)
    expect(result.status).toBe('FAILED')
    expect(result.error).toBe('shouldFail is set, but the run passed')
  })
})

describe('the result record', () => {
  it('carries everything a scheduler, an agent or the CLI records', async () => {
    const check = { ...dnsCheck('ok.example.test'), id: '6f1f5a2e-0000-4000-8000-000000000001' }
    const result = await runCheck(check, { location: 'ap-south-1' })
    expect(Object.keys(result).sort()).toEqual([
      'aborted',
      'assertions',
      'attempt',
      'attempts',
      'checkId',
      'checkType',
      'details',
      'error',
      'failureKind',
      'hasErrors',
      'hasFailures',
      'isDegraded',
      'name',
      'responseTime',
      'resultType',
      'runLocation',
      'startedAt',
      'status',
      'stoppedAt',
      'timedOut',
    ])
    expect(result).toMatchObject({
      checkId: '6f1f5a2e-0000-4000-8000-000000000001',
      name: 'outcome',
      checkType: 'DNS',
      runLocation: 'ap-south-1',
      resultType: 'FINAL',
      status: 'PASSED',
      failureKind: null,
      error: null,
    })
    expect(Date.parse(result.stoppedAt)).toBeGreaterThanOrEqual(Date.parse(result.startedAt))
    expect(JSON.parse(JSON.stringify(result))).toEqual(result)
  })
})
