import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { notFound, parseOr400 } from '../errors.js'
import { renderBadge } from '../results/badge.js'
import type { BadgeTokenRecord, Store } from '../store/index.js'
import { badgeQuerySchema } from './results.js'

/*
 * Public badges (an extension of the spec, docs/api.md "Public badges"): a check's badge at
 * GET /badges/{token}.svg, without a key, for a README. The token is 32 characters of base64url
 * (192 random bits); the account's keys create, read, rotate and revoke it under
 * /v1/badges/checks/{checkId}/token. A token is found by its SHA-256 (the database compares
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
  return { checkId: record.subjectId, subjectKind: record.subjectKind, token: record.token, path, url: `${request.protocol}://${request.host}${path}`, created_at: record.created_at }
}

const sameToken = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

export function badgeTokenRoutes(app: FastifyInstance, store: Store, now: () => number): void {
  async function ownCheck(account: string, checkId: string) {
    if (!(await store.checks.get(account, checkId))) throw notFound('Check')
  }

  app.get('/v1/badges/tokens', async (request) => (await store.badgeTokens.list(request.accountId, 'check')).map((r) => present(request, r)))

  app.get<{ Params: { checkId: string } }>('/v1/badges/checks/:checkId/token', async (request) => {
    await ownCheck(request.accountId, request.params.checkId)
    const token = await store.badgeTokens.get(request.accountId, 'check', request.params.checkId)
    if (!token) throw notFound('Badge token')
    return present(request, token)
  })

  // create: the token the check has (200), else a new one (201)
  app.post<{ Params: { checkId: string } }>('/v1/badges/checks/:checkId/token', async (request, reply) => {
    const { accountId } = request
    const { checkId } = request.params
    const [record, made] = await store.transaction(async (tx) => {
      if (!(await tx.checks.get(accountId, checkId))) throw notFound('Check')
      const existing = await tx.badgeTokens.get(accountId, 'check', checkId)
      return existing ? [existing, false] as const : [await tx.badgeTokens.set(accountId, 'check', checkId, newToken(), now()), true] as const
    })
    return reply.code(made ? 201 : 200).send(present(request, record))
  })

  // rotate: a new token; the old one answers 404 from now on
  app.post<{ Params: { checkId: string } }>('/v1/badges/checks/:checkId/token/rotate', async (request) => {
    const { accountId } = request
    const { checkId } = request.params
    const record = await store.transaction(async (tx) => {
      if (!(await tx.checks.get(accountId, checkId))) throw notFound('Check')
      return tx.badgeTokens.set(accountId, 'check', checkId, newToken(), now())
    })
    return present(request, record)
  })

  app.delete<{ Params: { checkId: string } }>('/v1/badges/checks/:checkId/token', async (request, reply) => {
    await ownCheck(request.accountId, request.params.checkId)
    if (!(await store.badgeTokens.delete(request.accountId, 'check', request.params.checkId))) throw notFound('Badge token')
    return reply.code(204).send()
  })

  // the public badge: no key (config.web: the API's key check leaves it alone)
  app.get<{ Params: { file: string } }>('/badges/:file', { config: { web: true } }, async (request, reply) => {
    const query = parseOr400(badgeQuerySchema, request.query, 'query')
    const file = request.params.file
    const token = file.endsWith('.svg') ? file.slice(0, -4) : ''
    const found = TOKEN.test(token) ? await store.badgeTokens.find(hashBadgeToken(token)) : undefined
    if (!found || !sameToken(found.token, token)) throw notFound('Badge')
    const check = await store.checks.get(found.account, found.subjectId)
    if (!check) throw notFound('Badge')
    const body = JSON.parse(check.json) as { name: string; activated?: boolean }
    const status = await store.checkStatuses.get(found.account, found.subjectId)
    const svg = renderBadge({ name: body.name, activated: body.activated !== false, status, style: query.style, theme: query.theme, responseTime: query.responseTime })
    return reply.code(200).type('image/svg+xml').headers({
      'cache-control': 'no-cache', 'access-control-allow-origin': '*', 'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    }).send(svg)
  })
}
