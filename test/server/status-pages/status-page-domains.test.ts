/**
 * A status page's customDomain on a server several accounts share: one page per domain on the
 * whole server (without case), never one of the server's own names, and a request to the
 * server's own names always reaches the dashboard, whatever the database holds.
 */
import { request as httpRequest } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../../src/server/index.js'
import { RELEASED as SQLITE_MIGRATIONS } from '../../fixtures/released-migrations/sqlite.js'
import { RELEASED as POSTGRES_MIGRATIONS } from '../../fixtures/released-migrations/postgres.js'
import { databaseFor, onPostgres } from '../../helpers/postgres-databases.js'
import { KEY_A, KEY_B, caller, startTestServer, type Call } from '../helpers.js'

/** GET with another Host header (fetch does not let a caller set it). */
function getWithHost(server: LocalServer, path: string, host: string): Promise<{ status: number; text: string }> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on('error', reject)
    req.end()
  })
}

const page = (name: string, url: string, customDomain?: string | null) => ({ name, url, cards: [], ...(customDomain !== undefined ? { customDomain } : {}) })

describe('customDomain', () => {
  let server: LocalServer
  let a: Call
  let b: Call
  beforeAll(async () => {
    // at most 3 status pages an account (the default is 100)
    server = await startTestServer({ publicUrls: ['https://Monitors.Example.test:8443/base'], limits: { statusPagesPerAccount: 3 } })
    a = caller(server, KEY_A)
    b = caller(server, KEY_B)
  })
  afterAll(async () => {
    await server?.close()
  })

  it("is taken once on the whole server, without case: another account's page or a second page gets a 409 naming the field", async () => {
    const first = await a('POST', '/v1/status-pages', page('A', 'a-status', 'status.acme.test'))
    expect(first.status, first.text).toBe(201)
    // another account, in other letters
    const squat = await b('POST', '/v1/status-pages', page('B', 'b-status', 'STATUS.Acme.TEST'))
    expect(squat.status).toBe(409)
    expect(squat.json).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: 'customDomain STATUS.Acme.TEST is already the customDomain of another status page',
    })
    // nothing of the refused create is left
    expect((await b('GET', '/v1/status-pages')).json.entries).toEqual([])
    // moving a page of its own there
    const own = await b('POST', '/v1/status-pages', page('B', 'b-status'))
    expect(own.status).toBe(201)
    const moved = await b('PUT', `/v1/status-pages/${own.json.id}`, page('B', 'b-status', 'status.acme.test'))
    expect(moved.status).toBe(409)
    expect(moved.json.message).toMatch(/^customDomain status\.acme\.test /)
    // a second page of the same account
    expect((await a('POST', '/v1/status-pages', page('A2', 'a2-status', 'status.acme.test'))).status).toBe(409)
    // the page keeps it through its own updates, and the domain serves it
    expect((await a('PUT', `/v1/status-pages/${first.json.id}`, page('A renamed', 'a-status', 'status.acme.test'))).status).toBe(200)
    expect((await getWithHost(server, '/', 'Status.Acme.Test')).text).toContain('A renamed')

    // given up, it is free for anyone
    expect((await a('PUT', `/v1/status-pages/${first.json.id}`, page('A renamed', 'a-status', null))).status).toBe(200)
    expect((await b('PUT', `/v1/status-pages/${own.json.id}`, page('B', 'b-status', 'status.acme.test'))).status).toBe(200)
    expect((await getWithHost(server, '/', 'status.acme.test')).text).toContain('<title>B')
  })

  it("is never a name of the server: its public URL's host or anything under .localhost (409)", async () => {
    for (const domain of ['monitors.example.test', 'MONITORS.EXAMPLE.TEST', 'app.localhost', ...(hostname().includes('.') ? [hostname()] : [])]) {
      const answer = await a('POST', '/v1/status-pages', page('Takeover', `takeover-${Math.random().toString(36).slice(2, 8)}`, domain))
      expect(answer.status, domain).toBe(409)
      expect(answer.json.message).toBe(`customDomain ${domain} is a name of this server (its API and dashboard are served there); use a domain of your own`)
    }
    // the dashboard is served there
    expect((await getWithHost(server, '/', 'monitors.example.test:8443')).text).toContain('API key')
  })

  it("an account's pages are bounded: past the server's limit a create is a 409 saying so, even several at once; another account is not held to it", async () => {
    const before = (await b('GET', '/v1/status-pages')).json.entries.length
    expect(before).toBe(1)
    expect((await b('POST', '/v1/status-pages', page('B2', 'b2-status'))).status).toBe(201)
    // two at once for the last place: one is made
    const racing = await Promise.all([b('POST', '/v1/status-pages', page('B3', 'b3-status')), b('POST', '/v1/status-pages', page('B4', 'b4-status'))])
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409])
    const refused = await b('POST', '/v1/status-pages', page('B5', 'b5-status'))
    expect(refused.status).toBe(409)
    expect(refused.json).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: 'The account has 3 status pages, the most this server allows an account (monitors server --max-status-pages); delete one first',
    })
    const pages = (await b('GET', '/v1/status-pages')).json.entries as Array<{ id: string }>
    expect(pages).toHaveLength(3)
    // another account has its own
    expect((await a('POST', '/v1/status-pages', page('A3', 'a3-status'))).status).toBe(201)
    // one deleted makes room for one; an update of a page is not a create
    expect((await b('DELETE', `/v1/status-pages/${pages[2].id}`)).status).toBe(204)
    expect((await b('POST', '/v1/status-pages', page('B5', 'b5-status'))).status).toBe(201)
    expect((await b('PUT', `/v1/status-pages/${pages[1].id}`, page('B renamed', 'b-renamed'))).status).toBe(200)
  })

  it('is a domain name: no scheme, port, path or IP address (400 naming the field)', async () => {
    for (const domain of [
      'https://status.acme.test',
      'status.acme.test:8443',
      'status.acme.test/x',
      '10.0.0.1',
      'localhost',
      'status.acme.test.',
      '-x.acme.test',
      '',
    ]) {
      const answer = await a('POST', '/v1/status-pages', page('Bad', 'bad-domain', domain))
      expect(answer.status, domain).toBe(400)
      expect(answer.json.attributes.keys).toEqual(['customDomain'])
      expect(answer.json.message).toMatch(/^customDomain: must be a domain name such as status\.example\.com/)
    }
  })

  it('of a database written before: the oldest of two pages claiming one domain keeps it, and a server name is never served a page', async () => {
    // a database at the schema before the domains became unique, two accounts' pages on one domain
    const dir = mkdtempSync(join(tmpdir(), 'monitors-domains-'))
    let dbPath = join(dir, 'old.db')
    const body = (name: string, url: string, customDomain: string) => JSON.stringify({ name, url, cards: [], customDomain, defaultTheme: 'AUTO' })
    const rows = [
      ['p-old', 'acc-a', 'old-a', body('Oldest', 'old-a', 'Shared.Example.test'), '2026-01-01T00:00:00.000Z'],
      ['p-new', 'acc-b', 'old-b', body('Newer', 'old-b', 'shared.example.TEST'), '2026-01-02T00:00:00.000Z'],
      ['p-own', 'acc-b', 'old-own', body('Takeover', 'old-own', 'monitors.example.test'), '2026-01-03T00:00:00.000Z'],
    ]
    if (onPostgres) {
      const database = await databaseFor(undefined, { empty: true })
      dbPath = database.url
      const client = new pg.Client({ connectionString: database.url })
      await client.connect()
      const before = POSTGRES_MIGRATIONS.findIndex((m) => m.includes('status_pages_custom_domain'))
      await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)')
      for (let i = 0; i < before; i++) {
        await client.query(POSTGRES_MIGRATIONS[i])
        await client.query('INSERT INTO schema_migrations VALUES ($1, $2)', [i + 1, 'before'])
      }
      for (const row of rows) await client.query('INSERT INTO status_pages (id, account_id, url, body, created_at) VALUES ($1, $2, $3, $4, $5)', row)
      await client.end()
    } else {
      const raw = new Database(dbPath)
      const before = SQLITE_MIGRATIONS.findIndex((m) => m.includes('status_pages_custom_domain'))
      for (let i = 0; i < before; i++) raw.exec(SQLITE_MIGRATIONS[i])
      raw.pragma(`user_version = ${before}`)
      for (const row of rows) raw.prepare('INSERT INTO status_pages (id, account_id, url, body, created_at) VALUES (?, ?, ?, ?, ?)').run(...row)
      raw.close()
    }
    const upgraded = await startLocalServer({
      dbPath,
      apiKeys: [
        { key: KEY_A, accountId: 'acc-a' },
        { key: KEY_B, accountId: 'acc-b' },
      ],
      publicUrls: ['https://monitors.example.test'],
    })
    try {
      expect((await caller(upgraded, KEY_A)('GET', '/v1/status-pages/p-old')).json.customDomain).toBe('Shared.Example.test')
      const newer = (await caller(upgraded, KEY_B)('GET', '/v1/status-pages/p-new')).json
      expect(newer).toMatchObject({ name: 'Newer', url: 'old-b', customDomain: null })
      expect((await getWithHost(upgraded, '/', 'shared.example.test')).text).toContain('Oldest')
      // the domain stays taken; the page that lost it can take another one
      expect((await caller(upgraded, KEY_B)('PUT', '/v1/status-pages/p-new', page('Newer', 'old-b', 'shared.example.test'))).status).toBe(409)
      expect((await caller(upgraded, KEY_B)('PUT', '/v1/status-pages/p-new', page('Newer', 'old-b', 'newer.example.test'))).status).toBe(200)
      // a page that holds a name of the server from before is not served there: the dashboard is
      const own = await getWithHost(upgraded, '/', 'monitors.example.test')
      expect(own.text).not.toContain('Takeover')
      expect(own.text).toContain('API key')
    } finally {
      await upgraded.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
