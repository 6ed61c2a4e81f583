import type { DnsCheckInput } from '../src/schema/check.js'
import type { StatusPageService } from './status-page-service.js'
import type { CheckGroup } from './check-group.js'
import type { PrivateLocation } from './private-location.js'
import type { ConstructOptions } from './construct.js'
import type { DnsCheck } from './dns-check.js'
import type { IcmpCheck } from './icmp-check.js'
import type { ApiCheck } from './api-check.js'
import type { TcpCheck } from './tcp-check.js'
import type { UrlCheck } from './url-check.js'
import type { HeartbeatCheck } from './heartbeat-check.js'
import type { BrowserCheck, MultiStepCheck } from './script-check.js'
import type { PlaywrightCheck } from './playwright-check.js'

/** Any check construct: what `dependsOn` lists. */
export type AnyCheck = DnsCheck | IcmpCheck | ApiCheck | TcpCheck | UrlCheck | BrowserCheck | MultiStepCheck | PlaywrightCheck | HeartbeatCheck
import type { AlertChannel, AlertChannelSubscriptionProps } from './alert-channel.js'

type Common = DnsCheckInput

/**
 * Opens an incident on a status page service when the check starts failing and resolves it
 * when the check recovers.
 */
export interface TriggerIncidentProps {
  /**
   * The status page service the incident is opened on: a `StatusPageService` construct of this
   * project. It becomes the service's remote id when the plan is applied.
   * @example serviceId: checkoutService
   */
  serviceId: StatusPageService
  /** How bad the incident is: MINOR, MEDIUM, MAJOR or CRITICAL. */
  severity: NonNullable<Common['triggerIncident']>['severity']
  /** Title of the incident. */
  name: string
  /** Text of the incident. */
  description: string
  /**
   * Email the status page's subscribers when the incident opens and resolves.
   * @defaultValue false
   */
  notifySubscribers?: boolean
}

