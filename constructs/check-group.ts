import type { CheckGroupInput } from '../src/schema/check-group.js'
import type { AlertChannel, AlertChannelSubscriptionProps } from './alert-channel.js'
import { Construct, type ConstructOptions } from './construct.js'
import type { PrivateLocation } from './private-location.js'

type Input = CheckGroupInput

export interface CheckGroupProps extends ConstructOptions {
  /**
   * Name of the group, 1-200 characters.
   * @example name: 'Public API'
   */
  name: string
  /**
   * Whether the group's checks run; `false` pauses every check of the group.
   * @defaultValue true
   */
  activated?: boolean
  /**
   * Whether alerts of the group's checks are held back.
   * @defaultValue false
   */
  muted?: boolean
  /** Tags of the group. @defaultValue [] */
  tags?: string[]
  /**
   * Where the group's checks run when they name no locations of their own.
   * @example locations: ['eu-west-1', 'us-east-1']
   */
  locations?: Input['locations']
  /**
   * Private locations the group's checks run in when they name no locations of their own:
   * `PrivateLocation` constructs of the project, or slugs.
   * @example privateLocations: [office]
   */
  privateLocations?: Array<PrivateLocation | string>
  /** The frequency (minutes) of the group's checks that set none. */
  frequency?: Input['frequency']
  /**
   * How many of the group's checks run at once when the group is triggered (`monitors trigger --group`).
   * @defaultValue 3
   */
  concurrency?: number
  /**
   * Defaults of the group's API checks: `url` is `{{GROUP_BASE_URL}}` in their URLs; headers and
   * query parameters they do not set by key; assertions added to theirs; basic auth when they have none.
   */
  apiCheckDefaults?: Input['apiCheckDefaults']
  /** Variables of the group's checks; a check's own of the same key wins. Secret ones read back as "". */
  environmentVariables?: Input['environmentVariables']
  /** @defaultValue true */
  doubleCheck?: boolean
  /**
   * Use the account's alert settings; `false` gives the group's `alertSettings` to its checks that use the account's.
   * @defaultValue true
   */
  useGlobalAlertSettings?: boolean
  alertSettings?: Input['alertSettings']
  /**
   * Account-level alert channels every check of the group alerts, each by construct or by numeric
   * id (prefer `alertChannels`; this one also says `activated: false`); a channel the check
   * subscribes to as well is alerted once.
   * @example alertChannelSubscriptions: [{ alertChannelId: oncall, activated: false }]
   */
  alertChannelSubscriptions?: AlertChannelSubscriptionProps[]
  /**
   * Account-level alert channels of this project every check of the group alerts (each becomes a
   * subscription by its id when the plan is applied); a channel the check names as well is
   * alerted once.
   * @example alertChannels: [oncall, pager]
   */
  // biome-ignore lint/suspicious/noExplicitAny: a channel of any type (its settings' type is invariant)
  alertChannels?: AlertChannel<any>[]
  /** How failed runs of the group's checks that set none are retried. */
  retryStrategy?: Input['retryStrategy']
  /** Runtime of the group's checks that set none. */
  runtimeId?: Input['runtimeId']
  /** @defaultValue false */
  runParallel?: boolean
}

/**
 * A check group: settings its checks share. A check joins with `group: g`.
 *
 * @example
 * const api = new CheckGroup('public-api', { name: 'Public API', locations: ['eu-west-1'], concurrency: 2 })
 * new ApiCheck('health', { name: 'Health', group: api, groupOrder: 1, request: { method: 'GET', url: '{{GROUP_BASE_URL}}/health' } })
 */
export class CheckGroup extends Construct<CheckGroupProps> {
  /**
   * @param logicalId id of the group in code, unique among check groups: letters, digits and `_ - / # .`
   * @param props the group's API fields
   */
  constructor(logicalId: string, props: CheckGroupProps) {
    super('check-group', 'CheckGroup', logicalId, props)
  }
}
