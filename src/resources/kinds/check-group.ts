import { blankGroupSecrets, checkGroupSchema, groupSecretValues } from '../../schema/check-group.js'
import type { ResourceDescriptor } from '../types.js'
import { ALERT_CHANNEL_REFERENCE } from './alert-channel.js'
import { enc, PRIVATE_LOCATIONS_REFERENCE } from './common.js'

/**
 * A check group (`CheckGroup`): settings its checks share; a check joins with `group: g` (its
 * `groupId`). Created after the alert channels it subscribes to (`alertChannels: [oncall]`) and
 * before its checks (tier 0.5), deleted after them: the service refuses to delete a group that
 * still has checks.
 */
export const checkGroup = {
  kind: 'check-group',
  construct: 'CheckGroup',
  example: "const api = new CheckGroup('api', { name: 'API', locations: ['eu-west-1'] })",
  schema: checkGroupSchema,
  check: false,
  tier: 0.5,
  displayField: 'name',
  endpoints: {
    create: '/v1/check-groups',
    update: (id) => `/v1/check-groups/${enc(id)}`,
    remove: (id) => `/v1/check-groups/${enc(id)}`,
  },
  idField: 'id',
  numericId: true,
  list: { collection: 'check-groups', path: '/v1/check-groups', paging: 'page' },
  identity: { fields: ['name'], unique: false },
  // the channels it alerts, by construct (`alertChannels: [oncall]`) or by id
  references: [ALERT_CHANNEL_REFERENCE, PRIVATE_LOCATIONS_REFERENCE],
  setArrays: ['locations', 'privateLocations', 'tags'],
  keyedArrays: {
    environmentVariables: 'key',
    alertChannelSubscriptions: 'alertChannelId',
    'apiCheckDefaults.headers': 'key',
    'apiCheckDefaults.queryParameters': 'key',
  },
  unorderedKeyed: ['environmentVariables', 'alertChannelSubscriptions'],
  secrets: {
    self: false,
    arrays: ['environmentVariables', 'apiCheckDefaults.headers', 'apiCheckDefaults.queryParameters', 'apiCheckDefaults.basicAuth.password'],
  },
  filledByConstruct: {},
  // reads mask secrets: both sides compare masked, the lock's fingerprint tells a changed secret
  normalize: blankGroupSecrets,
  normalizeNeeded: (group: Record<string, unknown>) => blankGroupSecrets(group) !== group,
  blankedSecrets: groupSecretValues,
} satisfies ResourceDescriptor
