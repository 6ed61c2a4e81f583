import { blankCheckSecrets, checkSecretValues } from '../../schema/check-secrets.js'
import { ALERT_CHANNEL_REFERENCE } from './alert-channel.js'

/** Pieces several descriptors share. */
export const enc = encodeURIComponent

/** Secrets every check may hold: secret environment variables, secret webhook headers and query values, Slack URLs. */
export const CHECK_SECRET_PATHS = [
  'environmentVariables', 'alertChannels.webhook[].headers', 'alertChannels.webhook[].queryParameters', 'alertChannels.slack[].url',
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
  'environmentVariables', 'alertChannelSubscriptions', 'alertChannels.webhook.headers', 'alertChannels.webhook.queryParameters',
] as const

/** A check's reference to the status page service its incidents go to. */
export const TRIGGER_INCIDENT_REFERENCE = { path: 'triggerIncident.serviceId', kind: 'status-page-service', where: ' in its triggerIncident' } as const

/** A check's group (`group: g` in code, `groupId` in the API): its id is a number. */
export const GROUP_REFERENCE = { path: 'groupId', inCode: 'group', kind: 'check-group', where: ' as its group' } as const

/** Where checks are listed: one collection for every check type. */
export const checksList = (checkType: string) =>
  ({ collection: 'checks', path: '/v1/checks', paging: 'page', where: { field: 'checkType', equals: checkType }, othersAs: 'check' }) as const

/** Endpoints of a check type: created and updated under its type, deleted as any check. */
export const checkEndpoints = (type: string) => ({
  create: `/v1/checks/${type}`,
  update: (id: string) => `/v1/checks/${type}/${enc(id)}`,
  remove: (id: string) => `/v1/checks/${enc(id)}`,
})

/**
 * What every check kind's descriptor shares: created under its type, listed among all checks by
 * `checkType`, identified by name, ordered set-like `locations` and `tags`, the keyed arrays of
 * every check, and its incidents' service and its alert channels as references.
 */
export const checkDescriptor = (type: string, checkType: string) =>
  ({
    check: true,
    tier: 1,
    displayField: 'name',
    endpoints: checkEndpoints(type),
    idField: 'id',
    list: checksList(checkType),
    identity: { fields: ['name'], unique: false },
    references: [TRIGGER_INCIDENT_REFERENCE, GROUP_REFERENCE, ALERT_CHANNEL_REFERENCE],
    setArrays: ['locations', 'tags'],
    keyedArrays: CHECK_KEYED_ARRAYS,
    unorderedKeyed: CHECK_UNORDERED_KEYED,
    // reads mask secrets: both sides compare masked, and the lock's fingerprint of the secret
    // values tells whether one of them changed in code (docs/security.md)
    normalize: blankCheckSecrets,
    normalizeNeeded: (check: Record<string, unknown>) => blankCheckSecrets(check) !== check,
    blankedSecrets: checkSecretValues,
  }) as const
