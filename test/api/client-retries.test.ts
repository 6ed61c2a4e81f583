/** The client against the real local server with injected faults: retries, lost answers, timeouts, redirects, plain http. */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { ApiClient, isOutcomeUnknown, isLoopbackHost } from '../../src/api/client.js'
import { NetworkError } from '../../src/api/errors.js'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'

const KEY = 'client-retry-key-0123456789'
const fast = { retries: 6, baseMs: 5, maxMs: 40 }
const servers: LocalServer[] = []
async function serve(faults?: string, seed = 3): Promise<LocalServer> {
  const server = await startLocalServer({ apiKeys: [{ key: KEY, accountId: 'retry' }], faults, seed, rateLimit: { max: 100_000, timeWindowMs: 60_000 } })
  servers.push(server)
  return server
}
const clientOf = (server: LocalServer, extra: Partial<ConstructorParameters<typeof ApiClient>[0]> = {}) =>
  new ApiClient({ baseUrl: server.url, apiKey: KEY, accountId: 'retry', retry: fast, ...extra })
afterAll(async () => {
  for (const server of servers) await server.close()
})

describe('retries of GET, PUT and DELETE', () => {
  it('rides out 500s and lost connections on reads and updates, a bounded number of times', async () => {
    const server = await serve('500:0.25,reset:0.15', 11)
    const client = clientOf(server)
    const ids: string[] = []
    for (let i = 0; i < 4; i++) {
      // a create is not retried blindly: on an unknown outcome, look before sending again
      for (;;) {
        try {
          ids.push((await client.post<{ id: string }>('/v1/checks/dns', { name: `c${i}`, request: { query: `c${i}.example.com` } })).body.id)
          break
        } catch (error) {
          expect(isOutcomeUnknown(error)).toBe(true)
          const list = await client.get<Array<{ id: string; name: string }>>('/v1/checks', { limit: 100 })
          const made = list.body.find((c) => c.name === `c${i}` && !ids.includes(c.id))
          if (made) {
            ids.push(made.id)
            break
          }
        }
      }
    }
    for (const id of ids) {
      const read = await client.get<{ name: string }>(`/v1/checks/${id}`)
      expect(read.status).toBe(200)
      const updated = await client.put<{ frequency: number }>(`/v1/checks/dns/${id}`, {
        name: read.body.name,
        frequency: 15,
        request: { query: 'u.example.com' },
      })
      expect(updated.body.frequency).toBe(15)
    }
    const list = await client.get<unknown[]>('/v1/checks', { limit: 100 })
    expect(list.body).toHaveLength(4)
    expect(client.stats().retries).toBeGreaterThan(0)
    const faults = server.faultCounts()!
    expect(faults['500'] + faults.reset).toBeGreaterThan(0)
    await client.close()
  })

  it('counts a DELETE answered 404 after a lost answer as done', async () => {
    const server = await serve('reset:0.5', 5)
    const client = clientOf(server)
    // variables: POST answers 409 when a lost create did make it, so setup is exact
    const keys = Array.from({ length: 12 }, (_, i) => `DEL_${i}`)
    for (const key of keys) {
      await client.post('/v1/variables', { key, value: 'v' }).catch((error) => {
        if (!isOutcomeUnknown(error)) throw error
      })
    }
    let gone = 0
    for (const key of keys) {
      const answer = await client.delete(`/v1/variables/${key}`).catch(async (error) => {
        // the create itself was lost and never happened: then there is nothing to delete
        if ((error as { status?: number }).status === 404) return { gone: true, status: 404 }
        throw error
      })
      if (answer.gone) gone++
      else expect(answer.status).toBe(204)
    }
    expect(gone).toBeGreaterThan(0)
    const left = await client.get<unknown[]>('/v1/variables', { limit: 100 })
    expect(left.body).toEqual([])
    await client.close()
  })

  it('gives up after the retries with one clear line naming the attempts', async () => {
    const server = await serve('500:1')
    const client = clientOf(server, { retry: { retries: 2, baseMs: 1, maxMs: 5 } })
    await expect(client.get('/v1/checks')).rejects.toThrow(
      /^GET \/v1\/checks failed on the server \(500 An internal server error occurred\) \(gave up after 3 attempts\)$/,
    )
    expect(client.requestCount()).toBe(3)
    await client.close()
  })
})

