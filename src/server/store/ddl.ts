import { MIGRATIONS, type Migration, type Step } from './migrations.js'
import { TABLES, type Column, type Dialect, type Index, type LogicalType, type Table } from './schema.js'

/**
 * The description of the tables (schema.ts) and the steps of the migrations (migrations.ts)
 * rendered to one dialect's DDL. Each table, column and index of the description is made by
 * exactly one step of the migrations that apply to a store: `checkHistory` says which
 * element is made twice, never, or used before it exists, naming the migration and the step.
 */

export interface Schema {
  tables: Readonly<Record<string, Table>>
  migrations: readonly Migration[]
}

export const SCHEMA: Schema = { tables: TABLES, migrations: MIGRATIONS }

const TYPES: Record<Dialect, Record<Exclude<LogicalType, 'identity'>, string>> = {
  sqlite: { text: 'TEXT', integer: 'INTEGER', bigint: 'INTEGER', real: 'REAL', boolean: 'INTEGER' },
  postgres: { text: 'TEXT', integer: 'INTEGER', bigint: 'BIGINT', real: 'DOUBLE PRECISION', boolean: 'BOOLEAN' },
}

/** Whether an element (table, column) exists in this dialect's store. */
export function inDialect(element: { only?: Dialect }, dialect: Dialect): boolean {
  return element.only === undefined || element.only === dialect
}

/** NULL allowed in this dialect (a primary key column: see schema.ts). */
export function isNullable(column: Column, dialect: Dialect): boolean {
  return column[dialect]?.nullable ?? column.nullable ?? false
}

/** The migrations a store runs, in order: its migration N is the N-th of these. */
export function migrationsOf(dialect: Dialect, schema: Schema = SCHEMA): readonly Migration[] {
  return schema.migrations.filter((m) => inDialect(m, dialect))
}

/** The tables as a store has them once every migration ran: what is dropped and what is the other store's left out. */
export function tablesOf(dialect: Dialect, schema: Schema = SCHEMA): Record<string, Table> {
  const out: Record<string, Table> = {}
  for (const [name, table] of Object.entries(schema.tables)) {
    if (table.dropped || !inDialect(table, dialect)) continue
    const columns = Object.fromEntries(Object.entries(table.columns).filter(([, c]) => !c.dropped && inDialect(c, dialect)))
    const indexes = Object.fromEntries(Object.entries(table.indexes ?? {}).filter(([, i]) => !i.dropped))
    out[name] = { ...table, columns, indexes }
  }
  return out
}

/** Each migration of the dialect as one SQL text (statements ending with `;`). */
export function renderMigrations(dialect: Dialect, schema: Schema = SCHEMA): string[] {
  checkHistory(dialect, schema)
  const own = ownSteps(dialect, schema)
  return migrationsOf(dialect, schema).map((migration) => `\n${migration.steps.flatMap((step) => renderStep(step, dialect, schema, own)).join('\n')}\n`)
}

function split(qualified: string): [string, string] {
  const dot = qualified.indexOf('.')
  return [qualified.slice(0, dot), qualified.slice(dot + 1)]
}

/** SQL written indented in a template literal, without the indentation its lines share. */
function dedent(text: string): string {
  const lines = text
    .replace(/^\s*\n/, '')
    .trimEnd()
    .split('\n')
  const indent = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)?.[0].length ?? 0))
  return lines.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)).join('\n')
}

function literal(value: string | number | boolean, dialect: Dialect): string {
  if (typeof value === 'string') return `'${value.replace(/'/g, "''")}'`
  if (typeof value === 'boolean') return dialect === 'sqlite' ? (value ? '1' : '0') : String(value)
  return String(value)
}

/** A column's definition; `addable` leaves out NOT NULL (added after a fill). */
function columnSql(name: string, column: Column, dialect: Dialect, addable = false): string {
  const parts = [name]
  if (column.type === 'identity') {
    parts.push(dialect === 'sqlite' ? 'INTEGER PRIMARY KEY AUTOINCREMENT' : `BIGINT GENERATED ALWAYS AS IDENTITY${column.primaryKey ? ' PRIMARY KEY' : ''}`)
  } else {
    parts.push(TYPES[dialect][column.type])
    if (column.primaryKey) parts.push('PRIMARY KEY')
    else if (!isNullable(column, dialect) && !addable) parts.push('NOT NULL')
  }
  if (column.unique) parts.push('UNIQUE')
  if (column.default !== undefined) parts.push(`DEFAULT ${literal(column.default, dialect)}`)
  if (column.check) parts.push(`CHECK (${column.check})`)
  if (column.references) {
    const [table, to] = split(column.references)
    parts.push(`REFERENCES ${table} (${to}) ON DELETE CASCADE`)
  }
  return parts.join(' ')
}

