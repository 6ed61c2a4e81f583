import { statusPageServiceSchema } from '../../schema/status-page.js'
import type { ResourceDescriptor } from '../types.js'
import { enc } from './common.js'

/** A service shown on status pages and named by checks' triggerIncident (`StatusPageService`). */
export const statusPageService = {
  kind: 'status-page-service',
  construct: 'StatusPageService',
  example: "const checkout = new StatusPageService('checkout', { name: 'Checkout' })",
  schema: statusPageServiceSchema,
  check: false,
  tier: 0,
  displayField: 'name',
  endpoints: {
    create: '/v1/status-pages/services',
    update: (id) => `/v1/status-pages/services/${enc(id)}`,
    remove: (id) => `/v1/status-pages/services/${enc(id)}`,
  },
  idField: 'id',
  list: { collection: 'status-page-services', path: '/v1/status-pages/services', paging: 'page' },
  identity: { fields: ['name'], unique: false },
  references: [],
  setArrays: [],
  keyedArrays: {},
  unorderedKeyed: [],
  secrets: { self: false, arrays: [] },
  filledByConstruct: {},
} satisfies ResourceDescriptor
