/**
 * A database's schema as the database itself tells it (SQLite: sqlite_master and its pragmas;
 * PostgreSQL: information_schema and the catalogs), in one shape for both stores, and the
 * shape the description (src/server/store/schema.ts) says a store's schema must have.
 */
import type Database from 'better-sqlite3'
import type pg from 'pg'
import { isNullable, tablesOf, type Schema, SCHEMA } from '../../src/server/store/ddl.js'
import type { Column, Dialect, LogicalType } from '../../src/server/store/schema.js'

export interface ReadColumn {
  name: string
  type: string
  notNull: boolean
  default: string | null
  /** A number the database gives each new row (SQLite: AUTOINCREMENT; PostgreSQL: an identity column). */
  identity: boolean
}

export interface ReadIndex {
  columns: string[]
  unique: boolean
  where: string | null
}

export interface ReadTable {
  /** In the database's order. */
  columns: ReadColumn[]
  primaryKey: string[]
  unique: string[][]
  foreignKeys: string[]
  checks: string[]
  indexes: Record<string, ReadIndex>
  withoutRowid: boolean
}

export type ReadSchema = Record<string, ReadTable>

/** What a schema holds besides the tables' shape: names the database gave, triggers, functions. */
export interface ReadExtras {
  /** Names of the indexes and constraints of keys and UNIQUE columns (SQLite's autoindexes, PostgreSQL's constraints). */
  constraintNames: string[]
  triggers: string[]
  functions: string[]
}

/** A WHERE or CHECK as either database prints it: no casts, parentheses or doubled spaces. */
export function normalizeSql(text: string): string {
  return text
    .replace(/::[a-z ]+?(?=[\s)]|$)/gi, '')
    .replace(/[()]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
}

const byJson = <T>(list: T[]): T[] => list.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))

/** Tables of the store's own bookkeeping, not of the schema (PostgreSQL's schema_migrations). */
const BOOKKEEPING = new Set(['schema_migrations'])

export function readSqliteSchema(db: Database.Database): { tables: ReadSchema; extras: ReadExtras } {
  const tables: ReadSchema = {}
  const extras: ReadExtras = { constraintNames: [], triggers: [], functions: [] }
  const list = db
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'result_runs%' ORDER BY name`)
    .all() as { name: string; sql: string }[]
  const rowless = new Set((db.pragma('table_list') as { name: string; wr: number }[]).filter((t) => t.wr === 1).map((t) => t.name))
  for (const { name, sql } of list) {
    const info = db.pragma(`table_info(${name})`) as { name: string; type: string; notnull: number; dflt_value: string | null; pk: number }[]
    const primaryKey = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name)
    const autoincrement = /\bAUTOINCREMENT\b/i.test(sql)
    const columns = info.map((c) => ({
      name: c.name,
      type: c.type,
      notNull: c.notnull === 1,
      default: c.dflt_value,
      identity: autoincrement && primaryKey.length === 1 && primaryKey[0] === c.name,
    }))
    const unique: string[][] = []
    const indexes: Record<string, ReadIndex> = {}
    for (const index of db.pragma(`index_list(${name})`) as { name: string; unique: number; origin: string; partial: number }[]) {
      const indexColumns = (db.pragma(`index_info(${index.name})`) as { seqno: number; name: string }[]).sort((a, b) => a.seqno - b.seqno).map((c) => c.name)
      if (index.origin === 'c') {
        const text = (db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`).get(index.name) as { sql: string }).sql
        const where = index.partial ? normalizeSql(/\bWHERE\b([\s\S]*)$/i.exec(text)?.[1] ?? '') : null
        indexes[index.name] = { columns: indexColumns, unique: index.unique === 1, where }
      } else {
        if (index.origin === 'u') unique.push(indexColumns)
        extras.constraintNames.push(index.name)
      }
    }
    const foreignKeys = (db.pragma(`foreign_key_list(${name})`) as { table: string; from: string; to: string; on_delete: string }[]).map(
      (f) => `${f.from} -> ${f.table}.${f.to} on delete ${f.on_delete.toLowerCase()}`,
    )
    const checks = [...sql.matchAll(/\bCHECK\s*\(((?:[^()]|\([^()]*\))*)\)/gi)].map((m) => normalizeSql(m[1]))
    tables[name] = {
      columns,
      primaryKey,
      unique: byJson(unique),
      foreignKeys: byJson(foreignKeys),
      checks: checks.sort(),
      indexes,
      withoutRowid: rowless.has(name),
    }
  }
  const triggers = db.prepare(`SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name`).all() as {
    name: string
    tbl_name: string
    sql: string
  }[]
  extras.triggers = triggers.map((t) => `${t.tbl_name}: ${t.sql.replace(/\s+/g, ' ')}`)
  extras.constraintNames.sort()
  return { tables, extras }
}

