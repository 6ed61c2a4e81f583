/**
 * Every resource kind of JSON_BODY_TABLES (src/server/store/json-body-rows.ts) through the
 * store's own repository, on SQLite and on PostgreSQL: create, read, update, list (offset and
 * keyset), by ids, delete, each scoped by the account; and what some rows add: an incident's
 * updates (children), a status page's unique url and custom domain, and the services its cards
 * use (index). A kind added to the table without a sample here does not compile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../../../src/server/index.js'
import { JSON_BODY_TABLES, type JsonBodyKind } from '../../../src/server/store/json-body-rows.js'
import { UniqueViolation, type Store } from '../../../src/server/store/index.js'
import { databaseFor, onPostgres } from '../../helpers/postgres-databases.js'

type Body = Record<string, unknown>
interface Row {
  id: number | string
  created_at: string
  updated_at: string | null
  [field: string]: unknown
}
/** The repository of a kind as this test calls it (each kind's store in index.ts is typed by its body). */
interface Repository {
  list?(
    account: string,
    paging: { limit?: number; offset: number },
  ): Promise<{ items: Row[]; total: number } | { entries: Row[]; nextId: string | null } | null>
  listAfter?(account: string, after: string, limit?: number): Promise<{ items: Row[]; more: boolean } | null>
  byIds?(account: string, ids: Array<number | string>): Promise<Row[]>
  get(account: string, id: number | string): Promise<Row | undefined>
  create(account: string, data: Body): Promise<Row>
  update(account: string, id: number | string, data: Body): Promise<Row | undefined>
  delete(account: string, id: number | string): Promise<boolean>
}

const page = (n: number, extra: Body = {}) => ({ name: `page ${n}`, url: `json-body-${n}`, customDomain: null, cards: [], ...extra })
/** A body per kind (n: which one), as the routes would store it after validation. */
const SAMPLES: { [K in JsonBodyKind]: (n: number) => Body } = {
  checkGroups: (n) => ({ name: `group ${n}`, locations: ['eu-west-1'], activated: false, tags: [] }),
  alertChannels: (n) => ({ type: 'WEBHOOK', config: { name: `hook ${n}`, url: `http://127.0.0.1:9/${n}` } }),
  maintenanceWindows: (n) => ({ name: `window ${n}`, startsAt: '2026-01-01T00:00:00Z', endsAt: '2026-01-01T01:00:00Z' }),
  snippets: (n) => ({ name: `snippet ${n}`, script: `// ${n}` }),
  incidents: (n) => ({ name: `incident ${n}`, severity: 'MINOR', services: [] }),
  statusPages: (n) => page(n),
}

const clock = { at: Date.UTC(2026, 0, 1), now: () => clock.at }
let store: Store
let drop = async () => undefined as void

beforeAll(async () => {
  const database = onPostgres ? await databaseFor(undefined) : undefined
  if (database) drop = database.drop
  store = await openStore(database?.url ?? ':memory:', { clock })
})
afterAll(async () => {
  await store.close()
  await drop()
})

const repository = (kind: JsonBodyKind) => store[kind] as unknown as Repository
/** The items of an offset page, or of a status page's cursor page. */
const itemsOf = (answer: Awaited<ReturnType<NonNullable<Repository['list']>>>) => (answer === null ? null : 'items' in answer ? answer.items : answer.entries)

describe.each(Object.keys(JSON_BODY_TABLES) as JsonBodyKind[])('the %s table', (kind) => {
  const table = JSON_BODY_TABLES[kind]
  const field = table.field
  const body = (row: Row | undefined) => row?.[field] as Body | undefined

  it('creates, reads, updates, lists and deletes a row of the account, and another account reaches none of it', async () => {
    const repo = repository(kind)
    clock.at += 1000
    const made: Row[] = []
    for (const n of [0, 1, 2]) made.push(await repo.create('acc-a', SAMPLES[kind](n)))
    const theirs = await repo.create('acc-b', SAMPLES[kind](9))
    expect(typeof made[0].id).toBe(table.id === 'identity' ? 'number' : 'string')
    expect(made[0]).toMatchObject({ created_at: new Date(clock.at).toISOString(), updated_at: null })
    expect(body(made[0])).toMatchObject(SAMPLES[kind](0))
    expect(await repo.get('acc-a', made[1].id)).toEqual(made[1])
    expect(await repo.get('acc-b', made[1].id)).toBeUndefined()

    // the list: the account's rows only, in the table's order
    const ids = made.map((r) => r.id)
    const listed = itemsOf(await repo.list!('acc-a', kind === 'statusPages' ? ({ limit: 100 } as never) : { offset: 0 }))!.map((r) => r.id)
    expect(listed).toEqual(table.descending ? [...ids].reverse() : ids)
    if (repo.listAfter) {
      expect(await repo.listAfter('acc-a', String(listed[0]), 1)).toEqual({ items: [await repo.get('acc-a', listed[1])], more: true })
      expect(await repo.listAfter('acc-a', String(theirs.id))).toBeNull()
      const total = (await repo.list!('acc-a', { limit: 1, offset: 5 })) as { items: Row[]; total: number }
      expect(total).toEqual({ items: [], total: 3 })
    }
    if (repo.byIds)
      expect((await repo.byIds('acc-a', [ids[2], ids[0], theirs.id])).map((r) => r.id)).toEqual(table.descending ? [ids[2], ids[0]] : [ids[0], ids[2]])

    // an update replaces the body and keeps created_at; another account's is refused
    clock.at += 1000
    const changed = await repo.update('acc-a', made[0].id, SAMPLES[kind](5))
    expect(changed).toMatchObject({ id: made[0].id, created_at: made[0].created_at, updated_at: new Date(clock.at).toISOString() })
    expect(body(changed)).toMatchObject(SAMPLES[kind](5))
    expect(await repo.get('acc-a', made[0].id)).toEqual(changed)
    expect(await repo.update('acc-b', made[1].id, SAMPLES[kind](6))).toBeUndefined()
    expect(await repo.get('acc-a', made[1].id)).toEqual(made[1])

    expect(await repo.delete('acc-b', made[1].id)).toBe(false)
    expect(await repo.delete('acc-a', made[1].id)).toBe(true)
    expect(await repo.delete('acc-a', made[1].id)).toBe(false)
    expect(await repo.get('acc-a', made[1].id)).toBeUndefined()
    for (const row of [made[0], made[2]]) await repo.delete('acc-a', row.id)
    await repo.delete('acc-b', theirs.id)
  })
})

