/**
 * The hosted service's alert channels, each this project's channel of that type (an Incident.io
 * channel is a webhook, as it is there), `AlertChannel.fromId(12)` for a channel not in the
 * project, and `AlertChannelSubscription` (a channel subscribed to by a check or a group).
 */
import type { ResourceKind } from '../../src/resources/types.js'
import { isConstruct } from '../construct.js'
import { HostedConstruct } from './base.js'
import { Ref, isObject, upper, type Notes, type Props } from './support.js'
import { Unmapped } from './unsupported.js'
import { PhysicalRef } from './translate.js'
import type {
  AlertChannelProps,
  AlertChannelSubscriptionProps,
  EmailAlertChannelProps,
  IncidentioAlertChannelProps,
  MSTeamsAlertChannelProps,
  OpsgenieAlertChannelProps,
  PagerdutyAlertChannelProps,
  SlackAlertChannelProps,
  SmsAlertChannelProps,
  WebhookAlertChannelProps,
} from './types.js'

const SETTINGS = ['sendRecovery', 'sendFailure', 'sendDegraded', 'sslExpiry', 'sslExpiryThreshold', 'aliases', 'protect', 'retainOnDelete'] as const

/** The settings every channel has, and the channel's own fields (`fields`: hosted name → this project's). */
function channelProps(given: unknown, own: (hosted: Props, out: Props, notes: Notes) => void): { props: Props; notes: Notes } {
  const hosted = isObject(given) ? given : {}
  const props: Props = {}
  const notes: Notes = []
  for (const key of SETTINGS) if (hosted[key] !== undefined) props[key] = hosted[key]
  const rest: Props = {}
  for (const [key, value] of Object.entries(hosted)) if (!(SETTINGS as readonly string[]).includes(key) && value !== undefined) rest[key] = value
  own(rest, props, notes)
  return { props: { ...rest, ...props }, notes }
}

const text = (v: unknown) => (v instanceof URL ? v.toString() : v)

/** Base of the hosted alert channels; `AlertChannel.fromId(12)` refers to a channel not in the project. */
export abstract class AlertChannel extends HostedConstruct {
  protected constructor(kind: ResourceKind, name: string, logicalId: string, mapped: { props: Props; notes: Notes }) {
    super(kind, name, logicalId, mapped)
  }

  /** A channel not managed in this project, by its id: checks subscribe to it with `alertChannels: [...]`. */
  static fromId(id: number): PhysicalRef {
    return new PhysicalRef('AlertChannelRef', id)
  }
}

/** The hosted CLI's name of a reference to a channel (`AlertChannel.fromId(12)`). */
export const AlertChannelRef = PhysicalRef

export class EmailAlertChannel extends AlertChannel {
  constructor(logicalId: string, props: EmailAlertChannelProps) {
    super(
      'email-alert-channel',
      'EmailAlertChannel',
      logicalId,
      channelProps(props, () => {}),
    )
  }
}

export class SlackAlertChannel extends AlertChannel {
  constructor(logicalId: string, props: SlackAlertChannelProps) {
    super(
      'slack-alert-channel',
      'SlackAlertChannel',
      logicalId,
      channelProps(props, (rest, _out, notes) => {
        rest.url = text(rest.url)
        if (rest.channel !== undefined)
          notes.push({ level: 'warning', field: 'channel', message: 'is not used here: an incoming webhook posts to the channel it was made for' })
        delete rest.channel
      }),
    )
  }
}

/** A webhook's fields as this project has them (`method` upper case; no `webhookType`, no signing secret). */
function webhookInto(rest: Props, notes: Notes): void {
  rest.url = text(rest.url)
  if (rest.method !== undefined) rest.method = upper(rest.method)
  if (rest.method === 'OPTIONS')
    notes.push({ level: 'problem', field: 'method', message: 'is OPTIONS: a webhook here is sent with GET, POST, PUT, PATCH, HEAD or DELETE' })
  delete rest.webhookType
  if (rest.webhookSecret !== undefined) {
    notes.push({
      level: 'warning',
      field: 'webhookSecret',
      message:
        "is not used here: bodies are not signed, so a receiver that checks the hosted service's signature refuses them; authenticate with a secret header instead (headers: [{ key, value, secret: true }])",
    })
  }
  delete rest.webhookSecret
}

export class WebhookAlertChannel extends AlertChannel {
  constructor(logicalId: string, props: WebhookAlertChannelProps) {
    super(
      'webhook-alert-channel',
      'WebhookAlertChannel',
      logicalId,
      channelProps(props, (rest, _out, notes) => webhookInto(rest, notes)),
    )
  }
}