export async function readPostgresSchema(client: pg.Client | pg.Pool): Promise<{ tables: ReadSchema; extras: ReadExtras }> {
  const tables: ReadSchema = {}
  const extras: ReadExtras = { constraintNames: [], triggers: [], functions: [] }
  const { rows: names } = await client.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name NOT LIKE 'result_runs%' AND table_name NOT LIKE 'result_blocks%' AND table_name NOT LIKE 'analytics_deltas%' AND table_name !~ '^analytics_rollups_[0-9]' ORDER BY table_name`,
  )
  for (const { table_name: name } of names) {
    if (BOOKKEEPING.has(name)) continue
    const { rows } = await client.query<{ column_name: string; data_type: string; is_nullable: string; column_default: string | null; is_identity: string }>(
      `SELECT column_name, data_type, is_nullable, column_default, is_identity FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
      [name],
    )
    const columns = rows.map((c) => ({
      name: c.column_name,
      type: c.data_type,
      notNull: c.is_nullable === 'NO',
      default: c.column_default === null ? null : normalizeSql(c.column_default),
      identity: c.is_identity === 'YES',
    }))
    tables[name] = { columns, primaryKey: [], unique: [], foreignKeys: [], checks: [], indexes: {}, withoutRowid: false }
  }
  const attnames = (key: string, relation: string) =>
    `(SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(${key}) WITH ORDINALITY k(attnum, ord) JOIN pg_attribute a ON a.attrelid = ${relation} AND a.attnum = k.attnum)`
  const { rows: constraints } = await client.query<{
    name: string
    type: string
    table: string
    columns: string[]
    ref_table: string | null
    ref_columns: string[] | null
    on_delete: string
    def: string
  }>(
    `SELECT c.conname AS name, c.contype AS type, t.relname AS table, ${attnames('c.conkey', 'c.conrelid')} AS columns,
            f.relname AS ref_table, ${attnames('c.confkey', 'c.confrelid')} AS ref_columns, c.confdeltype AS on_delete, pg_get_constraintdef(c.oid) AS def
     FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace LEFT JOIN pg_class f ON f.oid = c.confrelid
     WHERE n.nspname = 'public' AND c.contype IN ('p', 'u', 'f', 'c') ORDER BY c.conname`,
  )
  for (const c of constraints) {
    const table = tables[c.table]
    if (!table) continue
    extras.constraintNames.push(c.name)
    if (c.type === 'p') table.primaryKey = c.columns
    if (c.type === 'u') table.unique.push(c.columns)
    if (c.type === 'f')
      table.foreignKeys.push(
        `${c.columns.join(', ')} -> ${c.ref_table}.${(c.ref_columns ?? []).join(', ')} on delete ${({ c: 'cascade', a: 'no action', r: 'restrict', n: 'set null', d: 'set default' } as Record<string, string>)[c.on_delete]}`,
      )
    if (c.type === 'c') table.checks.push(normalizeSql(c.def.replace(/^CHECK\s*/i, '')))
  }
  const { rows: indexes } = await client.query<{ name: string; table: string; unique: boolean; where: string | null; columns: string[] }>(
    `SELECT i.relname AS name, t.relname AS table, x.indisunique AS unique, pg_get_expr(x.indpred, x.indrelid) AS where,
            ${attnames('x.indkey::int2[]', 'x.indrelid')} AS columns
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.conrelid = x.indrelid)
     ORDER BY i.relname`,
  )
  for (const index of indexes) {
    const table = tables[index.table]
    if (table) table.indexes[index.name] = { columns: index.columns, unique: index.unique, where: index.where === null ? null : normalizeSql(index.where) }
  }
  for (const table of Object.values(tables)) {
    byJson(table.unique)
    byJson(table.foreignKeys)
    table.checks.sort()
  }
  const { rows: triggers } = await client.query<{ def: string }>(
    `SELECT pg_get_triggerdef(g.oid) AS def FROM pg_trigger g JOIN pg_class t ON t.oid = g.tgrelid JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = 'public' AND NOT g.tgisinternal ORDER BY g.tgname`,
  )
  extras.triggers = triggers.map((t) => t.def)
  const { rows: functions } = await client.query<{ name: string; source: string }>(
    `SELECT p.proname AS name, p.prosrc AS source FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY p.proname`,
  )
  extras.functions = functions.map((f) => `${f.name}: ${f.source.replace(/\s+/g, ' ').trim()}`)
  return { tables, extras }
}