describe('what rows add to the repository', () => {
  it('an incident lists its updates newest first, reached through an incident of the account only', async () => {
    clock.at += 1000
    const incident = await store.incidents.create('acc-a', { name: 'outage', severity: 'MAJOR', services: [] })
    expect(incident.updates).toEqual([])
    const first = await store.incidents.addUpdate('acc-a', incident.id, { message: 'looking' })
    const second = await store.incidents.addUpdate('acc-a', incident.id, { message: 'fixed' })
    expect(await store.incidents.addUpdate('acc-b', incident.id, { message: 'not mine' })).toBeUndefined()
    expect((await store.incidents.get('acc-a', incident.id))!.updates.map((u) => u.update.message)).toEqual(['fixed', 'looking'])
    expect((await store.incidents.list('acc-a', { offset: 0 })).items[0].updates.map((u) => u.id)).toEqual([second!.id, first!.id])
    expect(await store.incidents.getUpdate('acc-b', incident.id, first!.id)).toBeUndefined()
    expect(await store.incidents.replaceUpdate('acc-b', incident.id, first!.id, { message: 'theirs' })).toBeUndefined()
    expect(await store.incidents.replaceUpdate('acc-a', incident.id, first!.id, { message: 'looked' })).toMatchObject({
      id: first!.id,
      update: { message: 'looked' },
    })
    expect(await store.incidents.deleteUpdate('acc-b', incident.id, second!.id)).toBe(false)
    expect(await store.incidents.deleteUpdate('acc-a', incident.id, second!.id)).toBe(true)
    expect((await store.incidents.getUpdate('acc-a', incident.id, first!.id))!.update).toEqual({ message: 'looked' })
    expect((await store.incidents.listAfter('acc-a', incident.id))!.items).toEqual([])
    await store.incidents.delete('acc-a', incident.id)
  })

  it("a status page's url and custom domain are unique across accounts, and the services its cards use are indexed", async () => {
    const service = await store.services.create('acc-a', 'api')
    const made = await store.statusPages.create(
      'acc-a',
      page(20, { customDomain: 'Status.Example.com', cards: [{ name: 'card', services: [{ id: service.id }] }] }) as never,
    )
    expect(made.page.cards).toMatchObject([{ name: 'card', services: [{ id: service.id }], updated_at: null }])
    const taken = (data: Body) =>
      store.statusPages.create('acc-b', data as never).then(
        () => 'created',
        (error: unknown) => (error instanceof UniqueViolation ? `${error.field} ${error.value}` : String(error)),
      )
    expect(await taken(page(20))).toBe('statusPage.url json-body-20')
    expect(await taken(page(21, { customDomain: 'status.example.com.' }))).toBe('statusPage.customDomain status.example.com.')
    expect(await store.statusPages.findPublic({ customDomain: 'STATUS.example.com' })).toMatchObject({ account: 'acc-a', record: { id: made.id } })
    expect(await store.services.usedBy('acc-a', service.id)).toEqual({ id: made.id, url: 'json-body-20' })

    // a card kept by its id keeps its created_at; a card without the service leaves it unused
    clock.at += 1000
    const card = made.page.cards[0]
    const kept = await store.statusPages.update('acc-a', made.id, page(20, { cards: [{ id: card.id, name: 'renamed', services: [] }] }) as never)
    expect(kept!.page.cards).toEqual([
      { id: card.id, name: 'renamed', services: [], created_at: card.created_at, updated_at: new Date(clock.at).toISOString() },
    ])
    expect(await store.services.usedBy('acc-a', service.id)).toBeUndefined()
    // the other account's page may not take the url on update either
    const other = await store.statusPages.create('acc-b', page(22) as never)
    expect(await store.statusPages.update('acc-b', other.id, page(20) as never).catch((error: UniqueViolation) => error.field)).toBe('statusPage.url')
    expect((await store.statusPages.get('acc-b', other.id))!.page.url).toBe('json-body-22')
    for (const [account, id] of [
      ['acc-a', made.id],
      ['acc-b', other.id],
    ])
      expect(await store.statusPages.delete(account, id)).toBe(true)
  })
})
