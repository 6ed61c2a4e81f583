/**
 * Load: 50 concurrent clients for 20 s of mixed reads and writes against one server and one
 * database file. No answer other than 429 may be an error, and the database must be intact
 * afterwards (integrity check, and the rows agree with what the clients saw succeed).
 */
import Database from 'better-sqlite3'
import { onPostgres } from '../helpers/postgres-databases.js'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { describe, expect, it } from 'vitest'
import { startLocalServer } from '../../src/server/index.js'

const CLIENTS = 50
const DURATION_MS = Number(process.env.LOAD_SECONDS ?? 20) * 1000

describe('load', () => {
  it(`50 clients for ${DURATION_MS / 1000} s: no error but 429, database intact`, async () => {
    const dbPath = join(mkdtempSync(join(tmpdir(), 'monitors-load-')), 'server.db')
    // one key per client, five accounts; the limit is raised so the writes reach the database
    // (a 429 would still be accepted as the one allowed error)
    const apiKeys = Array.from({ length: CLIENTS }, (_, i) => ({ key: `load-key-${i}`, accountId: `load-${i % 5}` }))
    const server = await startLocalServer({ dbPath, apiKeys, rateLimit: { max: 2000, timeWindowMs: 60_000 } })
    const pool = new Pool(server.url, { connections: CLIENTS })
    const counts = new Map<number, number>()
    const created = new Map<string, Set<string>>() // account → check ids alive as the clients saw it
    const failures: string[] = []
    let requests = 0
    const deadline = Date.now() + DURATION_MS

    async function call(key: string, method: string, path: string, body?: unknown) {
      const res = await pool.request({
        method: method as 'GET',
        path,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      })
      const text = await res.body.text()
      requests++
      counts.set(res.statusCode, (counts.get(res.statusCode) ?? 0) + 1)
      if (res.statusCode >= 400 && res.statusCode !== 429) failures.push(`${method} ${path} → ${res.statusCode} ${text.slice(0, 200)}`)
      return { status: res.statusCode, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined }
    }

    await Promise.all(
      apiKeys.map(async ({ key, accountId }, client) => {
        const mine = created.get(accountId) ?? new Set<string>()
        created.set(accountId, mine)
        const own: string[] = []
        let n = 0
        while (Date.now() < deadline) {
          n++
          const roll = (n * 7 + client) % 10
          if (roll < 3 || own.length === 0) {
            const res = await call(key, 'POST', '/v1/checks/dns', {
              name: `c${client}-${n}`,
              request: { query: `h${n}.example.com` },
              tags: [`client-${client}`],
            })
            if (res.status === 201) {
              own.push(res.json!.id as string)
              mine.add(res.json!.id as string)
            }
          } else if (roll < 5) {
            const id = own[n % own.length]!
            await call(key, 'PUT', `/v1/checks/dns/${id}`, { name: `c${client}-${n}-updated`, request: { query: `u${n}.example.com` }, frequency: 5 })
          } else if (roll < 6 && own.length > 1) {
            const id = own.shift()!
            const res = await call(key, 'DELETE', `/v1/checks/${id}`)
            if (res.status === 204) mine.delete(id)
          } else if (roll < 8) {
            await call(key, 'GET', `/v1/checks?limit=100&tag=client-${client}`)
          } else if (roll < 9) {
            await call(key, 'GET', `/v1/checks/${own[n % own.length]}`)
          } else {
            await call(key, 'POST', '/v1/variables', { key: `V_${client}_${n}`, value: 'x' })
          }
        }
      }),
    )

    // still serving, and every account sees exactly the checks its clients kept
    for (const [accountId, ids] of created) {
      const key = apiKeys.find((k) => k.accountId === accountId)!.key
      const seen = new Set<string>()
      for (let page = 1; ; page++) {
        const res = await call(key, 'GET', `/v1/checks?limit=100&page=${page}`)
        expect(res.status).toBe(200)
        const items = res.json as unknown as Array<{ id: string }>
        for (const item of items) seen.add(item.id)
        if (items.length < 100) break
      }
      expect(seen).toEqual(ids)
    }
    await pool.close()
    await server.close()

    // the SQLite file itself (in the PostgreSQL half of the matrix the lists above are the proof)
    let total = [...created.values()].reduce((sum, ids) => sum + ids.size, 0)
    if (!onPostgres) {
      const db = new Database(dbPath, { readonly: true })
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
      total = db.prepare('SELECT count(*) FROM checks').pluck().get() as number
      db.close()
      expect(total).toBe([...created.values()].reduce((sum, ids) => sum + ids.size, 0))
    }

    console.log(
      `load: ${requests} requests in ${DURATION_MS / 1000} s (${Math.round(requests / (DURATION_MS / 1000))}/s), statuses ${JSON.stringify(Object.fromEntries([...counts].sort()))}, ${total} checks stored`,
    )
    expect(failures.slice(0, 5)).toEqual([])
    expect(requests).toBeGreaterThan(CLIENTS)
  }, 120_000)
})
