/**
 * The apply's journal beside the lock (src/state/journal.ts): what a killed apply leaves is
 * folded into the lock file by the next command that reads it, a torn last line is ignored, a
 * pending create is resolved as before, and a running apply's journal is never folded under it.
 */
import { spawn } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { ADOPTED_REASON } from '../../src/plan/adopt.js'
import { acquireApplyLock } from '../../src/state/process-lock.js'
import { lockKey, type LockEntry, type LockFile, type PendingCreate } from '../../src/state/lock.js'
import { makeProject, monitors, repo, writeFiles, STACK_LINE } from '../helpers/cli.js'
import { census } from '../reliability/helpers.js'

const KEY = 'journal-key-7c1e0a'
const ACCOUNT = 'journal'
let server: LocalServer
let client: ApiClient
beforeAll(async () => {
  server = await startLocalServer({
    apiKeys: [
      { key: KEY, accountId: ACCOUNT },
      { key: 'journal-other-key', accountId: 'journal-other' },
    ],
    rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
  })
  client = new ApiClient({ baseUrl: server.url, apiKey: KEY, accountId: ACCOUNT })
})
afterAll(async () => {
  await client?.close()
  await server?.close()
})

const env = () => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: ACCOUNT })
const checks = (ids: string[]) =>
  `import { DnsCheck } from 'monitors-as-code'\n${ids.map((id) => `new DnsCheck('${id}', { name: 'Journal ${id}', request: { query: '${id}.example.com' } })\n`).join('')}`
const lockPath = (dir: string) => join(dir, 'monitoring.lock.json')
const journalPath = (dir: string) => `${lockPath(dir)}.journal`
const readLockFile = (dir: string) => JSON.parse(readFileSync(lockPath(dir), 'utf8')) as LockFile
const line = (value: unknown) => `${JSON.stringify(value)}\n`
const pendingOf = (entry: LockEntry): PendingCreate => ({
  kind: entry.kind,
  logicalId: entry.logicalId,
  appliedHash: entry.appliedHash,
  match: { name: entry.name! },
})

/**
 * The disk as an apply of b, c and d killed mid-way leaves it: the lock as the apply started
 * (a only), and the journal: b created and recorded, c's POST sent (the check exists) but its
 * answer never recorded, and d's pending line torn by the kill before its POST was sent.
 */
async function killedApply(dir: string): Promise<{ full: LockFile; made: Record<string, string> }> {
  writeFiles(dir, { 'journal.check.ts': checks(['a', 'b', 'c', 'd']) })
  const applied = await monitors(dir, ['apply', '--yes'], env())
  expect(applied.code, applied.output).toBe(0)
  const full = readLockFile(dir)
  const entry = (id: string) => full.resources[lockKey('dns-check', id)]
  // d was never made: its line was torn before the POST
  await client.delete(`/v1/checks/${entry('d').remoteId}`)
  const base: LockFile = { ...full, resources: { [lockKey('dns-check', 'a')]: entry('a') } }
  writeFileSync(lockPath(dir), `${JSON.stringify(base, null, 2)}\n`)
  const torn = line({ k: lockKey('dns-check', 'd'), p: pendingOf(entry('d')) })
  writeFileSync(
    journalPath(dir),
    [
      line({ k: lockKey('dns-check', 'b'), p: pendingOf(entry('b')) }),
      line({ k: lockKey('dns-check', 'c'), p: pendingOf(entry('c')) }),
      line({ k: lockKey('dns-check', 'b'), r: entry('b'), p: null }),
      torn.slice(0, Math.floor(torn.length / 2)),
    ].join(''),
  )
  return { full, made: { a: entry('a').remoteId, b: entry('b').remoteId, c: entry('c').remoteId } }
}

