/**
 * `sslCheckDomain` in the runner: each run reads the certificate the domain serves (here
 * `localhost`, on the port of a TLS server the test starts with a certificate it makes, through
 * the `tlsPort` option), its days become the run's `sslDaysRemaining`, and whatever goes wrong
 * with it is the run's certificate error, never a failure of the check's own run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type AddressInfo } from 'node:net'
import { tcpCheckSchema, type TcpCheckInput } from '../../src/schema/tcp-check.js'
import { urlCheckSchema } from '../../src/schema/url-check.js'
import { runCheck, type RunOptions, type UrlDetails } from '../../src/runner/index.js'
import { startTlsServer, type TlsServerHandle } from '../helpers/http-server.js'

let fiveDays: TlsServerHandle
let otherName: TlsServerHandle
let ninetyDays: TlsServerHandle

beforeAll(async () => {
  fiveDays = await startTlsServer({ validDays: 5, extraHours: 3 })
  otherName = await startTlsServer({ validDays: 40, extraHours: 3, names: ['other.example.test'] })
  ninetyDays = await startTlsServer({ validDays: 90, extraHours: 3 })
  ninetyDays.route('/', { status: 200, body: 'ok' })
})
afterAll(async () => {
  for (const s of [fiveDays, otherName, ninetyDays]) await s?.close()
})

/** A TCP check that connects to the TLS server's port itself (its own run passes), naming `localhost`. */
async function tcpRun(tlsPort: number, rest: Partial<TcpCheckInput> = {}, options: RunOptions = {}) {
  const check = {
    id: 'check-tcp',
    ...tcpCheckSchema.parse({ name: 'tcp', doubleCheck: false, sslCheckDomain: 'localhost', request: { hostname: '127.0.0.1', port: fiveDays.port }, ...rest }),
  }
  return runCheck(check, { tlsPort, ...options })
}

describe('sslCheckDomain in the runner', () => {
  it("the domain's certificate gives the run's sslDaysRemaining; an untrusted one still gives its days, the reason shown", async () => {
    const result = await tcpRun(fiveDays.port)
    expect(result.status).toBe('PASSED')
    expect(result.sslDaysRemaining).toBe(5)
    expect(result.sslCheck).toMatchObject({ domain: 'localhost', daysRemaining: 5 })
    // the test's certificate is self-signed: read anyway, the reason is the certificate error
    expect(result.sslCheck?.error).toMatch(/^the certificate of localhost is not trusted: self[- ]signed certificate/)
  })

  it('a certificate for another name: its days, and the name in the certificate error; the run passes', async () => {
    const result = await tcpRun(otherName.port)
    expect(result.status).toBe('PASSED')
    expect(result.sslDaysRemaining).toBe(40)
    expect(result.sslCheck?.error).toMatch(/localhost.*is not in the cert's altnames: DNS:other\.example\.test/)
  })

  it('an unreachable domain: no days, the reason as the certificate error; the run passes', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((r) => closed.close(r))
    const result = await tcpRun(port)
    expect(result.status).toBe('PASSED')
    expect(result.error).toBeNull()
    expect(result.sslDaysRemaining).toBeNull()
    expect(result.sslCheck).toEqual({ domain: 'localhost', daysRemaining: null, error: `localhost:${port} refused the connection` })
  })

  it('under the deny policy, a domain resolving to a private address is refused (the check itself allowed by an exception)', async () => {
    const result = await tcpRun(fiveDays.port, {}, { privateTargets: 'deny', allowedTargets: [`127.0.0.1:${fiveDays.port}`] })
    // the TCP check's own target is an exception, so its run passes; the domain is not
    expect(result.status).toBe('PASSED')
    const refused = await tcpRun(ninetyDays.port, {}, { privateTargets: 'deny', allowedTargets: [`127.0.0.1:${fiveDays.port}`] })
    expect(refused.status).toBe('PASSED')
    expect(refused.sslDaysRemaining).toBeNull()
    expect(refused.sslCheck?.error).toMatch(/^localhost resolves to a loopback address .*: refused by the private-target policy/)
  })

  it("an https URL check: the named domain's certificate wins over the URL's own", async () => {
    const check = {
      id: 'check-url',
      ...urlCheckSchema.parse({ name: 'url', doubleCheck: false, sslCheckDomain: 'localhost', request: { url: `${ninetyDays.origin}/`, skipSSL: true } }),
    }
    const result = await runCheck(check, { tlsPort: fiveDays.port })
    expect(result.status).toBe('PASSED')
    expect((result.details as UrlDetails).sslDaysRemaining).toBe(90)
    expect(result.sslDaysRemaining).toBe(5)
  })

  it('without sslCheckDomain, nothing is read and the result has no such fields', async () => {
    const check = { id: 'check-tcp', ...tcpCheckSchema.parse({ name: 'tcp', doubleCheck: false, request: { hostname: '127.0.0.1', port: fiveDays.port } }) }
    const result = await runCheck(check, { tlsPort: fiveDays.port })
    expect(result.status).toBe('PASSED')
    expect('sslDaysRemaining' in result).toBe(false)
    expect('sslCheck' in result).toBe(false)
  })
})
