/**
 * One description of the tables (src/server/store/schema.ts), two stores: a fresh database of
 * each store, made by its migrations, has exactly the described tables, columns, keys and
 * indexes (read back from the database itself); the migrations rendered from the description
 * make the schema the released ones made, version by version (a change of the description
 * that would alter a released migration fails here); and a database made by the released ones
 * at any version upgrades to the description. Each store runs its half: SQLite in the SQLite
 * project, PostgreSQL (databaseFor) in the PostgreSQL one.
 */
import { isDeepStrictEqual } from 'node:util'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { checkHistory, renderMigrations, type Schema, SCHEMA } from '../../../src/server/store/ddl.js'
import { MIGRATIONS as STEPS } from '../../../src/server/store/migrations.js'
import { migrate as migratePostgres, MIGRATIONS as POSTGRES_MIGRATIONS } from '../../../src/server/store/postgres/migrations.js'
import { TABLES, type Dialect, type Table } from '../../../src/server/store/schema.js'
import { migrate as migrateSqlite, MIGRATIONS as SQLITE_MIGRATIONS, openDatabase } from '../../../src/server/store/sqlite/migrations.js'
import { RELEASED as POSTGRES_RELEASED } from '../../fixtures/released-migrations/postgres.js'
import { RELEASED as SQLITE_RELEASED } from '../../fixtures/released-migrations/sqlite.js'
import { databaseFor, onPostgres } from '../../helpers/postgres-databases.js'
import { describedSchema, readPostgresSchema, readSqliteSchema } from '../../helpers/schema-readback.js'

/** The description and history of today, plus migrations a later version could append: a table, a filled NOT NULL column, a partial index, then the index and the column dropped. */
function laterSchema(dropped: boolean): Schema {
  const checks = TABLES.checks
  const tables: Record<string, Table> = {
    ...TABLES,
    check_notes: {
      columns: {
        seq: { type: 'identity', primaryKey: true },
        check_id: { type: 'text', references: 'checks.id' },
        note: { type: 'text', default: 'none' },
        pinned: { type: 'boolean', default: true },
        weight: { type: 'real', nullable: true },
      },
      unique: [['check_id', 'note']],
      indexes: { check_notes_pinned: { columns: ['check_id', 'seq'], where: 'pinned' } },
    },
    checks: {
      ...checks,
      columns: { ...checks.columns, label: { type: 'text', sqlite: { nullable: true }, ...(dropped ? { dropped: true } : {}) } },
      indexes: { ...checks.indexes, checks_label: { columns: ['account_id', 'label'], where: 'label IS NOT NULL', ...(dropped ? { dropped: true } : {}) } },
    },
  }
  const migrations = [
    ...STEPS,
    {
      steps: [
        { createTable: 'check_notes' },
        {
          addColumn: 'checks.label',
          fill: { sqlite: `UPDATE checks SET label = 'of ' || check_type`, postgres: `UPDATE checks SET label = 'of ' || check_type` },
        },
        { createIndex: 'checks_label' },
      ],
    },
    ...(dropped ? [{ steps: [{ dropIndex: 'checks_label' }, { dropColumn: 'checks.label' }] }] : []),
  ] as Schema['migrations']
  return { tables, migrations }
}

/** A column described without a migration that adds it: createTable of migration 1 would make it, an existing database never. */
const forgotten: Schema = {
  tables: { ...TABLES, checks: { ...TABLES.checks, columns: { ...TABLES.checks.columns, label: { type: 'text', nullable: true } } } },
  migrations: STEPS,
}

type Difference = { version: number; rendered: unknown; released: unknown } | undefined

/** The first version at which the rendered migrations make another schema than the released ones did. */
function sqliteDifference(rendered: readonly string[]): Difference {
  const [made, released] = [new Database(':memory:'), new Database(':memory:')]
  try {
    for (let version = 0; version < SQLITE_RELEASED.length; version++) {
      made.exec(rendered[version])
      released.exec(SQLITE_RELEASED[version])
      const [a, b] = [readSqliteSchema(made), readSqliteSchema(released)]
      if (!isDeepStrictEqual(a, b)) return { version: version + 1, rendered: a, released: b }
    }
    return undefined
  } finally {
    made.close()
    released.close()
  }
}

