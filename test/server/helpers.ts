import { startLocalServer, type LocalServer, type LocalServerOptions } from '../../src/server/index.js'
import { ApiClient, type Query } from '../../src/api/index.js'

export const KEY_A = 'key-a-0123456789abcdef0123456789abcdef'
export const KEY_B = 'key-b-0123456789abcdef0123456789abcdef'

/** The real server on 127.0.0.1:0, two accounts, a limit high enough not to get in the way. */
export function startTestServer(options: LocalServerOptions = {}): Promise<LocalServer> {
  return startLocalServer({
    host: '127.0.0.1',
    port: 0,
    dbPath: ':memory:',
    apiKeys: [
      { key: KEY_A, accountId: 'acc-a' },
      { key: KEY_B, accountId: 'acc-b' },
    ],
    rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
    ...options,
  })
}

export interface Answer {
  status: number
  headers: Headers
  text: string
  json: any
}

export type Call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Answer>

/**
 * A caller with a bearer key (null: no Authorization header). A string body is sent as it is (to test malformed input);
 * anything else is sent as JSON.
 */
export function caller(server: { url: string }, key: string | null = KEY_A): Call {
  return async (method, path, body, headers = {}) => {
    const sendsBody = body !== undefined
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        ...(key !== null ? { authorization: `Bearer ${key}` } : {}),
        ...(sendsBody ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: sendsBody ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
    })
    const text = await response.text()
    let json: unknown
    try {
      json = text ? JSON.parse(text) : undefined
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json }
  }
}

export const dnsBody = (extra: Record<string, unknown> = {}) => ({
  name: 'dns example',
  request: { query: 'example.com' },
  ...extra,
})

export const icmpBody = (extra: Record<string, unknown> = {}) => ({
  name: 'ping example',
  request: { hostname: 'example.com' },
  heartbeat: {},
  script: '',
  ...extra,
})

/** Asserts the 400 body of API.md and returns its keys. */
export function expect400(answer: Answer, source: 'payload' | 'query' | 'params'): string[] {
  if (answer.status !== 400) throw new Error(`expected 400, got ${answer.status}: ${answer.text}`)
  const body = answer.json
  if (body.statusCode !== 400 || body.error !== 'Bad Request' || typeof body.message !== 'string') throw new Error(`bad 400 body: ${answer.text}`)
  if (body.attributes.source !== source) throw new Error(`expected source ${source}: ${answer.text}`)
  return body.attributes.keys
}

/** The engine's API client for `key`, with the query of every GET it sends recorded in `queries`. */
export function countingClient(server: LocalServer, key: string): { client: ApiClient; queries: Query[] } {
  const client = new ApiClient({ baseUrl: server.url, apiKey: key })
  const queries: Query[] = []
  const get = client.get.bind(client)
  client.get = ((path: string, query?: Query) => {
    queries.push({ ...query })
    return get(path, query)
  }) as typeof client.get
  return { client, queries }
}