describe('a POST whose answer is lost', () => {
  it('is never sent again blindly: the error says the outcome is unknown, and the server made it once', async () => {
    const server = await serve('reset:1')
    const client = clientOf(server)
    const error = await client.post('/v1/checks/dns', { name: 'made once', request: { query: 'once.example.com' } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NetworkError)
    expect(isOutcomeUnknown(error)).toBe(true)
    expect(client.requestCount()).toBe(1)
    await client.close()
  })

  it('a POST that never left (connection refused) is retried, then fails with one line', async () => {
    const server = await serve()
    const url = server.url
    await server.close()
    const client = new ApiClient({ baseUrl: url, apiKey: KEY, retry: { retries: 2, baseMs: 1, maxMs: 5 } })
    const error = (await client.post('/v1/checks/dns', {}).catch((e: unknown) => e)) as Error
    expect(error.message).toMatch(/^Cannot reach http:\/\/127\.0\.0\.1:\d+: connection refused \(POST \/v1\/checks\/dns\)\. \(gave up after 3 attempts\)$/)
    expect(isOutcomeUnknown(error)).toBe(false)
    expect(client.requestCount()).toBe(3)
    await client.close()
  })
})

describe('timeouts', () => {
  it('a server that never answers fails the request within the timeout and retries, not for ever', async () => {
    const server = await serve('hang:1')
    const client = clientOf(server, { timeoutMs: 200, retry: { retries: 1, baseMs: 1, maxMs: 5 } })
    const started = Date.now()
    await expect(client.get('/v1/checks')).rejects.toThrow(
      /^GET \/v1\/checks timed out after 0\.2 s \(http:\/\/127\.0\.0\.1:\d+\); raise --timeout to wait longer\. \(gave up after 2 attempts\)$/,
    )
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(380)
    expect(elapsed).toBeLessThan(3000)
    await client.close()
  })
})

describe('the connection under the client', () => {
  /** A plain HTTP server answering with `handler`, on 127.0.0.1; closed after the tests. */
  async function raw(handler: Parameters<typeof createServer>[1], keepAliveTimeout?: number): Promise<{ url: string; server: Server }> {
    const server = createServer(handler)
    if (keepAliveTimeout !== undefined) server.keepAliveTimeout = keepAliveTimeout
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
    rawServers.push(server)
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
  }

  it('an answer that stalls half-way times out, and a read is tried again', async () => {
    let calls = 0
    const { url } = await raw((_req, res) => {
      calls++
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('[{"id":')
      // the rest never comes
    })
    const client = new ApiClient({ baseUrl: url, apiKey: KEY, timeoutMs: 200, retry: { retries: 1, baseMs: 1, maxMs: 5 } })
    await expect(client.get('/v1/checks')).rejects.toThrow(
      /^GET \/v1\/checks timed out after 0\.2 s \(http:\/\/127\.0\.0\.1:\d+\); raise --timeout to wait longer\. \(gave up after 2 attempts\)$/,
    )
    expect(calls).toBe(2)
    await client.close()
  })

  it('an answer cut short by a closed connection is a lost answer, not a short body', async () => {
    let calls = 0
    const { url } = await raw((_req, res) => {
      calls++
      if (calls === 1) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
        res.write('[{"id":"1"')
        setTimeout(() => res.socket?.destroy(), 20)
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('[{"id":"1"}]')
    })
    const client = new ApiClient({ baseUrl: url, apiKey: KEY, retry: fast })
    const response = await client.get('/v1/checks')
    expect(response.body).toEqual([{ id: '1' }])
    expect(calls).toBe(2)
    expect(client.stats().retries).toBe(1)
    await client.close()
  })

  it('a connection the server closed while idle is not used again: a POST after the pause is sent once, without error', async () => {
    let posts = 0
    const { url } = await raw((req, res) => {
      if (req.method === 'POST') posts++
      req.resume()
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json' })
        res.end('{"id":"1"}')
      })
    }, 150)
    const client = new ApiClient({ baseUrl: url, apiKey: KEY, retry: fast })
    await client.get('/v1/checks')
    await new Promise((done) => setTimeout(done, 400))
    const created = await client.post('/v1/checks/dns', { name: 'x' })
    expect(created.status).toBe(201)
    expect(posts).toBe(1)
    await client.close()
  })

  it('close waits for the requests in flight', async () => {
    let arrived!: () => void
    const reached = new Promise<void>((done) => (arrived = done))
    const { url } = await raw((_req, res) => {
      arrived()
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end('{"ok":true}')
      }, 100)
    })
    const client = new ApiClient({ baseUrl: url, apiKey: KEY, retry: fast })
    const pending = client.get('/v1/slow')
    await reached
    await client.close()
    await expect(pending).resolves.toMatchObject({ status: 200, body: { ok: true } })
  })
})

