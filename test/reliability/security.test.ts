/** The key never shows, never travels in clear to another host, and one account never touches another's resources. */
import { networkInterfaces } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { makeProject, monitors, STACK_LINE } from '../helpers/cli.js'
import { fleet, range } from './helpers.js'

const KEY = 'sec_Zq8vN3kT1pW7xL0mB5c'
const OTHER = 'sec_other_Hd82Kf01Lsq9'
let server: LocalServer
beforeAll(async () => {
  server = await startLocalServer({
    apiKeys: [
      { key: KEY, accountId: 'sec-a' },
      { key: OTHER, accountId: 'sec-b' },
    ],
  })
})
afterAll(() => server?.close())

describe('the API key never appears', () => {
  const dir = makeProject({ 'fleet.check.ts': fleet(range(0, 3), 0, 'sec') })

  it('in failing commands, debug traces, usage errors or help', async () => {
    const closed = await startLocalServer({ apiKeys: [{ key: KEY }] })
    const closedUrl = closed.url
    await closed.close()
    const runs = [
      await monitors(dir, ['plan', '--api-url', closedUrl, '--api-key', KEY, '--retries', '0'], { MONITORS_DEBUG: '1' }),
      await monitors(dir, ['apply', '--yes', '--api-url', server.url, `--api-key=${KEY}x`], { MONITORS_DEBUG: '1' }),
      await monitors(dir, ['plan'], { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: 'sec-b', MONITORS_DEBUG: '1' }),
      await monitors(dir, ['plna', KEY], { MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY }),
      await monitors(dir, ['plan', '--api-url', `https://user:${KEY}@api.example.com`], { MONITORING_API_KEY: KEY }),
      await monitors(dir, ['plan', '--help', '--api-key', KEY]),
    ]
    expect(runs[0].stderr).toContain('connection refused')
    expect(runs[1].stderr).toContain('the API key is missing or invalid')
    expect(runs[2].stderr).toContain('403 Forbidden')
    expect(runs[3].stderr).toContain('Unknown arguments: plna, sec_…')
    expect(runs[4].stderr).toContain('carries credentials')
    for (const run of runs) {
      expect(run.output).not.toContain(KEY)
      expect(run.output).not.toMatch(STACK_LINE)
    }
    expect(runs.map((run) => run.code)).toEqual([1, 1, 1, 1, 1, 0])
  })

  it('plain http to a host that is not this machine is refused unless --insecure-http is given', async () => {
    const refused = await monitors(dir, ['plan', '--api-url', 'http://monitoring.example.com'], { MONITORING_API_KEY: KEY })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      'Error: Refusing to send the API key in clear text to http://monitoring.example.com: use an https:// URL, or pass --insecure-http if this network is trusted.\n',
    )
    const address = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address
    if (!address) return
    // a server on this machine's own network address: not loopback, so the flag is needed
    const open = await startLocalServer({ host: '0.0.0.0', apiKeys: [{ key: KEY, accountId: 'sec-a' }] })
    try {
      const url = open.url.replace('0.0.0.0', address)
      const without = await monitors(dir, ['plan', '--api-url', url], { MONITORING_API_KEY: KEY })
      expect(without.code).toBe(1)
      expect(without.stderr).toContain('pass --insecure-http')
      const withFlag = await monitors(dir, ['plan', '--api-url', url, '--insecure-http'], { MONITORING_API_KEY: KEY })
      expect(withFlag.code, withFlag.output).toBe(0)
      expect(withFlag.stdout).toContain('Plan: 3 to create')
    } finally {
      await open.close()
    }
  })

  it('the server listens on 127.0.0.1 unless told otherwise', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
  })
})

