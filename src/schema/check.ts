import { z } from 'zod'
import { checkBody } from './omit.js'
import {
  CHECK_TYPES,
  COMPARISONS,
  DNS_ASSERTION_SOURCES,
  DNS_PROTOCOLS,
  DNS_RECORD_TYPES,
  ESCALATION_TYPES,
  FREQUENCIES,
  ICMP_ASSERTION_SOURCES,
  ICMP_IP_FAMILIES,
  ICMP_LATENCY_PROPERTIES,
  LOCATIONS,
  RETRY_ONLY_ON,
  RETRY_STRATEGY_TYPES,
  RUN_FREQUENCIES,
  RUNTIME_IDS,
  SEVERITIES,
  WEBHOOK_METHODS,
} from './enums.js'
import { crossField } from './cross-field.js'
import { privateLocationsSchema } from './private-location.js'
import { pageQuerySchema, queryBoolean } from './paging.js'
import { frequencyOffsetProblem, subMinuteFrequencyProblem } from './rules.js'

/**
 * A key/value pair of a webhook's headers or query parameters. `secret: true` (as on an API
 * check) keeps the value out of every answer: it is stored, sent with the alert, and read back
 * as "".
 */
export const keyValue = z.object({
  key: z.string(),
  value: z.string(),
  locked: z.boolean().default(false),
  secret: z.boolean().default(false),
})

/** Whether a text is an absolute http:// or https:// URL (what an alert channel may call). */
export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

/** The URL of a webhook or of a Slack incoming webhook: http(s) only, never file: or another scheme. */
export const channelUrl = z.string().min(1).refine(isHttpUrl, { message: 'must be an http:// or https:// URL' })

export const alertSettingsSchema = z.object({
  escalationType: z.enum(ESCALATION_TYPES).default('RUN_BASED'),
  runBasedEscalation: z.object({ failedRunThreshold: z.number().int().min(1).max(5) }).optional(),
  timeBasedEscalation: z.object({ minutesFailingThreshold: z.number().int().min(1) }).optional(),
  reminders: z.object({ amount: z.number().int().min(0), interval: z.number().int().min(0) }).optional(),
  parallelRunFailureThreshold: z.object({ enabled: z.boolean(), percentage: z.number().min(0).max(100) }).optional(),
  /**
   * Certificate alerts (reference: AlertSettingsSSLCertificates) of a check that talks TLS (API
   * and URL checks): an alert when the certificate has `alertThreshold` days or fewer left, a
   * recovery when it has more again (renewed).
   */
  sslCertificates: z.object({ enabled: z.boolean().default(true), alertThreshold: z.number().int().min(1).max(365).default(30) }).optional(),
})

export const retryStrategySchema = z.object({
  type: z.enum(RETRY_STRATEGY_TYPES),
  baseBackoffSeconds: z.number().min(0).optional(),
  sameRegion: z.boolean().optional(),
  maxRetries: z.number().int().min(0).max(10).optional(),
  maxDurationSeconds: z.number().min(0).max(600).optional(),
  onlyOn: z.array(z.enum(RETRY_ONLY_ON)).optional(),
})

export const triggerIncidentSchema = z.object({
  serviceId: z.string().min(1),
  severity: z.enum(SEVERITIES),
  name: z.string().min(1),
  description: z.string(),
  notifySubscribers: z.boolean().default(false),
})

/** The variables a webhook's body template may use: each names a field of the alert event. */
export const WEBHOOK_TEMPLATE_VARIABLES = [
  'EVENT_ID',
  'ALERT_TYPE',
  'ALERT_TITLE',
  'CHECK_ID',
  'CHECK_NAME',
  'CHECK_TYPE',
  'TAGS',
  'CHECK_RESULT_ID',
  'RUN_LOCATION',
  'RESPONSE_TIME',
  'STATUS_CODE',
  'ERROR_MESSAGE',
  'SSL_DAYS_REMAINING',
  'STARTED_AT',
  'STOPPED_AT',
  'NOTIFIED_AT',
  'INCIDENT_ID',
] as const

