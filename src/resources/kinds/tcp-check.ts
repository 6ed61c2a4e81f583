import { tcpCheckSchema } from '../../schema/tcp-check.js'
import type { ResourceDescriptor } from '../types.js'
import { checkDescriptor } from './common.js'

/** A TCP check (`TcpCheck`). */
export const tcpCheck = {
  kind: 'tcp-check',
  construct: 'TcpCheck',
  example: "new TcpCheck('shop-smtp', { name: 'Shop SMTP', request: { hostname: 'mail.example.com', port: 25 } })",
  schema: tcpCheckSchema,
  ...checkDescriptor('tcp', 'TCP'),
  filledByConstruct: {},
} satisfies ResourceDescriptor
