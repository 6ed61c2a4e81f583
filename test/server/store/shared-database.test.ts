/**
 * Two servers on one database file (issue 9: nothing may assume it is the only process
 * writing). What one writes, the other answers at once; uniqueness holds across both.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../../src/server/index.js'
import { KEY_A, caller, dnsBody, type Call } from '../helpers.js'

let dir: string
let one: LocalServer
let two: LocalServer
let a: Call
let b: Call

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-shared-'))
  const options = { dbPath: join(dir, 'shared.db'), apiKeys: [{ key: KEY_A, accountId: 'acc-a' }], rateLimit: { max: 1_000_000, timeWindowMs: 60_000 } }
  one = await startLocalServer(options)
  two = await startLocalServer(options)
  a = caller(one)
  b = caller(two)
})
afterAll(async () => {
  await one.close()
  await two.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('two servers, one database', () => {
  it("a list answered by one server shows the other server's writes at once", async () => {
    const list = async (call: Call) => (await call('GET', '/v1/checks?limit=100&tag=shared')).json.map((c: { name: string }) => c.name)
    expect(await list(a)).toEqual([])
    const first = (await b('POST', '/v1/checks/dns', dnsBody({ name: 'from two', tags: ['shared'] }))).json
    expect(await list(a)).toEqual(['from two'])
    expect(await list(a)).toEqual(['from two'])
    await b('PUT', `/v1/checks/dns/${first.id}`, dnsBody({ name: 'renamed by two', tags: ['shared'] }))
    expect(await list(a)).toEqual(['renamed by two'])
    await a('POST', '/v1/checks/dns', dnsBody({ name: 'from one', tags: ['shared'] }))
    expect(await list(b)).toEqual(['renamed by two', 'from one'])
    expect((await b('DELETE', `/v1/checks/${first.id}`)).status).toBe(204)
    expect(await list(a)).toEqual(['from one'])
    expect((await a('GET', `/v1/checks/${first.id}`)).status).toBe(404)
  })

  it('a variable key and a page url are taken once, whichever server is asked', async () => {
    const variables = await Promise.all([a, b, a, b].map((call) => call('POST', '/v1/variables', { key: 'ONCE', value: 'v' })))
    expect(variables.map((v) => v.status).sort()).toEqual([201, 409, 409, 409])
    const pages = await Promise.all([a, b].map((call) => call('POST', '/v1/status-pages', { name: 'p', url: 'once', cards: [] })))
    expect(pages.map((p) => p.status).sort()).toEqual([201, 409])
    expect((await a('GET', '/v1/status-pages')).json.entries).toHaveLength(1)
  })

  it('a page written with a service and a delete of that service at the same moment: never both', async () => {
    for (let round = 0; round < 15; round++) {
      const service = (await a('POST', '/v1/status-pages/services', { name: `race ${round}` })).json
      const [page, removed] = await Promise.all([
        b('POST', '/v1/status-pages', { name: 'race', url: `race-${round}`, cards: [{ name: 'c', services: [{ id: service.id }] }] }),
        a('DELETE', `/v1/status-pages/services/${service.id}`),
      ])
      // either the page won (the delete is refused) or the delete won (the page is refused)
      expect([page.status, removed.status].sort(), `round ${round}`).toSatisfy(
        (s: number[]) => (s[0] === 201 && s[1] === 409) || (s[0] === 204 && s[1] === 400),
      )
    }
  })

  it('a service in use cannot be deleted through the other server', async () => {
    const service = (await a('POST', '/v1/status-pages/services', { name: 's' })).json
    expect((await b('POST', '/v1/status-pages', { name: 'q', url: 'uses-s', cards: [{ name: 'c', services: [{ id: service.id }] }] })).status).toBe(201)
    expect((await a('DELETE', `/v1/status-pages/services/${service.id}`)).status).toBe(409)
  })
})
