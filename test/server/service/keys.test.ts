/**
 * Keys with roles (docs/security.md), on two servers sharing one database (the same SQLite
 * file, or one PostgreSQL database in the PostgreSQL half of the matrix): `monitors keys
 * create|list|revoke --db` is effective on every server at once, a role limits what a key may
 * do (403 with API.md's body), a server started with --api-key adds its keys and revokes none,
 * keys stored before roles keep working as admin, and admin keys manage their account's keys
 * through /v1/keys.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../../src/server/index.js'
import { RELEASED as SQLITE_MIGRATIONS } from '../../fixtures/released-migrations/sqlite.js'
import { RELEASED as POSTGRES_MIGRATIONS } from '../../fixtures/released-migrations/postgres.js'
import { hashKey } from '../../../src/server/keys.js'
import { monitors, monitorsProcess } from '../../helpers/cli.js'
import { startServerProcess } from '../../helpers/server-process.js'
import { databaseFor, onPostgres } from '../../helpers/postgres-databases.js'
import { KEY_A, KEY_B, caller, dnsBody } from '../helpers.js'

const FORBIDDEN = { statusCode: 403, error: 'Forbidden', message: 'Forbidden' }

let dir: string
let dbPath: string
/** what `--db` names for the CLI: the file, or the PostgreSQL database standing for it */
let db: string
let one: LocalServer
let two: LocalServer
const open: LocalServer[] = []

async function start(options: Parameters<typeof startLocalServer>[0]): Promise<LocalServer> {
  const server = await startLocalServer(options)
  open.push(server)
  return server
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monitors-keys-'))
  dbPath = join(dir, 'shared.db')
  const options = { dbPath, apiKeys: [{ key: KEY_A, accountId: 'acc-a' }], rateLimit: { max: 1_000_000, timeWindowMs: 60_000 } }
  one = await start(options)
  two = await start(options)
  db = onPostgres ? (await databaseFor(dbPath)).url : dbPath
})
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()))
  rmSync(dir, { recursive: true, force: true })
})

/** `monitors keys create` as a pipeline runs it: its own process; the key is the last line of stdout. */
async function createKey(account: string, role: string, name?: string): Promise<{ key: string; id: string; stderr: string }> {
  const result = await monitorsProcess(dir, ['keys', 'create', '--db', db, '--account', account, '--role', role, ...(name ? ['--name', name] : [])])
  expect(result.code, result.output).toBe(0)
  const lines = result.stdout.trimEnd().split('\n')
  const key = lines[lines.length - 1]
  expect(key).toMatch(/^mon_[A-Za-z0-9_-]{32}$/)
  const id = /Created key (key_[0-9a-f]{16}) /.exec(result.stderr)?.[1]
  expect(id, result.stderr).toBeDefined()
  return { key, id: id as string, stderr: result.stderr }
}

