import { privateLocationCreateSchema } from '../../schema/private-location.js'
import type { ResourceDescriptor } from '../types.js'
import { enc } from './common.js'

/**
 * A private location (`PrivateLocation`): a named location of the account that only its agents
 * serve. Checks and groups name it by slug (`privateLocations: [office]`), so its slug is what
 * the lock holds as its remote id (the service answers /v1/private-locations/{id} by slug too).
 * Created before the groups and checks that run there (tier 0), deleted after them.
 */
export const privateLocation = {
  kind: 'private-location',
  construct: 'PrivateLocation',
  example: "const office = new PrivateLocation('office', { name: 'Office', slugName: 'office' })",
  schema: privateLocationCreateSchema,
  check: false,
  tier: 0,
  displayField: 'name',
  endpoints: {
    create: '/v1/private-locations',
    update: (id) => `/v1/private-locations/${enc(id)}`,
    remove: (id) => `/v1/private-locations/${enc(id)}`,
  },
  idField: 'slugName',
  list: { collection: 'private-locations', path: '/v1/private-locations', paging: 'page' },
  identity: { fields: ['slugName'], unique: true },
  references: [],
  setArrays: [],
  keyedArrays: {},
  unorderedKeyed: [],
  secrets: { self: false, arrays: [] },
  filledByConstruct: {},
  // what the service adds to a read (its keys, its agents now) is no part of the location in code
  normalize: ({ keys: _keys, lastSeen: _seen, agentCount: _agents, queueSize: _queue, oldestScheduledCheckRun: _oldest, ...rest }) => rest,
  normalizeNeeded: (record: Record<string, unknown>) => 'keys' in record || 'agentCount' in record,
} satisfies ResourceDescriptor
