/**
 * Reading the remote state from the real local server: every page, the three paging styles,
 * one list request per 100 records, never one GET per resource.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { fetchRemoteState } from '../../src/api/resources.js'
import { listAllByPage } from '../../src/api/paging.js'

let server: LocalServer
let client: ApiClient
const lines: string[] = []

beforeAll(async () => {
  server = await startLocalServer({
    apiKeys: [{ key: 'remote-key', accountId: 'remote' }],
    rateLimit: { max: 100_000, timeWindowMs: 60_000 },
    // more status pages than one page of the list (and than an account may have by default)
    limits: { statusPagesPerAccount: 200 },
    log: (line) => lines.push(line),
  })
  client = new ApiClient({ baseUrl: server.url, apiKey: 'remote-key', accountId: 'remote' })
  const creates: Promise<unknown>[] = []
  for (let i = 0; i < 250; i++) creates.push(client.post('/v1/checks/dns', { name: `c${i}`, request: { query: `c${i}.example.com` } }))
  for (let i = 0; i < 130; i++) creates.push(client.post('/v1/status-pages/services', { name: `s${i}` }))
  for (let i = 0; i < 3; i++) creates.push(client.post('/v1/variables', { key: `V${i}`, value: `${i}` }))
  for (let i = 0; i < 120; i++) {
    creates.push(client.post('/v1/status-pages', { name: `p${i}`, url: `remote-page-${i}`, cards: [] }))
  }
  creates.push(client.post('/v1/maintenance-windows', { name: 'w', startsAt: '2026-01-01T00:00:00Z', endsAt: '2026-01-01T01:00:00Z' }))
  await Promise.all(creates)
})
afterAll(async () => {
  await client?.close()
  await server?.close()
})

describe('fetchRemoteState', () => {
  it('reads every record of every kind with ceil(n/100) list requests per collection', async () => {
    lines.length = 0
    const before = server.requestCount()
    const state = await fetchRemoteState(client, ['dns-check', 'icmp-check', 'variable', 'status-page-service', 'status-page', 'maintenance-window'])
    expect(Object.keys(state.records['dns-check'])).toHaveLength(250)
    expect(Object.keys(state.records['status-page-service'])).toHaveLength(130)
    expect(Object.keys(state.records['status-page'])).toHaveLength(120)
    expect(Object.keys(state.records.variable).sort()).toEqual(['V0', 'V1', 'V2'])
    expect(Object.keys(state.records['maintenance-window'])).toHaveLength(1)
    expect(state.requests).toEqual({ checks: 3, 'status-page-services': 2, 'status-pages': 2, variables: 1, 'maintenance-windows': 1 })
    expect(server.requestCount() - before).toBe(9)
  })

  it('reads only the collections of the kinds asked for', async () => {
    const before = server.requestCount()
    const state = await fetchRemoteState(client, ['variable'])
    expect(state.requests).toEqual({ variables: 1 })
    expect(server.requestCount() - before).toBe(1)
  })

  it('reads a list of more than one page without duplicates', async () => {
    const all = await listAllByPage<{ id: string }>(client, '/v1/status-pages/services', { idOf: (s) => s.id })
    expect(new Set(all.map((s) => s.id)).size).toBe(130)
  })
})
