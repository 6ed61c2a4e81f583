import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMPARISONS } from '../../src/schema/enums.js'
import { dnsCheckSchema } from '../../src/schema/check.js'
import { compare, readJsonPath, runCheck, type Comparison } from '../../src/runner/index.js'
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
  server.set('empty.example.test', 'A', { records: [] })
})

afterAll(async () => {
  await server.close()
})

type Case = { source: 'JSON_ANSWER' | 'TEXT_ANSWER' | 'RESPONSE_CODE'; property?: string; target: string; query?: string }

/** For each comparison: an assertion that holds and one that does not, on a real answer. */
const CASES: Record<Comparison, { pass: Case; fail: Case; failMessage: string }> = {
  EQUALS: {
    pass: { source: 'JSON_ANSWER', property: '$.Answer[0].data', target: '192.0.2.10' },
    fail: { source: 'JSON_ANSWER', property: '$.Answer[0].data', target: '192.0.2.99' },
    failMessage: 'JSON_ANSWER $.Answer[0].data EQUALS "192.0.2.99" failed: got "192.0.2.10"',
  },
  NOT_EQUALS: {
    pass: { source: 'RESPONSE_CODE', target: 'NXDOMAIN' },
    fail: { source: 'RESPONSE_CODE', target: 'NOERROR' },
    failMessage: 'RESPONSE_CODE NOT_EQUALS "NOERROR" failed: got "NOERROR"',
  },
  HAS_KEY: {
    pass: { source: 'JSON_ANSWER', property: '$.Answer[0]', target: 'TTL' },
    fail: { source: 'JSON_ANSWER', property: '$.Answer[0]', target: 'priority' },
    failMessage:
      'JSON_ANSWER $.Answer[0] HAS_KEY "priority" failed: got "{\\"name\\":\\"www.example.test.\\",\\"type\\":1,\\"TTL\\":300,\\"data\\":\\"192.0.2.10\\"}"',
  },
  NOT_HAS_KEY: {
    pass: { source: 'JSON_ANSWER', property: '$.Answer[0]', target: 'priority' },
    fail: { source: 'JSON_ANSWER', property: '$.Answer[0]', target: 'data' },
    failMessage:
      'JSON_ANSWER $.Answer[0] NOT_HAS_KEY "data" failed: got "{\\"name\\":\\"www.example.test.\\",\\"type\\":1,\\"TTL\\":300,\\"data\\":\\"192.0.2.10\\"}"',
  },
  HAS_VALUE: {
    pass: { source: 'JSON_ANSWER', property: '$.Answer[1]', target: '192.0.2.11' },
    fail: { source: 'JSON_ANSWER', property: '$.Answer[1]', target: '192.0.2.10' },
    failMessage:
      'JSON_ANSWER $.Answer[1] HAS_VALUE "192.0.2.10" failed: got "{\\"name\\":\\"www.example.test.\\",\\"type\\":1,\\"TTL\\":60,\\"data\\":\\"192.0.2.11\\"}"',
  },
  NOT_HAS_VALUE: {
    pass: { source: 'JSON_ANSWER', property: '$.Answer[1]', target: '192.0.2.10' },
    fail: { source: 'JSON_ANSWER', property: '$.Answer[1]', target: '60' },
    failMessage:
      'JSON_ANSWER $.Answer[1] NOT_HAS_VALUE "60" failed: got "{\\"name\\":\\"www.example.test.\\",\\"type\\":1,\\"TTL\\":60,\\"data\\":\\"192.0.2.11\\"}"',
  },
  IS_EMPTY: {
    pass: { source: 'JSON_ANSWER', property: '$.Answer', target: '', query: 'empty.example.test' },
    fail: { source: 'JSON_ANSWER', property: '$.Answer', target: '' },
    failMessage:
      'JSON_ANSWER $.Answer IS_EMPTY failed: got "[{\\"name\\":\\"www.example.test.\\",\\"type\\":1,\\"TTL\\":300,\\"data\\":\\"192.0.2.10\\"},{\\"name\\":\\"www.example.test.\\",\\"type\\":1,\\"TTL\\":60,\\"data\\":\\"192.0.2.11\\"}]"',
  },
  NOT_EMPTY: {
    pass: { source: 'TEXT_ANSWER', target: '' },
    fail: { source: 'TEXT_ANSWER', target: '', query: 'empty.example.test' },
    failMessage: 'TEXT_ANSWER NOT_EMPTY failed: got ""',
  },
  GREATER_THAN: {
    pass: { source: 'JSON_ANSWER', property: '$.Answer[0].TTL', target: '299' },
    fail: { source: 'JSON_ANSWER', property: '$.Answer[0].TTL', target: '300' },
    failMessage: 'JSON_ANSWER $.Answer[0].TTL GREATER_THAN "300" failed: got 300',
  },
  LESS_THAN: {
    pass: { source: 'JSON_ANSWER', property: '$.Answer[1].TTL', target: '61' },
    fail: { source: 'JSON_ANSWER', property: '$.Answer[1].TTL', target: '60' },
    failMessage: 'JSON_ANSWER $.Answer[1].TTL LESS_THAN "60" failed: got 60',
  },
  CONTAINS: {
    pass: { source: 'TEXT_ANSWER', target: 'IN\tA\t192.0.2.11' },
    fail: { source: 'TEXT_ANSWER', target: '198.51.100.1' },
    failMessage:
      'TEXT_ANSWER CONTAINS "198.51.100.1" failed: got "www.example.test.\\t300\\tIN\\tA\\t192.0.2.10 | www.example.test.\\t60\\tIN\\tA\\t192.0.2.11"',
  },
  NOT_CONTAINS: {
    pass: { source: 'TEXT_ANSWER', target: '198.51.100.1' },
    fail: { source: 'TEXT_ANSWER', target: '192.0.2.10' },
    failMessage:
      'TEXT_ANSWER NOT_CONTAINS "192.0.2.10" failed: got "www.example.test.\\t300\\tIN\\tA\\t192.0.2.10 | www.example.test.\\t60\\tIN\\tA\\t192.0.2.11"',
  },
  IS_NULL: {
    pass: { source: 'JSON_ANSWER', property: '$.Answer[2]', target: '' },
    fail: { source: 'JSON_ANSWER', property: '$.Answer[1]', target: '' },
    failMessage: 'JSON_ANSWER $.Answer[1] IS_NULL failed: got "{\\"name\\":\\"www.example.test.\\",\\"type\\":1,\\"TTL\\":60,\\"data\\":\\"192.0.2.11\\"}"',
  },
  NOT_NULL: {
    pass: { source: 'JSON_ANSWER', property: '$.Answer[1].data', target: '' },
    fail: { source: 'JSON_ANSWER', property: '$.Answer[2].data', target: '' },
    failMessage: 'JSON_ANSWER $.Answer[2].data NOT_NULL failed: got nothing at $.Answer[2].data',
  },
}

