import { createRequire } from 'node:module'
import type Database from 'better-sqlite3'

/**
 * The SQLite driver of the store: better-sqlite3 (an optional dependency of the package) when it
 * loads, else Node.js's own `node:sqlite` (Node.js 22.16 and newer: unflagged since 22.13, with
 * `isTransaction`, `setReturnArrays` and unknown named parameters, which the store needs, since
 * 22.16) behind the part of better-sqlite3's API the store uses. better-sqlite3 comes first: it is the driver the whole test
 * matrix runs on, and `node:sqlite` is still experimental in Node.js 22 and 24. When neither
 * loads, better-sqlite3's own error is thrown (the CLI turns it into what to install).
 * MONITORS_SQLITE_DRIVER=node:sqlite (or better-sqlite3) chooses one and never falls back.
 */
export type Db = Database.Database

const require = createRequire(import.meta.url)

/** Opens `location` (a file, or ':memory:') with the driver that loads here. */
export function openConnection(location: string): Db {
  const wanted = process.env.MONITORS_SQLITE_DRIVER
  if (wanted !== undefined && wanted !== '' && wanted !== 'better-sqlite3' && wanted !== 'node:sqlite') {
    throw new Error(`MONITORS_SQLITE_DRIVER must be better-sqlite3 or node:sqlite, got ${JSON.stringify(wanted)}`)
  }
  if (wanted === 'node:sqlite') return openBuiltin(location, builtinSqlite() ?? failBuiltin())
  let failure: unknown
  try {
    const BetterSqlite = require('better-sqlite3') as typeof Database
    return new BetterSqlite(location)
  } catch (error) {
    if (wanted === 'better-sqlite3') throw error
    failure = error
  }
  const builtin = builtinSqlite()
  if (builtin === undefined) throw failure
  return openBuiltin(location, builtin)
}

function failBuiltin(): never {
  throw new Error(`MONITORS_SQLITE_DRIVER=node:sqlite needs Node.js 22.16 or newer (this is ${process.version})`)
}

interface NodeStatement {
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint }
  get(...params: unknown[]): unknown
  all(...params: unknown[]): unknown[]
  setReturnArrays(enabled: boolean): void
  setAllowUnknownNamedParameters(enabled: boolean): void
}
interface NodeDatabase {
  prepare(sql: string): NodeStatement
  exec(sql: string): void
  close(): void
  readonly isOpen: boolean
  readonly isTransaction: boolean
}
type NodeSqlite = { DatabaseSync: new (location: string) => NodeDatabase }

/**
 * `node:sqlite` when this Node.js has it with what the store needs; undefined otherwise. Loading
 * it prints an ExperimentalWarning on Node.js 22 and 24, which is kept off the output: which
 * driver the server uses is said in its start-up line.
 */
function builtinSqlite(): NodeSqlite | undefined {
  const emit = process.emitWarning
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (/SQLite is an experimental feature/.test(String(warning))) return
    return (emit as (...args: unknown[]) => void).call(process, warning, ...rest)
  }) as typeof process.emitWarning
  try {
    const sqlite = process.getBuiltinModule?.('node:sqlite') as NodeSqlite | undefined
    if (sqlite?.DatabaseSync === undefined) return undefined
    // what the store needs, on an instance (the accessors are the instance's own)
    const probe = new sqlite.DatabaseSync(':memory:')
    try {
      const fits =
        typeof probe.isTransaction === 'boolean' &&
        typeof probe.isOpen === 'boolean' &&
        typeof probe.prepare('SELECT 1').setReturnArrays === 'function' &&
        typeof probe.prepare('SELECT 1').setAllowUnknownNamedParameters === 'function'
      return fits ? sqlite : undefined
    } finally {
      probe.close()
    }
  } catch {
    return undefined
  } finally {
    process.emitWarning = emit
  }
}

function openBuiltin(location: string, sqlite: NodeSqlite): Db {
  return new BuiltinDatabase(translated(() => new sqlite.DatabaseSync(location))) as unknown as Db
}

/** SQLite's primary and extended result codes by number, named as better-sqlite3 names them. */
const CODES: Record<number, string> = {
  1: 'ERROR',
  2: 'INTERNAL',
  3: 'PERM',
  4: 'ABORT',
  5: 'BUSY',
  6: 'LOCKED',
  7: 'NOMEM',
  8: 'READONLY',
  9: 'INTERRUPT',
  10: 'IOERR',
  11: 'CORRUPT',
  12: 'NOTFOUND',
  13: 'FULL',
  14: 'CANTOPEN',
  15: 'PROTOCOL',
  16: 'EMPTY',
  17: 'SCHEMA',
  18: 'TOOBIG',
  19: 'CONSTRAINT',
  20: 'MISMATCH',
  21: 'MISUSE',
  22: 'NOLFS',
  23: 'AUTH',
  24: 'FORMAT',
  25: 'RANGE',
  26: 'NOTADB',
  517: 'BUSY_SNAPSHOT',
  773: 'BUSY_TIMEOUT',
  262: 'LOCKED_SHAREDCACHE',
  275: 'CONSTRAINT_CHECK',
  531: 'CONSTRAINT_COMMITHOOK',
  787: 'CONSTRAINT_FOREIGNKEY',
  1043: 'CONSTRAINT_FUNCTION',
  1299: 'CONSTRAINT_NOTNULL',
  1555: 'CONSTRAINT_PRIMARYKEY',
  1811: 'CONSTRAINT_TRIGGER',
  2067: 'CONSTRAINT_UNIQUE',
  2323: 'CONSTRAINT_VTAB',
  2579: 'CONSTRAINT_ROWID',
}