function indexSql(name: string, table: string, index: Index): string {
  return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${name} ON ${table} (${index.columns.join(', ')})${index.where ? ` WHERE ${index.where}` : ''};`
}

/** The columns and indexes that a step of their own makes (`addColumn`, `createIndex`), as `table.column` and index names. */
interface OwnSteps {
  columns: Set<string>
  indexes: Set<string>
}

function ownSteps(dialect: Dialect, schema: Schema): OwnSteps {
  const own: OwnSteps = { columns: new Set(), indexes: new Set() }
  for (const migration of migrationsOf(dialect, schema)) {
    for (const step of migration.steps) {
      if ('addColumn' in step) own.columns.add(step.addColumn)
      if ('createIndex' in step) own.indexes.add(step.createIndex)
    }
  }
  return own
}

function findIndex(schema: Schema, name: string): { table: string; index: Index } | undefined {
  for (const [table, t] of Object.entries(schema.tables)) {
    const index = t.indexes?.[name]
    if (index) return { table, index }
  }
  return undefined
}

function createTableSql(name: string, table: Table, dialect: Dialect, own: OwnSteps): string[] {
  const lines = Object.entries(table.columns)
    .filter(([column, c]) => inDialect(c, dialect) && !own.columns.has(`${name}.${column}`))
    .map(([column, c]) => columnSql(column, c, dialect))
  if (table.primaryKey) lines.push(`PRIMARY KEY (${table.primaryKey.join(', ')})`)
  for (const unique of table.unique ?? []) lines.push(`UNIQUE (${unique.join(', ')})`)
  const options = dialect === 'sqlite' && table.sqlite?.withoutRowid ? ' WITHOUT ROWID' : ''
  const indexes = Object.entries(table.indexes ?? {})
    .filter(([index]) => !own.indexes.has(index))
    .map(([index, i]) => indexSql(index, name, i))
  return [`CREATE TABLE ${name} (\n  ${lines.join(',\n  ')}\n)${options};`, ...indexes]
}

function renderStep(step: Step, dialect: Dialect, schema: Schema, own: OwnSteps): string[] {
  if ('createTable' in step) return createTableSql(step.createTable, schema.tables[step.createTable], dialect, own)
  if ('addColumn' in step) {
    const [table, name] = split(step.addColumn)
    const column = schema.tables[table].columns[name]
    const later = step.fill !== undefined && !isNullable(column, dialect)
    const out = [`ALTER TABLE ${table} ADD COLUMN ${columnSql(name, column, dialect, later)};`]
    if (step.fill) out.push(`${dedent(step.fill[dialect]).replace(/;$/, '')};`)
    if (later) out.push(`ALTER TABLE ${table} ALTER COLUMN ${name} SET NOT NULL;`)
    return out
  }
  if ('createIndex' in step) {
    const found = findIndex(schema, step.createIndex) as { table: string; index: Index }
    return [indexSql(step.createIndex, found.table, found.index)]
  }
  if ('dropIndex' in step) return [`DROP INDEX ${step.dropIndex};`]
  if ('dropColumn' in step) {
    const [table, name] = split(step.dropColumn)
    return [`ALTER TABLE ${table} DROP COLUMN ${name};`]
  }
  if ('dropTable' in step) return [`DROP TABLE ${step.dropTable};`]
  const text = dedent(step.sql[dialect])
  return text === '' ? [] : [text]
}

/**
 * Walks the dialect's migrations as a database would, and fails (naming the migration and
 * the step) when a step names what the description does not have, makes what exists, drops
 * what does not, or when the end is not the description. A store refuses to start on a
 * history that does not hold; the tests say it first.
 */
export function checkHistory(dialect: Dialect, schema: Schema = SCHEMA): void {
  const own = ownSteps(dialect, schema)
  const tables = new Set<string>()
  const columns = new Set<string>()
  const indexes = new Set<string>()
  const problems: string[] = []
  migrationsOf(dialect, schema).forEach((migration, i) => {
    for (const step of migration.steps) {
      const problem = walkStep(step, dialect, schema, own, { tables, columns, indexes })
      if (problem) problems.push(`${dialect} migration ${i + 1}, step ${JSON.stringify(step).slice(0, 80)}: ${problem}`)
    }
  })
  const wanted = tablesOf(dialect, schema)
  const want = {
    tables: new Set(Object.keys(wanted)),
    columns: new Set(Object.entries(wanted).flatMap(([name, t]) => Object.keys(t.columns).map((c) => `${name}.${c}`))),
    indexes: new Set(Object.values(wanted).flatMap((t) => Object.keys(t.indexes ?? {}))),
  }
  const made = { tables, columns, indexes }
  for (const kind of ['tables', 'columns', 'indexes'] as const) {
    const what = { tables: 'table', columns: 'column', indexes: 'index' }[kind]
    for (const name of want[kind]) if (!made[kind].has(name)) problems.push(`${dialect}: no migration creates the ${what} ${name}`)
    for (const name of made[kind])
      if (!want[kind].has(name)) problems.push(`${dialect}: the ${what} ${name} is marked dropped in the description, but no migration drops it`)
  }
  if (problems.length > 0) throw new Error(`The schema's migrations do not match its description (src/server/store/schema.ts):\n${problems.join('\n')}`)
}

