import { z } from 'zod'
import { channelUrl, emailChannelSchema, slackChannelSchema, smsChannelSchema, webhookChannelSchema } from './check.js'
import { maskUrl } from './check-secrets.js'

/**
 * The configuration of the channel types that only account-level alert channels have (the
 * inline `alertChannels` of a check have email, webhook, Slack and SMS). A URL is optional where
 * the service has a fixed endpoint: it names another region or a relay, and tests give a local
 * receiver.
 */

/** PagerDuty, Events API v2: `serviceKey` is the integration's routing key (a secret). */
export const pagerDutyChannelSchema = z.object({
  serviceKey: z.string().min(1),
  account: z.string().optional(),
  serviceName: z.string().optional(),
  /** the Events API v2 endpoint (default https://events.pagerduty.com/v2/enqueue; EU: https://events.eu.pagerduty.com/v2/enqueue) */
  url: channelUrl.optional(),
})

export const OPSGENIE_REGIONS = ['US', 'EU'] as const
export const OPSGENIE_PRIORITIES = ['P1', 'P2', 'P3', 'P4', 'P5'] as const

/** Opsgenie's Alert API: `apiKey` is an API integration's key (a secret). */
export const opsgenieChannelSchema = z.object({
  name: z.string().min(1),
  apiKey: z.string().min(1),
  region: z.enum(OPSGENIE_REGIONS).default('US'),
  priority: z.enum(OPSGENIE_PRIORITIES).default('P3'),
  /** the API's base URL (default by region: https://api.opsgenie.com, https://api.eu.opsgenie.com) */
  url: channelUrl.optional(),
})

/** A Microsoft Teams incoming webhook (or a Workflows webhook): its URL is its token (a secret). */
export const msTeamsChannelSchema = z.object({
  name: z.string().min(1),
  url: channelUrl,
})

/** The types of an account-level alert channel: the reference's, less SLACK_APP and CALL (no local equivalent), plus MSTEAMS. */
export const ALERT_CHANNEL_TYPES = ['EMAIL', 'SLACK', 'WEBHOOK', 'SMS', 'PAGERDUTY', 'OPSGENIE', 'MSTEAMS'] as const
export type AlertChannelKind = (typeof ALERT_CHANNEL_TYPES)[number]

/** The configuration schema of each type (the inline channels' own for the four a check has inline). */
export const ALERT_CHANNEL_CONFIGS = {
  EMAIL: emailChannelSchema,
  SLACK: slackChannelSchema,
  WEBHOOK: webhookChannelSchema,
  SMS: smsChannelSchema,
  PAGERDUTY: pagerDutyChannelSchema,
  OPSGENIE: opsgenieChannelSchema,
  MSTEAMS: msTeamsChannelSchema,
} as const satisfies Record<AlertChannelKind, z.ZodType>

const subscriptionItem = z.object({
  checkId: z.string().min(1).nullish(),
  groupId: z.number().int().positive().nullish(),
  activated: z.boolean().default(true),
})

/**
 * Body of POST /v1/alert-channels and PUT /v1/alert-channels/{id}: the type, its configuration
 * (validated by the type's schema, problems named `config.<field>`), and which events the channel
 * gets. `subscriptions` and the answer-only fields (`id`, timestamps) are accepted and ignored:
 * a check subscribes by its own `alertChannelSubscriptions` (or PUT …/subscriptions).
 */
export const alertChannelSchema = z
  .object({
    id: z.unknown().optional(),
    created_at: z.unknown().optional(),
    updated_at: z.unknown().optional(),
    subscriptions: z.array(subscriptionItem).optional(),
    type: z.enum(ALERT_CHANNEL_TYPES),
    config: z.record(z.string(), z.unknown()),
    sendRecovery: z.boolean().default(true),
    sendFailure: z.boolean().default(true),
    sendDegraded: z.boolean().default(false),
    sslExpiry: z.boolean().default(false),
    sslExpiryThreshold: z.number().int().min(1).max(30).default(30),
    autoSubscribe: z.boolean().default(false),
  })
  .transform((value, ctx) => {
    const parsed = ALERT_CHANNEL_CONFIGS[value.type].safeParse(value.config)
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: ['config', ...issue.path] } as never)
      return z.NEVER
    }
    const { id: _id, created_at: _c, updated_at: _u, subscriptions: _s, ...rest } = value
    return { ...rest, config: parsed.data as Record<string, unknown> }
  })

