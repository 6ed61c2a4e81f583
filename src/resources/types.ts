import type { z } from 'zod'
import {
  dnsCheckSchema, icmpCheckSchema, maintenanceWindowSchema, statusPageSchema, statusPageServiceSchema, variableSchema,
} from '../schema/index.js'

/**
 * The desired state: what the loaded project asks for, one entry per construct, validated and
 * normalized. This is the seam between loading (src/project) and planning (src/plan).
 */

/** Kinds of resources the engine manages, in the order they are created. */
export const RESOURCE_KINDS = [
  'variable',
  'status-page-service',
  'maintenance-window',
  'dns-check',
  'icmp-check',
  'status-page',
] as const
export type ResourceKind = (typeof RESOURCE_KINDS)[number]

/** The construct class users write for each kind. */
export const CONSTRUCT_NAMES: Record<ResourceKind, string> = {
  variable: 'EnvVar',
  'status-page-service': 'StatusPageService',
  'maintenance-window': 'MaintenanceWindow',
  'dns-check': 'DnsCheck',
  'icmp-check': 'IcmpCheck',
  'status-page': 'StatusPage',
}

/** Kinds that are checks: config defaults apply to them. */
export const CHECK_KINDS: ReadonlySet<ResourceKind> = new Set<ResourceKind>(['dns-check', 'icmp-check'])

/** A reference from one construct to another, resolved into a remote id at apply time. */
export interface ResourceRef {
  /** Dotted path in the payload where the remote id goes, e.g. `cards.0.services.1.id`. */
  path: string
  kind: ResourceKind
  logicalId: string
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

/** The shared schema each kind's payload is validated and normalized with. */
export const RESOURCE_SCHEMAS: Record<ResourceKind, z.ZodType> = {
  variable: variableSchema,
  'status-page-service': statusPageServiceSchema,
  'maintenance-window': maintenanceWindowSchema,
  'dns-check': dnsCheckSchema,
  'icmp-check': icmpCheckSchema,
  'status-page': statusPageSchema,
}
