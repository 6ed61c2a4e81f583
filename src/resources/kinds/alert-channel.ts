import type { z } from 'zod'
import {
  ALERT_CHANNEL_SECRETS,
  ALERT_CHANNEL_SETTINGS,
  alertChannelSecretPaths,
  alertChannelSecretValues,
  alertChannelTypeSchema,
  blankAlertChannelPayload,
  channelBodySchema,
  type AlertChannelKind,
  type ChannelSecrets,
  type ChannelSecretTable,
} from '../../schema/alert-channel.js'
import type { ResourceDescriptor, ResourceKind } from '../types.js'

/**
 * Account-level alert channels, one kind per type (`EmailAlertChannel`, `SlackAlertChannel` …),
 * all in one collection (`/v1/alert-channels`, told apart by `type`), with numeric ids. Checks
 * subscribe to them by id (`alertChannelSubscriptions`), which their constructs write as
 * `alertChannels: [channel]`.
 *
 * A construct's props are the configuration's fields and the settings side by side
 * (`{ address, sendRecovery }`); the API nests the configuration (`{ type, config: { address },
 * sendRecovery }`): `codeShape` turns one into the other.
 */

const enc = encodeURIComponent
const SETTINGS = new Set<string>(ALERT_CHANNEL_SETTINGS)

const codeShape = (type: string) => ({
  toPayload: (props: Record<string, unknown>) => {
    const config: Record<string, unknown> = {}
    const out: Record<string, unknown> = { type, config }
    for (const [key, value] of Object.entries(props)) {
      if (SETTINGS.has(key)) out[key] = value
      else config[key] = value
    }
    return out
  },
  fromPayload: (payload: Record<string, unknown>) => {
    const { type: _type, config, ...settings } = payload
    return { ...(config && typeof config === 'object' ? (config as Record<string, unknown>) : {}), ...settings }
  },
  fieldInCode: (path: string) => (path.startsWith('config.') ? path.slice('config.'.length) : path),
})

/** A channel type the tables of src/schema/alert-channel.ts do not hold: its configuration's schema and secret fields (a test's). */
export interface OwnChannelType {
  config: z.ZodType
  secrets: ChannelSecrets
}

/**
 * The descriptor of one channel type's kind. Its secrets (masked in output and saved plans,
 * fingerprinted in the lock, read from the environment by import) are its type's entry in
 * ALERT_CHANNEL_SECRETS, or those of `own`.
 */
export function channelDescriptor<K extends ResourceKind>(
  kind: K,
  construct: string,
  type: AlertChannelKind,
  example: string,
  displayField: string,
): ResourceDescriptor & { kind: K }
export function channelDescriptor<K extends ResourceKind>(
  kind: K,
  construct: string,
  type: string,
  example: string,
  displayField: string,
  own: OwnChannelType,
): ResourceDescriptor & { kind: K }
export function channelDescriptor<K extends ResourceKind>(
  kind: K,
  construct: string,
  type: string,
  example: string,
  displayField: string,
  own?: OwnChannelType,
): ResourceDescriptor & { kind: K } {
  const table: ChannelSecretTable = own ? { [type]: own.secrets } : ALERT_CHANNEL_SECRETS
  const schema = own ? channelBodySchema(type, own.config) : alertChannelTypeSchema(type as AlertChannelKind)
  // a list of `{ key, value, secret }` items is keyed by its items' keys (a webhook's headers)
  const keyedArrays = Object.fromEntries(
    Object.entries(table[type] ?? {})
      .filter(([, secret]) => secret === 'markedItems')
      .map(([field]) => [`config.${field}`, 'key']),
  )
  return {
    kind,
    construct,
    example,
    schema,
    check: false,
    tier: 0,
    displayField,
    endpoints: {
      create: '/v1/alert-channels',
      update: (id: string) => `/v1/alert-channels/${enc(id)}`,
      remove: (id: string) => `/v1/alert-channels/${enc(id)}`,
    },
    idField: 'id',
    list: { collection: 'alert-channels', path: '/v1/alert-channels', paging: 'page', where: { field: 'type', equals: type }, othersAs: 'alert-channel' },
    // a lost create is found again by type and its address or name (and by content, among several
    // alike). Several channels alike are usual (two projects of one account, each with its own
    // channel to one address; the service allows it): an unmanaged one is no duplicate (alike)
    identity: { fields: displayField === 'type' ? ['type'] : ['type', displayField], unique: false, alike: true },
    references: [],
    setArrays: [],
    keyedArrays,
    unorderedKeyed: [],
    secrets: { self: false, arrays: alertChannelSecretPaths(type, table) },
    filledByConstruct: {},
    // reads mask secrets: both sides compare masked, the lock's fingerprint tells a change; the
    // subscriptions a read lists are the checks' (their alertChannelSubscriptions), not the channel's
    normalize: (payload: Record<string, unknown>) => {
      const { subscriptions: _s, ...rest } = blankAlertChannelPayload(payload, table)
      return rest
    },
    normalizeNeeded: (payload: Record<string, unknown>) => 'subscriptions' in payload || blankAlertChannelPayload(payload, table) !== payload,
    blankedSecrets: (payload: Record<string, unknown>) => alertChannelSecretValues(payload, table),
    codeShape: codeShape(type),
  }
}