/** The `{{NAME}}`s of a template that are not variables of an alert. */
export function unknownTemplateVariables(template: string): string[] {
  const names = [...template.matchAll(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g)].map((m) => m[1])
  return [...new Set(names.filter((n) => !(WEBHOOK_TEMPLATE_VARIABLES as readonly string[]).includes(n)))]
}

/** One inline email channel of a check. */
export const emailChannelSchema = z.object({ address: z.string().min(1) })
/** One inline webhook channel of a check. */
export const webhookChannelSchema = z.object({
  url: channelUrl,
  name: z.string().min(1),
  method: z.enum(WEBHOOK_METHODS).default('POST'),
  headers: z.array(keyValue).optional(),
  queryParameters: z.array(keyValue).optional(),
  /** the body instead of the JSON event, with `{{VARIABLE}}`s of the event (WEBHOOK_TEMPLATE_VARIABLES) */
  template: z
    .string()
    .max(10_000)
    .refine((t) => unknownTemplateVariables(t).length === 0, {
      error: (issue) =>
        `uses ${unknownTemplateVariables(String(issue.input))
          .map((v) => `{{${v}}}`)
          .join(', ')}, which is not a variable of an alert (${WEBHOOK_TEMPLATE_VARIABLES.map((v) => `{{${v}}}`).join(', ')})`,
    })
    .optional(),
})
/** One inline Slack channel: the URL of a Slack incoming webhook is its token, a secret, read back masked (check-secrets.ts). */
export const slackChannelSchema = z.object({ url: channelUrl })
/** One inline SMS channel of a check. */
export const smsChannelSchema = z.object({ number: z.string().min(1), name: z.string().min(1) })

export const alertChannelsSchema = z.object({
  email: z.array(emailChannelSchema).optional(),
  webhook: z.array(webhookChannelSchema).optional(),
  slack: z.array(slackChannelSchema).optional(),
  sms: z.array(smsChannelSchema).optional(),
})

export const alertChannelSubscriptionSchema = z.object({
  alertChannelId: z.number().int(),
  activated: z.boolean().default(true),
})

/** The most checks one check may depend on. */
export const MAX_DEPENDS_ON = 20

/**
 * `dependsOn` (an extension of the spec, docs/api.md): ids of checks of the same account this
 * check depends on; while one of them fails, this check's failures are recorded but not alerted.
 */
export const dependsOnSchema = z
  .array(z.string().min(1).max(200))
  .max(MAX_DEPENDS_ON)
  .superRefine((ids, ctx) => {
    const seen = new Set<string>()
    ids.forEach((id, i) => {
      if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i], message: `names the check ${JSON.stringify(id)} twice`, input: id })
      seen.add(id)
    })
  })

/**
 * A cycle through `start` in the graph of dependsOn edges (`edges(id)`: the ids a check depends
 * on), as the ids on it from `start` back to `start`; undefined when there is none.
 */
export function dependencyCycle(start: string, edges: (id: string) => readonly string[]): string[] | undefined {
  const path: string[] = [start]
  const done = new Set<string>()
  const visit = (id: string): string[] | undefined => {
    for (const next of edges(id)) {
      if (next === start) return [...path, start]
      if (done.has(next) || path.includes(next)) continue
      path.push(next)
      const found = visit(next)
      if (found) return found
      path.pop()
      done.add(next)
    }
    return undefined
  }
  return visit(start)
}

/** Fields every check has (spec: "Check (common fields, DNS and ICMP)"). */
export const checkCommonShape = {
  name: z.string().min(1),
  activated: z.boolean().default(true),
  muted: z.boolean().default(false),
  doubleCheck: z.boolean().default(true),
  shouldFail: z.boolean().default(false),
  locations: z.array(z.enum(LOCATIONS)).min(1).nullish(),
  /** slugs of the account's private locations (/v1/private-locations) the check runs in besides its locations */
  privateLocations: privateLocationsSchema.nullish(),
  tags: z.array(z.string().min(1)).default([]),
  alertSettings: alertSettingsSchema.optional(),
  useGlobalAlertSettings: z.boolean().default(true),
  groupId: z.number().int().nullish(),
  groupOrder: z.number().int().min(0).nullish(),
  runtimeId: z.enum(RUNTIME_IDS).nullish(),
  alertChannelSubscriptions: z.array(alertChannelSubscriptionSchema).optional(),
  retryStrategy: retryStrategySchema.optional(),
  triggerIncident: triggerIncidentSchema.nullish(),
  runParallel: z.boolean().default(false),
  frequency: z.literal(FREQUENCIES).default(10),
  frequencyOffset: z.number().int().min(1).optional(),
  alertChannels: alertChannelsSchema.optional(),
  dependsOn: dependsOnSchema.optional(),
}

