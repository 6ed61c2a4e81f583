/**
 * Failed authentication is throttled per client address (docs/security.md): after 10 unknown
 * keys in a minute, every /v1 request and every dashboard log-in from that address answers 429
 * with API.md's body and Retry-After, whatever key it carries, so keys cannot be guessed. With
 * --trust-proxy naming the balancer, the address is the client's behind it (X-Forwarded-For),
 * so one client's failures lock out nobody else; without it, X-Forwarded-For is ignored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { databaseFor, onPostgres } from '../../helpers/postgres-databases.js'
import { KEY_A, caller, startTestServer } from '../helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const open: LocalServer[] = []
async function start(options: Parameters<typeof startTestServer>[0] = {}): Promise<LocalServer> {
  const server = await startTestServer(options)
  open.push(server)
  return server
}
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()))
})

const guess = (server: LocalServer, i: number, headers: Record<string, string> = {}) =>
  caller(server, `guess-${i}-0123456789abcdef`)('GET', '/v1/checks', undefined, headers)

const logIn = (server: LocalServer, apiKey: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ apiKey }).toString(),
  })

/** Unknown keys until the first 429; answers the 429 and how many were refused with 401 before it. */
async function guessUntilRefused(server: LocalServer, headers: Record<string, string> = {}) {
  for (let i = 0; i < 100; i++) {
    const answer = await guess(server, i, headers)
    if (answer.status === 429) return { unauthorized: i, answer }
    expect(answer.status).toBe(401)
  }
  throw new Error('100 unknown keys and no 429')
}

describe('failed authentication, per client address', () => {
  let direct: LocalServer
  beforeAll(async () => {
    direct = await start()
  })

  it("answers 429 with API.md's body and Retry-After after 10 unknown keys, then refuses even a good key and ignores X-Forwarded-For", async () => {
    const { unauthorized, answer } = await guessUntilRefused(direct)
    expect(unauthorized).toBe(10)
    expect(answer.json).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: expect.stringMatching(/^Rate limit exceeded, retry in \d+ seconds?$/),
      attributes: { limit: 10, remaining: 0, reset: expect.any(Number) },
    })
    const retryAfter = Number(answer.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(60)
    // whatever it sends now: a good key, no key, another claimed address (not trusted here)
    expect((await caller(direct, KEY_A)('GET', '/v1/checks')).status).toBe(429)
    expect((await caller(direct, null)('GET', '/v1/checks')).status).toBe(429)
    expect((await caller(direct, KEY_A)('GET', '/v1/checks', undefined, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(429)
    // the dashboard's log-in counts the same failures
    const login = await logIn(direct, KEY_A)
    expect(login.status).toBe(429)
    expect(Number(login.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await login.text()).toMatch(/Too many failed log-ins from this address: try again in \d+ s\./)
  })

  it('lets the address in again once the window has passed', async () => {
    const server = await start({ authFailureLimit: { max: 3, timeWindowMs: 1_500 } })
    const { unauthorized } = await guessUntilRefused(server)
    expect(unauthorized).toBe(3)
    let status = 0
    await waitFor(async () => (status = (await caller(server, KEY_A)('GET', '/v1/checks')).status) !== 429, {
      timeoutMs: 20_000,
      intervalMs: 200,
      what: 'the window to pass',
    })
    expect(status).toBe(200)
  })

  it('does not count a request without a key, a good key, or a refused account as a failure', async () => {
    const server = await start({ authFailureLimit: { max: 2, timeWindowMs: 60_000 } })
    for (let i = 0; i < 5; i++) {
      expect((await caller(server, null)('GET', '/v1/checks')).status).toBe(401)
      expect((await caller(server, KEY_A)('GET', '/v1/checks', undefined, { 'x-service-account': 'someone-else' })).status).toBe(403)
      expect((await caller(server, KEY_A)('POST', '/v1/nowhere')).status).toBe(404)
    }
    expect((await guess(server, 1)).status).toBe(401)
  })
})

describe('behind the balancer (--trust-proxy)', () => {
  it("counts each client behind it on its own, for the API and for the dashboard's log-in", async () => {
    const server = await start({ trustProxy: '127.0.0.1' })
    const mallory = { 'x-forwarded-for': '203.0.113.66' }
    const alice = { 'x-forwarded-for': '198.51.100.7' }
    expect((await guessUntilRefused(server, mallory)).unauthorized).toBe(10)
    expect((await caller(server, KEY_A)('GET', '/v1/checks', undefined, mallory)).status).toBe(429)
    expect((await caller(server, KEY_A)('GET', '/v1/checks', undefined, alice)).status).toBe(200)
    expect((await guess(server, 1, alice)).status).toBe(401)

    // 10 wrong log-ins from one client lock out that client, not everyone behind the balancer
    for (let i = 0; i < 10; i++) expect((await logIn(server, `wrong-${i}`, { 'x-forwarded-for': '192.0.2.10' })).status).toBe(401)
    expect((await logIn(server, KEY_A, { 'x-forwarded-for': '192.0.2.10' })).status).toBe(429)
    expect((await logIn(server, KEY_A, { 'x-forwarded-for': '192.0.2.11' })).status).toBe(303)
  })

  it('refuses a trusted-proxy setting that is not an address, a subnet or a count', async () => {
    await expect(startTestServer({ trustProxy: 'balancer.internal' })).rejects.toMatchObject({
      userError: true,
      message: expect.stringMatching(/"balancer\.internal" is not an address, a subnet or one of loopback/),
    })
    await expect(startTestServer({ trustProxy: 0 })).rejects.toMatchObject({ userError: true, message: expect.stringMatching(/whole number from 1/) })
  })
})

describe.skipIf(!onPostgres)('several servers on one PostgreSQL database', () => {
  it('count the failures of an address once for all of them', async () => {
    const { url } = await databaseFor(undefined)
    const servers = [await start({ dbPath: url }), await start({ dbPath: url })]
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) statuses.push((await guess(servers[i % 2], i)).status)
    expect(statuses).toEqual([...Array(10).fill(401), 429, 429])
    for (const server of servers) expect((await caller(server, KEY_A)('GET', '/v1/checks')).status).toBe(429)
  })
})
