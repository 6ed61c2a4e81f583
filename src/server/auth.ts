import { timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from './errors.js'
import { hashKey } from './keys.js'
import { type Limiter, type RateWindow, rateHeaders, setRateHeaders, tooManyRequests } from './rate-limit.js'
import type { Store } from './store/index.js'

declare module 'fastify' {
  interface FastifyRequest {
    accountId: string
    keyHash: string
  }
}

function badToken(window: RateWindow): HttpError {
  return new HttpError(401, 'Bad token', { error: 'Bad token' }, { 'www-authenticate': 'Bearer error="Bad token"', ...rateHeaders(window) })
}

/**
 * onRequest hook: a known bearer key is required; x-service-account, when sent, must be its
 * account. Then the key's rate limit: only an authenticated request spends quota, yet every
 * answer carries the x-ratelimit-* headers (a 401 shows a fresh window, a 403 the key's own).
 * Keys are looked up in the store on every request: another server process on the same
 * database may have registered or replaced them.
 */
export function authHook(store: Store, limiter: Limiter) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.authorization
    const match = typeof header === 'string' ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null
    if (!match) throw badToken(limiter.unspent())
    const hash = hashKey(match[1])
    const key = await store.keys.find(hash)
    // the lookup is by hash; the comparison of the hashes themselves takes constant time
    if (!key || !timingSafeEqual(Buffer.from(key.keyHash, 'hex'), Buffer.from(hash, 'hex'))) throw badToken(limiter.unspent())
    const account = request.headers['x-service-account']
    if (account !== undefined && account !== key.accountId) throw new HttpError(403, 'Forbidden', undefined, rateHeaders(await limiter.peek(hash)))
    const window = await limiter.consume(hash)
    if (!window.allowed) throw tooManyRequests(window)
    setRateHeaders(reply, window)
    request.accountId = key.accountId
    request.keyHash = hash
  }
}
