import { describe, expect, it } from 'vitest'
import { apiCheckSchema, dnsCheckSchema, icmpCheckSchema } from '../../src/schema/index.js'

const request = { method: 'GET', url: 'https://api.example.test/health' } as const

function messages(result: { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } }): string[] {
  return (result.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`)
}

describe('apiCheckSchema', () => {
  it('fills the defaults of the reference: 5000/20000 ms, redirects followed, SSL checked, IPv4, no body', () => {
    const check = apiCheckSchema.parse({ name: 'Health', request })
    expect(check.checkType).toBe('API')
    expect(check.degradedResponseTime).toBe(5000)
    expect(check.maxResponseTime).toBe(20000)
    expect(check.frequency).toBe(10)
    expect(check.request).toMatchObject({
      method: 'GET',
      followRedirects: true,
      skipSSL: false,
      ipFamily: 'IPv4',
      body: '',
      bodyType: 'NONE',
      headers: [],
      queryParameters: [],
      assertions: [],
    })
  })

  it('keeps headers and query parameters with locked and secret, basicAuth and every assertion source', () => {
    const check = apiCheckSchema.parse({
      name: 'Orders',
      request: {
        method: 'POST',
        url: 'https://{{API_HOST}}/orders',
        headers: [{ key: 'x-api-key', value: '{{API_KEY}}', secret: true }],
        queryParameters: [{ key: 'page', value: '1', locked: true }],
        body: '{"a":1}',
        bodyType: 'JSON',
        basicAuth: { username: 'u', password: 'p' },
        assertions: [
          { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
          { source: 'JSON_BODY', property: '$.data[0].id', comparison: 'NOT_NULL' },
          { source: 'HEADERS', property: 'content-type', comparison: 'CONTAINS', target: 'json' },
          { source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'ok' },
          { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '500' },
        ],
      },
    })
    expect(check.request.headers[0]).toEqual({ key: 'x-api-key', value: '{{API_KEY}}', locked: false, secret: true })
    expect(check.request.queryParameters[0]).toEqual({ key: 'page', value: '1', locked: true, secret: false })
    expect(check.request.assertions.map((a) => a.source)).toEqual(['STATUS_CODE', 'JSON_BODY', 'HEADERS', 'TEXT_BODY', 'RESPONSE_TIME'])
    expect(check.request.assertions[0]).toMatchObject({ property: '', regex: '' })
  })

  it('refuses unknown methods, body types, ip families and assertion sources, and URLs that are not http(s) or too long', () => {
    const result = apiCheckSchema.safeParse({
      name: 'Bad',
      degradedResponseTime: 50000,
      maxResponseTime: -1,
      request: {
        method: 'OPTIONS',
        url: 'ftp://example.test/x',
        bodyType: 'XML',
        ipFamily: 'IPv5',
        assertions: [
          { source: 'RESPONSE_CODE', comparison: 'EQUALS', target: '200' },
          { source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'x', regex: '(' },
        ],
      },
    })
    const found = messages(result)
    for (const field of [
      'degradedResponseTime',
      'maxResponseTime',
      'request.method',
      'request.url',
      'request.bodyType',
      'request.ipFamily',
      'request.assertions.0.source',
      'request.assertions.1.regex',
    ]) {
      expect(
        found.some((m) => m.startsWith(`${field}:`)),
        `${field} in ${found.join(' | ')}`,
      ).toBe(true)
    }
    expect(found.find((m) => m.startsWith('request.url:'))).toContain('http:// or https://')
    expect(apiCheckSchema.safeParse({ name: 'Long', request: { ...request, url: `https://a.test/${'x'.repeat(2040)}` } }).success).toBe(false)
    expect(apiCheckSchema.safeParse({ name: 'Max', request: { ...request, url: `https://a.test/${'x'.repeat(2048 - 15)}` } }).success).toBe(true)
  })

  it('allows frequency 0 with frequencyOffset 10, 20 or 30 and refuses other offsets or none', () => {
    for (const offset of [10, 20, 30]) {
      const check = apiCheckSchema.parse({ name: 'Fast', frequency: 0, frequencyOffset: offset, request })
      expect(check.frequency).toBe(0)
      expect(check.frequencyOffset).toBe(offset)
    }
    for (const offset of [1, 5, 15, 40, 60]) {
      const found = messages(apiCheckSchema.safeParse({ name: 'Fast', frequency: 0, frequencyOffset: offset, request }))
      expect(found).toEqual([`frequencyOffset: must be 10, 20 or 30 when frequency is 0 (got ${offset})`])
    }
    expect(messages(apiCheckSchema.safeParse({ name: 'Fast', frequency: 0, request }))).toEqual([
      'frequencyOffset: is required when frequency is 0: 10, 20 or 30 (seconds between runs)',
    ])
    // other frequencies keep the spec's ranges
    expect(apiCheckSchema.safeParse({ name: 'Slow', frequency: 5, frequencyOffset: 50, request }).success).toBe(true)
    expect(messages(apiCheckSchema.safeParse({ name: 'Slow', frequency: 5, frequencyOffset: 51, request }))).toEqual([
      'frequencyOffset: must be 1-50 when frequency is 5 (got 51)',
    ])
  })

  it('still refuses frequency 0 for DNS and ICMP checks', () => {
    const dns = dnsCheckSchema.safeParse({ name: 'DNS', frequency: 0, frequencyOffset: 10, request: { query: 'example.test' } })
    expect(messages(dns)[0]).toMatch(/^frequency: must not be 0: sub-minute frequencies are only for API and TCP checks/)
    const icmp = icmpCheckSchema.safeParse({
      name: 'ICMP',
      frequency: 0,
      frequencyOffset: 10,
      request: { hostname: 'example.test' },
      heartbeat: {},
      script: '',
    })
    expect(messages(icmp)[0]).toMatch(/^frequency: must not be 0/)
  })
})
