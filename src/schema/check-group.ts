import { z } from 'zod'
import { omitKeys } from './omit.js'
import { FREQUENCIES, LOCATIONS, RUNTIME_IDS } from './enums.js'
import { alertChannelSubscriptionSchema, alertSettingsSchema, checkEnvironmentVariableSchema, retryStrategySchema } from './check.js'
import { privateLocationsSchema } from './private-location.js'
import { apiAssertionSchema, apiKeyValueSchema, basicAuthSchema } from './api-check.js'

/**
 * A check group (reference: CheckGroupCreate / CheckGroup, "Check groups v1"): settings its
 * checks share. A check joins by its `groupId`; `groupOrder` orders it when the group is
 * triggered. What the group sets applies on the server when its checks run (`applyGroup`).
 */

/** API-check defaults of a group (reference: CheckGroupCreateAPICheckDefaults). */
export const apiCheckDefaultsSchema = z.object({
  /** the group's base URL, `{{GROUP_BASE_URL}}` in its API checks' URLs */
  url: z.string().max(2048).nullish(),
  headers: z.array(apiKeyValueSchema).default([]),
  queryParameters: z.array(apiKeyValueSchema).default([]),
  assertions: z.array(apiAssertionSchema).default([]),
  basicAuth: basicAuthSchema.nullish(),
})

/** Body of POST /v1/check-groups and PUT /v1/check-groups/{id}. */
export const checkGroupSchema = z
  .object({
    id: z.unknown().optional(),
    created_at: z.unknown().optional(),
    updated_at: z.unknown().optional(),
    /** read only in the reference: the ids of the group's checks */
    checks: z.unknown().optional(),
    name: z.string().min(1).max(200),
    activated: z.boolean().default(true),
    muted: z.boolean().default(false),
    tags: z.array(z.string().min(1)).default([]),
    locations: z.array(z.enum(LOCATIONS)).default([]),
    /** slugs of the account's private locations the group's checks run in (those that name no location of their own) */
    privateLocations: privateLocationsSchema.nullish(),
    /** the frequency of the group's checks that set none in code (applied when the project is built) */
    frequency: z.literal(FREQUENCIES).nullish(),
    concurrency: z.number().int().min(1).max(100).default(3),
    apiCheckDefaults: apiCheckDefaultsSchema.default({ headers: [], queryParameters: [], assertions: [] }),
    environmentVariables: z.array(checkEnvironmentVariableSchema).max(200).nullish(),
    doubleCheck: z.boolean().default(true),
    useGlobalAlertSettings: z.boolean().default(true),
    alertSettings: alertSettingsSchema.optional(),
    alertChannelSubscriptions: z.array(alertChannelSubscriptionSchema).default([]),
    retryStrategy: retryStrategySchema.nullish(),
    runtimeId: z.enum(RUNTIME_IDS).nullish(),
    runParallel: z.boolean().default(false),
  })
  .transform((value) => omitKeys(value, ['id', 'created_at', 'updated_at', 'checks']))

export type CheckGroupInput = z.input<typeof checkGroupSchema>
export type CheckGroup = z.output<typeof checkGroupSchema>

type Json = Record<string, unknown>
type KeyValue = { key: string; value: string; locked?: boolean; secret?: boolean }

const isList = (value: unknown): value is unknown[] => Array.isArray(value)
const filled = (value: unknown) => value !== undefined && value !== null

/** The items of `group` whose key the check does not have, then the check's: the check wins. */
function mergeByKey(fromGroup: unknown, own: unknown, key: string): unknown[] {
  const mine = isList(own) ? own : []
  const keys = new Set(mine.map((item) => (item as Json)[key]))
  const theirs = isList(fromGroup) ? fromGroup.filter((item) => !keys.has((item as Json)[key])) : []
  return [...theirs, ...mine]
}

/** Where a group's value of a check's field came from, for plans and answers. */
export const GROUP_FIELDS = [
  'locations',
  'frequency',
  'environmentVariables',
  'alertChannelSubscriptions',
  'alertSettings',
  'retryStrategy',
  'runtimeId',
  'activated',
  'muted',
  'request.url',
  'request.headers',
  'request.queryParameters',
  'request.assertions',
  'request.basicAuth',
] as const

/**
 * The check as it runs in its group: what the check leaves out, the group gives.
 * - `locations` and `privateLocations`: the check's own when it names some of either, else the group's;
 * - `activated` false and `muted` true of the group win (a deactivated group runs none of its checks);
 * - `environmentVariables`, `alertChannelSubscriptions`: both, by key; the check's item wins
 *   (a channel both name is subscribed once);
 * - alert settings: the group's when the check uses the account's and the group its own;
 * - `retryStrategy`, `runtimeId`: the check's when set, else the group's;
 * - an API check's request: `{{GROUP_BASE_URL}}` is the group's base URL; the group's headers and
 *   query parameters the check does not have by key, then the check's; the check's assertions
 *   and then the group's; the group's basic auth when the check has none.
 * `frequency` is not here: the server cannot tell a check's default from a chosen 10 minutes, so
 * a group's frequency is applied when the project is built (the check's own wins).
 */
