import type { z } from 'zod'
import type { emailChannelSchema, slackChannelSchema, smsChannelSchema, webhookChannelSchema } from '../src/schema/check.js'
import type { msTeamsChannelSchema, opsgenieChannelSchema, pagerDutyChannelSchema } from '../src/schema/alert-channel.js'
import type { ResourceKind } from '../src/resources/types.js'
import { Construct, type ConstructOptions } from './construct.js'

/**
 * Which events a channel gets: a setting of the channel (every check subscribed to it gets the
 * same), as the hosted service has it.
 */
export interface AlertChannelSettings extends ConstructOptions {
  /**
   * Notify when a check starts failing.
   * @defaultValue true
   */
  sendFailure?: boolean
  /**
   * Notify when a failing or degraded check passes again.
   * @defaultValue true
   */
  sendRecovery?: boolean
  /**
   * Notify when a check becomes degraded (slower than its degraded threshold).
   * @defaultValue false
   */
  sendDegraded?: boolean
  /**
   * Notify when the certificate of a checked site expires within `sslExpiryThreshold` days.
   * @defaultValue false
   */
  sslExpiry?: boolean
  /**
   * Days before a certificate's expiry that `sslExpiry` warns, 1-30.
   * @defaultValue 30
   */
  sslExpiryThreshold?: number
  /**
   * Subscribe new checks of the account to this channel (the service's setting; checks in code
   * subscribe with `alertChannels: [channel]`).
   * @defaultValue false
   */
  autoSubscribe?: boolean
}

/**
 * An account-level alert channel: one channel many checks subscribe to by passing the construct
 * (`alertChannels: [oncall]`); its id on the service is filled in when the plan is applied.
 */
export abstract class AlertChannel<Props extends AlertChannelSettings = AlertChannelSettings> extends Construct<Props> {
  protected constructor(kind: ResourceKind, constructName: string, logicalId: string, props: Props) {
    super(kind, constructName, logicalId, props)
  }
}

/**
 * A subscription to an account-level channel, as `alertChannelSubscriptions` lists them: the
 * channel construct of this project (its id filled in when the plan is applied) or the numeric id
 * of a channel not managed in code; `activated: false` keeps the subscription without alerting
 * (what `alertChannels: [channel]` cannot say).
 * @example alertChannelSubscriptions: [{ alertChannelId: oncall, activated: false }]
 */
export interface AlertChannelSubscriptionProps {
  // biome-ignore lint/suspicious/noExplicitAny: a channel of any type (its settings' type is invariant)
  alertChannelId: AlertChannel<any> | number
  /** @defaultValue true */
  activated?: boolean
}

/** An email channel: `address`, the recipient. */
export type EmailAlertChannelProps = z.input<typeof emailChannelSchema> & AlertChannelSettings
/** @example const oncall = new EmailAlertChannel('oncall', { address: 'oncall@example.com' }) */
export class EmailAlertChannel extends AlertChannel<EmailAlertChannelProps> {
  /** @param logicalId id of the channel in code, unique among email channels */
  constructor(logicalId: string, props: EmailAlertChannelProps) {
    super('email-alert-channel', 'EmailAlertChannel', logicalId, props)
  }
}

/** A Slack incoming webhook: its `url` is its token, a secret (read it from `process.env`). */
export type SlackAlertChannelProps = z.input<typeof slackChannelSchema> & AlertChannelSettings
/** @example const ops = new SlackAlertChannel('ops', { url: process.env.SLACK_URL ?? '' }) */
export class SlackAlertChannel extends AlertChannel<SlackAlertChannelProps> {
  constructor(logicalId: string, props: SlackAlertChannelProps) {
    super('slack-alert-channel', 'SlackAlertChannel', logicalId, props)
  }
}

/**
 * A webhook: `name`, `url`, `method` (POST), `headers` and `queryParameters` (an item with
 * `secret: true` is never shown), and `template`, the body with the alert's `{{VARIABLES}}`.
 */
export type WebhookAlertChannelProps = z.input<typeof webhookChannelSchema> & AlertChannelSettings
/** @example new WebhookAlertChannel('hook', { name: 'Ops hook', url: 'https://hooks.example.com/alerts', headers: [{ key: 'Authorization', value: process.env.HOOK_TOKEN ?? '', secret: true }] }) */
export class WebhookAlertChannel extends AlertChannel<WebhookAlertChannelProps> {
  constructor(logicalId: string, props: WebhookAlertChannelProps) {
    super('webhook-alert-channel', 'WebhookAlertChannel', logicalId, props)
  }
}

/** An SMS channel: `name` and `number`. */
export type SmsAlertChannelProps = z.input<typeof smsChannelSchema> & AlertChannelSettings
/** @example new SmsAlertChannel('pager', { name: 'Pager', number: '+15550100' }) */
export class SmsAlertChannel extends AlertChannel<SmsAlertChannelProps> {
  constructor(logicalId: string, props: SmsAlertChannelProps) {
    super('sms-alert-channel', 'SmsAlertChannel', logicalId, props)
  }
}

/** PagerDuty (Events API v2): `serviceKey`, the integration's routing key (a secret); `url` for the EU endpoint or a relay. */
export type PagerDutyAlertChannelProps = z.input<typeof pagerDutyChannelSchema> & AlertChannelSettings
/** @example new PagerDutyAlertChannel('pd', { serviceKey: process.env.PD_ROUTING_KEY ?? '', serviceName: 'Shop' }) */
export class PagerDutyAlertChannel extends AlertChannel<PagerDutyAlertChannelProps> {
  constructor(logicalId: string, props: PagerDutyAlertChannelProps) {
    super('pagerduty-alert-channel', 'PagerDutyAlertChannel', logicalId, props)
  }
}

/** Opsgenie (Alert API): `name`, `apiKey` (a secret), `region` (US, EU), `priority` (P1-P5). */
export type OpsgenieAlertChannelProps = z.input<typeof opsgenieChannelSchema> & AlertChannelSettings
/** @example new OpsgenieAlertChannel('genie', { name: 'Ops', apiKey: process.env.OPSGENIE_KEY ?? '', region: 'EU', priority: 'P2' }) */
export class OpsgenieAlertChannel extends AlertChannel<OpsgenieAlertChannelProps> {
  constructor(logicalId: string, props: OpsgenieAlertChannelProps) {
    super('opsgenie-alert-channel', 'OpsgenieAlertChannel', logicalId, props)
  }
}

/** A Microsoft Teams incoming (or Workflows) webhook: `name`, `url` (its token, a secret). */
export type MSTeamsAlertChannelProps = z.input<typeof msTeamsChannelSchema> & AlertChannelSettings
/** @example new MSTeamsAlertChannel('teams', { name: 'Ops', url: process.env.TEAMS_URL ?? '' }) */
export class MSTeamsAlertChannel extends AlertChannel<MSTeamsAlertChannelProps> {
  constructor(logicalId: string, props: MSTeamsAlertChannelProps) {
    super('msteams-alert-channel', 'MSTeamsAlertChannel', logicalId, props)
  }
}
