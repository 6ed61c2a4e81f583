import { icmpCheckSchema } from '../../schema/check.js'
import type { ResourceDescriptor } from '../types.js'
import { CHECK_KEYED_ARRAYS, CHECK_UNORDERED_KEYED, checkEndpoints, checksList, TRIGGER_INCIDENT_REFERENCE } from './common.js'

/** An ICMP check (`IcmpCheck`). */
export const icmpCheck = {
  kind: 'icmp-check',
  construct: 'IcmpCheck',
  example: "new IcmpCheck('shop-ping', { name: 'Shop ping', request: { hostname: 'shop.example.com' } })",
  schema: icmpCheckSchema,
  check: true,
  tier: 1,
  displayField: 'name',
  endpoints: checkEndpoints('icmp'),
  idField: 'id',
  list: checksList('ICMP'),
  identity: { fields: ['name'], unique: false },
  references: [TRIGGER_INCIDENT_REFERENCE],
  setArrays: ['locations', 'tags'],
  keyedArrays: CHECK_KEYED_ARRAYS,
  unorderedKeyed: CHECK_UNORDERED_KEYED,
  secrets: { self: false, arrays: ['environmentVariables'] },
  // the construct fills in the fields the API requires but an ICMP check does not use
  filledByConstruct: { heartbeat: {}, script: '' },
} satisfies ResourceDescriptor
