/** Status pages and their services. (Re-exported by ../index.ts.) */
import type { StatusPage } from '../../../schema/index.js'
import type { KeysetList, Page, Paging, Timestamps } from './paging.js'

/** A status-page service, in the shape every answer gives it. */
export interface ServiceRecord extends Timestamps {
  id: string
  name: string
  accountId: string
}

export interface StoredCard extends Timestamps {
  id: string
  name: string
  services: Array<{ id: string }>
}

export type StoredPage = Omit<StatusPage, 'cards'> & { cards: StoredCard[] }

export interface StatusPageRecord extends Timestamps {
  id: string
  page: StoredPage
}

export interface ServiceStore extends KeysetList<ServiceRecord> {
  list(account: string, paging: Paging): Promise<Page<ServiceRecord>>
  /** every service of the account, by id (an account has few) */
  byId(account: string): Promise<Map<string, ServiceRecord>>
  /** which of these ids are services of the account */
  existing(account: string, ids: string[]): Promise<Set<string>>
  get(account: string, id: string): Promise<ServiceRecord | undefined>
  create(account: string, name: string): Promise<ServiceRecord>
  update(account: string, id: string, name: string): Promise<ServiceRecord | undefined>
  delete(account: string, id: string): Promise<boolean>
  /** a status page whose cards use the service, if any */
  usedBy(account: string, id: string): Promise<{ id: string; url: string } | undefined>
}

export interface StatusPageStore {
  /** cursor paging from the page `nextId` (included); null when the cursor is not a page of the account */
  list(account: string, query: { nextId?: string; limit: number }): Promise<{ entries: StatusPageRecord[]; nextId: string | null } | null>
  get(account: string, id: string): Promise<StatusPageRecord | undefined>
  /**
   * The account's pages, counted for a create in the same transaction: until it ends, another
   * transaction counting them for the account waits (SQLite: one writer; PostgreSQL: a lock of
   * the account's pages), so two creates at once cannot both pass a limit.
   */
  countForCreate(account: string): Promise<number>
  /** cards get ids; throws UniqueViolation('statusPage.url' or 'statusPage.customDomain') */
  create(account: string, data: StatusPage): Promise<StatusPageRecord>
  /** cards sent with a known id keep it and its created_at; throws UniqueViolation('statusPage.url' or 'statusPage.customDomain') */
  update(account: string, id: string, data: StatusPage): Promise<StatusPageRecord | undefined>
  delete(account: string, id: string): Promise<boolean>
  /**
   * The page served at a public address (its url, or its custom domain, compared without case),
   * of any account. A custom domain is unique across accounts (create and update throw
   * UniqueViolation('statusPage.customDomain')).
   */
  findPublic(by: { url: string } | { customDomain: string }): Promise<{ account: string; record: StatusPageRecord } | undefined>
}

/** A custom domain as stored and looked up: lower case, without a trailing dot; null for none. */
export function domainKey(domain: string | null | undefined): string | null {
  if (typeof domain !== 'string') return null
  const key = domain.toLowerCase().replace(/\.$/, '')
  return key === '' ? null : key
}

/** Cards as stored: a card sent with the id of a card of the previous version keeps its id and created_at. */
export function storedCards(data: StatusPage, previous: StoredCard[], time: string, newId: () => string): StoredCard[] {
  const old = new Map(previous.map((c) => [c.id, c]))
  return data.cards.map((card) => {
    const kept = card.id !== undefined ? old.get(card.id) : undefined
    return {
      id: kept ? kept.id : newId(),
      name: card.name,
      services: card.services.map((s) => ({ id: s.id })),
      created_at: kept ? kept.created_at : time,
      updated_at: kept ? time : null,
    }
  })
}
