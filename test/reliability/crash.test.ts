/**
 * kill -9 at 20 moments of one apply: each time the lock file is valid (or absent), and the next
 * apply finishes the job with nothing duplicated and nothing lost.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { readLock } from '../../src/state/lock.js'
import { makeProject, monitors, repo, writeFiles, STACK_LINE } from '../helpers/cli.js'
import { census, fleet, lockMismatches, range, readLockFile } from './helpers.js'

const KEY = 'crash-key-5d2e81'
const SIZE = 30
let server: LocalServer
beforeAll(async () => {
  // latency, so that an apply of 30 resources is still running when it is killed
  server = await startLocalServer({
    apiKeys: [{ key: KEY, accountId: 'crash' }],
    faults: 'latency:20-60ms',
    seed: 5,
    rateLimit: { max: 100_000, timeWindowMs: 60_000 },
  })
})
afterAll(() => server?.close())

const env = () => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: 'crash' })
const OPERATION = /^[+~±-] \S+ \S+ (created|updated|replaced|deleted|forgotten|moved)/gm

/** Runs apply and SIGKILLs it after `lines` operation lines, or `delayMs` after start. */
function applyAndKill(dir: string, when: { lines?: number; delayMs?: number }): Promise<{ done: number; killed: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(repo, 'bin/monitors.cjs'), 'apply', '--yes', '--concurrency', '4'], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', ...env() },
    })
    let stdout = ''
    const kill = () => {
      if (child.exitCode === null && !child.killed) child.kill('SIGKILL')
    }
    if (when.delayMs !== undefined) setTimeout(kill, when.delayMs)
    child.stdout.setEncoding('utf8').on('data', (data: string) => {
      stdout += data
      if (when.lines !== undefined && /^Plan: /m.test(stdout) && (stdout.match(OPERATION) ?? []).length >= when.lines) kill()
    })
    child.stderr.resume()
    child.on('close', (_code, signal) => resolve({ done: (stdout.match(OPERATION) ?? []).length, killed: signal === 'SIGKILL' }))
  })
}

describe('kill -9 during apply', () => {
  it('20 kill points, each followed by an apply that converges without duplicates', async () => {
    const dir = makeProject({ 'fleet.check.ts': fleet(range(0, SIZE), 0, 'k') })
    const first = await monitors(dir, ['apply', '--yes'], env())
    expect(first.code, first.output).toBe(0)
    const rows: string[] = []
    let killedMidway = 0
    for (let point = 0; point < 20; point++) {
      // every step: 3 resources leave, 3 arrive, the rest change (30 operations or so)
      let when: { lines?: number; delayMs?: number } = point < 12 ? { lines: point * 2 } : { delayMs: 250 + (point - 12) * 150 }
      let outcome: { done: number; killed: boolean }
      for (let attempt = 0; ; attempt++) {
        writeFiles(dir, { 'fleet.check.ts': fleet(range((point + 1) * 3, SIZE), point + 1 + attempt * 1000, 'k') })
        outcome = await applyAndKill(dir, when)
        // a faster machine may finish before a timed kill: try again sooner, with new changes
        if (outcome.killed || when.delayMs === undefined || attempt === 3) break
        when = { delayMs: Math.round(when.delayMs / 2) }
      }
      const { done, killed } = outcome
      if (killed) killedMidway++
      const lockPath = join(dir, 'monitoring.lock.json')
      // the lock parses (an atomic rename never leaves half a file)
      const lock = existsSync(lockPath) ? readLock(lockPath) : undefined
      const pending = Object.keys(lock?.pending ?? {}).length

      const again = await monitors(dir, ['apply', '--yes'], env())
      expect(again.code, again.output).toBe(0)
      expect(again.output).not.toMatch(STACK_LINE)
      const remote = await census(server.url, KEY, 'crash')
      const after = readLockFile(dir)
      rows.push(
        `point ${point} (${when.lines !== undefined ? `after ${when.lines} operations` : `after ${when.delayMs} ms`}): ` +
          `${killed ? 'killed' : 'finished first'} with ${done} operations done, ${pending} pending creates in the lock; ` +
          `next apply: ${(again.stdout.match(OPERATION) ?? []).length} operations; remote ${remote.total}, duplicates ${remote.duplicates}`,
      )
      expect(remote.total, rows.at(-1)).toBe(SIZE)
      expect(remote.duplicates, rows.at(-1)).toBe(0)
      expect(Object.keys(after.resources)).toHaveLength(SIZE)
      expect(after.pending).toBeUndefined()
      expect(lockMismatches(after, remote)).toEqual([])
    }
    console.log(rows.join('\n'))
    // every one of the 20 points killed an apply in the middle of its work
    expect(killedMidway).toBe(20)
    const plan = await monitors(dir, ['plan'], env())
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('No changes.')
  }, 150_000)
})
