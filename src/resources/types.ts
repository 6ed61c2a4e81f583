import type { z } from 'zod'

/**
 * The types every layer shares about resources: the kinds, the desired state (the seam between
 * loading in src/project and planning in src/plan) and the descriptor each kind is described by
 * (src/resources/kinds/). Types only: constructs and the API client import this file.
 */

/** Kinds of resources the engine manages; each has one descriptor in src/resources/kinds/. */
export type ResourceKind =
  | 'variable'
  | 'status-page-service'
  | 'private-location'
  | 'email-alert-channel'
  | 'slack-alert-channel'
  | 'webhook-alert-channel'
  | 'sms-alert-channel'
  | 'pagerduty-alert-channel'
  | 'opsgenie-alert-channel'
  | 'msteams-alert-channel'
  | 'maintenance-window'
  | 'check-group'
  | 'snippet'
  | 'dns-check'
  | 'icmp-check'
  | 'api-check'
  | 'tcp-check'
  | 'url-check'
  | 'browser-check'
  | 'multistep-check'
  | 'playwright-check'
  | 'heartbeat-check'
  | 'status-page'

/** A reference from one construct to another, resolved into a remote id at apply time. */
export interface ResourceRef {
  /** Dotted path in the payload where the remote id goes, e.g. `cards.0.services.1.id`. */
  path: string
  kind: ResourceKind
  logicalId: string
  /** The id goes in as a number (the referred kind's ids are numbers: a check's `groupId`, an alert channel's, a snippet's). */
  numeric?: boolean
}

/** Pulumi-style resource options, common to every construct. */
export interface ResourceOptions {
  /** Former logical ids: a rename moves the lock entry instead of recreating the resource. */
  aliases?: string[]
  /** Refuse any plan that would delete this resource. */
  protect?: boolean
  /** When removed from code, forget it from the lock and leave it running remotely. */
  retainOnDelete?: boolean
}

export interface DesiredResource {
  kind: ResourceKind
  logicalId: string
  /** Construct class name, e.g. `DnsCheck`. */
  construct: string
  /** File that declared it, relative to the project root. */
  file: string
  /**
   * The API request body, validated by the shared schema with its defaults applied.
   * Reference fields hold the placeholder `${kind}:${logicalId}` until apply resolves them.
   */
  payload: Record<string, unknown>
  refs: ResourceRef[]
  options: ResourceOptions
}

/** A record as the API returns it. */
export type RemoteRecord = Record<string, unknown>

/**
 * A field of a payload that holds the remote id of another resource. Paths are dotted; `[]`
 * stands for every element of an array: `cards[].services[].id`.
 */
export interface ReferenceField {
  /** Where the remote id is in the API payload. */
  path: string
  /** Where the construct holds the referenced construct, when not at `path` (a card lists services, the API wants `{ id }`). */
  inCode?: string
  /** The kind referred to (the first of `anyOf` when several are accepted: named in messages). */
  kind: ResourceKind
  /** Every kind the field may refer to, when more than one (a subscription names a channel of any type). */
  anyOf?: readonly ResourceKind[]
  /** The API holds the remote id as a number (alert channel ids), not as a string. */
  numeric?: boolean
  /** A plain string there is taken as it is (a private location's slug not managed in code), besides a construct. */
  text?: boolean
  /** How a plan says where the reference is, after the referring resource's name (e.g. ` in its triggerIncident`). */
  where?: string
}

