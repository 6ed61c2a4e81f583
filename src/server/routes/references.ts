import type { z } from 'zod'
import type { FieldIssue } from '../../schema/index.js'
import { badRequest, schemaIssues } from '../errors.js'
import type { Repositories, Store } from '../store/index.js'

/** Where a body names a status-page service (or, `kind: 'snippet'`, a snippet; `kind: 'group'`, a check group): the dotted path and the id sent there. */
export interface Reference {
  path: string
  id: string
  kind?: 'snippet' | 'group' | 'privateLocation'
}

type Raw = Record<string, unknown> | null | undefined
const asObject = (value: unknown): Raw =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const idOf = (value: unknown): string | undefined => {
  const id = asObject(value)?.id
  return typeof id === 'string' && id !== '' ? id : undefined
}

/*
 * The service references of each kind, read from the raw body so that they are reported
 * together with the schema's problems (a bad frequency and an unknown service, both).
 */
export const serviceReferences = {
  check(body: unknown): Reference[] {
    const id = asObject(asObject(body)?.triggerIncident)?.serviceId
    const out: Reference[] = typeof id === 'string' && id !== '' ? [{ path: 'triggerIncident.serviceId', id }] : []
    // an API check's setup and teardown snippets
    for (const path of ['setupSnippetId', 'tearDownSnippetId']) {
      const snippet = asObject(body)?.[path]
      if (typeof snippet === 'number' && Number.isSafeInteger(snippet)) out.push({ path, id: String(snippet), kind: 'snippet' })
    }
    // the check group it joins (every check type)
    const group = asObject(body)?.groupId
    if (typeof group === 'number' && Number.isSafeInteger(group)) out.push({ path: 'groupId', id: String(group), kind: 'group' })
    return [...out, ...serviceReferences.checkGroup(body)]
  },
  /** the private locations a check or a group runs in (by slug) */
  checkGroup(body: unknown): Reference[] {
    return asArray(asObject(body)?.privateLocations).flatMap((slug, i) =>
      typeof slug === 'string' && slug !== '' ? [{ path: `privateLocations.${i}`, id: slug, kind: 'privateLocation' as const }] : [],
    )
  },
  statusPage(body: unknown): Reference[] {
    return asArray(asObject(body)?.cards).flatMap((card, i) =>
      asArray(asObject(card)?.services).flatMap((service, j) => {
        const id = idOf(service)
        return id === undefined ? [] : [{ path: `cards.${i}.services.${j}.id`, id }]
      }),
    )
  },
  incident(body: unknown): Reference[] {
    return asArray(asObject(body)?.services).flatMap((service, i) => {
      const id = idOf(service)
      return id === undefined ? [] : [{ path: `services.${i}.id`, id }]
    })
  },
}

/**
 * Validates a body with its schema and checks the status-page services (and snippets, and the
 * check group) it names exist in the account (another account's are as unknown as missing ones);
 * every problem of every kind is one 400. Call it inside the transaction that writes, so that a
 * service cannot go between the check and the write.
 */
export async function parseWithReferences<S extends z.ZodType>(
  tx: Pick<Repositories, 'services' | 'snippets' | 'checkGroups' | 'privateLocations'>,
  account: string,
  schema: S,
  body: unknown,
  references: (body: unknown) => Reference[],
): Promise<z.output<S>> {
  const { data, issues } = schemaIssues(schema, body, 'payload')
  const all = references(body)
  const named = all.filter((r) => r.kind === undefined)
  const known = named.length === 0 ? new Set<string>() : await tx.services.existing(account, [...new Set(named.map((r) => r.id))])
  const unknown: FieldIssue[] = named
    .filter((r) => !known.has(r.id))
    .map((r) => ({ path: r.path, message: `refers to a status page service that does not exist (got ${JSON.stringify(r.id)})` }))
  const snippets = all.filter((r) => r.kind === 'snippet')
  const knownSnippets =
    snippets.length === 0
      ? new Set<string>()
      : new Set(
          (
            await tx.snippets.byIds(
              account,
              snippets.map((r) => Number(r.id)),
            )
          ).map((s) => String(s.id)),
        )
  for (const r of snippets) {
    if (!knownSnippets.has(r.id))
      unknown.push({ path: r.path, message: `refers to a snippet that does not exist (got ${r.id}): create it with POST /v1/snippets` })
  }
  for (const r of all.filter((ref) => ref.kind === 'group')) {
    if (!(await tx.checkGroups.get(account, Number(r.id))))
      unknown.push({ path: r.path, message: `refers to a check group that does not exist (got ${r.id}): create it with POST /v1/check-groups` })
  }
  for (const r of all.filter((ref) => ref.kind === 'privateLocation')) {
    if (!(await tx.privateLocations.bySlug(account, r.id)))
      unknown.push({
        path: r.path,
        message: `refers to a private location that does not exist (got ${JSON.stringify(r.id)}): create it with POST /v1/private-locations`,
      })
  }
  if (issues.length > 0 || unknown.length > 0) throw badRequest('payload', [...issues, ...unknown])
  return data as z.output<S>
}

/**
 * Validates a body and writes it: in one transaction with the reference check when the body
 * names services (so that none can go in between) or `transactional` says so (the write reads
 * what it depends on), else with the store's own atomic write.
 */
export async function writeWithReferences<S extends z.ZodType, T>(
  store: Store,
  account: string,
  schema: S,
  body: unknown,
  references: (body: unknown) => Reference[],
  write: (tx: Repositories, data: z.output<S>) => Promise<T>,
  transactional = false,
): Promise<T> {
  if (references(body).length === 0 && !transactional) return write(store, await parseWithReferences(store, account, schema, body, references))
  return store.transaction(async (tx) => write(tx, await parseWithReferences(tx, account, schema, body, references)))
}
