import { heartbeatCheckSchema } from '../../schema/heartbeat-check.js'
import type { ResourceDescriptor } from '../types.js'
import { CHECK_KEYED_ARRAYS, CHECK_UNORDERED_KEYED, checkEndpoints, checksList, TRIGGER_INCIDENT_REFERENCE } from './common.js'

/**
 * A heartbeat check (`HeartbeatCheck`). `heartbeat.pingToken` and `heartbeat.pingUrl` are the
 * service's: the schema drops them from both sides, so they never show in a plan.
 */
export const heartbeatCheck = {
  kind: 'heartbeat-check',
  construct: 'HeartbeatCheck',
  example: "new HeartbeatCheck('nightly-backup', { name: 'Nightly backup', heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' } })",
  schema: heartbeatCheckSchema,
  check: true,
  tier: 1,
  displayField: 'name',
  endpoints: checkEndpoints('heartbeat'),
  idField: 'id',
  list: checksList('HEARTBEAT'),
  identity: { fields: ['name'], unique: false },
  references: [TRIGGER_INCIDENT_REFERENCE],
  setArrays: ['locations', 'tags'],
  keyedArrays: CHECK_KEYED_ARRAYS,
  unorderedKeyed: CHECK_UNORDERED_KEYED,
  secrets: { self: false, arrays: [] },
  filledByConstruct: {},
} satisfies ResourceDescriptor
