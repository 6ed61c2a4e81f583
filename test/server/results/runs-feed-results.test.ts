/**
 * Runs made by the server's own runner feed the results: a triggered session's FINAL result
 * becomes the check's status, its failures an error group, its state the badge.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalServer } from '../../../src/server/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { caller, KEY_A, startTestServer, type Call } from '../helpers.js'

let dir: string
let dns: DnsServerHandle
let server: LocalServer
let call: Call

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-feed-'))
  dns = await startDnsServer()
  dns.set('up.test', 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
  dns.set('broken.test', 'A', { rcode: 'SERVFAIL' })
  server = await startTestServer({ dbPath: join(dir, 'feed.db'), runner: true, privateTargets: 'allow', schedulerOptions: { tickMs: 50 } })
  call = caller(server)
})
afterAll(async () => {
  await server.close()
  await dns.close()
  rmSync(dir, { recursive: true, force: true })
})

async function runOnce(query: string): Promise<{ id: string; completion: Record<string, any> }> {
  const created = await call('POST', '/v1/checks/dns', {
    name: `feed ${query}`,
    activated: false,
    request: { query, recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
  })
  expect(created.status).toBe(201)
  const id = created.json.id
  const { sessions } = (await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [id] } })).json
  const done = await call('GET', `/v1/check-sessions/${sessions[0].checkSessionId}/completion?maxWaitSeconds=15`)
  expect(done.status).toBe(200)
  return { id, completion: done.json }
}

describe('runs feed statuses, error groups and badges', () => {
  it('a passing run is the check status and a passing badge', async () => {
    const { id, completion } = await runOnce('up.test')
    expect(completion.status).toBe('PASSED')
    const status = await call('GET', `/v1/check-statuses/${id}`)
    expect(status.status).toBe(200)
    expect(status.json).toMatchObject({
      checkId: id,
      hasFailures: false,
      hasErrors: false,
      lastRunLocation: 'local',
      lastCheckRunId: completion.results[0].checkResultId,
    })
    expect(typeof status.json.longestRun).toBe('number')
    // deactivated, the badge says paused; activated (a daily check, not due yet), it reads the run's result
    const badgeText = async () => (await fetch(`${server.url}/v1/badges/checks/${id}`, { headers: { authorization: `Bearer ${KEY_A}` } })).text()
    expect(await badgeText()).toContain('paused')
    const check = (await call('GET', `/v1/checks/${id}`)).json
    const { id: _id, created_at: _c, updated_at: _u, checkType: _t, ...body } = check
    expect((await call('PUT', `/v1/checks/dns/${id}`, { ...body, activated: true, frequency: 1440 })).status).toBe(200)
    expect(await badgeText()).toContain('passing')
    const badge = await fetch(`${server.url}/v1/badges/checks/${id}`, { headers: { authorization: `Bearer ${KEY_A}` } })
    expect(badge.headers.get('content-type')).toMatch(/image\/svg\+xml/)
  })

  it('a failing run is a failing status and an error group', async () => {
    const { id, completion } = await runOnce('broken.test')
    expect(completion.status).toBe('FAILED')
    const status = await call('GET', `/v1/check-statuses/${id}`)
    expect(status.json).toMatchObject({ checkId: id, hasFailures: true })
    const groups = await call('GET', `/v1/error-groups/checks/${id}`)
    expect(groups.status).toBe(200)
    expect(groups.json).toHaveLength(1)
    expect(groups.json[0]).toMatchObject({ checkId: id, archivedUntilNextEvent: false })
    expect(groups.json[0].rawErrorMessage).toContain('SERVFAIL')
  })
})
