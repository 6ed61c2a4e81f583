import { icmpCheckSchema } from '../../schema/check.js'
import type { ResourceDescriptor } from '../types.js'
import { checkDescriptor } from './common.js'

/** An ICMP check (`IcmpCheck`). */
export const icmpCheck = {
  kind: 'icmp-check',
  construct: 'IcmpCheck',
  example: "new IcmpCheck('shop-ping', { name: 'Shop ping', request: { hostname: 'shop.example.com' } })",
  schema: icmpCheckSchema,
  ...checkDescriptor('icmp', 'ICMP'),
  // the construct fills in the fields the API requires but an ICMP check does not use
  filledByConstruct: { heartbeat: {}, script: '' },
} satisfies ResourceDescriptor
