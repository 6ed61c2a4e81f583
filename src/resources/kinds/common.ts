import { blankCheckSecrets, checkSecretValues } from '../../schema/check-secrets.js'
import type { ReferenceField, ResourceDescriptor } from '../types.js'
import { ALERT_CHANNEL_REFERENCE } from './alert-channel.js'

/** Pieces several descriptors share. */
export const enc = encodeURIComponent

/** Secrets every check may hold: secret environment variables, secret webhook headers and query values, Slack URLs. */
export const CHECK_SECRET_PATHS = [
  'environmentVariables',
  'alertChannels.webhook[].headers',
  'alertChannels.webhook[].queryParameters',
  'alertChannels.slack[].url',
] as const

/** Keyed arrays every check has. */
export const CHECK_KEYED_ARRAYS = {
  environmentVariables: 'key',
  alertChannelSubscriptions: 'alertChannelId',
  'alertChannels.webhook': 'name',
  'alertChannels.webhook.headers': 'key',
  'alertChannels.webhook.queryParameters': 'key',
} as const

export const CHECK_UNORDERED_KEYED = [
  'environmentVariables',
  'alertChannelSubscriptions',
  'alertChannels.webhook.headers',
  'alertChannels.webhook.queryParameters',
] as const

/** A check's reference to the status page service its incidents go to. */
export const TRIGGER_INCIDENT_REFERENCE = { path: 'triggerIncident.serviceId', kind: 'status-page-service', where: ' in its triggerIncident' } as const

/** A check's group (`group: g` in code, `groupId` in the API): its id is a number. */
export const GROUP_REFERENCE = { path: 'groupId', inCode: 'group', kind: 'check-group', where: ' as its group' } as const

/** The private locations a check or a group runs in (`privateLocations: [office]`), by slug; a slug written as text stays as it is. */
export const PRIVATE_LOCATIONS_REFERENCE = { path: 'privateLocations[]', kind: 'private-location', text: true, where: ' in its privateLocations' } as const

/** Where checks are listed: one collection for every check type. */
export const checksList = (checkType: string) =>
  ({ collection: 'checks', path: '/v1/checks', paging: 'page', where: { field: 'checkType', equals: checkType }, othersAs: 'check' }) as const

/** Endpoints of a check type: created and updated under its type, deleted as any check. */
export const checkEndpoints = (type: string) => ({
  create: `/v1/checks/${type}`,
  update: (id: string) => `/v1/checks/${type}/${enc(id)}`,
  remove: (id: string) => `/v1/checks/${enc(id)}`,
})

/** The references every check kind holds: its incidents' service, its group, its alert channels, its private locations. */
export const CHECK_REFERENCES = [TRIGGER_INCIDENT_REFERENCE, GROUP_REFERENCE, ALERT_CHANNEL_REFERENCE, PRIVATE_LOCATIONS_REFERENCE] as const

/** What a check kind has besides what every check has: each list is added to the shared one, never in its place. */
export interface CheckKindParts {
  /** reference fields of its own (an API check's snippets) */
  references?: readonly ReferenceField[]
  /** set-like arrays of its own (a suite's `pwProjects`) */
  setArrays?: readonly string[]
  /** keyed arrays of its own (an API check's `request.headers`) */
  keyedArrays?: Readonly<Record<string, string>>
  /** of those, the ones whose order means nothing */
  unorderedKeyed?: readonly string[]
  /** secret paths of its own (an API check's `request.basicAuth.password`) */
  secretPaths?: readonly string[]
}

/**
 * What every check kind's descriptor shares: created under its type, listed among all checks by
 * `checkType`, identified by name, ordered set-like `locations` and `tags`, the keyed arrays and
 * secrets of every check, and its incidents' service, its group and its alert channels as
 * references. A kind's own `parts` are added to these: a kind cannot leave out a shared one
 * (`group: g` and `alertChannels: [channel]` work on every check kind), and the registry refuses
 * a descriptor that overrides them without them (`checkKindProblems`).
 */
export const checkDescriptor = (type: string, checkType: string, parts: CheckKindParts = {}) =>
  ({
    check: true,
    tier: 1,
    displayField: 'name',
    endpoints: checkEndpoints(type),
    idField: 'id',
    list: checksList(checkType),
    identity: { fields: ['name'], unique: false },
    references: [...CHECK_REFERENCES, ...(parts.references ?? [])],
    setArrays: ['locations', 'privateLocations', 'tags', ...(parts.setArrays ?? [])],
    keyedArrays: { ...CHECK_KEYED_ARRAYS, ...parts.keyedArrays },
    unorderedKeyed: [...CHECK_UNORDERED_KEYED, ...(parts.unorderedKeyed ?? [])],
    secrets: { self: false, arrays: [...CHECK_SECRET_PATHS, ...(parts.secretPaths ?? [])] },
    // reads mask secrets: both sides compare masked, and the lock's fingerprint of the secret
    // values tells whether one of them changed in code (docs/security.md)
    normalize: blankCheckSecrets,
    normalizeNeeded: (check: Record<string, unknown>) => blankCheckSecrets(check) !== check,
    blankedSecrets: checkSecretValues,
  }) as const

/**
 * What a check kind's descriptor lacks of what every check has (a shared reference, keyed or
 * set-like array, secret path), one line each; none for a descriptor that is not a check's.
 */
export function checkKindProblems(
  d: Pick<ResourceDescriptor, 'kind' | 'check' | 'references' | 'setArrays' | 'keyedArrays' | 'unorderedKeyed' | 'secrets'>,
): string[] {
  if (!d.check) return []
  const out: string[] = []
  for (const r of CHECK_REFERENCES)
    if (!d.references.some((own) => own.path === r.path && own.kind === r.kind)) out.push(`${d.kind} lacks the reference every check has at ${r.path}`)
  for (const a of ['locations', 'tags']) if (!d.setArrays.includes(a)) out.push(`${d.kind} lacks the set-like array ${a}`)
  for (const [path, key] of Object.entries(CHECK_KEYED_ARRAYS)) if (d.keyedArrays[path] !== key) out.push(`${d.kind} lacks the keyed array ${path}`)
  for (const path of CHECK_UNORDERED_KEYED) if (!d.unorderedKeyed.includes(path)) out.push(`${d.kind} lacks the unordered keyed array ${path}`)
  for (const path of CHECK_SECRET_PATHS) if (!d.secrets.arrays.includes(path)) out.push(`${d.kind} lacks the secret path ${path}`)
  return out
}
