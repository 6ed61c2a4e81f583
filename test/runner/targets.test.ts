import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiCheckSchema, type ApiCheckInput } from '../../src/schema/api-check.js'
import { dnsCheckSchema, icmpCheckSchema } from '../../src/schema/check.js'
import { createRequire } from 'node:module'
import { nonPublicAddress, runCheck, type ApiDetails, type RunOptions } from '../../src/runner/index.js'
import { NET_GUARD_SOURCE, targetGuard } from '../../src/runner/script/net-guard.js'
import { startHttpServer, startTlsServer, type HttpServerHandle } from '../helpers/http-server.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'

/*
 * The private-target policy of the runner (docs/security.md). Everything here runs on
 * 127.0.0.1, so `deny` is asserted by refusals; `allow` (the default) by the same targets
 * answering, so that a refusal cannot come from anything but the policy.
 */

const SECRET_BODY = 'internal-service-secret-body'
let inner: HttpServerHandle
let other: HttpServerHandle
let dns: DnsServerHandle

beforeAll(async () => {
  inner = await startHttpServer()
  other = await startHttpServer()
  inner.route('/secret', { body: SECRET_BODY })
  other.route('/secret', { body: SECRET_BODY })
  inner.route('/to-other', { redirectTo: `${other.origin}/secret` })
  inner.route('/to-localhost', { redirectTo: `http://localhost:${other.port}/secret` })
  dns = await startDnsServer()
  dns.set('internal.test', 'A', { records: [{ type: 'A', data: '10.1.2.3' }] })
})

afterAll(async () => {
  await inner.close()
  await other.close()
  await dns.close()
})

const DENY: RunOptions = { privateTargets: 'deny', retries: false }

function api(url: string, request: Partial<ApiCheckInput['request']> = {}) {
  return { id: 'c1', ...apiCheckSchema.parse({ name: 'probe', doubleCheck: false, request: { method: 'GET', url, ...request } }) }
}

function expectRefused(result: Awaited<ReturnType<typeof runCheck>>, what: RegExp) {
  expect(result.status).toBe('FAILED')
  expect(result.hasErrors).toBe(true)
  expect(result.failureKind).toBe('RUNNER_ERROR')
  expect(result.error).toMatch(/private-target policy \(--private-targets deny\)/)
  expect(result.error).toMatch(what)
  expect(JSON.stringify(result)).not.toContain(SECRET_BODY)
}

describe('private targets: API checks', () => {
  it('allow (the default) reaches 127.0.0.1 and reads the answer', async () => {
    const result = await runCheck(api(`${inner.origin}/secret`), { retries: false })
    expect(result.status).toBe('PASSED')
    expect((result.details as ApiDetails).body).toBe(SECRET_BODY)
  })

  it.each([
    ['127.0.0.1', (port: number) => `http://127.0.0.1:${port}/secret`, /127\.0\.0\.1 is a loopback address/],
    ['a decimal address', (port: number) => `http://2130706433:${port}/secret`, /loopback address/],
    ['a hex address', (port: number) => `http://0x7f.1:${port}/secret`, /loopback address/],
    ['an octal address', (port: number) => `http://0177.0.0.1:${port}/secret`, /loopback address/],
    ['an IPv4-mapped IPv6 address', (port: number) => `http://[::ffff:127.0.0.1]:${port}/secret`, /loopback address \(127\.0\.0\.1\) inside an IPv6 address/],
    ['[::1]', (port: number) => `http://[::1]:${port}/secret`, /loopback/],
    ['a name that resolves to 127.0.0.1', (port: number) => `http://localhost:${port}/secret`, /localhost resolves to a loopback/],
  ])('deny refuses %s before any request is sent', async (_name, url, what) => {
    const before = inner.requests.length
    const result = await runCheck(api(url(inner.port)), DENY)
    expectRefused(result, what)
    const details = result.details as ApiDetails
    expect(details.statusCode).toBeNull()
    expect(details.body).toBe('')
    expect(inner.requests.length).toBe(before)
  })

  it('deny refuses https the same way (the TLS socket uses the same lookup)', async () => {
    const tls = await startTlsServer({ validDays: 5 })
    try {
      tls.route('/secret', { body: SECRET_BODY })
      for (const host of ['127.0.0.1', 'localhost']) {
        const check = api(`https://${host}:${tls.port}/secret`, { skipSSL: true })
        expectRefused(await runCheck(check, DENY), /loopback address/)
        expect(tls.requests).toHaveLength(0)
      }
      expect((await runCheck(api(`https://localhost:${tls.port}/secret`, { skipSSL: true }), { retries: false })).status).toBe('PASSED')
    } finally {
      await tls.close()
    }
  })

  it('deny checks every redirect hop: an allowed first hop may not redirect to a refused one', async () => {
    // the first hop is let through by an exception for its address and port only
    const options: RunOptions = { ...DENY, allowedTargets: [`127.0.0.1:${inner.port}`] }
    const before = other.requests.length
    const first = await runCheck(api(`${inner.origin}/to-other`, { followRedirects: true }), options)
    expectRefused(first, new RegExp(`redirect 1 to http://127\\.0\\.0\\.1:${other.port} not followed: 127\\.0\\.0\\.1 is a loopback address`))
    const byName = await runCheck(api(`${inner.origin}/to-localhost`, { followRedirects: true }), options)
    expectRefused(byName, /redirect 1 to http:\/\/localhost:\d+ not followed: localhost resolves to a loopback address/)
    expect(other.requests.length).toBe(before)
    // the exception itself works: the same redirect to an allowed hop is followed
    const both = await runCheck(api(`${inner.origin}/to-other`, { followRedirects: true }), {
      ...options,
      allowedTargets: [`127.0.0.1:${inner.port}`, `127.0.0.1:${other.port}`],
    })
    expect(both.status).toBe('PASSED')
    expect((both.details as ApiDetails).body).toBe(SECRET_BODY)
  })
})