const rawServers: Server[] = []
afterAll(async () => {
  for (const server of rawServers) {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
})

describe('the key stays with its origin', () => {
  it('a redirect to another origin is not followed: the other origin never sees the key', async () => {
    const seen: Array<string | undefined> = []
    const other = await listen((req, res) => {
      seen.push(req.headers.authorization)
      res.end('[]')
    })
    const redirecting = await listen((_req, res) => {
      res.writeHead(307, { location: `${origin(other)}/v1/checks` })
      res.end()
    })
    const client = new ApiClient({ baseUrl: origin(redirecting), apiKey: KEY })
    const error = (await client.get('/v1/checks').catch((e: unknown) => e)) as Error
    expect(error.message).toBe(`GET /v1/checks answered with a redirect (307 to ${origin(other)}/v1/checks); redirects are not followed: check the API URL.`)
    expect(error.message).not.toContain(KEY)
    expect(seen).toEqual([])
    await client.close()
    redirecting.close()
    other.close()
  })

  it('refuses plain http to a host that is not this machine, unless allowed', () => {
    expect(() => new ApiClient({ baseUrl: 'http://api.example.com', apiKey: KEY })).toThrow(
      'Refusing to send the API key in clear text to http://api.example.com: use an https:// URL, or pass --insecure-http if this network is trusted.',
    )
    expect(() => new ApiClient({ baseUrl: 'http://api.example.com', apiKey: KEY, insecureHttp: true })).not.toThrow()
    expect(() => new ApiClient({ baseUrl: 'https://api.example.com', apiKey: KEY })).not.toThrow()
    for (const host of ['127.0.0.1', '127.9.8.7', 'localhost', '[::1]'])
      expect(() => new ApiClient({ baseUrl: `http://${host}:4010`, apiKey: KEY })).not.toThrow()
    expect(isLoopbackHost('128.0.0.1')).toBe(false)
    expect(isLoopbackHost('10.0.0.1')).toBe(false)
    expect(isLoopbackHost('localhost.example.com')).toBe(false)
  })

  it('refuses a URL carrying credentials, and never repeats them', () => {
    let message = ''
    try {
      new ApiClient({ baseUrl: `https://user:${KEY}@api.example.com`, apiKey: KEY })
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toBe('The API URL "https://***@api.example.com" carries credentials; give the key with MONITORING_API_KEY or --api-key instead.')
  })
})

function listen(handler: Parameters<typeof createServer>[1]): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer(handler!)
    server.listen(0, '127.0.0.1', () => resolve(server))
  })
}
const origin = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`