describe('monitors keys, on two servers sharing one database', () => {
  it('creates a key that both servers accept at once, lists it without the key, and revokes it on both at once', async () => {
    const { key, id, stderr } = await createKey('acc-a', 'write', 'pipeline')
    expect(stderr).toContain(`for account acc-a, role write, name pipeline`)
    expect(stderr).not.toContain(key)
    for (const server of [one, two]) {
      const answer = await caller(server, key)('POST', '/v1/checks/dns', dnsBody({ name: `from ${server.url}` }))
      expect(answer.status, answer.text).toBe(201)
    }

    const listed = await monitors(dir, ['keys', 'list', '--db', db])
    expect(listed.code, listed.output).toBe(0)
    expect(listed.stdout).not.toContain(key)
    const row = listed.stdout.split('\n').find((line) => line.startsWith(id))
    expect(row, listed.stdout).toBeDefined()
    expect(row).toMatch(
      new RegExp(
        `^${id}\\s+${key.slice(0, 8)}\\s+acc-a\\s+write\\s+pipeline\\s+–\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$`,
      ),
    )
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+PREFIX\s+ACCOUNT\s+ROLE\s+NAME\s+LOCATION\s+CREATED\s+LAST USED$/)
    const json = await monitors(dir, ['keys', 'list', '--db', db, '--account', 'acc-a', '--format', 'json'])
    const record = JSON.parse(json.stdout).find((k: { id: string }) => k.id === id)
    expect(record).toMatchObject({ id, prefix: key.slice(0, 8), accountId: 'acc-a', role: 'write', name: 'pipeline' })
    expect(record.lastUsedAt).toEqual(expect.any(String))
    expect(JSON.stringify(JSON.parse(json.stdout))).not.toContain(key)

    const revoked = await monitorsProcess(dir, ['keys', 'revoke', id, '--db', db])
    expect(revoked.code, revoked.output).toBe(0)
    expect(revoked.stdout).toContain(`Revoked key ${id} (account acc-a, role write, name pipeline)`)
    for (const server of [one, two]) expect((await caller(server, key)('GET', '/v1/checks')).status).toBe(401)
    // the key the servers were started with is untouched
    for (const server of [one, two]) expect((await caller(server, KEY_A)('GET', '/v1/checks')).status).toBe(200)
    const again = await monitors(dir, ['keys', 'revoke', id, '--db', db])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`No key ${id} in`)
  })

  it("gives a read key GET only: 403 with API.md's body on a write, the agent routes and the keys", async () => {
    const { key } = await createKey('acc-a', 'read')
    const read = caller(two, key)
    expect((await read('GET', '/v1/checks')).status).toBe(200)
    const refused = await read('POST', '/v1/checks/dns', dnsBody({ name: 'refused' }))
    expect(refused.status).toBe(403)
    expect(refused.json).toEqual(FORBIDDEN)
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/)
    expect((await read('POST', '/v1/variables', { key: 'NOPE', value: 'v' })).status).toBe(403)
    expect((await read('POST', '/v1/agent/claim', { agentId: 'a', locations: ['eu-west-1'] })).json).toEqual(FORBIDDEN)
    expect((await read('GET', '/v1/keys')).status).toBe(403)
    // nothing was written
    expect((await caller(one)('GET', '/v1/variables/NOPE')).status).toBe(404)
    // an unknown route stays a 404, whatever the role
    expect((await read('POST', '/v1/nowhere')).status).toBe(404)
  })

  it('gives an agent key the agent routes only, and a write key everything but the agent routes and the keys', async () => {
    const agent = caller(one, (await createKey('acc-a', 'agent')).key)
    const claim = await agent('POST', '/v1/agent/claim', { agentId: 'agent-1', locations: ['eu-west-1'] })
    expect(claim.status, claim.text).toBe(200)
    expect((await agent('GET', '/v1/checks')).json).toEqual(FORBIDDEN)
    expect((await agent('GET', '/v1/variables')).status).toBe(403)
    expect((await agent('POST', '/v1/check-sessions/trigger', { target: { tags: ['x'] } })).status).toBe(403)

    const write = caller(two, (await createKey('acc-a', 'write')).key)
    expect((await write('POST', '/v1/variables', { key: 'WRITTEN', value: 'v' })).status).toBe(201)
    expect((await write('DELETE', '/v1/variables/WRITTEN')).status).toBe(204)
    expect((await write('POST', '/v1/agent/claim', { agentId: 'w', locations: ['eu-west-1'] })).status).toBe(403)
    expect((await write('POST', '/v1/keys', { role: 'admin' })).status).toBe(403)
  })

  it('tells every key, whatever its role, who it is (GET /v1/accounts/me): its account and role, never the key', async () => {
    for (const role of ['read', 'write', 'agent', 'admin']) {
      const { key, id } = await createKey('acc-a', role, `${role}-me`)
      const me = await caller(two, key)('GET', '/v1/accounts/me')
      expect(me.status, me.text).toBe(200)
      expect(me.json).toEqual({
        id: 'acc-a',
        name: 'acc-a',
        runtimeId: expect.any(String),
        key: { id, name: `${role}-me`, prefix: key.slice(0, 8), role },
        server: { name: 'monitors', version: expect.stringMatching(/^\d+\.\d+\.\d+/) },
      })
      expect(me.text).not.toContain(key)
      // a route to read: no write of it exists
      expect((await caller(two, key)('POST', '/v1/accounts/me', {})).status).toBe(404)
      // and the rest of the API stays as the role allows it
      expect((await caller(two, key)('GET', '/v1/checks')).status).toBe(role === 'agent' ? 403 : 200)
    }
  })

  it("lets an admin key manage its own account's keys through /v1/keys, on any server", async () => {
    const admin = caller(one, KEY_A)
    const made = await admin('POST', '/v1/keys', { role: 'read', name: 'dashboards' })
    expect(made.status, made.text).toBe(201)
    expect(made.json).toMatchObject({
      id: expect.stringMatching(/^key_/),
      accountId: 'acc-a',
      role: 'read',
      name: 'dashboards',
      key: expect.stringMatching(/^mon_/),
    })
    expect((await caller(two, made.json.key)('GET', '/v1/checks')).status).toBe(200)
    const listed = await caller(two, KEY_A)('GET', '/v1/keys')
    expect(listed.json.find((k: { id: string }) => k.id === made.json.id)).toEqual({
      id: made.json.id,
      prefix: made.json.key.slice(0, 8),
      accountId: 'acc-a',
      role: 'read',
      name: 'dashboards',
      privateLocationId: null,
      created_at: expect.any(String),
      lastUsedAt: expect.any(String),
    })
    expect(listed.text).not.toContain(made.json.key)
    expect(listed.json.every((k: { accountId: string }) => k.accountId === 'acc-a')).toBe(true)
    expect((await admin('POST', '/v1/keys', { role: 'owner' })).json.attributes.keys).toEqual(['role'])

    // another account's admin neither sees nor revokes it
    const other = await createKey('acc-b', 'admin')
    expect((await caller(one, other.key)('GET', '/v1/keys')).json.map((k: { id: string }) => k.id)).toEqual([other.id])
    expect((await caller(one, other.key)('DELETE', `/v1/keys/${made.json.id}`)).status).toBe(404)

    expect((await caller(two, KEY_A)('DELETE', `/v1/keys/${made.json.id}`)).status).toBe(204)
    expect((await caller(one, made.json.key)('GET', '/v1/checks')).status).toBe(401)
  })

  it('a server started with --api-key adds its key and revokes none of the others', async () => {
    const { key } = await createKey('acc-a', 'read')
    const third = await start({ dbPath, apiKeys: [{ key: KEY_B, accountId: 'acc-b' }], rateLimit: { max: 1_000_000, timeWindowMs: 60_000 } })
    expect((await caller(one, KEY_A)('GET', '/v1/checks')).status).toBe(200)
    expect((await caller(third, KEY_A)('GET', '/v1/checks')).status).toBe(200)
    expect((await caller(two, key)('GET', '/v1/checks')).status).toBe(200)
    expect((await caller(one, KEY_B)('GET', '/v1/checks', undefined, { 'x-service-account': 'acc-b' })).status).toBe(200)
    // given again with a role, the key is updated, not duplicated
    await (await start({ dbPath, apiKeys: [{ key: KEY_B, accountId: 'acc-b', role: 'read' }] })).close()
    expect((await caller(one, KEY_B)('POST', '/v1/variables', { key: 'B', value: 'v' })).status).toBe(403)
    const listed = JSON.parse((await monitors(dir, ['keys', 'list', '--db', db, '--account', 'acc-b', '--format', 'json'])).stdout)
    expect(listed.filter((k: { role: string }) => k.role === 'read')).toHaveLength(1)
  })

  it('refuses what it cannot do, in one line and without a stack', async () => {
    for (const [args, message] of [
      [['keys', 'create', '--db', db, '--role', 'read'], /needs --account/],
      [['keys', 'create', '--db', db, '--account', 'acc-a'], /needs --role: one of read, write, agent, admin/],
      [['keys', 'revoke', '--db', db], /needs the id of the key/],
      [['keys', 'list', '--db', join(dir, 'nowhere.db')], /No database at .*nowhere\.db/],
      [['keys', 'create', '--db', db, '--account', 'a', '--role', 'owner'], /Invalid values:[\s\S]*role/],
    ] as const) {
      const result = await monitors(dir, [...args])
      expect(result.code, result.output).toBe(1)
      expect(result.stderr).toMatch(message)
      expect(result.stderr).not.toMatch(/\n\s+at /)
    }
  })
})