/** Props shared by every check type (spec: "Check (common fields, DNS and ICMP)"). */
export interface CheckProps extends ConstructOptions {
  /**
   * Name of the check, shown in the dashboard, alerts and badges.
   * @example name: 'Shop DNS'
   */
  name: string
  /**
   * Whether the check runs.
   * @defaultValue true
   */
  activated?: boolean
  /**
   * When true, no notifications are sent on failure or recovery.
   * @defaultValue false
   */
  muted?: boolean
  /**
   * Retry a failed run once before alerting. Deprecated by the API: use `retryStrategy`.
   * @defaultValue true
   * @deprecated use `retryStrategy`
   */
  doubleCheck?: boolean
  /**
   * Invert pass and fail, to verify that something is reported as failing.
   * @defaultValue false
   */
  shouldFail?: boolean
  /**
   * Locations the check runs from, at least one, e.g. `eu-west-1`, `us-east-1`.
   * Merged from the config's `defaults.locations` when not set.
   * @example locations: ['eu-west-1', 'us-east-1']
   */
  locations?: Common['locations']
  /**
   * Private locations the check runs in besides its `locations`: `PrivateLocation` constructs of
   * the project, or the slug of one not managed in code. Their agents run it.
   * @example privateLocations: [office]
   */
  privateLocations?: Array<PrivateLocation | string>
  /**
   * Tags to organise and filter checks; maintenance windows select checks by tag.
   * The config's `defaults.tags` are added in front of these, unless `defaultTags: false`.
   * @defaultValue []
   * @example tags: ['shop', 'dns']
   */
  tags?: string[]
  /**
   * `false`: this check does not take the config's `defaults.tags`; its tags are exactly `tags`.
   * Not sent to the API.
   * @defaultValue true
   * @example defaultTags: false, tags: ['payments']
   */
  defaultTags?: boolean
  /**
   * How alerts escalate and remind (escalationType RUN_BASED or TIME_BASED).
   * `null`: none, not the config's `defaults.alertSettings`.
   */
  alertSettings?: Common['alertSettings'] | null
  /**
   * Use the account's alert settings instead of `alertSettings`.
   * @defaultValue true
   */
  useGlobalAlertSettings?: boolean
  /**
   * The check group the check belongs to: a `CheckGroup` construct of this project (its
   * `groupId` once applied). What the group sets applies to the check when it runs: see
   * docs/constructs.md#checkgroup.
   * @example group: apiGroup
   */
  group?: CheckGroup | null
  /** Id of a check group not managed in this project (prefer `group`). */
  groupId?: number | null
  /** Position in the group (0 or more); the order of runs when the group is triggered. */
  groupOrder?: number | null
  /**
   * Runtime version: 2025.04, 2024.09, 2024.02, 2023.09, 2023.02 or 2022.10.
   * Leave it out to use the account's default runtime.
   */
  runtimeId?: Common['runtimeId']
  /**
   * Subscriptions of this check to account-level channels, each by construct or by numeric id
   * (prefer `alertChannels: [channel]`; this one also says `activated: false`).
   * `null`: none, not the config's `defaults.alertChannelSubscriptions`.
   */
  alertChannelSubscriptions?: AlertChannelSubscriptionProps[] | null
  /**
   * How failed runs are retried. `null`: no retry strategy, not the config's `defaults.retryStrategy`.
   * @example retryStrategy: { type: 'FIXED', baseBackoffSeconds: 60, maxRetries: 2, sameRegion: true }
   */
  retryStrategy?: Common['retryStrategy'] | null
  /** Open and resolve an incident on a status page service when the check fails and recovers. */
  triggerIncident?: TriggerIncidentProps
  /**
   * Run in all locations at once instead of one location per run.
   * @defaultValue false
   */
  runParallel?: boolean
  /**
   * Minutes between runs: 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720 or 1440.
   * (0, sub-minute, is only for API and TCP checks.)
   * @defaultValue 10
   */
  frequency?: Common['frequency']
  /**
   * Spreads runs over the frequency's interval: 1 to frequency × 10 for frequencies up to 60,
   * 1 to ceil(frequency / 60) above. `null`: none, not the config's `defaults.frequencyOffset`.
   * @example frequency: 2, frequencyOffset: 15
   */
  frequencyOffset?: number | null
  /**
   * Where the check's alerts go. Either an array of account-level channel constructs
   * (`EmailAlertChannel`, `SlackAlertChannel`, …) of this project, which the check subscribes
   * to (`alertChannelSubscriptions`, ids filled in at apply time) and which may also hold inline
   * channels (`[oncall, { email: [{ address: 'me@example.com' }] }]`); or the inline channels
   * alone: email, webhook, slack, sms, defined in the check itself. Webhook and Slack URLs are
   * http(s); a webhook header or query parameter with `secret: true` and a Slack URL (its path
   * is the token) are never answered in clear: read them from `process.env`.
   * `null`: none, not the config's `defaults.alertChannels`.
   * @example alertChannels: [oncall, opsSlack]
   */
  // biome-ignore lint/suspicious/noExplicitAny: a channel of any type (its settings' type is invariant)
  alertChannels?: Common['alertChannels'] | Array<AlertChannel<any> | NonNullable<Common['alertChannels']>> | null
  /**
   * Checks of this project this check depends on (a database the app needs): while one of them
   * is failing, this check's failures are recorded but not alerted, and its status says why.
   * Each becomes its remote id when the plan is applied (an extension of the API: the local
   * server has it, the hosted service does not). No cycles: a check cannot depend, directly or
   * not, on a check that depends on it.
   * @example dependsOn: [databaseCheck]
   */
  dependsOn?: AnyCheck[]
}

type DefaultableKey =
  | 'activated'
  | 'muted'
  | 'doubleCheck'
  | 'shouldFail'
  | 'locations'
  | 'tags'
  | 'alertSettings'
  | 'useGlobalAlertSettings'
  | 'groupId'
  | 'groupOrder'
  | 'runtimeId'
  | 'alertChannelSubscriptions'
  | 'retryStrategy'
  | 'runParallel'
  | 'frequency'
  | 'frequencyOffset'
  | 'alertChannels'

/** Props where `null` on a check means "none, not the default"; a default itself is never `null`. */
type NoneKey = 'alertSettings' | 'retryStrategy' | 'alertChannels' | 'alertChannelSubscriptions' | 'frequencyOffset'

/** The check props a config's `defaults` may set for every check. */
export type CheckDefaults = {
  [K in DefaultableKey]?: K extends NoneKey ? Exclude<CheckProps[K], null> : CheckProps[K]
}
