import type { HeartbeatUnit } from '../src/schema/heartbeat-check.js'
import { Construct } from './construct.js'
import type { CheckProps } from './check.js'

/** When pings are expected (reference: ChecksV1HeartbeatRequest). */
export interface HeartbeatProps {
  /**
   * Time expected between two pings, in `periodUnit`s: from 30 seconds to 365 days.
   * @example period: 1
   */
  period: number
  /**
   * Unit of `period`: seconds, minutes, hours or days.
   * @example periodUnit: 'days'
   */
  periodUnit: HeartbeatUnit
  /**
   * Extra time after the period before a missing ping fails the check, in `graceUnit`s (0 to 365 days).
   * @example grace: 30
   */
  grace: number
  /**
   * Unit of `grace`: seconds, minutes, hours or days.
   * @example graceUnit: 'minutes'
   */
  graceUnit: HeartbeatUnit
}

export interface HeartbeatCheckProps extends CheckProps {
  /**
   * When pings are expected. The service assigns the ping token and URL (read-only: shown by
   * `monitors status`, never written in code).
   */
  heartbeat: HeartbeatProps
}

/**
 * A heartbeat check: passes while your job pings its URL (GET or POST `/ping/<token>`) at
 * least once every period (plus grace), fails when a ping is missed.
 *
 * @example
 * new HeartbeatCheck('nightly-backup', {
 *   name: 'Nightly backup',
 *   heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' },
 * })
 */
export class HeartbeatCheck extends Construct<HeartbeatCheckProps> {
  /**
   * @param logicalId id of the check in code, unique among heartbeat checks: letters, digits and `_ - / # .`
   * @param props the check's API fields
   */
  constructor(logicalId: string, props: HeartbeatCheckProps) {
    super('heartbeat-check', 'HeartbeatCheck', logicalId, props)
  }
}
