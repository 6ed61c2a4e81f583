import type { DnsCheckInput } from '../src/schema/check.js'
import { Construct } from './construct.js'
import type { CheckProps } from './check.js'

/** What to resolve and how (spec: "DNS check request"). */
export interface DnsRequestProps {
  /**
   * The name to resolve, 1-100 characters.
   * @example query: 'shop.example.com'
   */
  query: string
  /**
   * Record type: A, AAAA, CNAME, MX, TXT, SOA, NS or HTTPS.
   * @defaultValue 'A'
   */
  recordType?: DnsCheckInput['request']['recordType']
  /**
   * Name server to ask, instead of the location's resolver.
   * @example nameServer: '1.1.1.1'
   */
  nameServer?: string
  /** Port of the name server, 1-65535. */
  port?: number
  /**
   * Assertions on the answer; the check fails when one does not hold.
   * @defaultValue []
   * @example assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }]
   */
  assertions?: DnsCheckInput['request']['assertions']
  /**
   * UDP or TCP.
   * @defaultValue 'UDP'
   */
  protocol?: DnsCheckInput['request']['protocol']
}

export interface DnsCheckProps extends CheckProps {
  /** The DNS query the check makes. */
  request: DnsRequestProps
  /**
   * Milliseconds after which a run is degraded, 0-5000.
   * @defaultValue 500
   */
  degradedResponseTime?: number | null
  /**
   * Milliseconds after which a run fails, 0-5000.
   * @defaultValue 1000
   */
  maxResponseTime?: number | null
}

/**
 * A DNS check: resolves a name from each location and asserts on the answer.
 *
 * @example
 * new DnsCheck('shop-dns', {
 *   name: 'Shop DNS',
 *   request: { query: 'shop.example.com', recordType: 'A' },
 * })
 */
export class DnsCheck extends Construct<DnsCheckProps> {
  /**
   * @param logicalId id of the check in code, unique among DNS checks: letters, digits and `_ - / # .`
   * @param props the check's API fields
   */
  constructor(logicalId: string, props: DnsCheckProps) {
    super('dns-check', 'DnsCheck', logicalId, props)
  }
}
