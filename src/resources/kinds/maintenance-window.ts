import { maintenanceWindowSchema } from '../../schema/maintenance-window.js'
import type { ResourceDescriptor } from '../types.js'
import { enc } from './common.js'

/** A maintenance window (`MaintenanceWindow`). */
export const maintenanceWindow = {
  kind: 'maintenance-window',
  construct: 'MaintenanceWindow',
  example:
    "new MaintenanceWindow('weekly', { name: 'Weekly', tags: ['shop'], startsAt: '2026-01-31T22:00:00Z', endsAt: '2026-01-31T23:00:00Z', repeatInterval: 1, repeatUnit: 'WEEK' })",
  schema: maintenanceWindowSchema,
  check: false,
  tier: 0,
  displayField: 'name',
  endpoints: {
    create: '/v1/maintenance-windows',
    update: (id) => `/v1/maintenance-windows/${enc(id)}`,
    remove: (id) => `/v1/maintenance-windows/${enc(id)}`,
  },
  idField: 'id',
  list: { collection: 'maintenance-windows', path: '/v1/maintenance-windows', paging: 'page' },
  identity: { fields: ['name'], unique: false },
  references: [],
  setArrays: ['tags'],
  keyedArrays: {},
  unorderedKeyed: [],
  secrets: { self: false, arrays: [] },
  filledByConstruct: {},
} satisfies ResourceDescriptor
