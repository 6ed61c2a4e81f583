import { heartbeatCheckSchema } from '../../schema/heartbeat-check.js'
import type { ResourceDescriptor } from '../types.js'
import { checkDescriptor } from './common.js'

/**
 * A heartbeat check (`HeartbeatCheck`). `heartbeat.pingToken` and `heartbeat.pingUrl` are the
 * service's: the schema drops them from both sides, so they never show in a plan.
 */
export const heartbeatCheck = {
  kind: 'heartbeat-check',
  construct: 'HeartbeatCheck',
  example: "new HeartbeatCheck('nightly-backup', { name: 'Nightly backup', heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' } })",
  schema: heartbeatCheckSchema,
  ...checkDescriptor('heartbeat', 'HEARTBEAT'),
  filledByConstruct: {},
} satisfies ResourceDescriptor
