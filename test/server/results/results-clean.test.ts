/**
 * The cleaning of error messages before hashing: what varies from run to run becomes a
 * placeholder, so that one cause is one error group; what names the cause stays.
 */
import { describe, expect, it } from 'vitest'
import { cleanErrorMessage, errorHash } from '../../../src/server/results/index.js'

const sameGroup = (a: string, b: string) => errorHash(cleanErrorMessage(a)) === errorHash(cleanErrorMessage(b))

describe('cleanErrorMessage', () => {
  it.each([
    [
      'no answer from 127.0.0.1 port 5301 over UDP within 1000 ms',
      'no answer from 10.1.2.3 port 53 over UDP within 250 ms',
      'no answer from <ip> port <number> over UDP within <number> ms',
    ],
    ['no answer from ::1 port 53', 'no answer from 2001:db8::10 port 5353', 'no answer from <ip> port <number>'],
    ['connect [2001:db8:0:1::2]:53 refused', 'connect [fe80::1%eth0]:5353 refused', 'connect <ip> refused'],
    ['reply from ::ffff:192.0.2.1 lost', 'reply from ::ffff:10.0.0.7 lost', 'reply from <ip> lost'],
    ['run 3f2a9c1e-1234-4abc-9def-0123456789ab failed', 'run 00000000-0000-4000-8000-000000000000 failed', 'run <uuid> failed'],
    ['at 2026-11-22T17:30:01.123Z', 'at 2025-01-02 03:04:05+02:00', 'at <timestamp>'],
    ['digest deadbeef0123 and 0xFF', 'digest 0a1b2c3d4e5f6789 and 0x1f', 'digest <hex> and <hex>'],
    ['request req_01HXABCDEF123456 rejected', 'request req_01HXZZZZZZ999999 rejected', 'request <id> rejected'],
    ['LATENCY avg LESS_THAN "50" failed: got "51.3"', 'LATENCY avg LESS_THAN "50" failed: got "-4"', 'LATENCY avg LESS_THAN "50" failed: got "<number>"'],
    ['STATUS_CODE EQUALS "200" failed: got 500', 'STATUS_CODE EQUALS "200" failed: got 503', 'STATUS_CODE EQUALS "200" failed: got <number>'],
    [
      'RESPONSE_TIME LESS_THAN "500" ms failed: got 1234.5 ms',
      'RESPONSE_TIME LESS_THAN "500" ms failed: got 731 ms',
      'RESPONSE_TIME LESS_THAN "500" ms failed: got <number> ms',
    ],
    [
      'JSON_BODY $.items[0].count GREATER_THAN "10" failed: got 3',
      'JSON_BODY $.items[0].count GREATER_THAN "10" failed: got 7',
      'JSON_BODY $.items[0].count GREATER_THAN "10" failed: got <number>',
    ],
    [
      'TEXT_BODY CONTAINS "order 42 of 2026-01-02" failed: got "id 9f8e7d6c5b4a"',
      'TEXT_BODY CONTAINS "order 42 of 2026-01-02" failed: got "id 0a1b2c3d4e5f"',
      'TEXT_BODY CONTAINS "order 42 of 2026-01-02" failed: got "id <hex>"',
    ],
    [
      'no answer from 10.0.0.1 within 250 ms; STATUS_CODE EQUALS "200" failed: got 500; JSON_BODY $.n IS_NULL failed: got "17"',
      'no answer from 10.0.0.2 within 900 ms; STATUS_CODE EQUALS "200" failed: got 502; JSON_BODY $.n IS_NULL failed: got "4"',
      'no answer from <ip> within <number> ms; STATUS_CODE EQUALS "200" failed: got <number>; JSON_BODY $.n IS_NULL failed: got "<number>"',
    ],
  ])('%s ~ %s', (a, b, cleaned) => {
    expect(cleanErrorMessage(a)).toBe(cleaned)
    expect(cleanErrorMessage(b)).toBe(cleaned)
    expect(sameGroup(a, b)).toBe(true)
    expect(errorHash(cleaned)).toMatch(/^[0-9a-f]{64}$/)
  })

  it("an assertion's expectation is its identity: another status code, target or property is another group", () => {
    expect(sameGroup('STATUS_CODE EQUALS "200" failed: got 500', 'STATUS_CODE EQUALS "201" failed: got 500')).toBe(false)
    expect(sameGroup('STATUS_CODE NOT_EQUALS "404" failed: got 404', 'STATUS_CODE NOT_EQUALS "500" failed: got 500')).toBe(false)
    expect(sameGroup('RESPONSE_TIME LESS_THAN "500" ms failed: got 900 ms', 'RESPONSE_TIME LESS_THAN "800" ms failed: got 900 ms')).toBe(false)
    expect(sameGroup('JSON_BODY $.items[0].id EQUALS "1" failed: got 2', 'JSON_BODY $.items[1].id EQUALS "1" failed: got 2')).toBe(false)
    expect(sameGroup('STATUS_CODE EQUALS "200" failed: got 500; STATUS_CODE LESS_THAN "300" failed: got 500', 'STATUS_CODE EQUALS "200" failed: got 500')).toBe(
      false,
    )
    // the same words outside an assertion's message are cleaned as before
    expect(cleanErrorMessage('HTTP 503 EQUALS "200" upstream')).toBe('HTTP <number> EQUALS "<number>" upstream')
    expect(cleanErrorMessage('STATUS_CODE EQUALS "200" passed')).toBe('STATUS_CODE EQUALS "<number>" passed')
  })

  it('keeps what names the cause: codes, words, IPv4/ICMP6 in names', () => {
    expect(cleanErrorMessage('response code SERVFAIL (expected NOERROR) over IPv4')).toBe('response code SERVFAIL (expected NOERROR) over IPv4')
    expect(sameGroup('response code SERVFAIL from 127.0.0.1', 'response code REFUSED from 127.0.0.1')).toBe(false)
    expect(cleanErrorMessage('  two\n  lines  ')).toBe('two lines')
  })
})
