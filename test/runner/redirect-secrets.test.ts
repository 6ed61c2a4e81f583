import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiCheckSchema } from '../../src/schema/api-check.js'
import { runCheck, type ApiDetails } from '../../src/runner/index.js'
import { startHttpServer, type HttpServerHandle } from '../helpers/http-server.js'

/*
 * Credentials of an API check go only to the origin they were written for: on a redirect to
 * another origin (here another port of 127.0.0.1), the headers and query parameters marked
 * secret, basic auth, Authorization and Cookie are dropped; on the same origin they stay.
 */

let origin: HttpServerHandle
let elsewhere: HttpServerHandle

beforeAll(async () => {
  origin = await startHttpServer()
  elsewhere = await startHttpServer()
  elsewhere.route('/landing', { body: 'landed' })
  origin.route('/landing', { body: 'landed here' })
})

afterAll(async () => {
  await origin.close()
  await elsewhere.close()
})

function check(url: string, basicAuth = true) {
  return {
    id: 'c1',
    ...apiCheckSchema.parse({
      name: 'redirects',
      doubleCheck: false,
      request: {
        method: 'GET',
        url,
        headers: [
          { key: 'X-Api-Key', value: 'header-secret-123', secret: true },
          { key: 'X-Trace', value: 'plain-value' },
        ],
        queryParameters: [
          { key: 'token', value: 'query-secret-456', secret: true },
          { key: 'page', value: '2' },
        ],
        ...(basicAuth ? { basicAuth: { username: 'monitor', password: 'basic-secret-789' } } : {}),
      },
    }),
  }
}

describe('API checks: secrets and redirects', () => {
  it('a redirect to another origin gets neither the secret header, the secret query parameter nor basic auth', async () => {
    // a redirect that carries the query string along, as many do
    origin.route('/away', { redirectTo: `${elsewhere.origin}/landing?token=query-secret-456&page=2` })
    const result = await runCheck(check(`${origin.origin}/away`), { retries: false })
    expect(result.status).toBe('PASSED')
    const sent = elsewhere.requests.at(-1)!
    expect(sent.path).toBe('/landing?page=2')
    expect(sent.headers['x-api-key']).toBeUndefined()
    expect(sent.headers.authorization).toBeUndefined()
    expect(sent.headers['x-trace']).toBe('plain-value')
    expect(JSON.stringify(sent)).not.toMatch(/header-secret-123|query-secret-456|basic-secret-789|bW9uaXRvcjpiYXNpYy1zZWNyZXQtNzg5/)
    // the first hop had them all
    const first = origin.requests.at(-1)!
    expect(first.path).toBe('/away?token=query-secret-456&page=2')
    expect(first.headers['x-api-key']).toBe('header-secret-123')
    expect(first.headers.authorization).toBe(`Basic ${Buffer.from('monitor:basic-secret-789').toString('base64')}`)
    // and nothing of them is in the result
    expect((result.details as ApiDetails).url).toBe(`${elsewhere.origin}/landing?page=2`)
    expect(JSON.stringify(result)).not.toMatch(/header-secret-123|query-secret-456|basic-secret-789/)
  })

  it('a redirect on the same origin keeps them', async () => {
    origin.route('/away', { redirectTo: `${origin.origin}/landing?token=query-secret-456&page=2` })
    const result = await runCheck(check(`${origin.origin}/away`), { retries: false })
    expect(result.status).toBe('PASSED')
    const sent = origin.requests.at(-1)!
    expect(sent.path).toBe('/landing?token=query-secret-456&page=2')
    expect(sent.headers['x-api-key']).toBe('header-secret-123')
    expect(sent.headers.authorization).toMatch(/^Basic /)
  })
})