describe.skipIf(onPostgres)('the schema on SQLite', () => {
  it('a fresh database made by the migrations has the described tables, columns, keys and indexes', () => {
    const db = openDatabase(':memory:')
    expect(readSqliteSchema(db).tables).toEqual(describedSchema('sqlite'))
    db.close()
  })

  it('every released migration, now rendered from the description, makes the schema it made', () => {
    const difference = sqliteDifference(SQLITE_MIGRATIONS)
    expect(difference?.rendered, `SQLite schema ${difference?.version}`).toEqual(difference?.released)
    expect(SQLITE_MIGRATIONS.slice(SQLITE_RELEASED.length), 'migrations not in test/fixtures/released-migrations/sqlite.ts: append them there').toEqual([])
    // a column described without its addColumn step changes a released migration: caught
    expect(sqliteDifference(renderMigrations('sqlite', forgotten))?.version).toBe(1)
  })

  it('a database the released migrations made, at any version, upgrades to the description', () => {
    for (let version = 1; version <= SQLITE_RELEASED.length; version++) {
      const old = new Database(':memory:')
      for (let i = 0; i < version; i++) old.exec(SQLITE_RELEASED[i])
      old.pragma(`user_version = ${version}`)
      migrateSqlite(old)
      expect(readSqliteSchema(old).tables, `SQLite upgraded from ${version}`).toEqual(describedSchema('sqlite'))
      old.close()
    }
  })

  it("the filters' migration fills what the rows there are hold: names in lower case, the channel of each delivery", () => {
    const old = new Database(':memory:')
    // the database as the migration before the filters' left it
    const filters = SQLITE_RELEASED.findIndex((sql) => sql.includes('name_folded'))
    for (let i = 0; i < filters; i++) old.exec(SQLITE_RELEASED[i])
    old.pragma(`user_version = ${filters}`)
    old
      .prepare(`INSERT INTO checks (id, account_id, check_type, body) VALUES (?, 'acc', 'DNS', ?)`)
      .run('c1', JSON.stringify({ id: 'c1', name: 'Shop API "EU"' }))
    old.prepare(`INSERT INTO checks (id, account_id, check_type, body) VALUES (?, 'acc', 'DNS', ?)`).run('c2', JSON.stringify({ id: 'c2' }))
    const delivery =
      old.prepare(`INSERT INTO alert_deliveries (id, account_id, check_id, notification_id, alert_type, channel_type, channel, event, status, created_at)
      VALUES (?, 'acc', 'c1', 'n1', 'ALERT_FAILURE', 'WEBHOOK', ?, '{}', 'DELIVERED', '2026-01-01T00:00:00.000Z')`)
    delivery.run('d1', JSON.stringify({ url: 'https://hooks.example/x', alertChannelId: 42 }))
    delivery.run('d2', JSON.stringify({ url: 'https://hooks.example/y' }))
    migrateSqlite(old)
    expect(old.prepare(`SELECT id, name_folded FROM checks ORDER BY id`).all()).toEqual([
      { id: 'c1', name_folded: 'shop api "eu"' },
      { id: 'c2', name_folded: '' },
    ])
    expect(old.prepare(`SELECT id, alert_channel_id FROM alert_deliveries ORDER BY id`).all()).toEqual([
      { id: 'd1', alert_channel_id: 42 },
      { id: 'd2', alert_channel_id: null },
    ])
    old.close()
  })

  it('migrations written as steps add a table, fill a NOT NULL column, make and drop an index and a column', () => {
    const db = openDatabase(':memory:')
    db.prepare(`INSERT INTO checks (id, account_id, check_type, body) VALUES ('c1', 'acc', 'DNS', '{}')`).run()
    const added = laterSchema(false)
    migrateSqlite(db, renderMigrations('sqlite', added))
    expect(db.prepare(`SELECT label FROM checks`).all()).toEqual([{ label: 'of DNS' }])
    expect(readSqliteSchema(db).tables).toEqual(describedSchema('sqlite', added))
    db.prepare(`INSERT INTO check_notes (check_id) VALUES ('c1')`).run()
    expect(db.prepare(`SELECT check_id, note, pinned, weight FROM check_notes`).all()).toEqual([{ check_id: 'c1', note: 'none', pinned: 1, weight: null }])
    const dropped = laterSchema(true)
    migrateSqlite(db, renderMigrations('sqlite', dropped))
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length + 2)
    expect(readSqliteSchema(db).tables).toEqual(describedSchema('sqlite', dropped))
    db.close()
  })

  it('a history that does not make the description is refused, naming the migration, the step and the element', () => {
    const history = (tables: Schema['tables'], migrations: Schema['migrations']) => () => checkHistory('sqlite', { tables, migrations })
    const { tables, migrations } = laterSchema(false)
    // the number of the migration appended after the released ones
    const next = `sqlite migration ${SQLITE_MIGRATIONS.length + 1}`
    // a described table no migration creates
    expect(history(tables, STEPS)).toThrow(/sqlite: no migration creates the table check_notes\n/)
    // a step naming what the description does not have
    expect(history(TABLES, [...STEPS, { steps: [{ createIndex: 'checks_nothing' }] }])).toThrow(
      new RegExp(`${next}, step \\{"createIndex":"checks_nothing"\\}: the description has no index checks_nothing`),
    )
    // a table made twice
    expect(history(TABLES, [...STEPS, { steps: [{ createTable: 'checks' }] }])).toThrow(new RegExp(`${next}, step .*: the table checks exists already`))
    // a NOT NULL column added without a default or a fill
    const strict = { ...tables, checks: { ...tables.checks, columns: { ...tables.checks.columns, label: { type: 'text' as const } } } }
    expect(
      history(strict, [
        ...migrations.slice(0, -1),
        { steps: [{ createTable: 'check_notes' }, { addColumn: 'checks.label' }, { createIndex: 'checks_label' }] },
      ]),
    ).toThrow(new RegExp(`${next}, step \\{"addColumn":"checks\\.label"\\}: a NOT NULL column without a default needs a fill`))
    // SQLite cannot make the filled column NOT NULL afterwards
    expect(history(strict, migrations)).toThrow(/SQLite cannot make an added column NOT NULL: mark it `sqlite: \{ nullable: true \}`/)
    // marked dropped, but nothing drops it
    expect(history(laterSchema(true).tables, migrations)).toThrow(
      /sqlite: the column checks\.label is marked dropped in the description, but no migration drops it/,
    )
    // a key cannot be added to a table that exists
    const keyed = {
      ...tables,
      checks: { ...tables.checks, columns: { ...tables.checks.columns, label: { type: 'text' as const, unique: true, nullable: true } } },
    }
    expect(history(keyed, migrations)).toThrow(/an added column cannot be a key or unique: add a unique index/)
    // today's history holds on both stores
    for (const dialect of ['sqlite', 'postgres'] as Dialect[]) expect(() => checkHistory(dialect, SCHEMA)).not.toThrow()
  })
})