export class SmsAlertChannel extends AlertChannel {
  constructor(logicalId: string, props: SmsAlertChannelProps) {
    super(
      'sms-alert-channel',
      'SmsAlertChannel',
      logicalId,
      channelProps(props, (rest) => {
        rest.number = rest.phoneNumber
        // a name is required here: the number names it when the code gives none
        rest.name ??= rest.phoneNumber
        delete rest.phoneNumber
      }),
    )
  }
}

export class OpsgenieAlertChannel extends AlertChannel {
  constructor(logicalId: string, props: OpsgenieAlertChannelProps) {
    super(
      'opsgenie-alert-channel',
      'OpsgenieAlertChannel',
      logicalId,
      channelProps(props, () => {}),
    )
  }
}

export class PagerdutyAlertChannel extends AlertChannel {
  constructor(logicalId: string, props: PagerdutyAlertChannelProps) {
    super(
      'pagerduty-alert-channel',
      'PagerdutyAlertChannel',
      logicalId,
      channelProps(props, () => {}),
    )
  }
}

export class MSTeamsAlertChannel extends AlertChannel {
  constructor(logicalId: string, props: MSTeamsAlertChannelProps) {
    super(
      'msteams-alert-channel',
      'MSTeamsAlertChannel',
      logicalId,
      channelProps(props, (rest, _out, notes) => {
        rest.url = text(rest.url)
        if (rest.payload !== undefined)
          notes.push({
            level: 'warning',
            field: 'payload',
            message: "is not used here: Teams gets this project's own card (the alert's title, check, location and error)",
          })
        delete rest.payload
      }),
    )
  }
}

/** The body an Incident.io channel sends when the code gives no payload: the alert's fields as JSON. */
const INCIDENTIO_PAYLOAD = `{
  "title": "{{ALERT_TITLE}}",
  "status": "{{ALERT_TYPE}}",
  "deduplication_key": "{{CHECK_ID}}",
  "metadata": {
    "check_name": "{{CHECK_NAME}}",
    "check_type": "{{CHECK_TYPE}}",
    "run_location": "{{RUN_LOCATION}}",
    "response_time": "{{RESPONSE_TIME}}",
    "error": "{{ERROR_MESSAGE}}",
    "started_at": "{{STARTED_AT}}"
  }
}`

/** An Incident.io alert source: a webhook with its key as a secret Authorization header, as on the hosted service. */
export class IncidentioAlertChannel extends AlertChannel {
  constructor(logicalId: string, props: IncidentioAlertChannelProps) {
    super(
      'webhook-alert-channel',
      'IncidentioAlertChannel',
      logicalId,
      channelProps(props, (rest) => {
        rest.url = text(rest.url)
        rest.method = 'POST'
        rest.headers = [{ key: 'Authorization', value: `Bearer ${String(rest.apiKey ?? '')}`, secret: true }]
        rest.template = rest.payload ?? INCIDENTIO_PAYLOAD
        delete rest.apiKey
        delete rest.payload
      }),
    )
  }
}

/**
 * A channel subscribed to by a check or a group (`checkId: check.ref()` or `groupId:
 * group.ref()`): the channel is added to that construct's `alertChannels`. It is not a resource
 * of its own here (the subscription is a field of the check or group).
 */
export class AlertChannelSubscription {
  readonly logicalId: string

  constructor(logicalId: string, props: AlertChannelSubscriptionProps) {
    this.logicalId = logicalId
    const channel = props?.alertChannelId instanceof Ref ? props.alertChannelId.target : undefined
    const holder = [props?.checkId, props?.groupId].find((r) => r instanceof Ref) as Ref | undefined
    const target = holder?.target
    if (!channel || !target || !isConstruct(target)) {
      new Unmapped(
        'AlertChannelSubscription',
        logicalId,
        'must name constructs of this project by their ref(): alertChannelId: channel.ref() and checkId: check.ref() (or groupId: group.ref()); Ref.from(id) names them by logical id only. Or write alertChannels: [channel] on the check or group',
      )
      return
    }
    if (props.activated === false) return
    const targetProps = target.props as Props
    const list = Array.isArray(targetProps.alertChannels) ? targetProps.alertChannels : []
    if (!list.includes(channel)) (targetProps as Props).alertChannels = [...list, channel]
  }
}

export type { AlertChannelProps }
