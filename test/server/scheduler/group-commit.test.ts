/**
 * The SQLite store at the scale of a large apply: check creates that arrive together commit
 * together (each still answered only once stored, a failing one alone refused), and check list
 * pages stay cached while the server writes anything but checks (results, variables).
 */
import { mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStore, type SqliteStore } from '../../../src/server/store/sqlite/index.js'
import { groupCommit } from '../../../src/server/store/sqlite/batch.js'

const stores: SqliteStore[] = []
afterAll(async () => {
  for (const store of stores) await store.close()
})
function fresh(): { store: SqliteStore; file: string } {
  const file = join(mkdtempSync(join(tmpdir(), 'monitors-group-commit-')), 'server.db')
  const store = openSqliteStore(file)
  stores.push(store)
  return { store, file }
}
const check = (i: number) => ({
  name: `check ${i}`,
  tags: ['bench', `team-${i % 7}`],
  locations: ['eu-west-1', 'us-east-1'],
  frequency: 5,
  activated: true,
  muted: false,
  request: { query: `host-${i}.example.com`, recordType: 'A', assertions: [] },
})
const walBytes = (file: string) => statSync(`${file}-wal`).size

describe('check creates that arrive together', () => {
  it('are written in one commit: a fraction of the WAL that one commit each writes, every create stored and answered as its own', async () => {
    const together = fresh()
    const alone = fresh()
    const base = walBytes(together.file)
    expect(walBytes(alone.file)).toBe(base)
    const records = await Promise.all(Array.from({ length: 32 }, (_, i) => together.store.checks.create('acc', 'DNS', check(i))))
    for (let i = 0; i < 32; i++) await alone.store.checks.create('acc', 'DNS', check(i))
    // each caller gets its own check back
    expect(records.map((r) => JSON.parse(r.json).name)).toEqual(Array.from({ length: 32 }, (_, i) => `check ${i}`))
    expect(new Set(records.map((r) => r.id)).size).toBe(32)
    const page = await together.store.checks.list('acc', { limit: 100, offset: 0 })
    expect(page!.total).toBe(32)
    expect((await together.store.checks.list('acc', { tags: ['team-3'], limit: 100, offset: 0 }))!.total).toBe(5)
    // 32 commits rewrite the same pages 32 times; one commit writes them once
    expect(walBytes(together.file) - base).toBeLessThan((walBytes(alone.file) - base) / 4)
  })

  it('a write that fails is refused alone; the others of its group are stored', async () => {
    const { store } = fresh()
    store.db.exec('CREATE TABLE group_commit_probe (x INTEGER NOT NULL)')
    const insert = store.db.prepare('INSERT INTO group_commit_probe (x) VALUES (?)')
    const write = groupCommit(store.db, async (fn) => fn())
    const outcomes = await Promise.allSettled([1, 2, null, 4].map((x) => write(() => insert.run(x).changes)))
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    expect(store.db.prepare('SELECT x FROM group_commit_probe ORDER BY x').pluck().all()).toEqual([1, 2, 4])
  })
})

describe('the check list cache', () => {
  it('keeps a page while other tables are written, and drops it when a check is written', async () => {
    const { store } = fresh()
    for (let i = 0; i < 3; i++) await store.checks.create('acc', 'DNS', check(i))
    const query = { limit: 100, offset: 0 }
    const first = await store.checks.list('acc', query)
    await store.variables.create('acc', { key: 'RESULT_LIKE_WRITE', value: 'v', locked: false, secret: false })
    // the same page object: answered from the cache, not read again
    expect(await store.checks.list('acc', query)).toBe(first)
    const made = await store.checks.create('acc', 'DNS', check(3))
    const after = await store.checks.list('acc', query)
    expect(after).not.toBe(first)
    expect(after!.total).toBe(4)
    await store.checks.replace('acc', made.id, 'DNS', { ...check(3), name: 'renamed' })
    const renamed = await store.checks.list('acc', query)
    expect(renamed).not.toBe(after)
    expect(renamed!.json.toString()).toContain('"renamed"')
    await store.checks.delete('acc', made.id)
    expect((await store.checks.list('acc', query))!.total).toBe(3)
  })
})
