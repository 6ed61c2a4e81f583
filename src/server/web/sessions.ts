import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../../runner/clock.js'
import type { KeyRole, WebSessionStore } from '../store/index.js'

/*
 * Dashboard log-ins, kept in the database (web_sessions), so that every server on it knows
 * them (several servers behind a balancer) and a log-out ends the session on all of them. The
 * browser holds only a random session id (an HttpOnly, SameSite=Strict cookie); the database
 * holds its hash, the key's id (never the key) and the form token. A session ends when it
 * expires, at log-out, or when its key is revoked; it has the key's account and role as they
 * are at each request.
 */

export const COOKIE = 'monitors_session'
export const SESSION_TTL_MS = 12 * 3600_000
/** 32 random bytes, base64url */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/

export interface WebSession {
  /** sha256 of the cookie's id: what the database knows the session by */
  idHash: string
  keyId: string
  accountId: string
  role: KeyRole
  /** sent back in every form; a POST without it is refused */
  csrf: string
  expiresAt: number
}

const hashId = (id: string) => createHash('sha256').update(id, 'utf8').digest('hex')

export class WebSessions {
  constructor(
    private readonly store: WebSessionStore,
    private readonly clock: Clock,
  ) {}

  /** A new session of a key: the id for the cookie (shown to nobody else) and the session. */
  async create(key: { id: string; accountId: string; role: KeyRole }, now = this.clock.now()): Promise<{ id: string; session: WebSession }> {
    const id = randomBytes(32).toString('base64url')
    const session: WebSession = {
      idHash: hashId(id),
      keyId: key.id,
      accountId: key.accountId,
      role: key.role,
      csrf: randomBytes(32).toString('base64url'),
      expiresAt: now + SESSION_TTL_MS,
    }
    await this.store.create(session.idHash, { keyId: session.keyId, csrf: session.csrf, expiresAt: session.expiresAt }, now)
    return { id, session }
  }

  async get(id: string | undefined, now = this.clock.now()): Promise<WebSession | undefined> {
    // a cookie that cannot be one of ours costs no query
    if (!id || !SESSION_ID.test(id)) return undefined
    const idHash = hashId(id)
    const found = await this.store.find(idHash, now)
    return found && { idHash, ...found }
  }

  async delete(session: WebSession): Promise<void> {
    await this.store.delete(session.idHash)
  }
}

export function sameToken(a: unknown, b: string): boolean {
  if (typeof a !== 'string' || a.length !== b.length) return false
  return timingSafeEqual(Buffer.from(a), Buffer.from(b))
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

export function sessionCookie(value: string, secure: boolean, maxAgeSeconds = SESSION_TTL_MS / 1000): string {
  return `${COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`
}
