import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dnsCheckSchema, type DnsCheckInput } from '../../src/schema/check.js'
import { parseResolvConf, runCheck, type DnsDetails } from '../../src/runner/index.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'

let server: DnsServerHandle

beforeAll(async () => {
  server = await startDnsServer()
  server.set('www.example.test', 'A', {
    records: [
      { type: 'A', data: '192.0.2.10' },
      { type: 'A', data: '192.0.2.11', ttl: 60 },
    ],
  })
  server.set('www.example.test', 'AAAA', { records: [{ type: 'AAAA', data: '2001:db8::10' }] })
  server.set('alias.example.test', 'CNAME', { records: [{ type: 'CNAME', data: 'www.example.test' }] })
  server.set('example.test', 'MX', { records: [{ type: 'MX', data: { preference: 10, exchange: 'mail.example.test' } }] })
  server.set('example.test', 'TXT', {
    records: [
      { type: 'TXT', data: ['v=spf1 -all'] },
      { type: 'TXT', data: 'site-verification=abc123' },
    ],
  })
  server.set('example.test', 'NS', {
    records: [
      { type: 'NS', data: 'ns1.example.test' },
      { type: 'NS', data: 'ns2.example.test' },
    ],
  })
  server.set('example.test', 'SOA', {
    records: [
      {
        type: 'SOA',
        data: { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: 2026112201, refresh: 3600, retry: 600, expire: 604800, minimum: 300 },
      },
    ],
  })
  server.set('example.test', 'HTTPS', {
    records: [
      { type: 'HTTPS', data: { priority: 1, target: '.', params: { alpn: ['h2', 'h3'], port: 443, ipv4hint: ['192.0.2.10'], ipv6hint: ['2001:db8::10'] } } },
    ],
  })
  server.set('broken.example.test', '*', { rcode: 'SERVFAIL' })
  server.set('private.example.test', '*', { rcode: 'REFUSED' })
  server.set('slow.example.test', 'A', { records: [{ type: 'A', data: '192.0.2.20' }], delayMs: 300 })
  server.set('silent.example.test', 'A', { drop: true })
  server.set('big.example.test', 'A', { records: [{ type: 'A', data: '192.0.2.30' }], truncateUdp: true })
})

afterAll(async () => {
  await server.close()
})

function dnsCheck(request: Partial<DnsCheckInput['request']> & { query: string }, rest: Partial<DnsCheckInput> = {}) {
  return {
    id: 'check-dns',
    ...dnsCheckSchema.parse({
      name: 'dns check',
      doubleCheck: false,
      ...rest,
      request: { nameServer: server.address, port: server.port, ...request },
    }),
  }
}

function details(result: { details: unknown }): DnsDetails {
  return result.details as DnsDetails
}