/** Everything the engine knows about one kind of resource. Every per-kind table is derived from these. */
export interface ResourceDescriptor {
  kind: ResourceKind
  /** The construct class users write, e.g. `DnsCheck`. */
  construct: string
  /** A short example of creating one, for messages that ask for such a construct. */
  example: string
  /** The shared schema the payload is validated and normalized with (src/schema). */
  schema: z.ZodType
  /** A check: the config's check defaults apply, `monitors test` runs it. */
  check: boolean
  /**
   * Dependency tier: creates and updates run tier by tier, ascending (what others reference
   * first); deletes run descending. Kinds are declared in the registry in creation order.
   */
  tier: number
  /** The payload field that names a resource in output: `name`, or `key` for variables; dotted for a nested one (`config.address`). */
  displayField: string
  /** The payload field the construct's logical id fills in (a variable's key), if any. */
  logicalIdField?: string
  /** Where the kind lives in the API. */
  endpoints: {
    /** Collection path for POST. */
    create: string
    /** Path of one resource for PUT. */
    update: (id: string) => string
    /** Path of one resource for DELETE. */
    remove: (id: string) => string
  }
  /** The record field holding the remote id (`id`, or `key` for variables). */
  idField: string
  /** The remote ids are numbers (a check group's, a snippet's): a reference to one holds a number, sent as one. */
  numericId?: boolean
  /**
   * The construct may give this text field as a file: `code: { entrypoint: './file.ts' }` (a path
   * relative to the file declaring the construct) or `code: { content }`; the loader reads the
   * file into the field (a snippet's `script`).
   */
  code?: { field: string }
  /** How the kind's records are listed. */
  list: {
    /** Name of the collection (several kinds may share one), as counted in `requests`. */
    collection: string
    path: string
    paging: 'page' | 'cursor'
    /** In a shared collection, the records of this kind: `record[field] === equals`. */
    where?: { field: string; equals: string }
    /** Label suffix for records of the shared collection no kind claims: `api` → `api-check` with `check`. */
    othersAs?: string
  }
  /**
   * The fields (dotted paths: `config.address`) that find a resource again in its list (lost
   * create answers, duplicates). `unique`: the service refuses a second one (409), so a
   * duplicate can never be created. `alike`: several alike are usual (two projects' alert
   * channels to one address), so an unmanaged one with the same fields is no duplicate: it is
   * never refused nor adopted (`--adopt-existing`), only named in the create's reason.
   */
  identity: { fields: readonly string[]; unique: boolean; alike?: boolean }
  /** Fields holding the remote id of another resource. */
  references: readonly ReferenceField[]
  /** Top-level arrays whose order means nothing (sorted when normalized). */
  setArrays: readonly string[]
  /** Arrays of objects identified by a field (dotted path → key field), diffed by that key. */
  keyedArrays: Readonly<Record<string, string>>
  /** Keyed arrays whose order the service does not keep and nobody sees (sorted by key). */
  unorderedKeyed: readonly string[]
  /**
   * Secret values: `self` when the resource itself holds one (`value` when `secret` is true);
   * `arrays` lists dotted paths of arrays of `{ secret, value }` items, or of string fields that
   * are always secret (`request.basicAuth.password`); `[]` steps into every item of an array
   * (`alertChannels.webhook[].headers`, `alertChannels.slack[].url`). Masked in output, hashes
   * and saved plans.
   */
  secrets: { self: boolean; arrays: readonly string[] }
  /** Fields the construct fills in itself when left out (e.g. an ICMP check's heartbeat). */
  filledByConstruct: Readonly<Record<string, unknown>>
  /** Extra normalization of a record after the common one (drop nested read-only fields). */
  normalize?: (record: Record<string, unknown>) => Record<string, unknown>
  /** Whether `normalize` has anything to do on a payload; false lets a comparison skip the copies. */
  normalizeNeeded?: (record: Record<string, unknown>) => boolean
  /**
   * Secret values the service stores but reads back masked (a check's secret environment
   * variables, secret webhook headers and query values, Slack URLs; an API check's password,
   * secret headers and query values), as one canonical text of their paths and values, or undefined
   * when none is set. The lock keeps a salted fingerprint of it (`secretHash`), so that a
   * change of such a value alone is planned although both sides read "".
   */
  blankedSecrets?: (payload: Record<string, unknown>) => { text: string; paths: string[] } | undefined
  /**
   * When the construct's props are not the API's body (an alert channel's props are its
   * configuration's fields and its settings side by side; the API nests the configuration in
   * `config`): the body the props make, the props a body is written as (import), and the
   * field a problem of the body names in code.
   */
  codeShape?: {
    toPayload: (props: Record<string, unknown>) => Record<string, unknown>
    fromPayload: (payload: Record<string, unknown>) => Record<string, unknown>
    fieldInCode: (path: string) => string
  }
}