describe('accounts stay apart on every route', () => {
  it('another account reads, changes and deletes none of them, and cannot point at them', async () => {
    const a = new ApiClient({ baseUrl: server.url, apiKey: KEY, accountId: 'sec-a' })
    const b = new ApiClient({ baseUrl: server.url, apiKey: OTHER, accountId: 'sec-b' })
    const status = (p: Promise<unknown>) =>
      p.then(
        () => 200,
        (e: { status?: number }) => e.status ?? -1,
      )
    const dns = (await a.post<{ id: string }>('/v1/checks/dns', { name: 'a dns', request: { query: 'a.example.com' } })).body
    const icmp = (await a.post<{ id: string }>('/v1/checks/icmp', { name: 'a ping', request: { hostname: 'a.example.com' }, heartbeat: {}, script: '' })).body
    await a.post('/v1/variables', { key: 'A_ONLY', value: 'a' })
    const service = (await a.post<{ id: string }>('/v1/status-pages/services', { name: 'a service' })).body
    const page = (await a.post<{ id: string }>('/v1/status-pages', { name: 'a page', url: 'sec-a-page', cards: [] })).body
    const window = (
      await a.post<{ id: number }>('/v1/maintenance-windows', { name: 'a window', startsAt: '2030-01-01T00:00:00Z', endsAt: '2030-01-01T01:00:00Z' })
    ).body
    const incident = (await a.post<{ id: string }>('/v1/incidents', { name: 'a incident', severity: 'MINOR', services: [{ id: service.id }] })).body
    const update = (await a.post<{ id: string }>(`/v1/incidents/${incident.id}/updates`, { status: 'MONITORING', description: 'd' })).body

    const attempts: Array<[string, () => Promise<unknown>]> = [
      ['GET check', () => b.get(`/v1/checks/${dns.id}`)],
      ['PUT dns check', () => b.put(`/v1/checks/dns/${dns.id}`, { name: 'x', request: { query: 'x.example.com' } })],
      ['PUT icmp check', () => b.put(`/v1/checks/icmp/${icmp.id}`, { name: 'x', request: { hostname: 'x.example.com' }, heartbeat: {}, script: '' })],
      ['DELETE check', () => b.delete(`/v1/checks/${icmp.id}`)],
      ['GET variable', () => b.get('/v1/variables/A_ONLY')],
      ['PUT variable', () => b.put('/v1/variables/A_ONLY', { key: 'A_ONLY', value: 'b' })],
      ['DELETE variable', () => b.delete('/v1/variables/A_ONLY')],
      ['GET service', () => b.get(`/v1/status-pages/services/${service.id}`)],
      ['PUT service', () => b.put(`/v1/status-pages/services/${service.id}`, { name: 'x' })],
      ['DELETE service', () => b.delete(`/v1/status-pages/services/${service.id}`)],
      ['GET page', () => b.get(`/v1/status-pages/${page.id}`)],
      ['PUT page', () => b.put(`/v1/status-pages/${page.id}`, { name: 'x', url: 'sec-a-page', cards: [] })],
      ['DELETE page', () => b.delete(`/v1/status-pages/${page.id}`)],
      ['GET window', () => b.get(`/v1/maintenance-windows/${window.id}`)],
      ['PUT window', () => b.put(`/v1/maintenance-windows/${window.id}`, { name: 'x', startsAt: '2030-01-01T00:00:00Z', endsAt: '2030-01-01T01:00:00Z' })],
      ['DELETE window', () => b.delete(`/v1/maintenance-windows/${window.id}`)],
      ['GET incident', () => b.get(`/v1/incidents/${incident.id}`)],
      ['PUT incident', () => b.put(`/v1/incidents/${incident.id}`, { name: 'x', severity: 'MAJOR' })],
      ['DELETE incident', () => b.delete(`/v1/incidents/${incident.id}`)],
      ['POST incident update', () => b.post(`/v1/incidents/${incident.id}/updates`, { status: 'RESOLVED', description: 'x' })],
      ['GET incident update', () => b.get(`/v1/incidents/${incident.id}/updates/${update.id}`)],
      ['PUT incident update', () => b.put(`/v1/incidents/${incident.id}/updates/${update.id}`, { status: 'RESOLVED', description: 'x' })],
      ['DELETE incident update', () => b.delete(`/v1/incidents/${incident.id}/updates/${update.id}`)],
    ]
    const answers: Record<string, number> = {}
    for (const [name, attempt] of attempts) answers[name] = await status(attempt())
    expect(answers).toEqual(Object.fromEntries(attempts.map(([name]) => [name, 404])))
    // references to another account's service are refused like unknown ones
    expect(await status(b.post('/v1/incidents', { name: 'x', severity: 'MINOR', services: [{ id: service.id }] }))).toBe(400)
    expect(await status(b.post('/v1/status-pages', { name: 'x', url: 'sec-b-page', cards: [{ name: 'c', services: [{ id: service.id }] }] }))).toBe(400)
    // lists show nothing of the other account
    for (const path of ['/v1/checks', '/v1/variables', '/v1/status-pages/services', '/v1/maintenance-windows', '/v1/incidents']) {
      expect((await b.get<unknown[]>(path)).body, path).toEqual([])
    }
    expect((await b.get<{ entries: unknown[] }>('/v1/status-pages')).body.entries).toEqual([])
    // and the owner still has everything, unchanged
    expect((await a.get<{ name: string }>(`/v1/checks/${dns.id}`)).body.name).toBe('a dns')
    expect((await a.get<{ value: string }>('/v1/variables/A_ONLY')).body.value).toBe('a')
    expect((await a.get<{ name: string }>(`/v1/incidents/${incident.id}`)).body.name).toBe('a incident')
    expect((await a.get<unknown[]>('/v1/checks')).body).toHaveLength(2)
    await a.close()
    await b.close()
  })
})
