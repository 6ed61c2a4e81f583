import type { ResourceKind } from '../resources/types.js'
import type { ApiClient } from './client.js'
import { listAllByCursor, listAllByPage } from './paging.js'
import { UserError } from '../errors.js'

export type RemoteRecord = Record<string, unknown>

/** Where each kind of resource lives in the API. */
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

const byId = (record: RemoteRecord) => String(record.id)
const enc = encodeURIComponent

export const ENDPOINTS: Record<ResourceKind, KindEndpoints> = {
  variable: {
    create: '/v1/variables',
    update: (key) => `/v1/variables/${enc(key)}`,
    remove: (key) => `/v1/variables/${enc(key)}`,
    // A variable's key is its remote id.
    idOf: (record) => String(record.key),
  },
  'status-page-service': {
    create: '/v1/status-pages/services',
    update: (id) => `/v1/status-pages/services/${enc(id)}`,
    remove: (id) => `/v1/status-pages/services/${enc(id)}`,
    idOf: byId,
  },
  'maintenance-window': {
    create: '/v1/maintenance-windows',
    update: (id) => `/v1/maintenance-windows/${enc(id)}`,
    remove: (id) => `/v1/maintenance-windows/${enc(id)}`,
    idOf: byId,
  },
  'dns-check': {
    create: '/v1/checks/dns',
    update: (id) => `/v1/checks/dns/${enc(id)}`,
    remove: (id) => `/v1/checks/${enc(id)}`,
    idOf: byId,
  },
  'icmp-check': {
    create: '/v1/checks/icmp',
    update: (id) => `/v1/checks/icmp/${enc(id)}`,
    remove: (id) => `/v1/checks/${enc(id)}`,
    idOf: byId,
  },
  'status-page': {
    create: '/v1/status-pages',
    update: (id) => `/v1/status-pages/${enc(id)}`,
    remove: (id) => `/v1/status-pages/${enc(id)}`,
    idOf: byId,
  },
}

/** Check types and the kind that manages them; other check types are never managed here. */
const CHECK_KINDS: Record<string, ResourceKind> = { DNS: 'dns-check', ICMP: 'icmp-check' }

/** Everything the service holds, per kind, keyed by remote id. Plain data (serialisable). */
export interface RemoteState {
  records: Record<ResourceKind, Record<string, RemoteRecord>>
  /** Records of types this tool does not manage (e.g. API checks), counted by type. */
  foreign: Record<string, number>
  /** List requests made, per collection. */
  requests: Record<string, number>
}

type Collection = 'checks' | 'variables' | 'status-page-services' | 'maintenance-windows' | 'status-pages'

const COLLECTIONS_OF: Record<ResourceKind, Collection> = {
  variable: 'variables',
  'status-page-service': 'status-page-services',
  'maintenance-window': 'maintenance-windows',
  'dns-check': 'checks',
  'icmp-check': 'checks',
  'status-page': 'status-pages',
}

/**
 * Reads the remote state from the list endpoints: every page, the collections in parallel,
 * never one GET per resource. Only the collections of `kinds` are read.
 */
export async function fetchRemoteState(client: ApiClient, kinds: readonly ResourceKind[]): Promise<RemoteState> {
  const state: RemoteState = {
    records: {
      variable: {}, 'status-page-service': {}, 'maintenance-window': {}, 'dns-check': {}, 'icmp-check': {}, 'status-page': {},
    },
    foreign: {},
    requests: {},
  }
  const collections = [...new Set(kinds.map((kind) => COLLECTIONS_OF[kind]))]
  const put = (kind: ResourceKind, items: RemoteRecord[]) => {
    for (const item of items) state.records[kind][ENDPOINTS[kind].idOf(item)] = item
  }
  await Promise.all(
    collections.map(async (collection) => {
      const counted = countingClient(client, (n) => (state.requests[collection] = (state.requests[collection] ?? 0) + n))
      switch (collection) {
        case 'checks': {
          const items = await listAllByPage<RemoteRecord>(counted, '/v1/checks', { idOf: byId })
          for (const item of items) {
            const kind = CHECK_KINDS[String(item.checkType)]
            if (kind) state.records[kind][byId(item)] = item
            else {
              const label = `${String(item.checkType ?? 'unknown').toLowerCase()}-check`
              state.foreign[label] = (state.foreign[label] ?? 0) + 1
            }
          }
          break
        }
        case 'variables':
          put('variable', await listAllByPage<RemoteRecord>(counted, '/v1/variables', { idOf: (r) => String(r.key) }))
          break
        case 'status-page-services':
          put('status-page-service', await listAllByPage<RemoteRecord>(counted, '/v1/status-pages/services', { idOf: byId }))
          break
        case 'maintenance-windows':
          put('maintenance-window', await listAllByPage<RemoteRecord>(counted, '/v1/maintenance-windows', { idOf: byId }))
          break
        case 'status-pages':
          put('status-page', await listAllByCursor<RemoteRecord>(counted, '/v1/status-pages'))
          break
      }
    }),
  )
  return state
}

/** A view of the client that reports each request it sends (for per-collection counts). */
function countingClient(client: ApiClient, add: (n: number) => void): ApiClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'get') {
        return (path: string, query?: Parameters<ApiClient['get']>[1]) => {
          add(1)
          return target.get(path, query)
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
