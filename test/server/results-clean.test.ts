/**
 * The cleaning of error messages before hashing: what varies from run to run becomes a
 * placeholder, so that one cause is one error group; what names the cause stays.
 */
import { describe, expect, it } from 'vitest'
import { cleanErrorMessage, errorHash } from '../../src/server/results/index.js'

const sameGroup = (a: string, b: string) => errorHash(cleanErrorMessage(a)) === errorHash(cleanErrorMessage(b))

describe('cleanErrorMessage', () => {
  it.each([
    ['no answer from 127.0.0.1 port 5301 over UDP within 1000 ms', 'no answer from 10.1.2.3 port 53 over UDP within 250 ms', 'no answer from <ip> port <number> over UDP within <number> ms'],
    ['no answer from ::1 port 53', 'no answer from 2001:db8::10 port 5353', 'no answer from <ip> port <number>'],
    ['connect [2001:db8:0:1::2]:53 refused', 'connect [fe80::1%eth0]:5353 refused', 'connect <ip> refused'],
    ['reply from ::ffff:192.0.2.1 lost', 'reply from ::ffff:10.0.0.7 lost', 'reply from <ip> lost'],
    ['run 3f2a9c1e-1234-4abc-9def-0123456789ab failed', 'run 00000000-0000-4000-8000-000000000000 failed', 'run <uuid> failed'],
    ['at 2026-11-22T17:30:01.123Z', 'at 2025-01-02 03:04:05+02:00', 'at <timestamp>'],
    ['digest deadbeef0123 and 0xFF', 'digest 0a1b2c3d4e5f6789 and 0x1f', 'digest <hex> and <hex>'],
    ['request req_01HXABCDEF123456 rejected', 'request req_01HXZZZZZZ999999 rejected', 'request <id> rejected'],
    ['LATENCY avg LESS_THAN "50" failed: got "51.3"', 'LATENCY avg LESS_THAN "20" failed: got "-4"', 'LATENCY avg LESS_THAN "<number>" failed: got "<number>"'],
  ])('%s ~ %s', (a, b, cleaned) => {
    expect(cleanErrorMessage(a)).toBe(cleaned)
    expect(cleanErrorMessage(b)).toBe(cleaned)
    expect(sameGroup(a, b)).toBe(true)
    expect(errorHash(cleaned)).toMatch(/^[0-9a-f]{64}$/)
  })

  it('keeps what names the cause: codes, words, IPv4/ICMP6 in names', () => {
    expect(cleanErrorMessage('response code SERVFAIL (expected NOERROR) over IPv4')).toBe('response code SERVFAIL (expected NOERROR) over IPv4')
    expect(sameGroup('response code SERVFAIL from 127.0.0.1', 'response code REFUSED from 127.0.0.1')).toBe(false)
    expect(cleanErrorMessage('  two\n  lines  ')).toBe('two lines')
  })
})