function check(comparison: Comparison, c: Case) {
  return dnsCheckSchema.parse({
    name: `assert ${comparison}`,
    doubleCheck: false,
    request: {
      query: c.query ?? 'www.example.test',
      nameServer: server.address,
      port: server.port,
      assertions: [{ source: c.source, comparison, target: c.target, ...(c.property ? { property: c.property } : {}) }],
    },
  })
}

describe('every comparison of API.md, on real DNS answers', () => {
  it('covers the whole vocabulary', () => {
    expect(Object.keys(CASES).sort()).toEqual([...COMPARISONS].sort())
  })

  for (const comparison of COMPARISONS) {
    it(`${comparison}: passes when it holds, fails with a readable message when not`, async () => {
      const { pass, fail, failMessage } = CASES[comparison]
      const passed = await runCheck(check(comparison, pass))
      // RESPONSE_CODE NOT_EQUALS NXDOMAIN replaces the default NOERROR rule, so every pass case passes.
      expect(passed.assertions.map((a) => a.passed)).toEqual([true])
      expect(passed.status).toBe('PASSED')
      const failed = await runCheck(check(comparison, fail))
      expect(failed.assertions.map((a) => a.passed)).toEqual([false])
      expect(failed.status).toBe('FAILED')
      expect(failed.hasFailures).toBe(true)
      expect(failed.error).toBe(failMessage)
    })
  }
})

describe('comparison rules', () => {
  it('compares numbers as numbers and text as text', () => {
    expect(compare('EQUALS', 300, '300.0')).toBe(true)
    expect(compare('EQUALS', '10', '10')).toBe(true)
    expect(compare('GREATER_THAN', '9', '10')).toBe(false)
    expect(compare('LESS_THAN', 'abc', '10')).toBe(false)
    expect(compare('EQUALS', undefined, '')).toBe(false)
    expect(compare('NOT_EQUALS', undefined, 'x')).toBe(true)
  })

  it('treats missing values, empty text, arrays and objects as empty', () => {
    for (const v of [undefined, null, '', [], {}]) expect(compare('IS_EMPTY', v, '')).toBe(true)
    for (const v of [0, 'x', [1], { a: 1 }]) expect(compare('NOT_EMPTY', v, '')).toBe(true)
  })

  it('looks up keys and values of arrays and objects', () => {
    expect(compare('HAS_KEY', ['a', 'b'], '1')).toBe(true)
    expect(compare('HAS_KEY', ['a', 'b'], '2')).toBe(false)
    expect(compare('HAS_VALUE', ['a', 'b'], 'b')).toBe(true)
    expect(compare('CONTAINS', ['h2', 'h3'], 'h3')).toBe(true)
    expect(compare('HAS_KEY', 'text', 'length')).toBe(false)
  })

  it('reads JSON paths with dots, brackets, quotes and negative indexes', () => {
    const doc = { Answer: [{ data: 'a' }, { data: 'b' }], 'odd key': { x: 1 } }
    expect(readJsonPath(doc, '$.Answer[-1].data')).toEqual({ found: true, value: 'b' })
    expect(readJsonPath(doc, '$["odd key"].x')).toEqual({ found: true, value: 1 })
    expect(readJsonPath(doc, 'Answer.0.data')).toEqual({ found: true, value: 'a' })
    expect(readJsonPath(doc, '$.Answer[2].data')).toEqual({ found: false, value: undefined })
    expect(readJsonPath(doc, '$')).toEqual({ found: true, value: doc })
    expect(readJsonPath(doc, '$.Answer[')).toEqual({ found: false, value: undefined })
  })
})
