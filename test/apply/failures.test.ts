/**
 * What goes wrong, through the CLI against the real local server: invalid projects send
 * nothing, an apply that fails half-way keeps its successes and converges on the next run,
 * a lock of another target is refused, and API errors read as one clear line.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { makeProject, monitors, STACK_LINE } from '../helpers/cli.js'

let server: LocalServer
const KEY = 'failures-key'
const ACCOUNT = 'failures'

beforeAll(async () => {
  server = await startLocalServer({
    apiKeys: [
      { key: KEY, accountId: ACCOUNT },
      { key: 'other-key', accountId: 'other' },
    ],
  })
})
afterAll(async () => {
  await server?.close()
})

const env = (extra: Record<string, string> = {}) => ({
  MONITORING_API_URL: server.url,
  MONITORING_API_KEY: KEY,
  MONITORING_ACCOUNT_ID: ACCOUNT,
  ...extra,
})

function apiAs(key: string, account: string) {
  return new ApiClient({ baseUrl: server.url, apiKey: key, accountId: account })
}

describe('an invalid project', () => {
  it('fails plan and apply before a single request is sent; destroy, which goes by the lock, warns', async () => {
    const dir = makeProject({
      'bad.check.ts': `import { DnsCheck } from 'monitors-as-code'
new DnsCheck('bad-dns', { name: 'Bad', request: { query: 'bad.example.com' }, frequency: 2, frequencyOffset: 99 })
`,
    })
    const before = server.requestCount()
    for (const command of [['plan'], ['apply', '--yes'], ['destroy', '--yes']]) {
      const result = await monitors(dir, command, env())
      // destroy needs the config, the target and the lock, not valid check files (docs/commands.md)
      expect(result.code, result.output).toBe(command[0] === 'destroy' ? 0 : 1)
      expect(result.stderr).toContain('bad.check.ts')
      expect(result.stderr).toContain('DnsCheck "bad-dns"')
      expect(result.stderr).toContain('frequencyOffset')
      expect(result.output).not.toMatch(STACK_LINE)
      if (command[0] === 'destroy') expect(result.stdout).toContain('The lock file records nothing to destroy.')
    }
    // no lock: destroy has nothing to read either
    expect(server.requestCount()).toBe(before)
  })
})

describe('an apply that fails half-way', () => {
  it('stops starting operations, keeps every success in the lock, says what is left, and converges next time', async () => {
    const api = apiAs(KEY, ACCOUNT)
    const other = apiAs('other-key', 'other')
    // A status page url another account holds (urls are unique across accounts): its create answers 409.
    const taken = (await other.post<{ id: string }>('/v1/status-pages', { name: 'Theirs', url: 'failures-taken', cards: [] })).body
    const dir = makeProject({
      'vars.check.ts': `import { EnvVar, DnsCheck, StatusPage } from 'monitors-as-code'
new EnvVar('A_FIRST', { value: 'a' })
new DnsCheck('after-vars', { name: 'After vars', request: { query: 'after.example.com' } })
new StatusPage('a-taken', { name: 'Taken', url: 'failures-taken', cards: [] })
new StatusPage('z-last', { name: 'Last', url: 'failures-last', cards: [] })
`,
    })
    const result = await monitors(dir, ['apply', '--yes', '--concurrency', '1'], env())
    expect(result.code, result.output).toBe(1)
    expect(result.stdout).toMatch(/^\+ variable A_FIRST created/m)
    expect(result.stderr).toMatch(/^✗ status-page a-taken create failed: POST \/v1\/status-pages: Status page with url failures-taken already exists \(409\)$/m)
    expect(result.stderr).toContain('Apply failed: 1 operation failed, 2 succeeded, 1 not started.')
    expect(result.stderr).toContain('not started: create status-page z-last')
    expect(result.stderr).toContain('run apply again')
    expect(result.output).not.toMatch(STACK_LINE)
    const lock = JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8'))
    expect(Object.keys(lock.resources)).toEqual(['dns-check:after-vars', 'variable:A_FIRST'])
    expect((await api.get<{ entries: unknown[] }>('/v1/status-pages')).body.entries).toEqual([])

    // Fix the cause; the next apply does only what is left.
    await other.delete(`/v1/status-pages/${taken.id}`)
    const again = await monitors(dir, ['apply', '--yes'], env())
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toContain('Plan: 2 to create, 0 to update, 0 to delete.')
    expect(again.stdout).not.toContain('A_FIRST created')
    expect((await monitors(dir, ['plan'], env())).stdout).toMatch(/^No changes\./m)
    await api.close()
    await other.close()
  })
})

describe('targets', () => {
  const check = `import { DnsCheck } from 'monitors-as-code'
new DnsCheck('t-dns', { name: 'T', request: { query: 't.example.com' } })
`

  it('refuses a lock file of another target, saying how to proceed', async () => {
    const dir = makeProject({ 't.check.ts': check })
    const lock = {
      version: 1,
      target: { id: 'https://api.example.com', baseUrl: 'https://api.example.com', accountId: 'prod' },
      resources: { 'dns-check:t-dns': { kind: 'dns-check', logicalId: 't-dns', remoteId: 'c0ffee00-0000-4000-8000-000000000000', appliedHash: 'sha256:x' } },
    }
    writeFileSync(join(dir, 'monitoring.lock.json'), JSON.stringify(lock))
    const before = server.requestCount()
    for (const command of [['plan'], ['apply', '--yes'], ['destroy', '--yes']]) {
      const result = await monitors(dir, command, env())
      expect(result.code, result.output).toBe(1)
      expect(result.stderr).toContain('belongs to https://api.example.com (account prod)')
      expect(result.stderr).toContain(`but the target is ${server.url} (account ${ACCOUNT})`)
      expect(result.stderr).toContain('--lock')
      expect(result.output).not.toMatch(STACK_LINE)
    }
    expect(server.requestCount()).toBe(before)
    // the lock is untouched
    expect(JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8'))).toEqual(lock)
  })

  it('refuses a lock of the same service but another account', async () => {
    const dir = makeProject({ 't.check.ts': check })
    expect((await monitors(dir, ['apply', '--yes'], env())).code).toBe(0)
    const result = await monitors(dir, ['plan'], env({ MONITORING_API_KEY: 'other-key', MONITORING_ACCOUNT_ID: 'other' }))
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`belongs to ${server.url} (account ${ACCOUNT})`)
  })

  it('shows API errors as one clear line: a bad key (401), the wrong account (403)', async () => {
    const dir = makeProject({ 't.check.ts': check })
    const bad = await monitors(dir, ['plan'], env({ MONITORING_API_KEY: 'not-a-key' }))
    expect(bad.code).toBe(1)
    expect(bad.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^Error: GET \/v1\/checks was refused \(401 Bad token\): the API key is missing or invalid\. Set MONITORING_API_KEY or pass --api-key\.$/,
      ),
    ])
    expect(bad.output).not.toContain('not-a-key')

    const forbidden = await monitors(dir, ['plan', '--account-id', 'someone-else'], env())
    expect(forbidden.code).toBe(1)
    expect(forbidden.stderr).toMatch(/^Error: GET \/v1\/checks was refused \(403 Forbidden\)/m)
    expect(forbidden.output).not.toMatch(STACK_LINE)
  })

  it('names a missing API key and an unreachable service without a stack', async () => {
    const dir = makeProject({ 't.check.ts': check })
    const noKey = await monitors(dir, ['plan'], { MONITORING_API_URL: server.url })
    expect(noKey.code).toBe(1)
    expect(noKey.stderr).toContain(`No API key for ${server.url}: set MONITORING_API_KEY or pass --api-key.`)
    const down = await monitors(dir, ['plan'], env({ MONITORING_API_URL: 'http://127.0.0.1:9' }))
    expect(down.code).toBe(1)
    expect(down.stderr).toContain('Cannot reach http://127.0.0.1:9: connection refused')
    expect(down.output).not.toMatch(STACK_LINE)
  })

  it('shows a 400 from the service as one line naming the fields (attributes.keys)', async () => {
    // The shared schemas stop bad payloads before any request, so the client meets a 400 only
    // when the service knows more than the code; send one directly.
    const api = apiAs(KEY, ACCOUNT)
    const error = await api.post('/v1/checks/dns', { name: 'x', request: { query: '' }, frequency: 7 }).catch((e: Error) => e)
    expect(error).toMatchObject({ userError: true, status: 400 })
    expect((error as Error).message).toMatch(/^POST \/v1\/checks\/dns was rejected \(400\): .+ \(fields: [^)]*request\.query[^)]*\)$/)
    expect((error as Error).message).not.toContain('\n')
    await api.close()
  })
})
