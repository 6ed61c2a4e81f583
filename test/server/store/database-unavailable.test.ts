/**
 * The server while its database cannot take work: the health probes, a SQLite file another
 * process keeps locked, and one that cannot grow (a full disk). Requests answer 503 with
 * Retry-After (API.md's error body), never 500, and the process stays up; what was written
 * before is still served, and writes work again once the database does. The PostgreSQL restart
 * is test/server/store/database-restart.test.ts.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../../src/server/index.js'
import { onPostgres } from '../../helpers/postgres-databases.js'
import { KEY_A, caller, type Call } from '../helpers.js'

const CHILD = fileURLToPath(new URL('../../helpers/server-child.mjs', import.meta.url))
const keys = [{ key: KEY_A, accountId: 'acc-a' }]
const rateLimit = { max: 1_000_000, timeWindowMs: 60_000 }

function expect503(answer: { status: number; headers: Headers; json: unknown; text: string }): void {
  expect(answer.status, answer.text).toBe(503)
  expect(answer.headers.get('retry-after')).toBe('5')
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
  expect(answer.json).toEqual({ statusCode: 503, error: 'Service Unavailable', message: 'The database is unavailable; retry in 5 seconds' })
}

describe('the health probes', () => {
  let server: LocalServer
  beforeAll(async () => {
    server = await startLocalServer({ dbPath: ':memory:', apiKeys: keys, rateLimit: { max: 1, timeWindowMs: 60_000 } })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("answer 200 OK in plain text without a key, and spend no key's quota", async () => {
    for (let i = 0; i < 3; i++) {
      for (const path of ['/-/readiness', '/-/liveness']) {
        const answer = await fetch(`${server.url}${path}`)
        expect(answer.status).toBe(200)
        expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8')
        expect(answer.headers.get('x-ratelimit-limit')).toBeNull()
        expect(await answer.text()).toBe('OK')
      }
    }
    // the one request of the key's window is still there
    expect((await caller(server)('GET', '/v1/checks')).status).toBe(200)
  })
})

describe.skipIf(onPostgres)('a SQLite file another process holds locked', () => {
  let dir: string
  let server: LocalServer
  let call: Call
  let other: Database.Database

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monitors-locked-'))
    server = await startLocalServer({ dbPath: join(dir, 'server.db'), apiKeys: keys, rateLimit, scheduler: true, schedulerOptions: { tickMs: 100 } })
    call = caller(server)
    other = new Database(join(dir, 'server.db'))
  })
  afterAll(async () => {
    if (other?.inTransaction) other.exec('ROLLBACK')
    other?.close()
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('writes answer 503 with Retry-After after the busy timeout, reads go on, readiness says not ready; all resumes when the lock is let go', async () => {
    expect((await call('POST', '/v1/variables', { key: 'BEFORE', value: 'v' })).status).toBe(201)
    other.exec('BEGIN IMMEDIATE')
    expect503(await call('POST', '/v1/variables', { key: 'DURING', value: 'v' }))
    expect((await call('GET', '/v1/variables/BEFORE')).status).toBe(200)
    const ready = await fetch(`${server.url}/-/readiness`)
    expect(ready.status).toBe(503)
    expect(ready.headers.get('retry-after')).toBe('5')
    expect(await ready.text()).toBe('Service Unavailable: the database is unavailable')
    expect((await fetch(`${server.url}/-/liveness`)).status).toBe(200)
    other.exec('ROLLBACK')

    expect((await call('POST', '/v1/variables', { key: 'AFTER', value: 'v' })).status).toBe(201)
    expect((await call('GET', '/v1/variables/DURING')).status).toBe(404)
    // (the readiness ping is kept for a second)
    await expect.poll(async () => (await fetch(`${server.url}/-/readiness`)).status, { timeout: 5_000, interval: 100 }).toBe(200)
  }, 60_000)
})

const prlimit = spawnSync('prlimit', ['--version']).status === 0

describe.skipIf(onPostgres || !prlimit)('a SQLite file that cannot grow (a full disk)', () => {
  let dir: string
  let child: ChildProcess
  let output = ''
  let exit: number | null | undefined

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monitors-full-'))
    // a file size limit stands for the disk: a write past it fails (EFBIG) as on a full disk
    const options = { dbPath: join(dir, 'server.db'), apiKeys: keys, rateLimit, scheduler: true, schedulerOptions: { tickMs: 100 } }
    child = spawn('prlimit', [`--fsize=${3 * 1024 * 1024}:unlimited`, process.execPath, CHILD, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout!.on('data', (chunk) => (output += chunk))
    child.stderr!.on('data', (chunk) => (output += chunk))
    child.on('exit', (code) => (exit = code))
  })
  afterAll(async () => {
    if (exit === undefined) {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('exit', resolve))
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it('a write that does not fit answers 503, the process stays up and serves what it has; writes work again once there is room', async () => {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setInterval(() => {
        const found = /listening on (http:\/\/\S+)/.exec(output)?.[1]
        if (found || exit !== undefined) {
          clearInterval(timer)
          if (found) resolve(found)
          else reject(new Error(`the server exited with ${exit}: ${output}`))
        }
      }, 20)
    })
    const call = caller({ url })
    const value = 'x'.repeat(200 * 1024)
    const created: string[] = []
    let refused: Awaited<ReturnType<Call>> | undefined
    for (let i = 0; i < 40 && !refused; i++) {
      const answer = await call('POST', '/v1/variables', { key: `V_${i}`, value })
      if (answer.status === 201) created.push(`V_${i}`)
      else refused = answer
    }
    expect(refused, 'the file never filled up').toBeDefined()
    expect503(refused!)
    expect(created.length).toBeGreaterThan(0)
    expect(exit, output).toBeUndefined()
    expect((await call('GET', `/v1/variables/${created[0]}`)).status).toBe(200)
    expect((await fetch(`${url}/-/liveness`)).status).toBe(200)
    // its lock can be taken and reads work: readiness stays 200 (only writes answer 503)
    expect((await fetch(`${url}/-/readiness`)).status).toBe(200)

    // room again (the limit lifted): the same write is taken, and nothing acknowledged is lost
    expect(spawnSync('prlimit', ['--pid', String(child.pid), '--fsize=unlimited']).status).toBe(0)
    const retried = await call('POST', '/v1/variables', { key: 'AFTER', value })
    expect(retried.status, retried.text).toBe(201)
    const list = await call('GET', '/v1/variables?limit=100')
    expect(list.json.map((v: { key: string }) => v.key).sort()).toEqual([...created, 'AFTER'].sort())
    expect(exit, output).toBeUndefined()
    expect(output).not.toMatch(/internal error/)
  }, 60_000)
})