describe('the lock journal after a crash', () => {
  it('the next plan folds it into the lock: recorded creates kept, the pending create adopted, the torn last line ignored', async () => {
    const dir = makeProject({})
    const { made } = await killedApply(dir)

    const plan = await monitors(dir, ['plan'], env())
    expect(plan.code, plan.output).toBe(0)
    expect(plan.output).not.toMatch(STACK_LINE)
    // folded: the journal is gone, the lock file holds what it said
    expect(existsSync(journalPath(dir))).toBe(false)
    const folded = readLockFile(dir)
    expect(Object.keys(folded.resources).sort()).toEqual(['dns-check:a', 'dns-check:b'])
    expect(folded.resources['dns-check:b'].remoteId).toBe(made.b)
    expect(Object.keys(folded.pending ?? {})).toEqual(['dns-check:c'])
    // c is found and adopted, not created twice; d (torn line) is simply created
    expect(plan.stdout).toContain(ADOPTED_REASON)
    expect(plan.stdout).toMatch(/^\s*\+ dns-check d\b/m)
    expect(plan.stdout).not.toMatch(/^\s*\+ dns-check c\b/m)
    expect(plan.stdout).toMatch(/Plan: 1 to create/)

    const apply = await monitors(dir, ['apply', '--yes'], env())
    expect(apply.code, apply.output).toBe(0)
    const after = readLockFile(dir)
    expect(after.pending).toBeUndefined()
    expect(after.resources['dns-check:c'].remoteId).toBe(made.c)
    const remote = await census(server.url, KEY, ACCOUNT)
    expect(remote.duplicates).toBe(0)
    expect(Object.values(after.resources).every((e) => remote.ids['dns-check'].has(e.remoteId))).toBe(true)
    expect((await monitors(dir, ['plan'], env())).stdout).toContain('No changes.')
    // clean up for the other tests of this account
    const destroyed = await monitors(dir, ['destroy', '--yes'], env())
    expect(destroyed.code, destroyed.output).toBe(0)
  })

  it('a plan while an apply holds the apply lock reads the journal but leaves it and the lock file alone', async () => {
    const dir = makeProject({})
    await killedApply(dir)
    const lockText = readFileSync(lockPath(dir), 'utf8')
    const journalText = readFileSync(journalPath(dir), 'utf8')
    // a live apply: this process holds .monitors/apply.lock
    const held = await acquireApplyLock(join(dir, '.monitors', 'apply.lock'), { timeoutMs: 0, command: 'monitors apply (test)' })
    try {
      const plan = await monitors(dir, ['plan'], env())
      expect(plan.code, plan.output).toBe(0)
      // the plan saw b recorded and c pending, as the running apply's journal says
      expect(plan.stdout).not.toMatch(/^\s*\+ dns-check b\b/m)
      expect(plan.stdout).toContain(ADOPTED_REASON)
      expect(readFileSync(lockPath(dir), 'utf8')).toBe(lockText)
      expect(readFileSync(journalPath(dir), 'utf8')).toBe(journalText)
    } finally {
      held.release()
    }
    const later = await monitors(dir, ['plan'], env())
    expect(later.code, later.output).toBe(0)
    expect(existsSync(journalPath(dir))).toBe(false)
    expect(Object.keys(readLockFile(dir).resources).sort()).toEqual(['dns-check:a', 'dns-check:b'])
    const destroyed = await monitors(dir, ['destroy', '--yes'], env())
    expect(destroyed.code, destroyed.output).toBe(0)
  })

  it('a broken line followed by good ones is refused in one line naming the journal', async () => {
    const dir = makeProject({})
    const { made } = await killedApply(dir)
    appendFileSync(journalPath(dir), `\n${line({ k: lockKey('dns-check', 'a'), r: null, p: null })}`)
    const plan = await monitors(dir, ['plan'], env())
    expect(plan.code).toBe(1)
    expect(plan.stderr).toContain(`The lock journal ${journalPath(dir)} has a broken line 4 followed by good ones`)
    expect(plan.output).not.toMatch(STACK_LINE)
    expect(plan.output).not.toContain('internal error')
    // the journal was left as it is
    expect(readFileSync(journalPath(dir), 'utf8')).toContain('"r":null')
    for (const id of Object.values(made)) await client.delete(`/v1/checks/${id}`)
  })

  it('apply -9 mid-way leaves the lock as it started plus the journal; plan folds it and apply converges', async () => {
    const ids = Array.from({ length: 120 }, (_, i) => `k${i}`)
    const dir = makeProject({ 'journal.check.ts': checks(ids.slice(0, 10)) })
    const first = await monitors(dir, ['apply', '--yes'], env())
    expect(first.code, first.output).toBe(0)
    const before = readFileSync(lockPath(dir), 'utf8')
    writeFiles(dir, { 'journal.check.ts': checks(ids) })
    // killed once the journal holds some operations (polled: no timing assumption)
    const child = spawn(process.execPath, [join(repo, 'bin/monitors.cjs'), 'apply', '--yes', '--concurrency', '4'], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', CI: '', ...env() },
      stdio: 'ignore',
    })
    const exited = new Promise((resolve) => child.on('close', resolve))
    for (;;) {
      if (child.exitCode !== null) break
      // some creates recorded (pending creates are written ahead, results as they come)
      if (existsSync(journalPath(dir)) && (readFileSync(journalPath(dir), 'utf8').match(/"r":\{/g) ?? []).length >= 5) {
        child.kill('SIGKILL')
        break
      }
      await new Promise((r) => setTimeout(r, 5))
    }
    await exited
    expect(child.signalCode, 'the apply finished before it could be killed').toBe('SIGKILL')
    // the lock file is the one the apply started from (it was written whole once, then only the journal)
    const atStart = readLockFile(dir)
    expect(Object.keys(atStart.resources)).toHaveLength(10)
    expect(JSON.parse(before).resources).toEqual(atStart.resources)
    const journal = readFileSync(journalPath(dir), 'utf8')
    const recorded = new Set(
      journal
        .split('\n')
        .filter((l) => l.includes('"r":{'))
        .map((l) => (JSON.parse(l) as { k: string }).k),
    )
    expect(recorded.size).toBeGreaterThan(0)

    const plan = await monitors(dir, ['plan'], env())
    expect(plan.code, plan.output).toBe(0)
    expect(existsSync(journalPath(dir))).toBe(false)
    const folded = readLockFile(dir)
    for (const key of recorded) expect(folded.resources[key], key).toBeDefined()

    const again = await monitors(dir, ['apply', '--yes'], env())
    expect(again.code, again.output).toBe(0)
    const after = readLockFile(dir)
    expect(Object.keys(after.resources)).toHaveLength(120)
    expect(after.pending).toBeUndefined()
    const remote = await census(server.url, KEY, ACCOUNT)
    expect(remote.duplicates).toBe(0)
    expect(remote.byKind['dns-check']).toBe(120)
    const destroyed = await monitors(dir, ['destroy', '--yes'], env())
    expect(destroyed.code, destroyed.output).toBe(0)
  }, 60_000)

  it('an apply stopped by a failure keeps no pending create of the creates it never started', async () => {
    // a status page url another account holds: its create is refused (409), and the apply stops
    const other = new ApiClient({ baseUrl: server.url, apiKey: 'journal-other-key', accountId: 'journal-other' })
    await other.post('/v1/status-pages', { name: 'Theirs', url: 'journal-taken', cards: [] })
    await other.close()
    const pages = [`new StatusPage('a-page', { name: 'A page', url: 'journal-taken', cards: [] })`]
    for (let i = 0; i < 10; i++) pages.push(`new StatusPage('b-page-${i}', { name: 'B page ${i}', url: 'journal-free-${i}', cards: [] })`)
    const dir = makeProject({ 'pages.check.ts': `import { StatusPage } from 'monitors-as-code'\n${pages.join('\n')}\n` })
    const apply = await monitors(dir, ['apply', '--yes', '--concurrency', '1'], env())
    expect(apply.code, apply.output).toBe(1)
    expect(apply.stderr).toContain('not started: create status-page b-page-9')
    expect(existsSync(journalPath(dir))).toBe(false)
    const lock = readLockFile(dir)
    expect(lock.pending).toBeUndefined()
    expect(Object.keys(lock.resources)).toEqual([])
    // nothing was sent for them: the next plan creates them, adopting nothing
    const plan = await monitors(dir, ['plan'], env())
    expect(plan.stdout).toMatch(/Plan: 11 to create/)
    expect(plan.stdout).not.toContain(ADOPTED_REASON)
  })
})