/**
 * `frequency` where sub-minute runs are not allowed (DNS and ICMP checks, the config's check
 * defaults): a refused value lists only the frequencies allowed there (never 0), and 0 says why.
 */
export function runFrequencySchema(listAllowed = true) {
  return z.literal(RUN_FREQUENCIES, { error: (issue) => (issue.input === 0 ? subMinuteFrequencyProblem(0, listAllowed) : undefined) }).default(10)
}

/**
 * Why `sslCheckDomain` is not a domain name, or null when it is one: a fully qualified domain
 * name (labels of letters, digits and hyphens, 1-63 characters, not starting or ending with a
 * hyphen, 253 characters in all, an optional final dot), without scheme, path or port; an IP
 * address is not a domain. A single label (`localhost`) is a name too.
 */
export function sslCheckDomainProblem(value: string): string | null {
  const allowed = 'must be a domain name such as example.com (no scheme, path or port)'
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return `${allowed}: remove the scheme (got "${value}")`
  if (/[/?#]/.test(value)) return `${allowed}: remove the path (got "${value}")`
  if (/:\d*$/.test(value) && !value.includes('::')) return `${allowed}: remove the port; the certificate is read on port 443 (got "${value}")`
  const name = value.endsWith('.') ? value.slice(0, -1) : value
  const labels = name.split('.')
  const label = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i
  if (name.length === 0 || name.length > 253 || !labels.every((l) => label.test(l)) || /^\d+$/.test(labels[labels.length - 1])) {
    return `${allowed} (got "${value}")`
  }
  return null
}

/** `sslCheckDomain`: the domain whose certificate each run reads (see sslCheckDomainProblem). */
export const sslCheckDomainSchema = z.string().superRefine((value, ctx) => {
  const problem = sslCheckDomainProblem(value)
  if (problem) ctx.addIssue({ code: 'custom', message: problem, input: value })
})

/** Read-only fields a client may send back; they are accepted and ignored. */
export const readOnlyShape = {
  id: z.unknown().optional(),
  created_at: z.unknown().optional(),
  updated_at: z.unknown().optional(),
}

/** Cross-field rules shared by DNS and ICMP checks (their frequency is never 0: see runFrequencySchema). */
const checkRules = crossField((value, add) => {
  // a frequency the field refuses is reported once, by the field
  if (!(RUN_FREQUENCIES as readonly unknown[]).includes(value.frequency ?? 10)) return
  const problem = frequencyOffsetProblem(value.frequency ?? 10, value.frequencyOffset)
  if (problem) add({ path: ['frequencyOffset'], message: problem, input: value.frequencyOffset })
})

const dnsAssertionSchema = z.object({
  source: z.enum(DNS_ASSERTION_SOURCES),
  comparison: z.enum(COMPARISONS),
  target: z.string(),
  property: z.string().optional(),
})

export const dnsRequestSchema = z.object({
  query: z.string().min(1).max(100),
  recordType: z.enum(DNS_RECORD_TYPES).default('A'),
  nameServer: z.string().min(1).max(255).optional(),
  port: z.number().int().min(1).max(65535).optional(),
  assertions: z.array(dnsAssertionSchema).default([]),
  protocol: z.enum(DNS_PROTOCOLS).default('UDP'),
})

/** Body of POST /v1/checks/dns and PUT /v1/checks/dns/{id}. */
export const dnsCheckSchema = z
  .object({
    ...checkCommonShape,
    ...readOnlyShape,
    checkType: z.literal('DNS').optional(),
    frequency: runFrequencySchema(),
    sslCheckDomain: sslCheckDomainSchema.optional(),
    degradedResponseTime: z.number().min(0).max(5000).nullable().default(500),
    maxResponseTime: z.number().min(0).max(5000).nullable().default(1000),
    request: dnsRequestSchema,
  })
  .check(checkRules)
  .transform((value) => checkBody(value, 'DNS' as const))

const icmpAssertionSchema = z
  .object({
    source: z.enum(ICMP_ASSERTION_SOURCES),
    property: z.string(),
    comparison: z.enum(COMPARISONS),
    target: z.string(),
  })
  .check(
    crossField((v, add) => {
      if (v.source === 'LATENCY' && typeof v.property === 'string' && !(ICMP_LATENCY_PROPERTIES as readonly string[]).includes(v.property)) {
        add({
          path: ['property'],
          message: `must be one of ${ICMP_LATENCY_PROPERTIES.join(', ')} when source is LATENCY (got "${v.property}")`,
          input: v.property,
        })
      }
    }),
  )

export const icmpRequestSchema = z.object({
  hostname: z.string().min(1).max(2048),
  ipFamily: z.enum(ICMP_IP_FAMILIES).default('IPv4'),
  pingCount: z.number().int().min(1).max(50).default(10),
  assertions: z.array(icmpAssertionSchema).default([]),
})

export const checkEnvironmentVariableSchema = z.object({
  key: z.string().min(1),
  value: z.string(),
  locked: z.boolean().default(false),
  secret: z.boolean().default(false),
})

/** Body of POST /v1/checks/icmp and PUT /v1/checks/icmp/{id}. */
export const icmpCheckSchema = z
  .object({
    ...checkCommonShape,
    ...readOnlyShape,
    checkType: z.literal('ICMP').optional(),
    frequency: runFrequencySchema(),
    request: icmpRequestSchema,
    heartbeat: z.record(z.string(), z.unknown()),
    script: z.string(),
    scriptPath: z.string().nullish(),
    sslCheckDomain: sslCheckDomainSchema.optional(),
    environmentVariables: z.array(checkEnvironmentVariableSchema).max(50).nullish(),
    setupSnippetId: z.number().int().nullish(),
    tearDownSnippetId: z.number().int().nullish(),
    localSetupScript: z.string().nullish(),
    localTearDownScript: z.string().nullish(),
    degradedResponseTime: z.number().min(0).max(300000).nullable().default(10000),
    maxResponseTime: z.number().min(0).max(300000).nullable().default(20000),
    degradedPacketLossThreshold: z.number().int().min(0).max(100).nullable().default(10),
    maxPacketLossThreshold: z.number().int().min(0).max(100).nullable().default(20),
  })
  .check(checkRules)
  .transform((value) => checkBody(value, 'ICMP' as const))

export type DnsCheckInput = z.input<typeof dnsCheckSchema>
export type DnsCheck = z.output<typeof dnsCheckSchema>
export type IcmpCheckInput = z.input<typeof icmpCheckSchema>
export type IcmpCheck = z.output<typeof icmpCheckSchema>

/** Query of GET /v1/checks (the reference's filters; docs/api.md "Filters of lists"). */
export const checkListQuerySchema = pageQuerySchema.extend({
  checkType: z.enum(CHECK_TYPES).optional(),
  tag: z.union([z.string(), z.array(z.string())]).optional(),
  /** a part of the name, any case */
  search: z.string().max(200).optional(),
  /** the current status: from the newest run */
  status: z.enum(['passing', 'failing', 'degraded']).optional(),
  /** a part of an API check's request URL, any case: API checks only */
  apiCheckUrlFilterPattern: z.string().min(1).max(2048).optional(),
  /** each check of a group answered with the group's settings applied */
  applyGroupSettings: queryBoolean.optional(),
  /** Keyset paging (an extension of the spec): the checks after the one with this id; `page` is then ignored. */
  after: z.string().min(1).max(100).optional(),
})

/** Query of GET /v1/checks/{id}. */
export const checkQuerySchema = z.object({ applyGroupSettings: queryBoolean.optional() })

/** Query of POST/PUT check routes. */
export const autoAssignAlertsQuerySchema = z.object({
  autoAssignAlerts: z.enum(['true', 'false']).optional(),
})