describe('DNS queries against a real server on 127.0.0.1', () => {
  for (const protocol of ['UDP', 'TCP'] as const) {
    it(`answers an A query over ${protocol}, with the response code, the answers and a measured response time`, async () => {
      const result = await runCheck(dnsCheck({ query: 'www.example.test', recordType: 'A', protocol }), { location: 'eu-west-1' })
      expect(result.status).toBe('PASSED')
      expect(result.hasFailures).toBe(false)
      expect(result.hasErrors).toBe(false)
      expect(result.runLocation).toBe('eu-west-1')
      expect(result.resultType).toBe('FINAL')
      expect(result.checkId).toBe('check-dns')
      expect(details(result).rcode).toBe('NOERROR')
      expect(details(result).protocol).toBe(protocol)
      expect(details(result).answers.map((a) => a.data)).toEqual(['192.0.2.10', '192.0.2.11'])
      expect(details(result).textAnswer).toBe('www.example.test.\t300\tIN\tA\t192.0.2.10\nwww.example.test.\t60\tIN\tA\t192.0.2.11')
      expect(result.responseTime).toBeGreaterThan(0)
      expect(result.responseTime).toBeLessThan(1000)
      expect(server.queries.at(-1)).toEqual({ name: 'www.example.test', type: 'A', protocol })
    })
  }

  const cases: Array<[string, string, string, string]> = [
    ['AAAA', 'www.example.test', 'TCP', 'www.example.test.\t300\tIN\tAAAA\t2001:db8::10'],
    ['CNAME', 'alias.example.test', 'UDP', 'alias.example.test.\t300\tIN\tCNAME\twww.example.test.'],
    ['MX', 'example.test', 'TCP', 'example.test.\t300\tIN\tMX\t10 mail.example.test.'],
    ['TXT', 'example.test', 'UDP', 'example.test.\t300\tIN\tTXT\t"v=spf1 -all"\nexample.test.\t300\tIN\tTXT\t"site-verification=abc123"'],
    ['NS', 'example.test', 'TCP', 'example.test.\t300\tIN\tNS\tns1.example.test.\nexample.test.\t300\tIN\tNS\tns2.example.test.'],
    ['SOA', 'example.test', 'UDP', 'example.test.\t300\tIN\tSOA\tns1.example.test. hostmaster.example.test. 2026112201 3600 600 604800 300'],
    ['HTTPS', 'example.test', 'UDP', 'example.test.\t300\tIN\tHTTPS\t1 . alpn="h2,h3" port=443 ipv4hint=192.0.2.10 ipv6hint=2001:db8::10'],
  ]
  for (const [recordType, query, protocol, text] of cases) {
    it(`answers ${recordType} records over ${protocol} as zone-file lines`, async () => {
      const result = await runCheck(dnsCheck({ query, recordType: recordType as 'A', protocol: protocol as 'UDP' }))
      expect(result.status).toBe('PASSED')
      expect(details(result).textAnswer).toBe(text)
      expect(server.queries.at(-1)).toEqual({ name: query, type: recordType, protocol })
    })
  }

  it('asks again over TCP when the UDP answer is truncated', async () => {
    const before = server.queries.length
    const result = await runCheck(dnsCheck({ query: 'big.example.test', protocol: 'UDP' }))
    expect(result.status).toBe('PASSED')
    expect(details(result).answers.map((a) => a.data)).toEqual(['192.0.2.30'])
    expect(server.queries.slice(before).map((q) => q.protocol)).toEqual(['UDP', 'TCP'])
  })

  for (const [name, rcode] of [
    ['nothing-here.example.test', 'NXDOMAIN'],
    ['broken.example.test', 'SERVFAIL'],
    ['private.example.test', 'REFUSED'],
  ] as const) {
    it(`fails on ${rcode} without a RESPONSE_CODE assertion, and says so`, async () => {
      const result = await runCheck(dnsCheck({ query: name }))
      expect(result.status).toBe('FAILED')
      expect(result.hasFailures).toBe(true)
      expect(result.hasErrors).toBe(false)
      expect(result.failureKind).toBe('ASSERTION')
      expect(details(result).rcode).toBe(rcode)
      expect(result.error).toBe(`response code ${rcode} (expected NOERROR) from 127.0.0.1 port ${server.port}`)
    })

    it(`passes on ${rcode} when a RESPONSE_CODE assertion expects it`, async () => {
      const result = await runCheck(dnsCheck({ query: name, assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: rcode }] }))
      expect(result.status).toBe('PASSED')
      expect(result.assertions).toEqual([
        {
          source: 'RESPONSE_CODE',
          property: null,
          comparison: 'EQUALS',
          target: rcode,
          actual: rcode,
          passed: true,
          message: `RESPONSE_CODE EQUALS "${rcode}" passed`,
        },
      ])
    })
  }

  it('reports a failed RESPONSE_CODE assertion as a readable message', async () => {
    const result = await runCheck(
      dnsCheck({ query: 'broken.example.test', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] }),
    )
    expect(result.status).toBe('FAILED')
    expect(result.error).toBe('RESPONSE_CODE EQUALS "NOERROR" failed: got "SERVFAIL"')
  })

  it('asserts on the JSON answer with JSON paths', async () => {
    const result = await runCheck(
      dnsCheck({
        query: 'www.example.test',
        assertions: [
          { source: 'JSON_ANSWER', property: '$.Answer[0].data', comparison: 'EQUALS', target: '192.0.2.10' },
          { source: 'JSON_ANSWER', property: '$.Answer[1].TTL', comparison: 'LESS_THAN', target: '100' },
          { source: 'JSON_ANSWER', property: "$['Answer'][1]['data']", comparison: 'EQUALS', target: '192.0.2.11' },
          { source: 'JSON_ANSWER', property: 'Status', comparison: 'EQUALS', target: '0' },
          { source: 'JSON_ANSWER', property: '$.Answer.length', comparison: 'EQUALS', target: '2' },
          { source: 'JSON_ANSWER', property: '$.Question[0]', comparison: 'HAS_KEY', target: 'name' },
          { source: 'JSON_ANSWER', property: '$.Answer[5]', comparison: 'IS_NULL', target: '' },
          { source: 'JSON_ANSWER', comparison: 'HAS_KEY', target: 'Answer' },
        ],
      }),
    )
    expect(result.assertions.map((a) => [a.message, a.passed])).toEqual([
      ['JSON_ANSWER $.Answer[0].data EQUALS "192.0.2.10" passed', true],
      ['JSON_ANSWER $.Answer[1].TTL LESS_THAN "100" passed', true],
      ["JSON_ANSWER $['Answer'][1]['data'] EQUALS \"192.0.2.11\" passed", true],
      ['JSON_ANSWER Status EQUALS "0" passed', true],
      ['JSON_ANSWER $.Answer.length EQUALS "2" passed', true],
      ['JSON_ANSWER $.Question[0] HAS_KEY "name" passed', true],
      ['JSON_ANSWER $.Answer[5] IS_NULL passed', true],
      ['JSON_ANSWER HAS_KEY "Answer" passed', true],
    ])
    expect(result.status).toBe('PASSED')
    expect(details(result).jsonAnswer?.Answer[0]).toEqual({ name: 'www.example.test.', type: 1, TTL: 300, data: '192.0.2.10' })
  })

  it('fails a JSON_ANSWER assertion whose path finds nothing, naming the path', async () => {
    const result = await runCheck(
      dnsCheck({
        query: 'www.example.test',
        assertions: [{ source: 'JSON_ANSWER', property: '$.Answer[3].data', comparison: 'EQUALS', target: '192.0.2.10' }],
      }),
    )
    expect(result.status).toBe('FAILED')
    expect(result.error).toBe('JSON_ANSWER $.Answer[3].data EQUALS "192.0.2.10" failed: got nothing at $.Answer[3].data')
  })

  it('asserts on the text answer and the response time', async () => {
    const result = await runCheck(
      dnsCheck({
        query: 'example.test',
        recordType: 'TXT',
        assertions: [
          { source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: 'v=spf1' },
          { source: 'TEXT_ANSWER', comparison: 'NOT_CONTAINS', target: 'v=DMARC1' },
          { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '1000' },
          { source: 'RESPONSE_TIME', comparison: 'GREATER_THAN', target: '5000' },
        ],
      }),
    )
    expect(result.assertions.map((a) => a.passed)).toEqual([true, true, true, false])
    expect(result.status).toBe('FAILED')
    expect(result.error).toMatch(/^RESPONSE_TIME GREATER_THAN "5000" ms failed: got [\d.]+ ms$/)
  })

  it('marks a run over degradedResponseTime as DEGRADED', async () => {
    const result = await runCheck(dnsCheck({ query: 'slow.example.test' }, { degradedResponseTime: 100, maxResponseTime: 2000 }))
    expect(result.status).toBe('DEGRADED')
    expect(result.isDegraded).toBe(true)
    expect(result.hasFailures).toBe(false)
    expect(result.responseTime).toBeGreaterThanOrEqual(290)
  })

  for (const protocol of ['UDP', 'TCP'] as const) {
    it(`times out over ${protocol} at maxResponseTime: TIMED_OUT, a network error`, async () => {
      const started = Date.now()
      const result = await runCheck(dnsCheck({ query: 'slow.example.test', protocol }, { degradedResponseTime: 50, maxResponseTime: 150 }))
      // well under the default limits, with room for a loaded machine
      expect(Date.now() - started).toBeLessThan(3000)
      expect(result.status).toBe('TIMED_OUT')
      expect(result.timedOut).toBe(true)
      expect(result.hasFailures).toBe(true)
      expect(result.failureKind).toBe('NETWORK_ERROR')
      expect(result.responseTime).toBeNull()
      expect(result.error).toBe(`no answer from 127.0.0.1 port ${server.port} over ${protocol} within 150 ms`)
    })
  }

  it('times out at the runner limit when it is shorter than maxResponseTime', async () => {
    const result = await runCheck(dnsCheck({ query: 'silent.example.test' }), { timeoutMs: 100 })
    expect(result.status).toBe('TIMED_OUT')
    expect(result.error).toBe(`no answer from 127.0.0.1 port ${server.port} over UDP within 100 ms`)
  })

  it('reports a refused TCP connection as a network failure, not a crash', async () => {
    const closed = await startDnsServer()
    const port = closed.port
    await closed.close()
    const result = await runCheck(dnsCheck({ query: 'www.example.test', protocol: 'TCP', port }))
    expect(result.status).toBe('FAILED')
    expect(result.failureKind).toBe('NETWORK_ERROR')
    expect(result.error).toBe(`TCP query to 127.0.0.1 port ${port} failed: connection refused`)
  })

  it('accepts host:port in nameServer', async () => {
    const result = await runCheck(dnsCheck({ query: 'www.example.test', nameServer: `127.0.0.1:${server.port}`, port: undefined }))
    expect(result.status).toBe('PASSED')
    expect(details(result).port).toBe(server.port)
  })

  it('uses the system resolver when the check names no name server', async () => {
    const result = await runCheck(dnsCheck({ query: 'www.example.test', nameServer: undefined, port: server.port }), {
      systemNameServers: () => ['127.0.0.1', '10.0.0.2'],
    })
    expect(result.status).toBe('PASSED')
    expect(details(result).nameServer).toBe('127.0.0.1')
    expect(details(result).answers.map((a) => a.data)).toEqual(['192.0.2.10', '192.0.2.11'])
  })

  it('ends with hasErrors when there is no resolver at all', async () => {
    const result = await runCheck(dnsCheck({ query: 'www.example.test', nameServer: undefined }), { systemNameServers: () => [] })
    expect(result.hasErrors).toBe(true)
    expect(result.hasFailures).toBe(false)
    expect(result.failureKind).toBe('RUNNER_ERROR')
    expect(result.error).toMatch(/^no name server: the check sets no request.nameServer/)
  })

  it('reads name servers from resolv.conf text', () => {
    expect(parseResolvConf('# comment\nsearch example.test\nnameserver 10.0.0.2\nnameserver fe80::1%eth0 # link-local\noptions ndots:5\n')).toEqual([
      '10.0.0.2',
      'fe80::1',
    ])
  })

  it('stamps startedAt and stoppedAt from the injected clock', async () => {
    let t = Date.parse('2026-11-22T10:00:00.000Z')
    const result = await runCheck(dnsCheck({ query: 'www.example.test' }), { now: () => (t += 25) })
    expect(result.startedAt).toBe('2026-11-22T10:00:00.050Z')
    expect(result.stoppedAt).toBe('2026-11-22T10:00:00.075Z')
  })

  it('stops a run in flight when its signal aborts: hasErrors, aborted', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 50)
    const result = await runCheck(dnsCheck({ query: 'silent.example.test' }, { maxResponseTime: 5000, doubleCheck: true }), { signal: controller.signal })
    expect(result.aborted).toBe(true)
    expect(result.hasErrors).toBe(true)
    expect(result.attempts).toEqual([])
    expect(result.error).toBe('run aborted before the name server answered')
  })
})
