/**
 * Error groups from real failing runs: messages that differ only by numbers, ports and
 * addresses are one group; archive flags through PATCH, cleared by the next event unless
 * archived for ever.
 */
import { createHash, randomUUID } from 'node:crypto'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { onPostgres } from '../../helpers/postgres-databases.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { KEY_B, caller, expect400 } from '../helpers.js'
import { startResultsBench, type ResultsBench } from './results-helpers.js'

let bench: ResultsBench
let second: DnsServerHandle

beforeAll(async () => {
  bench = await startResultsBench()
  second = await startDnsServer()
})
afterAll(async () => {
  await second.close()
  await bench.close()
})

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const FIELDS = ['archiveForEver', 'archivedUntilNextEvent', 'checkId', 'cleanedErrorMessage', 'errorHash', 'firstSeen', 'id', 'lastSeen', 'rawErrorMessage']

/** Runs `sql` on the server's database (SQLite file or PostgreSQL URL), answering its rows. */
async function onDatabase(dbPath: string, sql: string): Promise<Array<Record<string, unknown>>> {
  if (onPostgres) {
    const client = new pg.Client({ connectionString: dbPath })
    await client.connect()
    try {
      return (await client.query(sql)).rows
    } finally {
      await client.end()
    }
  }
  const db = new Database(dbPath)
  try {
    if (/^\s*SELECT/i.test(sql)) return db.prepare(sql).all() as Array<Record<string, unknown>>
    db.exec(sql)
    return []
  } finally {
    db.close()
  }
}

/** Counts the updates of error_groups' rows from now on (each a dead row version on PostgreSQL): a trigger into a table of its own. */
async function countGroupWrites(dbPath: string): Promise<() => Promise<number>> {
  await onDatabase(
    dbPath,
    onPostgres
      ? `CREATE TABLE group_writes (id TEXT NOT NULL);
       CREATE FUNCTION count_group_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO group_writes VALUES (NEW.id); RETURN NULL; END $$;
       CREATE TRIGGER group_writes AFTER UPDATE ON error_groups FOR EACH ROW EXECUTE FUNCTION count_group_write();`
      : `CREATE TABLE group_writes (id TEXT NOT NULL);
       CREATE TRIGGER group_writes AFTER UPDATE ON error_groups BEGIN INSERT INTO group_writes VALUES (NEW.id); END;`,
  )
  return async () => Number((await onDatabase(dbPath, 'SELECT count(*) AS n FROM group_writes'))[0].n)
}

/** points the check at a name server (the two test servers listen on different ports) */
async function useServer(id: string, query: string, server: DnsServerHandle, maxResponseTime: number) {
  const answer = await bench.call('PUT', `/v1/checks/dns/${id}`, {
    name: 'grouped',
    doubleCheck: false,
    maxResponseTime,
    request: { query, nameServer: server.address, port: server.port },
  })
  expect(answer.status).toBe(200)
}

