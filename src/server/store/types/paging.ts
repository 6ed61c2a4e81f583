/** Paging of the stores' lists: offset pages, keyset pages and what every record carries. (Re-exported by ../index.ts.) */

/** An offset page; without `limit`, everything from `offset`. */
export interface Paging {
  limit?: number
  offset: number
}

export interface Page<T> {
  items: T[]
  total: number
}

/**
 * A keyset page: the items that follow the one `after` names (its id; a variable's key) in the
 * list's order, at most `limit` (all of them without one), and whether items follow the page.
 * It costs what the first page costs wherever it is in the list, and counts no total. A list
 * answers null for an `after` that names none of the account's items (a foreign or unknown one).
 */
export interface KeysetPage<T> {
  items: T[]
  more: boolean
}

/** An `after` naming an integer id (a snippet, a group, a channel, a window), or undefined for any other text. */
export function integerAfter(after: string): number | undefined {
  return /^[1-9][0-9]{0,15}$/.test(after) && Number(after) <= Number.MAX_SAFE_INTEGER ? Number(after) : undefined
}

/**
 * How a table is read by keyset (sqlite/keyset.ts, postgres/keyset.ts): `after` names a row of
 * the account by `key`; the list's order is `order` (a unique integer column), ascending unless
 * `descending`.
 */
export interface KeysetTable {
  table: string
  columns: string
  key: string
  order: string
  descending?: boolean
  /** the key is an integer id: an `after` of other text names nothing */
  integerKey?: boolean
}

/** The keyset reading of a list (see KeysetPage), beside its offset reading `list`. */
export interface KeysetList<T> {
  listAfter(account: string, after: string, limit?: number): Promise<KeysetPage<T> | null>
}

export interface Timestamps {
  created_at: string
  updated_at: string | null
}

/** What the repository of every JSON-body table answers (the store of such a kind is this, with what it adds). */
export interface JsonBodyStore<Id, Data, Rec> extends KeysetList<Rec> {
  list(account: string, paging: Paging): Promise<Page<Rec>>
  get(account: string, id: Id): Promise<Rec | undefined>
  /** the account's rows among these ids (another account's are not found), in the list's order */
  byIds(account: string, ids: Id[]): Promise<Rec[]>
  create(account: string, data: Data): Promise<Rec>
  /** replaces the body; keeps created_at; undefined when the account has no such row */
  update(account: string, id: Id, data: Data): Promise<Rec | undefined>
  delete(account: string, id: Id): Promise<boolean>
}
