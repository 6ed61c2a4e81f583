import { dnsCheckSchema } from '../../schema/check.js'
import type { ResourceDescriptor } from '../types.js'
import { checkDescriptor } from './common.js'

/** A DNS check (`DnsCheck`). */
export const dnsCheck = {
  kind: 'dns-check',
  construct: 'DnsCheck',
  example: "new DnsCheck('shop-dns', { name: 'Shop DNS', request: { query: 'shop.example.com', recordType: 'A' } })",
  schema: dnsCheckSchema,
  ...checkDescriptor('dns', 'DNS'),
  filledByConstruct: {},
} satisfies ResourceDescriptor
