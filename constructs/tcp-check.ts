import type { TcpCheckInput } from '../src/schema/tcp-check.js'
import { Construct } from './construct.js'
import type { CheckProps } from './check.js'

type Request = TcpCheckInput['request']

/** Where a TCP check connects, what it sends and what it asserts on the answer. */
export interface TcpRequestProps {
  /**
   * Host name or IP address to connect to (no scheme, no port), 1-2048 characters.
   * @example hostname: 'mail.example.com'
   */
  hostname: string
  /**
   * Port to connect to, 1-65535.
   * @example port: 25
   */
  port: number
  /**
   * Text sent once connected; the answer is read back (up to 64 KiB). `null`: nothing is sent,
   * the answer is what the server says first (a banner), read when an assertion needs it.
   * @defaultValue null
   * @example data: 'PING\r\n'
   */
  data?: string | null
  /**
   * IPv4 or IPv6.
   * @defaultValue 'IPv4'
   * @example ipFamily: 'IPv6'
   */
  ipFamily?: Request['ipFamily']
  /**
   * Assertions: source RESPONSE_DATA (the answer as text; `regex` narrows it) or RESPONSE_TIME
   * (ms, with EQUALS, NOT_EQUALS, LESS_THAN or GREATER_THAN and a number as target).
   * @defaultValue []
   * @example assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: '+PONG' }, { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '200' }]
   */
  assertions?: Request['assertions']
}

export interface TcpCheckProps extends Omit<CheckProps, 'frequency'> {
  /**
   * The connection the check makes.
   * @example request: { hostname: 'mail.example.com', port: 25 }
   */
  request: TcpRequestProps
  /**
   * Minutes between runs: 0 (sub-minute, then `frequencyOffset` 10, 20 or 30 seconds), 1, 2, 5,
   * 10, 15, 30, 60, 120, 180, 360, 720 or 1440.
   * @defaultValue 10
   * @example frequency: 0, frequencyOffset: 10
   */
  frequency?: TcpCheckInput['frequency']
  /**
   * Milliseconds after which a run is degraded, 0-45000.
   * @defaultValue 3000
   * @example degradedResponseTime: 500
   */
  degradedResponseTime?: number | null
  /**
   * Milliseconds after which a run fails, 0-45000.
   * @defaultValue 5000
   * @example maxResponseTime: 1000
   */
  maxResponseTime?: number | null
}

/**
 * A TCP check: opens a connection to a host and port from each location, optionally sends
 * data and asserts on the answer and the time it took.
 *
 * @example
 * new TcpCheck('shop-redis', {
 *   name: 'Shop Redis',
 *   request: {
 *     hostname: 'redis.example.com',
 *     port: 6379,
 *     data: 'PING\r\n',
 *     assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: '+PONG' }],
 *   },
 * })
 */
export class TcpCheck extends Construct<TcpCheckProps> {
  /**
   * @param logicalId id of the check in code, unique among TCP checks: letters, digits and `_ - / # .`
   * @param props the check's API fields
   */
  constructor(logicalId: string, props: TcpCheckProps) {
    super('tcp-check', 'TcpCheck', logicalId, props)
  }
}