interface Existing {
  tables: Set<string>
  columns: Set<string>
  indexes: Set<string>
}

/** One step of checkHistory: what is wrong with it, if anything, after applying it to `now`. */
function walkStep(step: Step, dialect: Dialect, schema: Schema, own: OwnSteps, now: Existing): string | undefined {
  if ('createTable' in step) {
    const table = schema.tables[step.createTable]
    if (!table || !inDialect(table, dialect)) return `the description has no table ${step.createTable} for ${dialect}`
    if (now.tables.has(step.createTable)) return `the table ${step.createTable} exists already`
    now.tables.add(step.createTable)
    for (const [column, c] of Object.entries(table.columns)) {
      if (inDialect(c, dialect) && !own.columns.has(`${step.createTable}.${column}`)) now.columns.add(`${step.createTable}.${column}`)
    }
    for (const index of Object.keys(table.indexes ?? {})) if (!own.indexes.has(index)) now.indexes.add(index)
    return undefined
  }
  if ('addColumn' in step) {
    const [table, name] = split(step.addColumn)
    const column = schema.tables[table]?.columns[name]
    if (!column || !inDialect(column, dialect)) return `the description has no column ${step.addColumn} for ${dialect}`
    if (!now.tables.has(table)) return `the table ${table} does not exist yet`
    if (now.columns.has(step.addColumn)) return `the column ${step.addColumn} exists already`
    if (column.primaryKey || column.unique || column.type === 'identity') return 'an added column cannot be a key or unique: add a unique index (createIndex)'
    if (!isNullable(column, dialect) && column.default === undefined) {
      if (!step.fill) return 'a NOT NULL column without a default needs a fill for the rows there are'
      if (dialect === 'sqlite')
        return 'SQLite cannot make an added column NOT NULL: mark it `sqlite: { nullable: true }` (and write it always) or give it a default'
    }
    now.columns.add(step.addColumn)
    return undefined
  }
  if ('createIndex' in step) {
    const found = findIndex(schema, step.createIndex)
    if (!found || !now.tables.has(found.table)) return `the description has no index ${step.createIndex} on a table that exists`
    if (now.indexes.has(step.createIndex)) return `the index ${step.createIndex} exists already`
    const missing = found.index.columns.filter((c) => !now.columns.has(`${found.table}.${c}`))
    if (missing.length > 0) return `the columns ${missing.join(', ')} do not exist yet`
    now.indexes.add(step.createIndex)
    return undefined
  }
  if ('dropIndex' in step) {
    if (!findIndex(schema, step.dropIndex)?.index.dropped) return `the index ${step.dropIndex} is not marked dropped in the description`
    if (!now.indexes.delete(step.dropIndex)) return `the index ${step.dropIndex} does not exist`
    return undefined
  }
  if ('dropColumn' in step) {
    const [table, name] = split(step.dropColumn)
    if (!schema.tables[table]?.columns[name]?.dropped) return `the column ${step.dropColumn} is not marked dropped in the description`
    if (!now.columns.delete(step.dropColumn)) return `the column ${step.dropColumn} does not exist`
    return undefined
  }
  if ('dropTable' in step) {
    if (!schema.tables[step.dropTable]?.dropped) return `the table ${step.dropTable} is not marked dropped in the description`
    if (!now.tables.delete(step.dropTable)) return `the table ${step.dropTable} does not exist`
    for (const column of [...now.columns]) if (column.startsWith(`${step.dropTable}.`)) now.columns.delete(column)
    for (const index of Object.keys(schema.tables[step.dropTable].indexes ?? {})) now.indexes.delete(index)
    return undefined
  }
  return undefined
}