export const emailAlertChannel = channelDescriptor(
  'email-alert-channel',
  'EmailAlertChannel',
  'EMAIL',
  "const oncall = new EmailAlertChannel('oncall', { address: 'oncall@example.com' })",
  'config.address',
)
export const slackAlertChannel = channelDescriptor(
  'slack-alert-channel',
  'SlackAlertChannel',
  'SLACK',
  "const ops = new SlackAlertChannel('ops', { url: process.env.SLACK_URL ?? '' })",
  'type',
)
export const webhookAlertChannel = channelDescriptor(
  'webhook-alert-channel',
  'WebhookAlertChannel',
  'WEBHOOK',
  "const hook = new WebhookAlertChannel('hook', { name: 'Ops hook', url: 'https://hooks.example.com/alerts' })",
  'config.name',
)
export const smsAlertChannel = channelDescriptor(
  'sms-alert-channel',
  'SmsAlertChannel',
  'SMS',
  "const pager = new SmsAlertChannel('pager', { name: 'Pager', number: '+15550100' })",
  'config.name',
)
export const pagerDutyAlertChannel = channelDescriptor(
  'pagerduty-alert-channel',
  'PagerDutyAlertChannel',
  'PAGERDUTY',
  "const pd = new PagerDutyAlertChannel('pd', { serviceKey: process.env.PD_ROUTING_KEY ?? '' })",
  'config.serviceName',
)
export const opsgenieAlertChannel = channelDescriptor(
  'opsgenie-alert-channel',
  'OpsgenieAlertChannel',
  'OPSGENIE',
  "const genie = new OpsgenieAlertChannel('genie', { name: 'Ops', apiKey: process.env.OPSGENIE_KEY ?? '' })",
  'config.name',
)
export const msTeamsAlertChannel = channelDescriptor(
  'msteams-alert-channel',
  'MSTeamsAlertChannel',
  'MSTEAMS',
  "const teams = new MSTeamsAlertChannel('teams', { name: 'Ops', url: process.env.TEAMS_URL ?? '' })",
  'config.name',
)

/** Every alert channel kind: what a check's `alertChannels: [channel]` may name. */
export const ALERT_CHANNEL_KINDS = [
  'email-alert-channel',
  'slack-alert-channel',
  'webhook-alert-channel',
  'sms-alert-channel',
  'pagerduty-alert-channel',
  'opsgenie-alert-channel',
  'msteams-alert-channel',
] as const satisfies readonly ResourceKind[]

/**
 * A check's (or a group's) subscriptions to alert channels: `alertChannelSubscriptions[].alertChannelId`
 * holds a channel's numeric id, written in code as the channel construct (`alertChannels: [oncall]`).
 */
export const ALERT_CHANNEL_REFERENCE = {
  path: 'alertChannelSubscriptions[].alertChannelId',
  kind: 'email-alert-channel',
  anyOf: ALERT_CHANNEL_KINDS,
  numeric: true,
  where: ' in its alertChannels',
} as const

/**
 * Whether a kind subscribes to alert channels (its descriptor has ALERT_CHANNEL_REFERENCE): its
 * construct's `alertChannels` may then be an array of channel constructs (src/project/desired.ts)
 * and import writes its subscriptions so (src/import/codegen.ts).
 */
export function subscribesToChannels(descriptor: Pick<ResourceDescriptor, 'references'>): boolean {
  return descriptor.references.some((r) => r.path === ALERT_CHANNEL_REFERENCE.path)
}