/** Runs `fn`; an error of node:sqlite gets better-sqlite3's `code` (SQLITE_BUSY, SQLITE_CONSTRAINT_UNIQUE, ...). */
function translated<T>(fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    const errcode = (error as { errcode?: unknown } | null)?.errcode
    if (typeof errcode === 'number' && error instanceof Error) {
      const name = CODES[errcode] ?? (CODES[errcode & 0xff] !== undefined ? `${CODES[errcode & 0xff]}_${errcode >> 8}` : `UNKNOWN_${errcode}`)
      Object.defineProperty(error, 'code', { value: `SQLITE_${name}`, configurable: true, writable: true })
    }
    throw error
  }
}

/** better-sqlite3's parameters (an object of named ones, positional ones, arrays of them) as node:sqlite takes them. */
function parameters(given: unknown[]): unknown[] {
  const named: unknown[] = []
  const positional: unknown[] = []
  for (const value of given) {
    if (Array.isArray(value)) positional.push(...value)
    else if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value)) named.push(value)
    else positional.push(value)
  }
  return [...named, ...positional]
}

class BuiltinStatement {
  private shape: 'object' | 'pluck' | 'raw' = 'object'
  constructor(private readonly statement: NodeStatement) {
    // better-sqlite3 ignores named parameters the statement does not use
    statement.setAllowUnknownNamedParameters(true)
  }

  pluck(on = true): this {
    return this.mode(on ? 'pluck' : 'object')
  }

  raw(on = true): this {
    return this.mode(on ? 'raw' : 'object')
  }

  private mode(shape: 'object' | 'pluck' | 'raw'): this {
    this.shape = shape
    this.statement.setReturnArrays(shape !== 'object')
    return this
  }

  run(...params: unknown[]) {
    return translated(() => this.statement.run(...parameters(params)))
  }

  get(...params: unknown[]): unknown {
    const row = translated(() => this.statement.get(...parameters(params)))
    return row === undefined ? undefined : this.row(row)
  }

  all(...params: unknown[]): unknown[] {
    return translated(() => this.statement.all(...parameters(params))).map((row) => this.row(row))
  }

  private row(row: unknown): unknown {
    if (this.shape === 'pluck') return (row as unknown[])[0]
    if (this.shape === 'raw') return row
    // node:sqlite's rows have no prototype; better-sqlite3's are plain objects
    return { ...(row as object) }
  }
}

type Transaction = ((...args: unknown[]) => unknown) & { deferred: Transaction; immediate: Transaction; exclusive: Transaction }

class BuiltinDatabase {
  private savepoints = 0
  constructor(private readonly db: NodeDatabase) {}

  get open(): boolean {
    return this.db.isOpen
  }

  get inTransaction(): boolean {
    return this.db.isOpen && this.db.isTransaction
  }

  prepare(sql: string): BuiltinStatement {
    return new BuiltinStatement(translated(() => this.db.prepare(sql)))
  }

  exec(sql: string): this {
    translated(() => this.db.exec(sql))
    return this
  }

  pragma(source: string, options: { simple?: boolean } = {}): unknown {
    const statement = this.prepare(`PRAGMA ${source}`)
    return options.simple ? statement.pluck().get() : statement.all()
  }

  close(): this {
    if (this.db.isOpen) this.db.close()
    return this
  }

  /** As better-sqlite3's: BEGIN (DEFERRED, IMMEDIATE, EXCLUSIVE) ... COMMIT, a SAVEPOINT inside another transaction, rolled back when `fn` throws. */
  transaction(fn: (...args: unknown[]) => unknown): Transaction {
    const variant =
      (begin: string) =>
      (...args: unknown[]) => {
        if (this.inTransaction) {
          const name = `monitors_${++this.savepoints}`
          this.exec(`SAVEPOINT ${name}`)
          try {
            const result = fn(...args)
            this.exec(`RELEASE ${name}`)
            return result
          } catch (error) {
            if (this.inTransaction) this.exec(`ROLLBACK TO ${name}`).exec(`RELEASE ${name}`)
            throw error
          } finally {
            this.savepoints--
          }
        }
        this.exec(begin)
        try {
          const result = fn(...args)
          this.exec('COMMIT')
          return result
        } catch (error) {
          if (this.inTransaction) this.exec('ROLLBACK')
          throw error
        }
      }
    const deferred = variant('BEGIN') as Transaction
    deferred.deferred = deferred
    deferred.immediate = variant('BEGIN IMMEDIATE') as Transaction
    deferred.exclusive = variant('BEGIN EXCLUSIVE') as Transaction
    return deferred
  }
}
