import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { UserError } from '../../../errors.js'
import { renderMigrations } from '../ddl.js'

export type Db = Database.Database

/**
 * Versioned schema migrations: the shared ones (../migrations.ts, tables described in
 * ../schema.ts) rendered for SQLite, one SQL text each. The database's `user_version` holds
 * the number of migrations applied.
 */
export const MIGRATIONS: readonly string[] = renderMigrations('sqlite')

/** Opens (and creates) the database file and brings its schema up to date. */
export function openDatabase(path: string): Db {
  const memory = path === ':memory:' || path === ''
  if (!memory) mkdirSync(dirname(path), { recursive: true })
  const db = new Database(memory ? ':memory:' : path)
  if (!memory) {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
  }
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  migrate(db)
  return db
}

export function migrate(db: Db, migrations: readonly string[] = MIGRATIONS): void {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current > migrations.length) {
    throw new UserError(`The database was written by a newer version of monitors (schema ${current}, this version knows ${migrations.length})`)
  }
  for (let version = current; version < migrations.length; version++) {
    db.transaction(() => {
      db.exec(migrations[version])
      db.pragma(`user_version = ${version + 1}`)
    })()
  }
}

