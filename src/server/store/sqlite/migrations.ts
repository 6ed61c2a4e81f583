import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { UserError } from '../../../errors.js'
import { renderMigrations } from '../ddl.js'
import { openConnection, type Db } from './driver.js'

export type { Db }

/**
 * Versioned schema migrations: the shared ones (../migrations.ts, tables described in
 * ../schema.ts) rendered for SQLite, one SQL text each. The database's `user_version` holds
 * the number of migrations applied.
 */
export const MIGRATIONS: readonly string[] = renderMigrations('sqlite')

/** Opens (and creates) the database file and brings its schema up to date. */
export function openDatabase(path: string): Db {
  const memory = path === ':memory:' || path === ''
  if (!memory) closeToOthers(path)
  const db = openConnection(memory ? ':memory:' : path)
  if (!memory) {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
  }
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  migrate(db)
  return db
}

/**
 * The database file made readable by its owner alone (0600; SQLite gives its -wal and -shm the
 * file's mode), its folder too when it is made here (0700): a Playwright suite's run, as a user of
 * its own, or any other user of the machine cannot read it. A file that exists loses what others
 * could do with it (its owner's and group's rights stay as the operator set them).
 */
function closeToOthers(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600))
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      const mode = statSync(file).mode & 0o777
      if (mode & 0o007) chmodSync(file, mode & ~0o007)
    } catch {
      /* none */
    }
  }
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
