import type { IcmpCheckInput } from '../src/schema/check.js'
import { Construct } from './construct.js'
import type { CheckProps } from './check.js'

/** Where and how to ping (spec: "ICMP check request"). */
export interface IcmpRequestProps {
  /**
   * Host name or IP address to ping, 1-2048 characters.
   * @example hostname: 'edge.example.com'
   */
  hostname: string
  /**
   * IPv4 or IPv6.
   * @defaultValue 'IPv4'
   */
  ipFamily?: IcmpCheckInput['request']['ipFamily']
  /**
   * Pings per run, 1-50.
   * @defaultValue 10
   */
  pingCount?: number
  /**
   * Assertions on the result; for source LATENCY the property is avg, min, max or stddev.
   * @defaultValue []
   * @example assertions: [{ source: 'LATENCY', property: 'avg', comparison: 'LESS_THAN', target: '200' }]
   */
  assertions?: IcmpCheckInput['request']['assertions']
}

export interface IcmpCheckProps extends CheckProps {
  /** The ping the check makes. */
  request: IcmpRequestProps
  /**
   * Heartbeat settings required by the API. Its shape is not specified.
   * @defaultValue {}
   */
  heartbeat?: Record<string, unknown>
  /**
   * Script required by the API's create body; ICMP checks do not run it.
   * @defaultValue ''
   */
  script?: string
  /** Path of the script in the runtime. */
  scriptPath?: string | null
  /** Domain whose certificate is watched. */
  sslCheckDomain?: string
  /** Variables for the run (at most 50); the API says they matter for browser checks only. */
  environmentVariables?: IcmpCheckInput['environmentVariables']
  /** Snippet for the setup phase. */
  setupSnippetId?: number | null
  /** Snippet for the teardown phase. */
  tearDownSnippetId?: number | null
  /** Code run in the setup phase. */
  localSetupScript?: string | null
  /** Code run in the teardown phase. */
  localTearDownScript?: string | null
  /**
   * Milliseconds after which a run is degraded, 0-300000.
   * @defaultValue 10000
   */
  degradedResponseTime?: number | null
  /**
   * Milliseconds after which a run fails, 0-300000.
   * @defaultValue 20000
   */
  maxResponseTime?: number | null
  /**
   * Packet loss in percent (0-100) from which a run is degraded.
   * @defaultValue 10
   */
  degradedPacketLossThreshold?: number | null
  /**
   * Packet loss in percent (0-100) from which a run fails.
   * @defaultValue 20
   */
  maxPacketLossThreshold?: number | null
}

/** Fills `heartbeat` and `script`, which the API requires and an ICMP check does not use. */
function withRequiredFields(props: IcmpCheckProps): IcmpCheckProps {
  if (typeof props !== 'object' || props === null) return props
  return { ...props, heartbeat: props.heartbeat ?? {}, script: props.script ?? '' }
}

/**
 * An ICMP check: pings a host from each location and asserts on latency and packet loss.
 * `heartbeat` and `script`, which the API requires, are filled in for you.
 *
 * @example
 * new IcmpCheck('edge-ping', {
 *   name: 'Edge ping',
 *   request: { hostname: 'edge.example.com' },
 *   frequency: 10,
 * })
 */
export class IcmpCheck extends Construct<IcmpCheckProps> {
  /**
   * @param logicalId id of the check in code, unique among ICMP checks: letters, digits and `_ - / # .`
   * @param props the check's API fields
   */
  constructor(logicalId: string, props: IcmpCheckProps) {
    super('icmp-check', 'IcmpCheck', logicalId, withRequiredFields(props))
  }
}
