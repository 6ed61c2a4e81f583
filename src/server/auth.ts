import { AsyncLocalStorage } from 'node:async_hooks'
import { timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from './errors.js'
import { hashKey, roleAllows, routeArea, type KeyRole } from './keys.js'
import { type Limiter, type RateWindow, rateHeaders, setRateHeaders, tooManyRequests } from './rate-limit.js'
import type { Clock } from '../runner/clock.js'
import type { Store } from './store/index.js'

declare module 'fastify' {
  interface FastifyRequest {
    accountId: string
    /** the hash of the bearer key ('' for the dashboard's own calls) */
    keyHash: string
    keyId: string
    role: KeyRole
    /** the private location a key of a location serves (its id); null for other keys */
    keyLocationId: string | null
  }
}

/** Who makes a request: the key's account, id and role. */
export interface Caller {
  accountId: string
  keyId: string
  role: KeyRole
}

/**
 * The dashboard's own calls of the API routes (app.inject, in this process) run inside this
 * context, on behalf of the key a session logged in with: no bearer key travels (the session
 * keeps none), the key's role still applies, and the key's rate limit is not spent (a page is
 * one request of its user, whatever it asks of the routes). Requests from the network never
 * run in it.
 */
const dashboardCalls = new AsyncLocalStorage<Caller>()

export function asDashboard<T>(caller: Caller, fn: () => PromiseLike<T>): Promise<T> {
  // awaited inside: app.inject answers a thenable that starts the request when it is awaited,
  // and it must start in this context
  return dashboardCalls.run(caller, async () => await fn())
}

function badToken(window: RateWindow): HttpError {
  return new HttpError(401, 'Bad token', { error: 'Bad token' }, { 'www-authenticate': 'Bearer error="Bad token"', ...rateHeaders(window) })
}

function forbidden(window?: RateWindow): HttpError {
  return new HttpError(403, 'Forbidden', undefined, window ? rateHeaders(window) : {})
}

/** The key of a client address in the count of failed authentications. */
export const failureKey = (address: string): string => `auth-failures:${address}`

/** last_used_at is written at most this often per key (each server) */
const TOUCH_EVERY_MS = 60_000

export interface AuthOptions {
  store: Store
  /** the rate limit per key */
  limiter: Limiter
  /** failed authentications per client address (the dashboard's log-in counts in it too) */
  failures: Limiter
  clock: Clock
}

/**
 * onRequest hook of the /v1 routes:
 * 1. a client address with too many failed authentications in the window is refused (429)
 *    whatever it sends, so that keys cannot be guessed;
 * 2. a known bearer key is required (an unknown one counts as a failure of the address);
 *    x-service-account, when sent, must be its account;
 * 3. the key's role must allow the route (docs/security.md): else 403;
 * 4. then the key's rate limit: only an authenticated request spends quota, yet every answer
 *    carries the x-ratelimit-* headers (a 401 shows a fresh window, a 403 the key's own).
 * Keys are looked up in the store on every request: another server process on the same
 * database may have created or revoked them.
 */
export function authHook({ store, limiter, failures, clock }: AuthOptions) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    // an unknown route answers 404 to any known key; a known one is judged by its area
    const area = request.is404 ? undefined : routeArea(request.routeOptions.url ?? request.url)
    const inside = dashboardCalls.getStore()
    if (inside) {
      if (area && !roleAllows(inside.role, request.method, area)) throw forbidden()
      request.accountId = inside.accountId
      request.keyId = inside.keyId
      request.role = inside.role
      request.keyLocationId = null
      request.keyHash = ''
      return
    }
    const header = request.headers.authorization
    const match = typeof header === 'string' ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null
    const hash = match ? hashKey(match[1]) : undefined
    const address = failureKey(request.ip)
    const [counted, key] = await Promise.all([failures.peek(address), hash ? store.keys.find(hash) : undefined])
    if (counted.remaining === 0) throw tooManyRequests(counted, clock.now())
    if (!hash) throw badToken(limiter.unspent())
    // the lookup is by hash; the comparison of the hashes themselves takes constant time
    if (!key || !timingSafeEqual(Buffer.from(key.keyHash, 'hex'), Buffer.from(hash, 'hex'))) {
      const failed = await failures.consume(address)
      if (!failed.allowed) throw tooManyRequests(failed, clock.now())
      throw badToken(limiter.unspent())
    }
    const account = request.headers['x-service-account']
    if (account !== undefined && account !== key.accountId) throw forbidden(await limiter.peek(hash))
    if (area && !roleAllows(key.role, request.method, area)) throw forbidden(await limiter.peek(hash))
    const window = await limiter.consume(hash)
    if (!window.allowed) throw tooManyRequests(window, clock.now())
    setRateHeaders(reply, window)
    const now = clock.now()
    if (key.lastUsedAt === null || !(now - Date.parse(key.lastUsedAt) < TOUCH_EVERY_MS)) {
      // a busy database must not fail the request for this
      await store.keys.touch(key.id, new Date(now).toISOString()).catch(() => undefined)
    }
    request.accountId = key.accountId
    request.keyHash = hash
    request.keyId = key.id
    request.role = key.role
    request.keyLocationId = key.locationId
  }
}
