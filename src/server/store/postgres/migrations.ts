import pg from 'pg'
import { UserError } from '../../../errors.js'
import { renderMigrations } from '../ddl.js'
import { systemClock, type Clock } from '../../../runner/clock.js'

/**
 * Versioned schema migrations: the shared ones (../migrations.ts, tables described in
 * ../schema.ts) rendered for PostgreSQL, one SQL text each, numbered as this store always
 * numbered them (one more than SQLite's from the rate limit's table on). `schema_migrations`
 * holds one row per migration applied.
 */
export const MIGRATIONS: readonly string[] = renderMigrations('postgres')

/** Any number that is ours: the advisory lock two starting servers queue on to migrate once. */
const MIGRATION_LOCK = 7_266_736_172

/** BIGINT and COUNT answers as numbers (ms times and sequence numbers stay far below 2^53). */
export const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
}

/** The URL with its password replaced by "***", for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@')
  }
}

/**
 * Brings the schema up to date: in one transaction under an advisory lock, so two servers
 * starting at the same moment apply each migration once (the second waits, then finds it done).
 */
export async function migrate(pool: pg.Pool, migrations: readonly string[] = MIGRATIONS, clock: Clock = systemClock): Promise<void> {
  const client = await pool.connect()
  // a connection the database ends meanwhile fails the next query (the start fails with it), never the process
  const ignore = () => undefined
  client.on('error', ignore)
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`)
    const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations')
    const current = rows[0].version ?? 0
    if (current > migrations.length) {
      throw new UserError(`The database was written by a newer version of monitors (schema ${current}, this version knows ${migrations.length})`)
    }
    for (let version = current; version < migrations.length; version++) {
      await client.query(migrations[version])
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [version + 1, new Date(clock.now()).toISOString()])
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    client.removeListener('error', ignore)
    client.release()
  }
}
