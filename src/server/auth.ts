import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { type Db, now } from './db.js'
import { HttpError } from './errors.js'
import { type RateLimiter, type RateWindow, rateHeaders, setRateHeaders, tooManyRequests } from './rate-limit.js'

/** Keys are random high-entropy tokens, so one sha256 is enough to store and look them up. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}

export function defaultAccountId(key: string): string {
  return `acc_${createHash('sha256').update(`account:${key}`, 'utf8').digest('hex').slice(0, 12)}`
}

export function generateKey(): string {
  return `mon_${randomBytes(24).toString('base64url')}`
}

export interface KeySetup {
  /** The first given key, or the key generated now; undefined when keys already existed. */
  apiKey?: string
  accountId: string
  generated: boolean
}

/**
 * Registers the keys given on start (hashed). Keys given on an earlier start and not given
 * now stop working; a key the server generated itself stays valid. With no key given and
 * none stored, the server makes one, keeps its hash and hands it back once.
 */
export function setUpKeys(db: Db, given: Array<{ key: string; accountId?: string }>): KeySetup {
  return db.transaction((): KeySetup => {
    if (given.length > 0) {
      db.prepare(`DELETE FROM api_keys WHERE source = 'option'`).run()
      const upsert = db.prepare(
        `INSERT INTO api_keys (key_hash, account_id, source, created_at) VALUES (?, ?, 'option', ?)
         ON CONFLICT (key_hash) DO UPDATE SET account_id = excluded.account_id`,
      )
      for (const { key, accountId } of given) {
        if (!key) throw Object.assign(new Error('An API key cannot be empty'), { userError: true })
        upsert.run(hashKey(key), accountId || defaultAccountId(key), now())
      }
      const first = given[0]
      return { apiKey: first.key, accountId: first.accountId || defaultAccountId(first.key), generated: false }
    }
    const existing = db.prepare(`SELECT account_id FROM api_keys ORDER BY created_at, rowid LIMIT 1`).get() as { account_id: string } | undefined
    if (existing) return { accountId: existing.account_id, generated: false }
    const key = generateKey()
    db.prepare(`INSERT INTO api_keys (key_hash, account_id, source, created_at) VALUES (?, 'local', 'generated', ?)`).run(hashKey(key), now())
    return { apiKey: key, accountId: 'local', generated: true }
  })()
}

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
 */
export function authHook(db: Db, limiter: RateLimiter) {
  // keys change only on start (setUpKeys runs before the app is built), so one read is exact
  const keys = new Map((db.prepare(`SELECT key_hash, account_id FROM api_keys`).all() as Array<{ key_hash: string; account_id: string }>)
    .map((row) => [row.key_hash, row]))
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.authorization
    const match = typeof header === 'string' ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null
    if (!match) throw badToken(limiter.unspent())
    const hash = hashKey(match[1])
    const row = keys.get(hash)
    // the lookup is by hash; the comparison of the hashes themselves takes constant time
    if (!row || !timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(hash, 'hex'))) throw badToken(limiter.unspent())
    const account = request.headers['x-service-account']
    if (account !== undefined && account !== row.account_id) throw new HttpError(403, 'Forbidden', undefined, rateHeaders(limiter.peek(hash)))
    const window = limiter.consume(hash)
    if (!window.allowed) throw tooManyRequests(window)
    setRateHeaders(reply, window)
    request.accountId = row.account_id
    request.keyHash = hash
  }
}
