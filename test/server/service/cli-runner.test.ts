/**
 * `monitors server` runs checks by default; `--no-runner` leaves them to agents; `--retention`
 * must be a positive number of days. The server started for one plan/apply runs nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { KEY_A, caller, startTestServer, type Call } from '../helpers.js'
import { serverBuilt, startServerProcess } from '../../helpers/server-process.js'

let dns: DnsServerHandle
beforeAll(async () => {
  dns = await startDnsServer()
  dns.set('cli.test', 'A', { records: [{ type: 'A', data: '192.0.2.3' }] })
})
afterAll(() => dns.close())

const startCli = (args: string[]) =>
  startServerProcess(['--db', ':memory:', '--api-key', `${KEY_A}:acc-a`, '--quiet', ...args], {
    until: (output) => /checks/.test(output.split('\n').slice(1).join('\n')),
    settleMs: 0,
  })

async function triggerSession(call: Call): Promise<string> {
  const check = await call('POST', '/v1/checks/dns', {
    name: 'cli',
    activated: false,
    request: { query: 'cli.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.port },
  })
  expect(check.status).toBe(201)
  const trigger = await call('POST', '/v1/check-sessions/trigger', { target: { checkId: [check.json.id] } })
  return trigger.json.sessions[0].checkSessionId
}

describe.skipIf(!serverBuilt)('monitors server runner flags (built CLI)', () => {
  it('runs checks by default', async () => {
    const server = startCli([])
    const call = caller({ url: await server.ready })
    expect(server.output()).toMatch(/Running the activated checks \(results kept 30 days\)/)
    const id = await triggerSession(call)
    const done = await call('GET', `/v1/check-sessions/${id}/completion?maxWaitSeconds=10`)
    expect(done.status).toBe(200)
    expect(done.json.status).toBe('PASSED')
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  })

  it('--no-runner runs nothing itself: the session waits for an agent', async () => {
    const server = startCli(['--no-runner', '--retention', '7'])
    const call = caller({ url: await server.ready })
    expect(server.output()).toMatch(/Not running checks \(--no-runner\): agents claim the due runs \(results kept 7 days\)/)
    const id = await triggerSession(call)
    const waiting = await call('GET', `/v1/check-sessions/${id}/completion?maxWaitSeconds=2`)
    expect(waiting.status).toBe(408)
    expect(dns.queries.filter((q) => q.name === 'cli.test')).toHaveLength(1) // the first test's run only
    const claimed = (await call('POST', '/v1/agent/claim', { agentId: 'a', locations: ['local'] })).json.runs
    expect(claimed).toHaveLength(1)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  })

  it('--retention must be a positive number of days', async () => {
    const server = startCli(['--retention', '0'])
    server.ready.catch(() => undefined)
    expect(await server.exited).toBe(1)
    expect(server.output()).toContain('--retention must be a number of days above 0 (got 0).')
    expect(server.output()).not.toMatch(/^\s+at /m)
  })
})

describe('the server of one command (plan, apply)', () => {
  it('runs no check: startLocalServer leaves the runner off unless asked', async () => {
    const server = await startTestServer()
    try {
      const call = caller(server)
      const id = await triggerSession(call)
      expect((await call('GET', `/v1/check-sessions/${id}/completion?maxWaitSeconds=1`)).status).toBe(408)
    } finally {
      await server.close()
    }
  })
})