export type AlertChannelInput = z.input<typeof alertChannelSchema>
export type AlertChannelData = z.output<typeof alertChannelSchema>

/** Body of PUT /v1/alert-channels/{id}/subscriptions: one check (a group is not supported here) and whether it is subscribed. */
export const alertChannelSubscriptionBodySchema = z.object({
  checkId: z.string().min(1),
  groupId: z.null().optional(),
  activated: z.boolean(),
})

/**
 * A channel as answers show it: the secrets of its configuration masked like a check's (a
 * Slack or Teams URL's path, a PagerDuty service key, an Opsgenie API key, a webhook's header
 * and query values marked secret).
 */
export function blankAlertChannelSecrets(type: string, config: Record<string, unknown>): Record<string, unknown> {
  const blank = (list: unknown) => Array.isArray(list)
    ? list.map((v) => (v && typeof v === 'object' && (v as { secret?: unknown }).secret === true ? { ...v, value: '' } : v))
    : list
  switch (type) {
    case 'SLACK':
    case 'MSTEAMS':
      return { ...config, url: maskUrl(config.url) }
    case 'PAGERDUTY':
      return { ...config, serviceKey: '' }
    case 'OPSGENIE':
      return { ...config, apiKey: '' }
    case 'WEBHOOK':
      return { ...config, headers: blank(config.headers), queryParameters: blank(config.queryParameters) }
    default:
      return config
  }
}

/** The settings of a channel besides its configuration: which events it gets. */
export const ALERT_CHANNEL_SETTINGS = ['sendRecovery', 'sendFailure', 'sendDegraded', 'sslExpiry', 'sslExpiryThreshold', 'autoSubscribe'] as const

/**
 * The body of one type of channel, as the client's resource kinds describe it (one kind per
 * type, `EmailAlertChannel` …): the type fixed, its configuration's schema, the settings with
 * the service's defaults. The answer-only fields are accepted and dropped, as the route does.
 */
export function alertChannelTypeSchema<T extends AlertChannelKind>(type: T) {
  return z.object({
    type: z.literal(type).default(type as never),
    config: ALERT_CHANNEL_CONFIGS[type],
    sendRecovery: z.boolean().default(true),
    sendFailure: z.boolean().default(true),
    sendDegraded: z.boolean().default(false),
    sslExpiry: z.boolean().default(false),
    sslExpiryThreshold: z.number().int().min(1).max(30).default(30),
    autoSubscribe: z.boolean().default(false),
  })
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A channel body (`{ type, config, … }`) with its secrets masked as answers show them, or the same object when it holds none. */
export function blankAlertChannelPayload<T>(payload: T): T {
  if (!isRecord(payload) || !isRecord(payload.config) || typeof payload.type !== 'string') return payload
  if (alertChannelSecretValues(payload) === undefined) return payload
  return { ...payload, config: blankAlertChannelSecrets(payload.type, payload.config) } as T
}

/**
 * The secret values of a channel body that answers mask (blankAlertChannelSecrets): their paths
 * as plans name them and one canonical text of paths and values, or undefined when none is set.
 */
export function alertChannelSecretValues(payload: Record<string, unknown>): { text: string; paths: string[] } | undefined {
  const config = payload.config
  if (!isRecord(config)) return undefined
  const pairs: Array<[string, string]> = []
  const text = (field: string) => {
    const value = config[field]
    if (typeof value === 'string' && value !== '' && !(field === 'url' && value === maskUrl(value))) pairs.push([`config.${field}`, value])
  }
  const items = (field: string) => {
    const list = config[field]
    if (!Array.isArray(list)) return
    for (const v of list) if (isRecord(v) && v.secret === true && typeof v.value === 'string' && v.value !== '') pairs.push([`config.${field}[${String(v.key)}].value`, v.value])
  }
  switch (payload.type) {
    case 'SLACK':
    case 'MSTEAMS':
      text('url')
      break
    case 'PAGERDUTY':
      text('serviceKey')
      break
    case 'OPSGENIE':
      text('apiKey')
      break
    case 'WEBHOOK':
      items('headers')
      items('queryParameters')
      break
  }
  if (pairs.length === 0) return undefined
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  return { text: JSON.stringify(pairs), paths: pairs.map(([path]) => path) }
}
