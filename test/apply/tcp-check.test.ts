/**
 * TcpCheck end to end with the built CLI and the real local server: plan shows it, apply
 * creates it, the next plan says `No changes.`, a changed field is an update; import writes a
 * TcpCheck; `monitors test` runs one against a TCP server the test starts on 127.0.0.1; the
 * agent runs a triggered one; `monitors status` shows its 24-hour figures.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeProject, STACK_LINE, useServer, writeFiles } from '../helpers/use-server.js'
import { monitors } from '../helpers/cli.js'
import { spawnAgent } from '../agent/helpers.js'
import { startLocalServer } from '../../src/server/index.js'

const api = useServer('tcp-kind')
let tcp: Server
let port: number
const sockets = new Set<Socket>()
const received: string[] = []

beforeAll(async () => {
  tcp = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    socket.on('data', (chunk) => {
      received.push(chunk.toString())
      socket.write(chunk.toString().trim() === 'PING' ? '+PONG\r\n' : '-ERR\r\n')
    })
  })
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve))
  port = (tcp.address() as AddressInfo).port
})
afterAll(async () => {
  for (const s of sockets) s.destroy()
  await new Promise((resolve) => tcp.close(resolve))
})

const checkFile = (maxResponseTime = 2000, data = 'PING\\r\\n') => `import { TcpCheck } from 'monitors-as-code'
new TcpCheck('redis', {
  name: 'Redis',
  activated: false,
  frequency: 0,
  frequencyOffset: 30,
  maxResponseTime: ${maxResponseTime},
  locations: ['eu-west-1'],
  request: {
    hostname: '127.0.0.1',
    port: ${port},
    data: '${data}',
    assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: '+PONG' }],
  },
})
`

describe('TcpCheck', () => {
  it('plans readably, applies, then plans No changes.; a changed field is an update', async () => {
    const dir = makeProject({ 'tcp.check.ts': checkFile() })
    const first = await api.cli(dir, ['plan'])
    expect(first.code, first.output).toBe(0)
    expect(first.stdout).toContain('TcpCheck')
    expect(first.stdout).toContain('redis')
    expect(first.stdout).toContain(`port`)
    const applied = await api.cli(dir, ['apply', '--yes'])
    expect(applied.code, applied.output).toBe(0)
    const checks = (await api.client.get<Array<Record<string, any>>>('/v1/checks', { checkType: 'TCP' })).body
    expect(checks).toHaveLength(1)
    expect(checks[0]).toMatchObject({
      name: 'Redis',
      frequency: 0,
      frequencyOffset: 30,
      checkType: 'TCP',
      request: { hostname: '127.0.0.1', port, data: 'PING\r\n' },
    })
    const again = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toMatch(/^No changes\./)
    writeFiles(dir, { 'tcp.check.ts': checkFile(1500) })
    const changed = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(changed.code, changed.output).toBe(2)
    expect(changed.stdout).toContain('maxResponseTime')
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })

  it('monitors test runs it against a local TCP server: PASSED; a wrong answer fails with exit 1', async () => {
    const dir = makeProject({ 'tcp.check.ts': checkFile() })
    const before = received.length
    const result = await api.cli(dir, ['test'])
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toMatch(/tcp-check:redis "Redis".*PASSED/)
    expect(received.slice(before)).toContain('PING\r\n')
    writeFiles(dir, { 'tcp.check.ts': checkFile(2000, 'HELLO\\r\\n') })
    const failed = await api.cli(dir, ['test', '--format', 'json'])
    expect(failed.code, failed.output).toBe(1)
    expect(failed.output).not.toMatch(STACK_LINE)
    const doc = JSON.parse(failed.stdout)
    expect(doc.results[0]).toMatchObject({
      kind: 'tcp-check',
      checkType: 'TCP',
      status: 'FAILED',
      error: 'RESPONSE_DATA CONTAINS "+PONG" failed: got "-ERR | "',
    })
  })

  it('imports a TCP check created through the API as a TcpCheck; the next plan says No changes.', async () => {
    const created = await api.client.post<Record<string, any>>('/v1/checks/tcp', {
      name: 'Imported SMTP',
      request: { hostname: 'mail.example.com', port: 25, assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: '220' }] },
    })
    expect(created.status).toBe(201)
    const dir = makeProject({ 'existing.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('KEEP', { value: 'x' })\n` })
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    const imported = await api.cli(dir, ['import', '--all'])
    expect(imported.code, imported.output).toBe(0)
    const written = readdirSync(dir).filter((f) => f.startsWith('imported'))
    const code = readFileSync(join(dir, written[0]), 'utf8')
    expect(code).toMatch(/import \{[^}]*TcpCheck[^}]*\} from 'monitors-as-code'/)
    expect(code).toContain("new TcpCheck('imported-smtp'")
    expect(code).toContain('mail.example.com')
    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\./)
  })

  it('an agent runs a triggered TCP check; monitors status then shows its availability and p95 time', async () => {
    // a server whose runs go to agents only
    const KEY = 'tcp-agent-key-0123456789abcdef'
    const own = await startLocalServer({
      port: 0,
      dbPath: ':memory:',
      apiKeys: [{ key: KEY, accountId: 'tcp-agent' }],
      scheduler: true,
      runner: false,
      schedulerOptions: { tickMs: 200 },
    })
    const env = { MONITORING_API_URL: own.url, MONITORING_API_KEY: KEY }
    const agent = spawnAgent(['--locations', 'eu-west-1', '--health-port', '0', '--poll-interval', '200ms'], env)
    try {
      const dir = makeProject({ 'tcp.check.ts': checkFile() })
      const applied = await monitors(dir, ['apply', '--yes'], env)
      expect(applied.code, applied.output).toBe(0)
      const id = JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8')).resources['tcp-check:redis'].remoteId as string
      await agent.healthPort()
      const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
      const trigger = (await (
        await fetch(`${own.url}/v1/check-sessions/trigger`, { method: 'POST', headers, body: JSON.stringify({ target: { checkId: [id] } }) })
      ).json()) as Record<string, any>
      const done = (await (
        await fetch(`${own.url}/v1/check-sessions/${trigger.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`, { headers })
      ).json()) as Record<string, any>
      expect(done).toMatchObject({ status: 'PASSED', checkType: 'TCP' })
      agent.child.kill('SIGTERM')
      expect((await agent.exited).code).toBe(0)
      expect(agent.output()).toMatch(/"Redis" eu-west-1 PASSED/)
      const status = await monitors(dir, ['status'], env)
      expect(status.code, status.output).toBe(0)
      const line = status.stdout.split('\n').find((l) => l.includes('tcp-check:redis ')) ?? ''
      expect(line).toMatch(/eu-west-1\s+.*100%\s+[\d.]+ ms/)
    } finally {
      if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL')
      await own.close()
    }
  })
})
