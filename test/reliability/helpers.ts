import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ApiClient } from '../../src/api/client.js'
import { fetchRemoteState } from '../../src/api/resources.js'
import type { ResourceKind } from '../../src/resources/types.js'
import { identityValue, RESOURCE_KINDS } from '../../src/resources/registry.js'
import { IDENTITY_FIELDS } from '../../src/state/pending.js'
import type { LockFile } from '../../src/state/lock.js'

/**
 * A project of `ids.length` resources, one per id, of every kind in turn: variables, services,
 * maintenance windows, DNS and ICMP checks, and status pages showing the group's service.
 * `version` changes what the checks and variables hold, so applying a new version updates them.
 */
export function fleet(ids: number[], version = 0, prefix = 'f'): string {
  const lines = [`import { DnsCheck, IcmpCheck, EnvVar, MaintenanceWindow, StatusPage, StatusPageService } from 'monitors-as-code'`]
  const frequency = [10, 15, 30][version % 3]
  for (const i of ids) {
    const id = `${prefix}${i}`
    switch (i % 10) {
      case 0:
        lines.push(`new EnvVar('${prefix.toUpperCase()}_VAR_${i}', { value: 'value-${i}-v${version}', secret: ${i % 20 === 0} })`)
        break
      case 1:
        lines.push(`export const svc${i} = new StatusPageService('${id}-svc', { name: '${prefix} service ${i}' })`)
        break
      case 2:
        lines.push(
          `new MaintenanceWindow('${id}-mw', { name: '${prefix} window ${i}', startsAt: '2030-01-01T00:00:00.000Z', endsAt: '2030-01-01T0${1 + (version % 3)}:00:00.000Z' })`,
        )
        break
      case 3:
        lines.push(`new IcmpCheck('${id}-ping', { name: '${prefix} ping ${i}', request: { hostname: 'h${i}.example.com' }, frequency: ${frequency} })`)
        break
      case 9:
        lines.push(
          ids.includes(i - 8)
            ? `new StatusPage('${id}-page', { name: '${prefix} page ${i}', url: '${prefix}-page-${i}', cards: [{ name: 'Card', services: [svc${i - 8}] }] })`
            : `new StatusPage('${id}-page', { name: '${prefix} page ${i}', url: '${prefix}-page-${i}', cards: [] })`,
        )
        break
      default:
        lines.push(`new DnsCheck('${id}-dns', { name: '${prefix} dns ${i}', request: { query: 'd${i}.example.com' }, frequency: ${frequency} })`)
    }
  }
  return `${lines.join('\n')}\n`
}

export const range = (from: number, count: number) => Array.from({ length: count }, (_, k) => from + k)

export interface Census {
  total: number
  byKind: Partial<Record<ResourceKind, number>>
  /** Records beyond the first sharing an identity (name, key or url) within a kind. */
  duplicates: number
  ids: Record<ResourceKind, Set<string>>
}

/** Everything the account holds, read through the list endpoints. */
export async function census(baseUrl: string, apiKey: string, accountId: string): Promise<Census> {
  // short timeout: the server may inject hangs, which the client's retries ride out
  const client = new ApiClient({ baseUrl, apiKey, accountId, timeoutMs: 1000, retry: { retries: 8, baseMs: 20, maxMs: 200 } })
  try {
    const remote = await fetchRemoteState(client, RESOURCE_KINDS)
    const out: Census = { total: 0, byKind: {}, duplicates: 0, ids: {} as Census['ids'] }
    for (const kind of RESOURCE_KINDS) {
      const records = Object.entries(remote.records[kind])
      out.ids[kind] = new Set(records.map(([id]) => id))
      if (records.length > 0) out.byKind[kind] = records.length
      out.total += records.length
      const seen = new Set<string>()
      for (const [, record] of records) {
        const identity = IDENTITY_FIELDS[kind].map((field) => String(identityValue(record, field))).join('|')
        if (seen.has(identity)) out.duplicates++
        seen.add(identity)
      }
    }
    return out
  } finally {
    await client.close()
  }
}

export const readLockFile = (dir: string): LockFile => JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8')) as LockFile

/** Lock entries whose remote id the service does not hold. */
export function lockMismatches(lock: LockFile, remote: Census): string[] {
  return Object.entries(lock.resources)
    .filter(([, entry]) => !remote.ids[entry.kind]?.has(entry.remoteId))
    .map(([key]) => key)
}
