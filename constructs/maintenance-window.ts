import type { MaintenanceWindowInput } from '../src/schema/maintenance-window.js'
import { Construct, type ConstructOptions } from './construct.js'

export interface MaintenanceWindowProps extends ConstructOptions {
  /**
   * Name of the window, 1-200 characters.
   * @example name: 'Weekly database upgrade'
   */
  name: string
  /**
   * Checks carrying any of these tags do not run during the window.
   * @defaultValue []
   * @example tags: ['shop']
   */
  tags?: string[]
  /**
   * Start, an ISO 8601 date-time with offset.
   * @example startsAt: '2026-01-31T22:00:00Z'
   */
  startsAt: string
  /**
   * End, an ISO 8601 date-time after `startsAt`.
   * @example endsAt: '2026-01-31T23:00:00Z'
   */
  endsAt: string
  /** Repeat every this many `repeatUnit`s, 1-365; requires `repeatUnit`. */
  repeatInterval?: number | null
  /** DAY, WEEK or MONTH; requires `repeatInterval`. */
  repeatUnit?: MaintenanceWindowInput['repeatUnit']
  /** Last repetition, an ISO 8601 date-time after `startsAt`. */
  repeatEndsAt?: string | null
}

/**
 * A time window during which checks with matching tags are not run.
 *
 * @example
 * new MaintenanceWindow('weekly-db', {
 *   name: 'Weekly database upgrade',
 *   tags: ['shop'],
 *   startsAt: '2026-01-31T22:00:00Z',
 *   endsAt: '2026-01-31T23:00:00Z',
 *   repeatInterval: 1,
 *   repeatUnit: 'WEEK',
 * })
 */
export class MaintenanceWindow extends Construct<MaintenanceWindowProps> {
  /**
   * @param logicalId id of the window in code, unique among maintenance windows: letters, digits and `_ - / # .`
   * @param props the window's API fields
   */
  constructor(logicalId: string, props: MaintenanceWindowProps) {
    super('maintenance-window', 'MaintenanceWindow', logicalId, props)
  }
}
