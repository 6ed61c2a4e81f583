import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { notFound, parseOr400 } from '../errors.js'
import { renderBadge } from '../results/badge.js'
import type { z } from 'zod'
import type { BadgeSubjectKind, BadgeTokenRecord, Store } from '../store/index.js'
import { badgeQuerySchema, groupBadge } from './results.js'

/*
 * Public badges (an extension of the spec, docs/api.md "Public badges"): a check's badge at
 * GET /badges/{token}.svg, without a key, for a README. The token is 32 characters of base64url
 * (192 random bits); the account's keys create, read, rotate and revoke it under
 * /v1/badges/checks/{checkId}/token, and a check group's under /v1/badges/groups/{groupId}/token. A token is found by its SHA-256 (the database compares
 * digests, never the token a request brings) and then compared in constant time; a revoked,
 * rotated-away or unknown token answers the same 404.
 */

const TOKEN = /^[A-Za-z0-9_-]{32}$/

export const hashBadgeToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex')

function newToken(): { token: string; tokenHash: string } {
  const token = randomBytes(24).toString('base64url')
  return { token, tokenHash: hashBadgeToken(token) }
}

export const publicBadgePath = (token: string): string => `/badges/${token}.svg`

function present(request: FastifyRequest, record: BadgeTokenRecord) {
  const path = publicBadgePath(record.token)
  const subject = record.subjectKind === 'group' ? { groupId: Number(record.subjectId) } : { checkId: record.subjectId }
  return {
    ...subject,
    subjectKind: record.subjectKind,
    token: record.token,
    path,
    url: `${request.protocol}://${request.host}${path}`,
    created_at: record.created_at,
  }
}

const sameToken = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

/** A group id in a path: a positive integer, else no group. */
const GROUP_ID = /^[1-9][0-9]{0,15}$/

/** Whether the account has the subject (another account's answers as a missing one). */
async function owns(store: Pick<Store, 'checks' | 'checkGroups'>, account: string, kind: BadgeSubjectKind, id: string): Promise<boolean> {
  if (kind === 'check') return (await store.checks.get(account, id)) !== undefined
  return GROUP_ID.test(id) && (await store.checkGroups.get(account, Number(id))) !== undefined
}

/** Create, read, rotate and revoke the token of a subject kind under `base` (/v1/badges/checks/:id or /v1/badges/groups/:id). */
function tokenRoutes(app: FastifyInstance, store: Store, now: () => number, kind: BadgeSubjectKind): void {
  // the parameter named as in the keyed badge routes beside (/v1/badges/checks/:checkId, /v1/badges/groups/:groupId)
  const base = kind === 'check' ? '/v1/badges/checks/:checkId/token' : '/v1/badges/groups/:groupId/token'
  const idOf = (params: { checkId?: string; groupId?: string }) => (kind === 'check' ? params.checkId : params.groupId) ?? ''
  const missing = () => notFound(kind === 'check' ? 'Check' : 'Check group')

  app.get<{ Params: { checkId?: string; groupId?: string } }>(base, async (request) => {
    if (!(await owns(store, request.accountId, kind, idOf(request.params)))) throw missing()
    const token = await store.badgeTokens.get(request.accountId, kind, idOf(request.params))
    if (!token) throw notFound('Badge token')
    return present(request, token)
  })

  // create: the token the subject has (200), else a new one (201)
  app.post<{ Params: { checkId?: string; groupId?: string } }>(base, async (request, reply) => {
    const { accountId } = request
    const id = idOf(request.params)
    const [record, made] = await store.transaction(async (tx) => {
      if (!(await owns(tx, accountId, kind, id))) throw missing()
      const existing = await tx.badgeTokens.get(accountId, kind, id)
      return existing ? ([existing, false] as const) : ([await tx.badgeTokens.set(accountId, kind, id, newToken(), now()), true] as const)
    })
    return reply.code(made ? 201 : 200).send(present(request, record))
  })

  // rotate: a new token; the old one answers 404 from now on
  app.post<{ Params: { checkId?: string; groupId?: string } }>(`${base}/rotate`, async (request) => {
    const { accountId } = request
    const id = idOf(request.params)
    const record = await store.transaction(async (tx) => {
      if (!(await owns(tx, accountId, kind, id))) throw missing()
      return tx.badgeTokens.set(accountId, kind, id, newToken(), now())
    })
    return present(request, record)
  })

  app.delete<{ Params: { checkId?: string; groupId?: string } }>(base, async (request, reply) => {
    if (!(await owns(store, request.accountId, kind, idOf(request.params)))) throw missing()
    if (!(await store.badgeTokens.delete(request.accountId, kind, idOf(request.params)))) throw notFound('Badge token')
    return reply.code(204).send()
  })
}

/** The SVG a found token shows: its check's badge or its group's; undefined when the subject is gone. */
async function badgeOf(store: Store, found: BadgeTokenRecord & { account: string }, query: z.output<typeof badgeQuerySchema>): Promise<string | undefined> {
  if (found.subjectKind === 'group') {
    const group = await store.checkGroups.get(found.account, Number(found.subjectId))
    return group && groupBadge(store, found.account, group, query)
  }
  const check = await store.checks.get(found.account, found.subjectId)
  if (!check) return undefined
  const body = JSON.parse(check.json) as { name: string; activated?: boolean }
  const status = await store.checkStatuses.get(found.account, found.subjectId)
  return renderBadge({ name: body.name, activated: body.activated !== false, status, style: query.style, theme: query.theme, responseTime: query.responseTime })
}

export function badgeTokenRoutes(app: FastifyInstance, store: Store, now: () => number): void {
  // the account's tokens: its checks' first, then its groups'
  app.get('/v1/badges/tokens', async (request) => {
    const [checks, groups] = await Promise.all([store.badgeTokens.list(request.accountId, 'check'), store.badgeTokens.list(request.accountId, 'group')])
    return [...checks, ...groups].map((r) => present(request, r))
  })
  tokenRoutes(app, store, now, 'check')
  tokenRoutes(app, store, now, 'group')

  // the public badge: no key (config.web: the API's key check leaves it alone)
  app.get<{ Params: { file: string } }>('/badges/:file', { config: { web: true } }, async (request, reply) => {
    const query = parseOr400(badgeQuerySchema, request.query, 'query')
    const file = request.params.file
    const token = file.endsWith('.svg') ? file.slice(0, -4) : ''
    const found = TOKEN.test(token) ? await store.badgeTokens.find(hashBadgeToken(token)) : undefined
    if (!found || !sameToken(found.token, token)) throw notFound('Badge')
    const svg = await badgeOf(store, found, query)
    if (svg === undefined) throw notFound('Badge')
    return reply
      .code(200)
      .type('image/svg+xml')
      .headers({
        'cache-control': 'no-cache',
        'access-control-allow-origin': '*',
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
      })
      .send(svg)
  })
}
