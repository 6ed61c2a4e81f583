/**
 * The tables whose rows are an account's resource kept as one JSON body (check groups, alert
 * channels, maintenance windows, snippets, incidents, status pages), described once, a row
 * each in JSON_BODY_TABLES. Each store has one repository for all of them
 * (`jsonBodyRepository` in sqlite/json-body.ts and postgres/json-body.ts), which reads the row
 * and runs that store's SQL: a resource kind kept this way is its table in schema.ts and a row
 * here, not a repository of its own. Every statement is scoped by the account.
 */
import type { AlertChannelData, CheckGroup, MaintenanceWindow, Snippet, StatusPage } from '../../schema/index.js'
import {
  UniqueViolation,
  domainKey,
  storedCards,
  type IncidentData,
  type IncidentStore,
  type JsonBodyStore,
  type StoredPage,
  type Timestamps,
} from './index.js'

/** What the repository of every JSON-body table answers: declared with the stores' types (types/paging.ts), named here too. */
export type { JsonBodyStore } from './index.js'

/** Rows of another table that belong to a row of this one (an incident's updates), listed in its record. */
export interface ChildTable<Field extends string, Body extends string> {
  /** its columns: seq, id (text, made by the store), `parent`, body, created_at, updated_at */
  table: string
  /** the column holding the parent row's seq */
  parent: string
  /** the parent record's field listing them, newest first */
  field: Field
  /** the child record's field holding its body */
  body: Body
}

/**
 * A table of JSON bodies: its columns are the id, account_id, body, created_at, updated_at, a
 * `seq` when the id is text, and `columns`.
 */
export interface JsonBodyTable<
  Field extends string,
  Id extends number | string,
  Data,
  Stored = Data,
  Child extends string = never,
  ChildBody extends string = never,
> {
  table: string
  /** the record's field holding the body: { id, [field]: body, created_at, updated_at } */
  field: Field
  /**
   * `identity`: an integer id the database assigns, lists in id order; `uuid`: a text id the store
   * makes (randomUUID), lists in the order of the `seq` column
   */
  id: Id extends number ? 'identity' : 'uuid'
  /** lists newest first */
  descending?: boolean
  /** the body kept for what was sent, given the one it replaces (none for a create) */
  stored?: (data: Data, previous: Stored | undefined, time: string, newId: () => string) => Stored
  /** columns written beside the body, each from the body kept */
  columns?: Record<string, (body: Stored) => string | null>
  /**
   * the unique columns a write may collide on (the database's constraint decides, whoever writes),
   * and what is thrown for each; a collision naming none of them is the first one's
   */
  unique?: Array<{ column: string; violation: (data: Data) => UniqueViolation }>
  /** a table of the values of each body (`key`: the row's seq, or its id), written with the body in one transaction */
  index?: { table: string; key: string; column: string; values: (body: Stored) => string[] }
  children?: ChildTable<Child, ChildBody>
}

/** A row as both stores read it (`bodyColumns`). */
export interface BodyRow {
  seq?: number
  id: number | string
  body: string
  created_at: string
  updated_at: string | null
}

export type ChildRecord<Body extends string> = { id: string } & { [K in Body]: Record<string, unknown> } & Timestamps

export type JsonBodyRecord<Field extends string, Id, Stored, Child extends string = never, ChildBody extends string = never> = { id: Id } & {
  [K in Field]: Stored
} & Timestamps & { [K in Child]: Array<ChildRecord<ChildBody>> }

/** The rows of a child table, reached through their parent (a row of the account), undefined when it is not there. */
export interface ChildStore<Body extends string> {
  add(account: string, parentId: string, data: Record<string, unknown>): Promise<ChildRecord<Body> | undefined>
  get(account: string, parentId: string, id: string): Promise<ChildRecord<Body> | undefined>
  replace(account: string, parentId: string, id: string, data: Record<string, unknown>): Promise<ChildRecord<Body> | undefined>
  delete(account: string, parentId: string, id: string): Promise<boolean>
}

export type JsonBodyRepository<Field extends string, Id, Data, Stored, Child extends string, ChildBody extends string> = JsonBodyStore<
  Id,
  Data,
  JsonBodyRecord<Field, Id, Stored, Child, ChildBody>
> &
  ([Child] extends [never] ? unknown : { children: ChildStore<ChildBody> })

/** A row of JSON_BODY_TABLES, typed by its record's field, its id, what is sent and what is kept. */
function table<Field extends string, Id extends number | string, Data, Stored = Data, Child extends string = never, ChildBody extends string = never>(
  t: JsonBodyTable<Field, Id, Data, Stored, Child, ChildBody>,
): JsonBodyTable<Field, Id, Data, Stored, Child, ChildBody> {
  return t
}

