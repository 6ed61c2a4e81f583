import type { z } from 'zod'
import type { RemoteRecord, ResourceDescriptor, ResourceKind } from './types.js'
import { variable } from './kinds/variable.js'
import { statusPageService } from './kinds/status-page-service.js'
import { privateLocation } from './kinds/private-location.js'
import {
  emailAlertChannel,
  msTeamsAlertChannel,
  opsgenieAlertChannel,
  pagerDutyAlertChannel,
  slackAlertChannel,
  smsAlertChannel,
  webhookAlertChannel,
} from './kinds/alert-channel.js'
import { maintenanceWindow } from './kinds/maintenance-window.js'
import { checkGroup } from './kinds/check-group.js'
import { snippet } from './kinds/snippet.js'
import { dnsCheck } from './kinds/dns-check.js'
import { icmpCheck } from './kinds/icmp-check.js'
import { heartbeatCheck } from './kinds/heartbeat-check.js'
import { statusPage } from './kinds/status-page.js'
import { apiCheck } from './kinds/api-check.js'
import { tcpCheck } from './kinds/tcp-check.js'
import { urlCheck } from './kinds/url-check.js'
import { browserCheck, multiStepCheck, playwrightCheck } from './kinds/script-check.js'
import { checkKindProblems } from './kinds/common.js'

/**
 * Every kind's descriptor, in creation order (tiers ascending). A kind missing here, or a
 * descriptor missing a field, is a compile error; every per-kind table below is derived.
 */
export const DESCRIPTORS = {
  variable,
  'status-page-service': statusPageService,
  'private-location': privateLocation,
  'email-alert-channel': emailAlertChannel,
  'slack-alert-channel': slackAlertChannel,
  'webhook-alert-channel': webhookAlertChannel,
  'sms-alert-channel': smsAlertChannel,
  'pagerduty-alert-channel': pagerDutyAlertChannel,
  'opsgenie-alert-channel': opsgenieAlertChannel,
  'msteams-alert-channel': msTeamsAlertChannel,
  'maintenance-window': maintenanceWindow,
  snippet,
  'check-group': checkGroup,
  'dns-check': dnsCheck,
  'icmp-check': icmpCheck,
  'api-check': apiCheck,
  'tcp-check': tcpCheck,
  'url-check': urlCheck,
  'browser-check': browserCheck,
  'multistep-check': multiStepCheck,
  'playwright-check': playwrightCheck,
  'heartbeat-check': heartbeatCheck,
  'status-page': statusPage,
} as const satisfies { [K in ResourceKind]: ResourceDescriptor & { kind: K } }

export function descriptorOf(kind: ResourceKind): ResourceDescriptor {
  return DESCRIPTORS[kind]
}

const ALL: readonly ResourceDescriptor[] = Object.values(DESCRIPTORS)
for (let i = 1; i < ALL.length; i++) {
  if (ALL[i].tier < ALL[i - 1].tier) throw new Error(`descriptor ${ALL[i].kind} is declared after a kind of a later tier`)
}
// a check kind has every check's references, keyed arrays and secrets (checkDescriptor adds its own to them)
const slips = ALL.flatMap(checkKindProblems)
if (slips.length > 0) throw new Error(`check descriptors without what every check has: ${slips.join('; ')}`)

/** Kinds of resources the engine manages, in the order they are created. */
export const RESOURCE_KINDS = Object.keys(DESCRIPTORS) as readonly ResourceKind[]

export const isResourceKind = (text: string): text is ResourceKind => Object.hasOwn(DESCRIPTORS, text)

const table = <T>(pick: (d: ResourceDescriptor) => T) => Object.fromEntries(ALL.map((d) => [d.kind, pick(d)])) as Record<ResourceKind, T>

/** The construct class users write for each kind. */
export const CONSTRUCT_NAMES: Record<ResourceKind, string> = table((d) => d.construct)

/** The shared schema each kind's payload is validated and normalized with. */
export const RESOURCE_SCHEMAS: Record<ResourceKind, z.ZodType> = table((d) => d.schema)

/** Kinds that are checks: config defaults apply to them. */
export const CHECK_KINDS: ReadonlySet<ResourceKind> = new Set(ALL.filter((d) => d.check).map((d) => d.kind))

/** The kind of a construct name, any case: `DnsCheck`, `dnscheck` → `dns-check`. */
export function kindOfConstruct(name: string): ResourceKind | undefined {
  return ALL.find((d) => d.construct.toLowerCase() === name.toLowerCase())?.kind
}

/**
 * Kinds grouped by dependency tier, ascending: creates and updates run tier by tier, deletes
 * after all of them with the tiers reversed.
 */