export function applyGroup<T extends Json>(check: T, group: CheckGroup | Json | undefined): T {
  if (!group) return check
  const g = group as Json
  const out: Json = { ...check }
  // a check that names no location (public or private) of its own runs where the group does
  const ownWhere = (isList(check.locations) && check.locations.length > 0) || (isList(check.privateLocations) && check.privateLocations.length > 0)
  if (!ownWhere && isList(g.locations) && g.locations.length > 0) out.locations = g.locations
  if (!ownWhere && isList(g.privateLocations) && g.privateLocations.length > 0) out.privateLocations = g.privateLocations
  if (g.activated === false) out.activated = false
  if (g.muted === true) out.muted = true
  if (isList(g.environmentVariables) && g.environmentVariables.length > 0) {
    out.environmentVariables = mergeByKey(g.environmentVariables, check.environmentVariables, 'key')
  }
  if (isList(g.alertChannelSubscriptions) && g.alertChannelSubscriptions.length > 0) {
    out.alertChannelSubscriptions = mergeByKey(g.alertChannelSubscriptions, check.alertChannelSubscriptions, 'alertChannelId')
  }
  if (check.useGlobalAlertSettings !== false && g.useGlobalAlertSettings === false && filled(g.alertSettings)) {
    out.useGlobalAlertSettings = false
    out.alertSettings = g.alertSettings
  }
  if (!filled(check.retryStrategy) && filled(g.retryStrategy)) out.retryStrategy = g.retryStrategy
  if (!filled(check.runtimeId) && filled(g.runtimeId)) out.runtimeId = g.runtimeId
  const defaults = g.apiCheckDefaults as Json | undefined
  const request = check.request as Json | undefined
  if (check.checkType === 'API' && defaults && request) {
    const next: Json = { ...request }
    if (typeof request.url === 'string' && typeof defaults.url === 'string' && defaults.url !== '') {
      next.url = request.url.replace(/\{\{\s*GROUP_BASE_URL\s*\}\}/g, defaults.url.replace(/\/+$/, ''))
    }
    for (const field of ['headers', 'queryParameters'] as const) {
      if (isList(defaults[field]) && (defaults[field] as unknown[]).length > 0) {
        next[field] = mergeByKey(
          (defaults[field] as KeyValue[]).map((kv) => ({ ...kv })),
          request[field],
          'key',
        )
      }
    }
    if (isList(defaults.assertions) && defaults.assertions.length > 0)
      next.assertions = [...(isList(request.assertions) ? request.assertions : []), ...defaults.assertions]
    if (!filled(request.basicAuth) && filled(defaults.basicAuth)) next.basicAuth = defaults.basicAuth
    out.request = next
  }
  return out as T
}

/**
 * The order a group's checks run in when the group is triggered: by `groupOrder` (checks without
 * one last), then by name. Checks of the same `groupOrder` form one stage and may run together.
 */
export function groupStages<T extends { groupOrder?: unknown; name?: unknown }>(checks: readonly T[]): T[][] {
  const order = (c: T) => (typeof c.groupOrder === 'number' ? c.groupOrder : Number.POSITIVE_INFINITY)
  const sorted = [...checks].sort((a, b) => order(a) - order(b) || String(a.name ?? '').localeCompare(String(b.name ?? '')))
  const stages: T[][] = []
  for (const check of sorted) {
    const last = stages[stages.length - 1]
    if (last && order(last[0]) === order(check) && Number.isFinite(order(check))) last.push(check)
    else stages.push([check])
  }
  return stages
}

const blankItems = (items: unknown) =>
  Array.isArray(items) ? items.map((i: { secret?: boolean; value?: string }) => (i && i.secret === true ? { ...i, value: '' } : i)) : items
const hasSecretItem = (items: unknown) => Array.isArray(items) && items.some((i: { secret?: boolean; value?: string }) => i?.secret === true && i.value !== '')

/**
 * A group as reads answer it: secret environment variables, secret API-default headers and query
 * values and the API-default basic auth password read back as "" (as a check's). The same
 * object when there is nothing to mask.
 */
export function blankGroupSecrets<T>(group: T): T {
  const g = group as Json
  if (!g || typeof g !== 'object') return group
  const defaults = (g.apiCheckDefaults ?? {}) as Json
  const auth = defaults.basicAuth as Json | null | undefined
  const secretDefaults = hasSecretItem(defaults.headers) || hasSecretItem(defaults.queryParameters) || (!!auth && auth.password !== '')
  if (!hasSecretItem(g.environmentVariables) && !secretDefaults) return group
  return {
    ...g,
    environmentVariables: blankItems(g.environmentVariables),
    apiCheckDefaults: {
      ...defaults,
      headers: blankItems(defaults.headers),
      queryParameters: blankItems(defaults.queryParameters),
      ...(auth ? { basicAuth: { ...auth, password: '' } } : {}),
    },
  } as T
}

/** The secret values of a group that reads mask: their paths and one canonical text of paths and values (the lock's fingerprint). */
export function groupSecretValues(group: Record<string, unknown>): { text: string; paths: string[] } | undefined {
  const pairs: Array<[string, string]> = []
  const items = (list: unknown, at: string) => {
    if (!Array.isArray(list)) return
    for (const v of list as Json[])
      if (v && v.secret === true && typeof v.value === 'string' && v.value !== '') pairs.push([`${at}[${String(v.key)}].value`, v.value])
  }
  items(group.environmentVariables, 'environmentVariables')
  const defaults = (group.apiCheckDefaults ?? {}) as Json
  items(defaults.headers, 'apiCheckDefaults.headers')
  items(defaults.queryParameters, 'apiCheckDefaults.queryParameters')
  const auth = defaults.basicAuth as Json | null | undefined
  if (auth && typeof auth.password === 'string' && auth.password !== '') pairs.push(['apiCheckDefaults.basicAuth.password', auth.password])
  if (pairs.length === 0) return undefined
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  return { text: JSON.stringify(pairs), paths: pairs.map(([path]) => path) }
}