describe('keys stored before roles', () => {
  it('keep working as admin keys after the upgrade, with an id to revoke them by', async () => {
    const old = 'old-key-0123456789abcdef0123456789'
    let location: string
    if (onPostgres) {
      const { url } = await databaseFor(undefined, { empty: true })
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        // the schema as it was before keys had roles
        await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)')
        const before = POSTGRES_MIGRATIONS.findIndex((m) => m.includes('ADD COLUMN role'))
        for (let i = 0; i < before; i++) {
          await client.query(POSTGRES_MIGRATIONS[i])
          await client.query('INSERT INTO schema_migrations VALUES ($1, $2)', [i + 1, 'before'])
        }
        await client.query(`INSERT INTO api_keys (key_hash, account_id, source, created_at) VALUES ($1, 'team', 'option', '2025-01-01T00:00:00.000Z')`, [
          hashKey(old),
        ])
      } finally {
        await client.end()
      }
      location = url
    } else {
      location = join(dir, 'before-roles.db')
      const raw = new Database(location)
      const before = SQLITE_MIGRATIONS.findIndex((m) => m.includes('ADD COLUMN role'))
      for (let i = 0; i < before; i++) raw.exec(SQLITE_MIGRATIONS[i])
      raw.pragma(`user_version = ${before}`)
      raw.prepare(`INSERT INTO api_keys (key_hash, account_id, source, created_at) VALUES (?, 'team', 'option', '2025-01-01T00:00:00.000Z')`).run(hashKey(old))
      raw.close()
    }
    const server = await start({ dbPath: location })
    const call = caller(server, old)
    expect((await call('POST', '/v1/variables', { key: 'STILL', value: 'v' })).status).toBe(201)
    expect((await call('POST', '/v1/agent/claim', { agentId: 'a', locations: ['eu-west-1'] })).status).toBe(200)
    const listed = await call('GET', '/v1/keys')
    expect(listed.json).toEqual([
      {
        id: expect.stringMatching(/^key_[0-9a-f]{16}$/),
        prefix: '',
        accountId: 'team',
        role: 'admin',
        name: null,
        privateLocationId: null,
        created_at: '2025-01-01T00:00:00.000Z',
        lastUsedAt: expect.any(String),
      },
    ])
  })
})