export function dependencyTiers(): ResourceKind[][] {
  const tiers = [...new Set(ALL.map((d) => d.tier))].sort((a, b) => a - b)
  return tiers.map((tier) => ALL.filter((d) => d.tier === tier).map((d) => d.kind))
}

/** The remote id of a record of `kind`. */
export function remoteIdOf(kind: ResourceKind, record: RemoteRecord): string {
  return String(record[DESCRIPTORS[kind].idField])
}

/** The name a resource is shown by (a variable's key, everything else's name). */
export function displayName(kind: ResourceKind, payload: Record<string, unknown>): string | undefined {
  const field = DESCRIPTORS[kind].displayField
  let name: unknown = payload[field]
  if (name === undefined && field.includes('.'))
    name = field.split('.').reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), payload)
  return typeof name === 'string' ? name : undefined
}

/** The value of an identity field (a dotted path: `config.address`) in a payload or record, as text; undefined when unset. */
export function identityValue(payload: Record<string, unknown>, field: string): string | undefined {
  let value: unknown = payload[field]
  if (value === undefined && field.includes('.'))
    value = field.split('.').reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), payload)
  return value === undefined || value === null ? undefined : String(value)
}

/** Kinds whose identity is unique on the service: a duplicate create is answered 409. */
export const UNIQUE_IDENTITY_KINDS: ReadonlySet<ResourceKind> = new Set(ALL.filter((d) => d.identity.unique).map((d) => d.kind))

/** Kinds other resources refer to by id. */
export const REFERENCED_KINDS: readonly ResourceKind[] = [...new Set(ALL.flatMap((d) => d.references.flatMap(referredKinds)))]

/**
 * Kinds referred to by a number (alert channels): a plan names them from the placeholders of the
 * code, never by their ids, which cannot be told apart from any other number in its text.
 */
export const NUMERIC_ID_KINDS: ReadonlySet<ResourceKind> = new Set(
  ALL.flatMap((d) => d.references.filter((r) => r.numeric).flatMap((r) => r.anyOf ?? [r.kind])),
)

/** The kinds a reference field may refer to: its `anyOf`, else its one kind. */
export function referredKinds(field: import('./types.js').ReferenceField): readonly ResourceKind[] {
  return field.anyOf ?? [field.kind]
}

/** Kinds with a reference field to `target`. */
export function kindsReferring(target: ResourceKind): ResourceKind[] {
  return ALL.filter((d) => d.references.some((r) => referredKinds(r).includes(target))).map((d) => d.kind)
}

/** Keyed arrays of every kind (dotted path → key field). */
export const KEYED_ARRAYS: Record<string, string> = Object.assign({}, ...ALL.map((d) => d.keyedArrays))
/** Keyed arrays whose order means nothing, of every kind. */
export const UNORDERED_KEYED: ReadonlySet<string> = new Set(ALL.flatMap((d) => d.unorderedKeyed))
/** Top-level set-like arrays of every kind. */
export const SET_ARRAYS: readonly string[] = [...new Set(ALL.flatMap((d) => d.setArrays))]

/** One place a reference field occurs in a payload: its concrete dotted path and value. */
export interface ReferenceSite {
  path: string
  value: unknown
  field: import('./types.js').ReferenceField
}

/** A pattern's steps, worked out once per pattern (sitesOf runs for every reference field of every resource). */
const STEPS = new Map<string, string[]>()

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Every place in `payload` where `pattern` (dotted, `[]` for every array element) has a value:
 * objects on the way must be plain objects holding the key, arrays must be arrays.
 */
export function sitesOf(payload: unknown, pattern: string): Array<{ path: string; value: unknown }> {
  let steps = STEPS.get(pattern)
  if (!steps) STEPS.set(pattern, (steps = pattern.split('.').flatMap((part) => (part.endsWith('[]') ? [part.slice(0, -2), '[]'] : [part]))))
  const out: Array<{ path: string; value: unknown }> = []
  // most payloads hold none of a pattern's fields: nothing to walk
  if (steps[0] !== '[]' && (!isObject(payload) || !(steps[0] in payload))) return out
  const walk = (node: unknown, i: number, at: string) => {
    if (i === steps.length) {
      out.push({ path: at, value: node })
      return
    }
    const step = steps[i]
    if (step === '[]') {
      if (!Array.isArray(node)) return
      node.forEach((item, j) => walk(item, i + 1, `${at}.${j}`))
      return
    }
    if (!isObject(node) || !(step in node)) return
    walk(node[step], i + 1, at ? `${at}.${step}` : step)
  }
  walk(payload, 0, '')
  return out
}

/** The references a payload (or remote record) of `kind` holds, where and to what. */
export function referenceSites(kind: ResourceKind, payload: Record<string, unknown>): ReferenceSite[] {
  return DESCRIPTORS[kind].references.flatMap((field) => sitesOf(payload, field.path).map((site) => ({ ...site, field })))
}