/** What each logical type reads back as. */
const READ_TYPES: Record<Dialect, Record<LogicalType, string>> = {
  sqlite: { text: 'TEXT', integer: 'INTEGER', bigint: 'INTEGER', real: 'REAL', boolean: 'INTEGER', identity: 'INTEGER' },
  postgres: { text: 'text', integer: 'integer', bigint: 'bigint', real: 'double precision', boolean: 'boolean', identity: 'bigint' },
}

function expectedDefault(column: Column, dialect: Dialect): string | null {
  const value = column.default
  if (value === undefined) return null
  if (typeof value === 'string') return `'${value.replace(/'/g, "''")}'`
  if (typeof value === 'boolean') return dialect === 'sqlite' ? String(Number(value)) : String(value)
  return String(value)
}

function expectedNotNull(column: Column, dialect: Dialect): boolean {
  // SQLite: a single-column key is NOT NULL only when written so (it is not); PostgreSQL: always
  if (column.primaryKey || column.type === 'identity') return dialect === 'postgres'
  return !isNullable(column, dialect)
}

/** The schema the description says a store has once every migration ran. */
export function describedSchema(dialect: Dialect, schema: Schema = SCHEMA): ReadSchema {
  const out: ReadSchema = {}
  for (const [name, table] of Object.entries(tablesOf(dialect, schema))) {
    const entries = Object.entries(table.columns)
    const columns = entries.map(([column, c]) => ({
      name: column,
      type: READ_TYPES[dialect][c.type],
      notNull: expectedNotNull(c, dialect),
      default: expectedDefault(c, dialect),
      identity: c.type === 'identity',
    }))
    const keyColumn = entries.filter(([, c]) => c.primaryKey).map(([column]) => column)
    const primaryKey = table.primaryKey ? [...table.primaryKey] : keyColumn
    const unique = [...entries.filter(([, c]) => c.unique).map(([column]) => [column]), ...(table.unique ?? []).map((u) => [...u])]
    const foreignKeys = entries.filter(([, c]) => c.references).map(([column, c]) => `${column} -> ${c.references} on delete cascade`)
    const checks = entries.filter(([, c]) => c.check).map(([, c]) => normalizeSql(c.check as string))
    const indexes = Object.fromEntries(
      Object.entries(table.indexes ?? {}).map(([index, i]) => [
        index,
        { columns: [...i.columns], unique: i.unique === true, where: i.where ? normalizeSql(i.where) : null },
      ]),
    )
    out[name] = {
      columns,
      primaryKey,
      unique: byJson(unique),
      foreignKeys: byJson(foreignKeys),
      checks: checks.sort(),
      indexes,
      withoutRowid: dialect === 'sqlite' && table.sqlite?.withoutRowid === true,
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)))
}