describe.skipIf(!onPostgres)('the schema on PostgreSQL', () => {
  const clients: pg.Client[] = []
  const dropped: (() => Promise<void>)[] = []
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end()))
    for (const drop of dropped) await drop()
  })
  /** An empty database, and a client on it. */
  const empty = async () => {
    const database = await databaseFor(undefined, { empty: true })
    dropped.push(database.drop)
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    clients.push(client)
    return { url: database.url, client }
  }
  const migrated = async (url: string, migrations?: readonly string[]) => {
    const pool = new pg.Pool({ connectionString: url, max: 1 })
    try {
      await migratePostgres(pool, migrations)
    } finally {
      await pool.end()
    }
  }

  it('a fresh database made by the migrations has the described tables, columns, keys and indexes', async () => {
    const { url, client } = await empty()
    await migrated(url)
    expect((await readPostgresSchema(client)).tables).toEqual(describedSchema('postgres'))
  })

  const reset = (client: pg.Client) => client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public')
  /** The first version at which the rendered migrations make another schema than the released ones did. */
  const postgresDifference = async (rendered: readonly string[]): Promise<Difference> => {
    const [made, released] = [await empty(), await empty()]
    for (let version = 0; version < POSTGRES_RELEASED.length; version++) {
      await made.client.query(rendered[version])
      await released.client.query(POSTGRES_RELEASED[version])
      const [a, b] = [await readPostgresSchema(made.client), await readPostgresSchema(released.client)]
      if (!isDeepStrictEqual(a, b)) return { version: version + 1, rendered: a, released: b }
    }
    return undefined
  }

  it('every released migration, now rendered from the description, makes the schema it made', async () => {
    const difference = await postgresDifference(POSTGRES_MIGRATIONS)
    expect(difference?.rendered, `PostgreSQL schema ${difference?.version}`).toEqual(difference?.released)
    expect(POSTGRES_MIGRATIONS.slice(POSTGRES_RELEASED.length), 'migrations not in test/fixtures/released-migrations/postgres.ts: append them there').toEqual(
      [],
    )
    // a column described without its addColumn step changes a released migration: caught
    expect((await postgresDifference(renderMigrations('postgres', forgotten)))?.version).toBe(1)
    // the schema read back at each of 26 versions, twice: about 20 s on a loaded machine
  }, 60_000)

  it('a database the released migrations made, at any version, upgrades to the description', async () => {
    const old = await empty()
    for (let version = 1; version <= POSTGRES_RELEASED.length; version++) {
      await reset(old.client)
      await old.client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)')
      for (let i = 0; i < version; i++) {
        await old.client.query(POSTGRES_RELEASED[i])
        await old.client.query('INSERT INTO schema_migrations VALUES ($1, $2)', [i + 1, 'released'])
      }
      await migrated(old.url)
      expect((await readPostgresSchema(old.client)).tables, `PostgreSQL upgraded from ${version}`).toEqual(describedSchema('postgres'))
    }
  }, 60_000)

  it("the filters' migration fills what the rows there are hold: names in lower case, the channel of each delivery", async () => {
    const old = await empty()
    await reset(old.client)
    await old.client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)')
    // the database as the migration before the filters' left it
    const filters = POSTGRES_RELEASED.findIndex((sql) => sql.includes('name_folded'))
    for (let i = 0; i < filters; i++) {
      await old.client.query(POSTGRES_RELEASED[i])
      await old.client.query('INSERT INTO schema_migrations VALUES ($1, $2)', [i + 1, 'released'])
    }
    const check = `INSERT INTO checks (id, account_id, check_type, activated, body) VALUES ($1, 'acc', 'DNS', true, $2)`
    await old.client.query(check, ['c1', JSON.stringify({ id: 'c1', name: 'Shop API "EU" \u0000' })])
    await old.client.query(check, ['c2', JSON.stringify({ id: 'c2' })])
    const delivery = `INSERT INTO alert_deliveries (id, account_id, check_id, notification_id, alert_type, channel_type, channel, event, status, created_at)
      VALUES ($1, 'acc', 'c1', 'n1', 'ALERT_FAILURE', 'WEBHOOK', $2, '{}', 'DELIVERED', '2026-01-01T00:00:00.000Z')`
    await old.client.query(delivery, ['d1', JSON.stringify({ url: 'https://hooks.example/x', headers: [{ alertChannelId: 7 }], alertChannelId: 42 })])
    await old.client.query(delivery, ['d2', JSON.stringify({ url: 'https://hooks.example/y' })])
    await migrated(old.url)
    expect((await old.client.query(`SELECT id, name_folded FROM checks ORDER BY id`)).rows).toEqual([
      { id: 'c1', name_folded: 'shop api "eu" ' },
      { id: 'c2', name_folded: '' },
    ])
    expect((await old.client.query(`SELECT id, alert_channel_id::int AS alert_channel_id FROM alert_deliveries ORDER BY id`)).rows).toEqual([
      { id: 'd1', alert_channel_id: 42 },
      { id: 'd2', alert_channel_id: null },
    ])
  })

  it('migrations written as steps add a table, fill a NOT NULL column, make and drop an index and a column', async () => {
    const { url, client } = await empty()
    await migrated(url)
    await client.query(`INSERT INTO checks (id, account_id, check_type, activated, body) VALUES ('c1', 'acc', 'DNS', true, '{}')`)
    const added = laterSchema(false)
    await migrated(url, renderMigrations('postgres', added))
    expect((await client.query(`SELECT label FROM checks`)).rows).toEqual([{ label: 'of DNS' }])
    expect((await readPostgresSchema(client)).tables).toEqual(describedSchema('postgres', added))
    await client.query(`INSERT INTO check_notes (check_id) VALUES ('c1')`)
    expect((await client.query(`SELECT check_id, note, pinned, weight FROM check_notes`)).rows).toEqual([
      { check_id: 'c1', note: 'none', pinned: true, weight: null },
    ])
    await expect(client.query(`INSERT INTO checks (id, account_id, check_type, activated, body) VALUES ('c2', 'acc', 'DNS', true, '{}')`)).rejects.toThrow(
      /null value in column "label"/,
    )
    const dropped = laterSchema(true)
    await migrated(url, renderMigrations('postgres', dropped))
    const versions = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations')
    expect(versions.rows[0].n).toBe(POSTGRES_MIGRATIONS.length + 2)
    expect((await readPostgresSchema(client)).tables).toEqual(describedSchema('postgres', dropped))
  })
})