describe('private targets: DNS and ICMP checks', () => {
  const dnsCheck = () => ({
    id: 'c2',
    ...dnsCheckSchema.parse({ name: 'dns', doubleCheck: false, request: { query: 'internal.test', nameServer: '127.0.0.1', port: dns.port } }),
  })

  it('allow queries a name server on 127.0.0.1; deny refuses it without a query', async () => {
    const allowed = await runCheck(dnsCheck(), { retries: false })
    expect(allowed.status).toBe('PASSED')
    const before = dns.queries.length
    const refused = await runCheck(dnsCheck(), DENY)
    expect(refused.status).toBe('FAILED')
    expect(refused.hasErrors).toBe(true)
    expect(refused.error).toMatch(/^request\.nameServer 127\.0\.0\.1 is a loopback address .*: refused by the private-target policy/)
    expect(JSON.stringify(refused)).not.toContain('10.1.2.3')
    expect(dns.queries.length).toBe(before)
  })

  it('deny refuses a name server given by a name that resolves to loopback', async () => {
    const check = {
      id: 'c3',
      ...dnsCheckSchema.parse({ name: 'dns', doubleCheck: false, request: { query: 'internal.test', nameServer: `localhost:${dns.port}` } }),
    }
    const before = dns.queries.length
    const refused = await runCheck(check, DENY)
    expect(refused.hasErrors).toBe(true)
    expect(refused.error).toMatch(/localhost resolves to a loopback address/)
    expect(dns.queries.length).toBe(before)
  })

  it('deny refuses an ICMP host before ping is spawned', async () => {
    for (const hostname of ['127.0.0.1', '2130706433', 'localhost', '169.254.169.254', '10.0.0.1']) {
      const check = { id: 'c4', ...icmpCheckSchema.parse({ name: 'ping', heartbeat: {}, script: '', doubleCheck: false, request: { hostname, pingCount: 1 } }) }
      // a ping that does not exist: spawning it would say so
      const result = await runCheck(check, { ...DENY, pingPath: '/nonexistent/ping' })
      expect(result.hasErrors).toBe(true)
      expect(result.error).toMatch(/^request\.hostname .*: refused by the private-target policy/)
      expect(result.error).not.toMatch(/not installed/)
    }
    // allow: the same check does spawn ping (here, the missing one)
    const check = {
      id: 'c5',
      ...icmpCheckSchema.parse({ name: 'ping', heartbeat: {}, script: '', doubleCheck: false, request: { hostname: '127.0.0.1', pingCount: 1 } }),
    }
    const allowed = await runCheck(check, { retries: false, pingPath: '/nonexistent/ping' })
    expect(allowed.error).toMatch(/not installed/)
  })
})

describe('private targets: which addresses are refused', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    'fd00::1',
    'fc12:3456::1',
    'fe80::1',
    'fe80::1%eth0',
    '64:ff9b::7f00:1',
    '64:ff9b::a00:1',
    '2002:7f00:1::1',
    '[::1]',
  ])('%s is not public', (address) => {
    expect(nonPublicAddress(address)).not.toBeNull()
  })

  it.each(['93.184.216.34', '1.1.1.1', '8.8.8.8', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:93.184.216.34', '64:ff9b::5db8:d822'])(
    '%s is public',
    (address) => {
      expect(nonPublicAddress(address)).toBeNull()
    },
  )

  it("the scripts' own guard reads every spelling as the probes do: it refuses exactly what nonPublicAddress refuses, for the same reason", () => {
    // the guard's reading of an address, taken out of its source (nothing of it is installed here)
    const refusalOf = new Function('require', `${NET_GUARD_SOURCE}\nreturn addressRefusal`)(createRequire(import.meta.url))(
      targetGuard({ privateTargets: 'deny' }),
    )
    const spellings = [
      '127.0.0.1',
      '::ffff:127.0.0.1',
      '::FFFF:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:7F00:0001',
      '0:0:0:0:0:ffff:7f00:1',
      '0:0:0:0:0:ffff:127.0.0.1',
      '0000:0000:0000:0000:0000:ffff:7f00:0001',
      '[::ffff:127.0.0.1]',
      '::ffff:a9fe:a9fe',
      '::ffff:169.254.169.254',
      '::ffff:10.0.0.1',
      '64:ff9b::7f00:1',
      '64:ff9b::127.0.0.1',
      '2002:7f00:1::1',
      '2002:a00:1::',
      '::127.0.0.1',
      '::7f00:1',
      '::1',
      '0:0:0:0:0:0:0:1',
      '::',
      'fe80::1%lo',
      'FD00::1',
      '93.184.216.34',
      '::ffff:93.184.216.34',
      '::ffff:5db8:d822',
      '64:ff9b::5db8:d822',
      '2606:4700:4700::1111',
      '2002:5db8:d822::1',
    ]
    for (const address of spellings) expect(refusalOf(address, 80), address).toBe(nonPublicAddress(address))
  })
})
