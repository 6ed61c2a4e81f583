import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DesiredResource, ResourceKind, ResourceRef } from '../../src/resources/types.js'
import { RESOURCE_SCHEMAS } from '../../src/resources/registry.js'

/** A desired resource as the loader makes it: the schema's output, defaults applied. */
export function desired(kind: ResourceKind, logicalId: string, input: Record<string, unknown>, refs: ResourceRef[] = []): DesiredResource {
  return {
    kind,
    logicalId,
    construct: kind,
    file: `${logicalId}.check.ts`,
    payload: RESOURCE_SCHEMAS[kind].parse(input) as Record<string, unknown>,
    refs,
    options: {},
  }
}

export const dns = (logicalId: string, extra: Record<string, unknown> = {}) =>
  desired('dns-check', logicalId, { name: `DNS ${logicalId}`, request: { query: `${logicalId}.example.com` }, ...extra })

export const icmp = (logicalId: string, extra: Record<string, unknown> = {}) =>
  desired('icmp-check', logicalId, {
    name: `Ping ${logicalId}`,
    request: { hostname: `${logicalId}.example.com` },
    heartbeat: {},
    script: '',
    ...extra,
  })

export const tempDir = () => mkdtempSync(join(tmpdir(), 'monitors-plan-'))
