/** Ctrl-C during apply: no new operations, those in flight finish and stay in the lock. */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { makeProject, monitors, repo } from '../helpers/cli.js'

let server: LocalServer

beforeAll(async () => {
  // a slow window, so the apply is still running when it is interrupted
  server = await startLocalServer({ apiKeys: [{ key: 'int-key', accountId: 'int' }], rateLimit: { max: 4, timeWindowMs: 1000 } })
})
afterAll(async () => {
  await server?.close()
})

describe('an interrupted apply', () => {
  it('stops, records what was done, and the next apply does the rest', async () => {
    const checks = Array.from({ length: 16 }, (_, i) => `new DnsCheck('int-${i}', { name: 'I${i}', request: { query: 'i${i}.example.com' } })`)
    const dir = makeProject({ 'i.check.ts': `import { DnsCheck } from 'monitors-as-code'\n${checks.join('\n')}\n` })
    const env = { ...process.env, NO_COLOR: '1', MONITORING_API_URL: server.url, MONITORING_API_KEY: 'int-key', MONITORING_ACCOUNT_ID: 'int' }
    const child = spawn(process.execPath, [join(repo, 'bin/monitors.cjs'), 'apply', '--yes', '--concurrency', '2'], { cwd: dir, env })
    let stdout = ''
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d))
    child.stdout.setEncoding('utf8').on('data', (d) => {
      stdout += d
      if (/created/.test(stdout) && !child.killed) child.kill('SIGINT')
    })
    const code = await new Promise<number | null>((done) => child.on('close', done))
    expect(code, stdout + stderr).toBe(1)
    expect(stderr).toContain('Interrupted: no new operations start')
    expect(stderr).toMatch(/Apply interrupted: 0 operations failed, \d+ succeeded, \d+ not started\./)
    const created = (stdout.match(/^\+ dns-check int-\d+ created/gm) ?? []).length
    expect(created).toBeGreaterThan(0)
    expect(created).toBeLessThan(16)
    const lock = JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8'))
    expect(Object.keys(lock.resources)).toHaveLength(created)

    const again = await monitors(dir, ['apply', '--yes', '--concurrency', '2'], {
      MONITORING_API_URL: server.url,
      MONITORING_API_KEY: 'int-key',
      MONITORING_ACCOUNT_ID: 'int',
    })
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toContain(`Plan: ${16 - created} to create, 0 to update, 0 to delete.`)
  })
})
