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

/** A channel's settings besides its configuration (which events it gets), with the service's defaults. */
const settingsShape = {
  sendRecovery: z.boolean().default(true),
  sendFailure: z.boolean().default(true),
  sendDegraded: z.boolean().default(false),
  sslExpiry: z.boolean().default(false),
  sslExpiryThreshold: z.number().int().min(1).max(30).default(30),
  autoSubscribe: z.boolean().default(false),
}

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
    ...settingsShape,
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
 * How a secret field of a channel's configuration is kept out of answers, output and logs:
 * - `token`: the whole string is the secret (a routing key, an API key): answered as "";
 * - `tokenUrl`: a URL whose path is its token (an incoming webhook): answered as its scheme and
 *   host followed by `/********`, so that the answer is still a valid URL;
 * - `markedItems`: a list of `{ key, value, secret }` items (a webhook's headers): the values of
 *   the items marked `secret` answered as "".
 */
export type ChannelSecretKind = 'token' | 'tokenUrl' | 'markedItems'

/** The secret fields of one channel type's configuration, by field name (none: `{}`). */
export type ChannelSecrets = Readonly<Record<string, ChannelSecretKind>>

/** The secret fields of each channel type: ALERT_CHANNEL_SECRETS, or a test's copy with a type of its own. */
export type ChannelSecretTable = Readonly<Record<string, ChannelSecrets>>

/** Only fields of the type's configuration can be named secret (a misspelt field does not compile). */
type SecretsOf<S extends z.ZodType> = { readonly [F in keyof z.input<S>]?: ChannelSecretKind }

/**
 * Which fields of each channel type's configuration are secret: the one place that says it.
 * Masking on read (blankAlertChannelSecrets), the fingerprint of what reads mask
 * (alertChannelSecretValues), the client's secret paths (the plan's `(secret)`, import's
 * environment variables: alertChannelSecretPaths) and the scrubbing of deliveries
 * (alertChannelSecretStrings) all read it. A type without its entry does not compile.
 */
export const ALERT_CHANNEL_SECRETS = {
  EMAIL: {},
  SLACK: { url: 'tokenUrl' },
  WEBHOOK: { headers: 'markedItems', queryParameters: 'markedItems' },
  SMS: {},
  PAGERDUTY: { serviceKey: 'token' },
  OPSGENIE: { apiKey: 'token' },
  MSTEAMS: { url: 'tokenUrl' },
} as const satisfies { [K in AlertChannelKind]: SecretsOf<(typeof ALERT_CHANNEL_CONFIGS)[K]> }

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isSecretItem = (v: unknown): v is Record<string, unknown> => isRecord(v) && v.secret === true

/** The secret fields of a type; undefined for a type the table does not know. */
function secretsOf(type: string, table: ChannelSecretTable): ChannelSecrets | undefined {
  return Object.hasOwn(table, type) ? table[type] : undefined
}

/**
 * A channel's configuration as answers show it: every secret field of its type masked (see
 * ChannelSecretKind). A type the table does not know (a row of a newer version) shows none of
 * its configuration: any of it may be secret.
 */
export function blankAlertChannelSecrets(
  type: string,
  config: Record<string, unknown>,
  table: ChannelSecretTable = ALERT_CHANNEL_SECRETS,
): Record<string, unknown> {
  const secrets = secretsOf(type, table)
  if (!secrets) return {}
  const out = { ...config }
  for (const [field, kind] of Object.entries(secrets)) {
    const value = config[field]
    if (value === undefined) continue
    if (kind === 'token') out[field] = ''
    else if (kind === 'tokenUrl') out[field] = maskUrl(value)
    else if (Array.isArray(value)) out[field] = value.map((v) => (isSecretItem(v) ? { ...v, value: '' } : v))
  }
  return out
}

/** The settings of a channel besides its configuration: which events it gets. */
export const ALERT_CHANNEL_SETTINGS = Object.keys(settingsShape) as ReadonlyArray<keyof typeof settingsShape>

/**
 * The body of one type of channel, as the client's resource kinds describe it (one kind per
 * type, `EmailAlertChannel` …): the type fixed, its configuration's schema, the settings with
 * the service's defaults. The answer-only fields are accepted and dropped, as the route does.
 */
export function alertChannelTypeSchema<T extends AlertChannelKind>(type: T) {
  return channelBodySchema(type, ALERT_CHANNEL_CONFIGS[type])
}

/** The same for a type and its configuration's schema given (a test's type of its own). */
export function channelBodySchema<T extends string, C extends z.ZodType>(type: T, config: C) {
  return z.object({
    type: z.literal(type).default(type as never),
    config,
    ...settingsShape,
  })
}

/** A channel body (`{ type, config, … }`) with its secrets masked as answers show them, or the same object when it holds none. */
export function blankAlertChannelPayload<T>(payload: T, table: ChannelSecretTable = ALERT_CHANNEL_SECRETS): T {
  if (!isRecord(payload) || !isRecord(payload.config) || typeof payload.type !== 'string') return payload
  if (alertChannelSecretValues(payload, table) === undefined) return payload
  return { ...payload, config: blankAlertChannelSecrets(payload.type, payload.config, table) } as T
}

/**
 * The secret values of a channel body that answers mask (blankAlertChannelSecrets): their paths
 * as plans name them and one canonical text of paths and values, or undefined when none is set.
 */
export function alertChannelSecretValues(
  payload: Record<string, unknown>,
  table: ChannelSecretTable = ALERT_CHANNEL_SECRETS,
): { text: string; paths: string[] } | undefined {
  const config = payload.config
  const secrets = typeof payload.type === 'string' ? secretsOf(payload.type, table) : undefined
  if (!isRecord(config) || !secrets) return undefined
  const pairs: Array<[string, string]> = []
  for (const [field, kind] of Object.entries(secrets)) {
    const value = config[field]
    if (kind === 'markedItems') {
      if (!Array.isArray(value)) continue
      for (const v of value)
        if (isSecretItem(v) && typeof v.value === 'string' && v.value !== '') pairs.push([`config.${field}[${String(v.key)}].value`, v.value])
    } else if (typeof value === 'string' && value !== '' && !(kind === 'tokenUrl' && value === maskUrl(value))) pairs.push([`config.${field}`, value])
  }
  if (pairs.length === 0) return undefined
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  return { text: JSON.stringify(pairs), paths: pairs.map(([path]) => path) }
}

/** The dotted paths of a type's secret fields in a channel body (`config.url`), as resource descriptors list secrets. */
export function alertChannelSecretPaths(type: string, table: ChannelSecretTable = ALERT_CHANNEL_SECRETS): string[] {
  return Object.keys(secretsOf(type, table) ?? {}).map((field) => `config.${field}`)
}

/**
 * The secret strings of a channel's configuration, for scrubbing a text that may hold them (a
 * delivery's error, a label): each token, each secret item's value, a token URL and its path.
 */
export function alertChannelSecretStrings(type: string, config: Record<string, unknown>, table: ChannelSecretTable = ALERT_CHANNEL_SECRETS): string[] {
  const out: string[] = []
  for (const [field, kind] of Object.entries(secretsOf(type, table) ?? {})) {
    const value = config[field]
    if (kind === 'markedItems') {
      if (Array.isArray(value)) for (const v of value) if (isSecretItem(v) && typeof v.value === 'string' && v.value !== '') out.push(v.value)
    } else if (typeof value === 'string' && value !== '') {
      out.push(value)
      if (kind === 'tokenUrl' && URL.canParse(value)) {
        const { pathname, search } = new URL(value)
        if (`${pathname}${search}`.length > 1) out.push(`${pathname}${search}`)
      }
    }
  }
  return out
}
