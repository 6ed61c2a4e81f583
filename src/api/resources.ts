import type { RemoteRecord, ResourceKind } from '../resources/types.js'
import { descriptorOf, remoteIdOf, RESOURCE_KINDS } from '../resources/registry.js'
import type { ApiClient } from './client.js'
import { listAllByCursor, listAllByPage, pageUrl, type ListPageRead } from './paging.js'
import { keptRecords } from './page-cache.js'
import { UserError } from '../errors.js'

export type { RemoteRecord }

/** Where each kind of resource lives in the API (from the descriptors). */
export interface KindEndpoints {
  /** Collection path for POST. */
  create: string
  /** Path of one resource for PUT. */
  update: (id: string) => string
  /** Path of one resource for DELETE. */
  remove: (id: string) => string
  /** The remote id of a record as the API returned it. */
  idOf: (record: RemoteRecord) => string
}

export const ENDPOINTS: Record<ResourceKind, KindEndpoints> = Object.fromEntries(
  RESOURCE_KINDS.map((kind) => [kind, { ...descriptorOf(kind).endpoints, idOf: (record: RemoteRecord) => remoteIdOf(kind, record) }]),
) as Record<ResourceKind, KindEndpoints>

/** Everything the service holds, per kind, keyed by remote id. Plain data (serialisable). */
export interface RemoteState {
  records: Record<ResourceKind, Record<string, RemoteRecord>>
  /** Records of types this tool does not manage (e.g. API checks), counted by type. */
  foreign: Record<string, number>
  /** List requests made, per collection. */
  requests: Record<string, number>
}

/**
 * Reads the remote state from the list endpoints: every page, the collections in parallel,
 * never one GET per resource. Only the collections of `kinds` are read; a collection several
 * kinds share (checks) is read once and its records sorted to their kind.
 */
export async function fetchRemoteState(client: ApiClient, kinds: readonly ResourceKind[]): Promise<RemoteState> {
  const state: RemoteState = {
    records: Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, {}])) as RemoteState['records'],
    foreign: {},
    requests: {},
  }
  const collections = [...new Set(kinds.map((kind) => descriptorOf(kind).list.collection))]
  await Promise.all(
    collections.map(async (collection) => {
      const counted = countingClient(client, (n) => (state.requests[collection] = (state.requests[collection] ?? 0) + n))
      const members = RESOURCE_KINDS.filter((kind) => descriptorOf(kind).list.collection === collection)
      const { list } = descriptorOf(members[0])
      const items =
        list.paging === 'cursor'
          ? await listAllByCursor<RemoteRecord>(counted, list.path)
          : await listAllByPage<RemoteRecord>(counted, list.path, { idOf: (record) => remoteIdOf(members[0], record), parallel: 8 })
      const kindOf = recordKind(members)
      for (const item of items) {
        const kind = kindOf(item)
        if (kind) state.records[kind][remoteIdOf(kind, item)] = item
        else if (list.where) {
          const label = `${String(item[list.where.field] ?? 'unknown').toLowerCase()}${list.othersAs ? `-${list.othersAs}` : ''}`
          state.foreign[label] = (state.foreign[label] ?? 0) + 1
        }
      }
    }),
  )
  return state
}

/**
 * The records of `wanted` (kind and remote id) as the pages kept by the page cache hold them,
 * where `pages` are the list pages a read found and the server has just said are unchanged:
 * each record parsed alone, the others left unread. Only the kinds of `wanted` are filled in.
 * Undefined when a page is not kept as read, or a record is not there or not of its kind.
 */
export function keptRemoteState(
  client: ApiClient,
  pages: readonly ListPageRead[],
  wanted: ReadonlyArray<{ kind: ResourceKind; remoteId: string }>,
): RemoteState | undefined {
  const state: RemoteState = { records: Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, {}])) as RemoteState['records'], foreign: {}, requests: {} }
  const byPath = new Map<string, Array<{ kind: ResourceKind; remoteId: string }>>()
  for (const want of wanted) {
    const { list } = descriptorOf(want.kind)
    if (list.paging === 'cursor') return undefined
    const all = byPath.get(list.path) ?? []
    all.push(want)
    byPath.set(list.path, all)
  }
  for (const [path, wants] of byPath) {
    const cache = client.pageCache(path)
    if (!cache) return undefined
    const ofList = pages.filter((page) => page.path === path).map((page) => ({ url: pageUrl(page.path, page.query), etag: page.etag }))
    const found = keptRecords(cache, ofList, new Set(wants.map((w) => w.remoteId)))
    if (!found) return undefined
    const members = RESOURCE_KINDS.filter((kind) => descriptorOf(kind).list.collection === descriptorOf(wants[0].kind).list.collection)
    const kindOf = recordKind(members)
    for (const { kind, remoteId } of wants) {
      const record = found.get(remoteId) as RemoteRecord | undefined
      if (!record || typeof record !== 'object' || kindOf(record) !== kind || remoteIdOf(kind, record) !== remoteId) return undefined
      state.records[kind][remoteId] = record
    }
  }
  return state
}

/**
 * The kind of a record of a collection: the first member whose filter it passes. A collection
 * its kinds share by one field's value (checks by checkType) is sorted with a map, not a search
 * per record.
 */
function recordKind(members: readonly ResourceKind[]): (item: RemoteRecord) => ResourceKind | undefined {
  const wheres = members.map((k) => descriptorOf(k).list.where)
  const field = wheres[0]?.field
  if (field !== undefined && wheres.every((w) => w?.field === field)) {
    const byValue = new Map<string, ResourceKind>()
    members.forEach((k, i) => {
      if (!byValue.has(wheres[i]!.equals)) byValue.set(wheres[i]!.equals, k)
    })
    return (item) => byValue.get(String(item[field]))
  }
  return (item) =>
    members.find((_k, i) => {
      const where = wheres[i]
      return !where || String(item[where.field]) === where.equals
    })
}

/** A view of the client that reports each request it sends (for per-collection counts). */
function countingClient(client: ApiClient, add: (n: number) => void): ApiClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'get') {
        return (...args: Parameters<ApiClient['get']>) => {
          add(1)
          return target.get(...args)
        }
      }
      const value = Reflect.get(target, property, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

export interface OperationResult {
  remoteId: string
  record: RemoteRecord | undefined
}

export async function createResource(client: ApiClient, kind: ResourceKind, payload: unknown): Promise<OperationResult> {
  const response = await client.post<RemoteRecord>(ENDPOINTS[kind].create, payload)
  const record = response.body && typeof response.body === 'object' ? response.body : undefined
  if (!record) {
    throw new UserError(`POST ${ENDPOINTS[kind].create} answered ${response.status} without the created record.`)
  }
  return { remoteId: ENDPOINTS[kind].idOf(record), record }
}

export async function updateResource(client: ApiClient, kind: ResourceKind, remoteId: string, payload: unknown): Promise<OperationResult> {
  const response = await client.put<RemoteRecord>(ENDPOINTS[kind].update(remoteId), payload)
  const record = response.body && typeof response.body === 'object' ? response.body : undefined
  return { remoteId, record }
}

export async function deleteResource(client: ApiClient, kind: ResourceKind, remoteId: string): Promise<void> {
  await client.delete(ENDPOINTS[kind].remove(remoteId))
}
