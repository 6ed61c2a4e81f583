/** Two applies in one checkout: the second waits for the first (or refuses), then finds nothing left to do. */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { makeProject, repo, STACK_LINE, type CliResult } from '../helpers/cli.js'
import { census, fleet, range, readLockFile } from './helpers.js'

const KEY = 'concurrent-key-99c1e0'
let server: LocalServer
beforeAll(async () => {
  server = await startLocalServer({
    apiKeys: [{ key: KEY, accountId: 'twin' }],
    faults: 'latency:40-60ms',
    seed: 2,
    rateLimit: { max: 100_000, timeWindowMs: 60_000 },
  })
})
afterAll(() => server?.close())

/** Starts the CLI; resolves when it exits. */
function start(dir: string, args: string[]): { done: Promise<CliResult>; started: Promise<void> } {
  const child = spawn(process.execPath, [join(repo, 'bin/monitors.cjs'), ...args], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1', MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: 'twin' },
  })
  let stdout = ''
  let stderr = ''
  let markStarted: () => void
  const started = new Promise<void>((r) => (markStarted = r))
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d
    if (/^Plan: /m.test(stdout)) markStarted()
  })
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code) => {
      markStarted()
      resolve({ code: code ?? -1, stdout, stderr, output: stdout + stderr })
    }),
  )
  return { done, started }
}

describe('two applies in one checkout', () => {
  it('the second refuses at once by default, and with --lock-timeout waits, then has nothing to do', async () => {
    const dir = makeProject({ 'fleet.check.ts': fleet(range(0, 40), 0, 'c') })
    // one at a time, 40-60 ms each: the first apply lasts about 2 s, longer than the second takes to start
    const first = start(dir, ['apply', '--yes', '--concurrency', '1'])
    await first.started
    const refused = await start(dir, ['apply', '--yes']).done
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(
      /^Error: another apply holds \S+apply\.lock \(.*pid \d+.*\)\. Wait for it to finish, or pass --lock-timeout 5m to wait for it\.$/m,
    )
    expect(refused.output).not.toMatch(STACK_LINE)

    const waiting = start(dir, ['apply', '--yes', '--lock-timeout', '60s'])
    const [a, b] = await Promise.all([first.done, waiting.done])
    expect(a.code, a.output).toBe(0)
    expect(a.stdout).toContain('Apply complete: 40 created, 0 updated, 0 deleted.')
    expect(b.code, b.output).toBe(0)
    // it read the lock the first one wrote, after the first one finished
    expect(b.stdout).toContain('No changes.')
    const remote = await census(server.url, KEY, 'twin')
    expect(remote.total).toBe(40)
    expect(remote.duplicates).toBe(0)
    expect(Object.keys(readLockFile(dir).resources)).toHaveLength(40)
  }, 60_000)
})