describe("secrets kept out of the server's arguments", () => {
  /** What `ps` and every user of the machine see of a process: its arguments. */
  const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')
  /** The database with a password in its URL (PostgreSQL's test cluster trusts every password). */
  const withPassword = (password: string) => db.replace(/^(postgres:\/\/[^:@/]+)@/, `$1:${password}@`)

  it.skipIf(!existsSync('/proc/self/cmdline'))(
    'started the documented way (environment and files), its keys, metrics token and database password are not in its arguments',
    async () => {
      const key = 'argv-env-key-0123456789abcdef'
      const fileKey = 'argv-file-key-0123456789abcdef'
      const token = 'argv-metrics-token-0123456789'
      const password = 'argv-db-password-0123456789'
      const secrets = join(dir, 'secrets')
      mkdirSync(secrets, { recursive: true, mode: 0o700 })
      writeFileSync(join(secrets, 'keys'), `# the keys of the team\n${fileKey}:acc-argv:read\n`, { mode: 0o600 })
      writeFileSync(join(secrets, 'metrics-token'), `${token}\n`, { mode: 0o600 })
      const env = { MONITORING_SERVER_DB: onPostgres ? withPassword(password) : db, MONITORING_SERVER_API_KEYS: `${key}:acc-argv` }
      const server = startServerProcess(['--api-keys-file', join(secrets, 'keys'), '--metrics-token-file', join(secrets, 'metrics-token'), '--no-runner'], {
        env,
      })
      try {
        const url = await server.ready
        const args = cmdline(server.child.pid!)
        expect(args).toContain('--api-keys-file')
        for (const secret of [key, fileKey, token, password]) expect(args).not.toContain(secret)
        expect(server.output()).not.toMatch(/WARN --|Warning: --/)
        // the file's key (the file wins over the variable), the token from its file
        expect((await caller({ url }, fileKey)('GET', '/v1/checks')).status).toBe(200)
        expect((await caller({ url }, key)('GET', '/v1/checks')).status).toBe(401)
        expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
      } finally {
        server.child.kill('SIGTERM')
        await server.exited
      }
    },
  )

  it('monitors keys takes the database from --db-file too; a --db with a password gets the warning', async () => {
    mkdirSync(join(dir, 'secrets'), { recursive: true, mode: 0o700 })
    const file = join(dir, 'secrets', 'db-url')
    writeFileSync(file, onPostgres ? withPassword('keys-db-password-0123') : db, { mode: 0o600 })
    const fromFile = await monitors(dir, ['keys', 'list', '--db-file', file, '--format', 'json'])
    expect(fromFile.code, fromFile.output).toBe(0)
    expect(JSON.parse(fromFile.stdout).length).toBeGreaterThan(0)
    expect(fromFile.stderr).not.toMatch(/Warning/)
    if (onPostgres) {
      const inline = await monitors(dir, ['keys', 'list', '--db', withPassword('keys-db-password-0123')])
      expect(inline.code, inline.output).toBe(0)
      expect(inline.stderr).toContain("Warning: --db puts a secret in this process's arguments")
      expect(inline.output).not.toContain('keys-db-password-0123')
    }
  })

  it.skipIf(!existsSync('/proc/self/cmdline'))(
    'given on the command line, each secret gets a warning naming its flag and the safer way, and is gone from the arguments once read',
    async () => {
      const key = 'argv-flag-key-0123456789abcdef'
      const token = 'argv-flag-token-0123456789ab'
      const password = 'argv-flag-password-012345'
      const dbFlag = onPostgres ? ['--db', withPassword(password)] : ['--db', db, '--smtp-url', `smtp://mailer:${password}@127.0.0.1:9`]
      const server = startServerProcess([...dbFlag, '--api-key', `${key}:acc-argv`, '--metrics-token', token, '--no-runner'], {
        until: (output) => output.includes('Prometheus metrics'),
      })
      try {
        const url = await server.ready
        const output = server.output()
        expect(output).toContain(
          "WARN --api-key puts a secret in this process's arguments, which every user of this machine can read (ps, /proc/<pid>/cmdline): give the keys in MONITORING_SERVER_API_KEYS or --api-keys-file PATH instead",
        )
        expect(output).toContain(
          "WARN --metrics-token puts a secret in this process's arguments, which every user of this machine can read (ps, /proc/<pid>/cmdline): give it in MONITORING_SERVER_METRICS_TOKEN or --metrics-token-file PATH instead",
        )
        expect(output).toContain(
          onPostgres
            ? "WARN --db puts a secret in this process's arguments, which every user of this machine can read (ps, /proc/<pid>/cmdline): give the URL in MONITORING_SERVER_DB or --db-file PATH, or leave the password out of it and give it in PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass) instead"
            : "WARN --smtp-url puts a secret in this process's arguments, which every user of this machine can read (ps, /proc/<pid>/cmdline): give the URL in MONITORING_SMTP_URL or --smtp-url-file PATH instead",
        )
        for (const secret of [key, token, password]) expect(output).not.toContain(secret)
        const args = cmdline(server.child.pid!)
        expect(args).toContain('--api-key ***:acc-argv')
        for (const secret of [key, token, password]) expect(args).not.toContain(secret)
        expect((await caller({ url }, key)('GET', '/v1/checks')).status).toBe(200)
      } finally {
        server.child.kill('SIGTERM')
        await server.exited
      }
    },
  )
})