describe('error groups', () => {
  it('merges failures whose messages differ by numbers and addresses; a new message is a new group', async () => {
    const query = 'groups.example.test'
    const id = await bench.createCheck(query, { name: 'grouped', maxResponseTime: 400 })
    expect((await bench.call('GET', `/v1/error-groups/checks/${id}`)).json).toEqual([])

    // SERVFAIL from two servers on different ports: one group
    bench.dns.set(query, 'A', { rcode: 'SERVFAIL' })
    second.set(query, 'A', { rcode: 'SERVFAIL' })
    const one = await bench.runAndRecord(id)
    await useServer(id, query, second, 400)
    const two = await bench.runAndRecord(id)
    expect(one.result.error).not.toBe(two.result.error)
    expect(one.result.error).toContain(String(bench.dns.port))

    let groups = (await bench.call('GET', `/v1/error-groups/checks/${id}`)).json
    expect(groups).toHaveLength(1)
    const [group] = groups
    expect(Object.keys(group).sort()).toEqual(FIELDS)
    expect(group.checkId).toBe(id)
    expect(group.rawErrorMessage).toBe(two.result.error)
    expect(group.cleanedErrorMessage).not.toMatch(/\d/)
    expect(group.cleanedErrorMessage).toContain('SERVFAIL')
    expect(group.errorHash).toBe(sha256(group.cleanedErrorMessage))
    expect(group.firstSeen).toBe(one.result.stoppedAt)
    expect(group.lastSeen).toBe(two.result.stoppedAt)
    expect(group.archivedUntilNextEvent).toBe(false)

    // no answer at all, within differing limits from differing servers: a second group
    second.set(query, 'A', { drop: true })
    bench.dns.set(query, 'A', { drop: true })
    const slow1 = await bench.runAndRecord(id)
    await useServer(id, query, bench.dns, 250)
    const slow2 = await bench.runAndRecord(id)
    expect(slow1.result.error).toMatch(/within 400 ms/)
    expect(slow2.result.error).toMatch(/within 250 ms/)
    groups = (await bench.call('GET', `/v1/error-groups/checks/${id}`)).json
    expect(groups).toHaveLength(2)
    expect(groups[0].id).toBe(group.id)
    expect(groups[1].rawErrorMessage).toBe(slow2.result.error)
    expect(groups[1].firstSeen).toBe(slow1.result.stoppedAt)

    // a passing run adds nothing
    bench.dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    await bench.runAndRecord(id)
    expect((await bench.call('GET', `/v1/error-groups/checks/${id}`)).json).toHaveLength(2)

    const all = (await bench.call('GET', '/v1/error-groups')).json
    expect(all.filter((g: { checkId: string }) => g.checkId === id).map((g: { id: string }) => g.id)).toEqual(groups.map((g: { id: string }) => g.id))
    expect((await bench.call('GET', `/v1/error-groups/${group.id}`)).json).toEqual(groups[0])
  })

  it("a failed assertion's expected value is part of its group: another target is another group, another measured value the same group", async () => {
    const query = 'assertion-groups.example.test'
    bench.dns.set(query, 'A', { records: [{ type: 'A', data: '192.0.2.1' }] })
    // never true on loopback: each run fails with the time it measured
    const slower = (target: string) => ({ request: { query, assertions: [{ source: 'RESPONSE_TIME', comparison: 'GREATER_THAN', target }] } })
    const id = await bench.createCheck(query, { name: 'assertion groups', ...slower('100000') })
    const runs = [await bench.runAndRecord(id), await bench.runAndRecord(id)]
    for (const { result } of runs) expect(result.error).toMatch(/^RESPONSE_TIME GREATER_THAN "100000" ms failed: got [\d.]+ ms$/)
    let groups = (await bench.call('GET', `/v1/error-groups/checks/${id}`)).json
    expect(groups).toHaveLength(1)
    expect(groups[0].cleanedErrorMessage).toBe('RESPONSE_TIME GREATER_THAN "100000" ms failed: got <number> ms')

    const put = await bench.call('PUT', `/v1/checks/dns/${id}`, {
      name: 'assertion groups',
      doubleCheck: false,
      maxResponseTime: 3000,
      ...slower('200000'),
      request: { ...slower('200000').request, nameServer: bench.dns.address, port: bench.dns.port },
    })
    expect(put.status, put.text).toBe(200)
    await bench.runAndRecord(id)
    groups = (await bench.call('GET', `/v1/error-groups/checks/${id}`)).json
    expect(groups.map((g: { cleanedErrorMessage: string }) => g.cleanedErrorMessage)).toEqual([
      'RESPONSE_TIME GREATER_THAN "100000" ms failed: got <number> ms',
      'RESPONSE_TIME GREATER_THAN "200000" ms failed: got <number> ms',
    ])
    expect(groups[0].errorHash).not.toBe(groups[1].errorHash)
  })

  it('archived until the next event comes back with the next failure; archived for ever stays archived', async () => {
    const query = 'archive.example.test'
    const id = await bench.createCheck(query)
    bench.dns.set(query, 'A', { rcode: 'REFUSED' })
    await bench.runAndRecord(id)
    const [group] = (await bench.call('GET', `/v1/error-groups/checks/${id}`)).json

    const archived = await bench.call('PATCH', `/v1/error-groups/${group.id}`, { archivedUntilNextEvent: true })
    expect(archived.status).toBe(200)
    expect(archived.json.archivedUntilNextEvent).toBe(true)
    expect(archived.json.archiveForEver).toBe(false)
    expect((await bench.call('GET', `/v1/error-groups/${group.id}`)).json.archivedUntilNextEvent).toBe(true)

    const next = await bench.runAndRecord(id)
    let now = (await bench.call('GET', `/v1/error-groups/${group.id}`)).json
    expect(now.archivedUntilNextEvent).toBe(false)
    expect(now.lastSeen).toBe(next.result.stoppedAt)

    const forEver = await bench.call('PATCH', `/v1/error-groups/${group.id}`, { archiveForEver: true, archivedUntilNextEvent: true })
    expect(forEver.json.archiveForEver).toBe(true)
    const later = await bench.runAndRecord(id)
    now = (await bench.call('GET', `/v1/error-groups/${group.id}`)).json
    expect(now.archiveForEver).toBe(true)
    expect(now.lastSeen).toBe(later.result.stoppedAt)

    // an empty body changes nothing; false un-archives
    expect((await bench.call('PATCH', `/v1/error-groups/${group.id}`, {})).json).toEqual(now)
    expect((await bench.call('PATCH', `/v1/error-groups/${group.id}`, { archiveForEver: false })).json.archiveForEver).toBe(false)
  })

  it("a failure repeating the check's newest error rewrites no error group: its lastSeen and message come with the next read; another error keeps the last ones", async () => {
    const query = 'repeating.example.test'
    const id = await bench.createCheck(query)
    bench.dns.set(query, 'A', { rcode: 'SERVFAIL' })
    const first = await bench.runAndRecord(id)
    const writes = await countGroupWrites(bench.dbPath)
    const again = [await bench.runAndRecord(id), await bench.runAndRecord(id)]
    let [group] = (await bench.call('GET', `/v1/error-groups/checks/${id}`)).json
    expect(group).toMatchObject({ firstSeen: first.result.stoppedAt, lastSeen: again[1].result.stoppedAt, rawErrorMessage: again[1].result.error })
    expect(await writes()).toBe(0)
    expect((await bench.call('GET', `/v1/error-groups/${group.id}`)).json).toEqual(group)

    // archived until the next event: the next failure writes the group once, to bring it back
    expect((await bench.call('PATCH', `/v1/error-groups/${group.id}`, { archivedUntilNextEvent: true })).json).toMatchObject({
      archivedUntilNextEvent: true,
      lastSeen: group.lastSeen,
    })
    const back = await bench.runAndRecord(id)
    const after = await bench.runAndRecord(id)
    group = (await bench.call('GET', `/v1/error-groups/${group.id}`)).json
    expect(group).toMatchObject({ archivedUntilNextEvent: false, lastSeen: after.result.stoppedAt })
    expect(Date.parse(after.result.stoppedAt)).toBeGreaterThan(Date.parse(back.result.stoppedAt))
    expect(await writes()).toBe(2)

    // another error: a new group, and the previous one keeps its last failure as the status held it
    bench.dns.set(query, 'A', { rcode: 'REFUSED' })
    const refused = [await bench.runAndRecord(id), await bench.runAndRecord(id)]
    const groups = (await bench.call('GET', `/v1/error-groups/checks/${id}`)).json
    expect(groups).toHaveLength(2)
    expect(groups[0]).toEqual(group)
    expect(groups[1]).toMatchObject({ firstSeen: refused[0].result.stoppedAt, lastSeen: refused[1].result.stoppedAt, rawErrorMessage: refused[1].result.error })
    expect(await writes()).toBe(3)

    // late results (an agent's clock an hour behind) move a group's firstSeen back, never its lastSeen or message
    const lateRefused = await bench.runAndRecord(id, { clockOffsetMs: -3_600_000 })
    bench.dns.set(query, 'A', { rcode: 'SERVFAIL' })
    const lateServfail = await bench.runAndRecord(id, { clockOffsetMs: -3_600_000 })
    const late = (await bench.call('GET', `/v1/error-groups/checks/${id}`)).json
    expect(late[0]).toEqual({ ...group, firstSeen: lateServfail.result.stoppedAt })
    expect(late[1]).toEqual({ ...groups[1], firstSeen: lateRefused.result.stoppedAt })
    await onDatabase(bench.dbPath, `DROP TRIGGER group_writes${onPostgres ? ' ON error_groups' : ''}`)
  })

  it("validates PATCH strictly, answers 404 for unknown ids and other accounts' groups", async () => {
    const query = 'strict.example.test'
    const id = await bench.createCheck(query)
    bench.dns.set(query, 'A', { rcode: 'SERVFAIL' })
    await bench.runAndRecord(id)
    const [group] = (await bench.call('GET', `/v1/error-groups/checks/${id}`)).json

    expect(expect400(await bench.call('PATCH', `/v1/error-groups/${group.id}`, { archiveForEver: 'yes' }), 'payload')).toEqual(['archiveForEver'])
    expect(expect400(await bench.call('PATCH', `/v1/error-groups/${group.id}`, { archived: true }), 'payload')).toContain('archived')
    expect400(await bench.call('PATCH', `/v1/error-groups/${group.id}`, [true]), 'payload')
    expect400(await bench.call('PATCH', `/v1/error-groups/${group.id}`, '{"archiveForEver": tru'), 'payload')

    for (const [method, path] of [
      ['GET', `/v1/error-groups/${randomUUID()}`],
      ['PATCH', `/v1/error-groups/${randomUUID()}`],
      ['GET', `/v1/error-groups/checks/${randomUUID()}`],
    ]) {
      const answer = await bench.call(method, path, method === 'PATCH' ? { archiveForEver: true } : undefined)
      expect(answer.status).toBe(404)
    }
  })
})

describe('another account', () => {
  it('sees none of these statuses, error groups or badges', async () => {
    const id = await bench.createCheck('private.example.test')
    bench.dns.set('private.example.test', 'A', { rcode: 'SERVFAIL' })
    await bench.runAndRecord(id)
    const [group] = (await bench.call('GET', `/v1/error-groups/checks/${id}`)).json
    expect(group).toBeDefined()
    const b = caller(bench.server, KEY_B)
    expect((await b('GET', '/v1/error-groups')).json).toEqual([])
    expect((await b('GET', '/v1/check-statuses')).json).toEqual([])
    for (const [method, path] of [
      ['GET', `/v1/error-groups/${group.id}`],
      ['PATCH', `/v1/error-groups/${group.id}`],
      ['GET', `/v1/error-groups/checks/${id}`],
      ['GET', `/v1/check-statuses/${id}`],
      ['GET', `/v1/badges/checks/${id}`],
    ]) {
      const answer = await b(method, path, method === 'PATCH' ? { archiveForEver: true } : undefined)
      expect(answer.status, `${method} ${path}`).toBe(404)
    }
    expect((await bench.call('GET', `/v1/error-groups/${group.id}`)).json.archiveForEver).toBe(false)
  })
})