/** The JSON-body tables, by the name of their store in `Repositories` (store/index.ts). */
export const JSON_BODY_TABLES = {
  checkGroups: table<'group', number, CheckGroup>({ table: 'check_groups', field: 'group', id: 'identity' }),
  alertChannels: table<'channel', number, AlertChannelData>({ table: 'alert_channels', field: 'channel', id: 'identity' }),
  maintenanceWindows: table<'window', number, MaintenanceWindow>({ table: 'maintenance_windows', field: 'window', id: 'identity' }),
  snippets: table<'snippet', number, Snippet>({ table: 'snippets', field: 'snippet', id: 'identity' }),
  // newest first (API.md: Incidents list), each with its updates, newest first
  incidents: table<'incident', string, IncidentData, IncidentData, 'updates', 'update'>({
    table: 'incidents',
    field: 'incident',
    id: 'uuid',
    descending: true,
    children: { table: 'incident_updates', parent: 'incident_seq', field: 'updates', body: 'update' },
  }),
  statusPages: table<'page', string, StatusPage, StoredPage>({
    table: 'status_pages',
    field: 'page',
    id: 'uuid',
    // cards get ids: a card sent with the id of a card of the previous version keeps it and its created_at
    stored: (data, previous, time, newId) => ({ ...data, cards: storedCards(data, previous?.cards ?? [], time, newId) }),
    columns: { url: (page) => page.url, custom_domain: (page) => domainKey(page.customDomain) },
    // the url and the custom domain are unique per server (across accounts)
    unique: [
      { column: 'url', violation: (data) => new UniqueViolation('statusPage.url', data.url) },
      { column: 'custom_domain', violation: (data) => new UniqueViolation('statusPage.customDomain', data.customDomain ?? '') },
    ],
    // which services the cards use (a used service cannot be deleted: ServiceStore.usedBy)
    index: {
      table: 'status_page_services',
      key: 'page_seq',
      column: 'service_id',
      values: (page) => [...new Set(page.cards.flatMap((c) => c.services.map((s) => s.id)))],
    },
  }),
}

export type JsonBodyKind = keyof typeof JSON_BODY_TABLES

/** Every JSON-body table, with the tables of its children and index (only the repository writes them). */
export function jsonBodyTableNames(): string[] {
  return Object.values(JSON_BODY_TABLES).flatMap((t: { table: string; children?: { table: string }; index?: { table: string } }) => [
    t.table,
    ...(t.children ? [t.children.table] : []),
    ...(t.index ? [t.index.table] : []),
  ])
}

/** What a repository's statements need of a table's row (its SQL, not its types). */
export interface BodyTableShape {
  table: string
  id: 'identity' | 'uuid'
  descending?: boolean
  columns?: object
  index?: { table: string; key: string; column: string }
  children?: { table: string; parent: string }
}

/** The columns a repository reads of a row (`BodyRow`). */
export function bodyColumns(t: BodyTableShape): string {
  return `${t.id === 'uuid' ? 'seq, ' : ''}id, body, created_at, updated_at`
}

/** The record of a row (children: its child rows, for a table that has them). */
export function bodyRecord<Field extends string, Id extends number | string, Data, Stored, Child extends string, ChildBody extends string>(
  t: JsonBodyTable<Field, Id, Data, Stored, Child, ChildBody>,
  row: BodyRow,
  children?: BodyRow[],
): JsonBodyRecord<Field, Id, Stored, Child, ChildBody> {
  const record: Record<string, unknown> = { id: row.id, [t.field]: JSON.parse(row.body) as Stored, created_at: row.created_at, updated_at: row.updated_at }
  if (t.children) record[t.children.field] = (children ?? []).map((c) => childRecord(t.children!, c))
  return record as unknown as JsonBodyRecord<Field, Id, Stored, Child, ChildBody>
}

export function childRecord<Body extends string>(child: ChildTable<string, Body>, row: BodyRow): ChildRecord<Body> {
  return {
    id: row.id,
    [child.body]: JSON.parse(row.body) as Record<string, unknown>,
    created_at: row.created_at,
    updated_at: row.updated_at,
  } as unknown as ChildRecord<Body>
}

/** The body kept for what was sent (`stored`, or what was sent) and its columns' values, in `columns` order. */
export function bodyToWrite<Data, Stored>(
  t: {
    stored?: (data: Data, previous: Stored | undefined, time: string, newId: () => string) => Stored
    columns?: Record<string, (body: Stored) => string | null>
  },
  data: Data,
  previous: Stored | undefined,
  time: string,
  newId: () => string,
): { body: Stored; values: Array<string | null> } {
  const body = t.stored ? t.stored(data, previous, time, newId) : (data as unknown as Stored)
  return { body, values: Object.values(t.columns ?? {}).map((column) => column(body)) }
}

/** The violation of the unique column a collision names (`names(column)`), else of the first. */
export function uniqueViolation<Data>(
  t: { unique?: Array<{ column: string; violation: (data: Data) => UniqueViolation }> },
  data: Data,
  names: (column: string) => boolean,
): UniqueViolation | undefined {
  if (!t.unique || t.unique.length === 0) return undefined
  return (t.unique.find((u) => names(u.column)) ?? t.unique[0]).violation(data)
}

/** The incidents' store: their table's repository, its children named as IncidentStore names them. */
export function incidentStore(rows: JsonBodyRepository<'incident', string, IncidentData, IncidentData, 'updates', 'update'>): IncidentStore {
  const { children, ...incidents } = rows
  return { ...incidents, addUpdate: children.add, getUpdate: children.get, replaceUpdate: children.replace, deleteUpdate: children.delete }
}
