import { statusPageSchema } from '../../schema/status-page.js'
import type { ResourceDescriptor } from '../types.js'
import { enc } from './common.js'

/** A status page (`StatusPage`): cards listing status page services. */
export const statusPage = {
  kind: 'status-page',
  construct: 'StatusPage',
  example: "new StatusPage('public', { name: 'Shop status', url: 'shop-status', cards: [{ name: 'Shop', services: [checkout] }] })",
  schema: statusPageSchema,
  check: false,
  tier: 2,
  displayField: 'name',
  endpoints: {
    create: '/v1/status-pages',
    update: (id) => `/v1/status-pages/${enc(id)}`,
    remove: (id) => `/v1/status-pages/${enc(id)}`,
  },
  idField: 'id',
  list: { collection: 'status-pages', path: '/v1/status-pages', paging: 'cursor' },
  identity: { fields: ['url'], unique: true },
  references: [{ path: 'cards[].services[].id', inCode: 'cards[].services[]', kind: 'status-page-service' }],
  setArrays: [],
  keyedArrays: { cards: 'name', 'cards.services': 'id' },
  unorderedKeyed: [],
  secrets: { self: false, arrays: [] },
  filledByConstruct: {},
  // a card's id and page id are the service's; a card lists services by id only
  normalize: (out) => {
    if (!Array.isArray(out.cards)) return out
    out.cards = out.cards.map((card: Record<string, unknown>) => {
      const { id: _id, statusPageId: _p, ...rest } = card
      if (Array.isArray(rest.services)) rest.services = rest.services.map((s: Record<string, unknown>) => ({ id: s.id }))
      return rest
    })
    return out
  },
} satisfies ResourceDescriptor
