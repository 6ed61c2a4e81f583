import { dnsCheckSchema } from '../../schema/check.js'
import type { ResourceDescriptor } from '../types.js'
import { CHECK_KEYED_ARRAYS, CHECK_UNORDERED_KEYED, checkEndpoints, checksList, TRIGGER_INCIDENT_REFERENCE } from './common.js'

/** A DNS check (`DnsCheck`). */
export const dnsCheck = {
  kind: 'dns-check',
  construct: 'DnsCheck',
  example: "new DnsCheck('shop-dns', { name: 'Shop DNS', request: { hostname: 'shop.example.com', recordType: 'A' } })",
  schema: dnsCheckSchema,
  check: true,
  tier: 1,
  displayField: 'name',
  endpoints: checkEndpoints('dns'),
  idField: 'id',
  list: checksList('DNS'),
  identity: { fields: ['name'], unique: false },
  references: [TRIGGER_INCIDENT_REFERENCE],
  setArrays: ['locations', 'tags'],
  keyedArrays: CHECK_KEYED_ARRAYS,
  unorderedKeyed: CHECK_UNORDERED_KEYED,
  secrets: { self: false, arrays: ['environmentVariables'] },
  filledByConstruct: {},
} satisfies ResourceDescriptor
