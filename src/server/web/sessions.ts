import { randomBytes, timingSafeEqual } from 'node:crypto'

/*
 * Dashboard log-ins, kept in this process's memory: the browser holds only a random session
 * id (an HttpOnly, SameSite=Strict cookie); the API key it logged in with stays here, so the
 * dashboard can call the API routes on the user's behalf. A restart logs everybody out.
 */

export const COOKIE = 'monitors_session'
const TTL_MS = 12 * 3600_000
const MAX_SESSIONS = 10_000

export interface WebSession {
  id: string
  apiKey: string
  accountId: string
  /** sent back in every form; a POST without it is refused */
  csrf: string
  expiresAt: number
}

export class WebSessions {
  private readonly sessions = new Map<string, WebSession>()

  create(apiKey: string, accountId: string, now = Date.now()): WebSession {
    if (this.sessions.size >= MAX_SESSIONS) {
      for (const [id, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(id)
      // still full: the oldest goes
      if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string)
    }
    const session: WebSession = { id: randomBytes(32).toString('base64url'), apiKey, accountId, csrf: randomBytes(32).toString('base64url'), expiresAt: now + TTL_MS }
    this.sessions.set(session.id, session)
    return session
  }

  get(id: string | undefined, now = Date.now()): WebSession | undefined {
    if (!id) return undefined
    const session = this.sessions.get(id)
    if (session && session.expiresAt <= now) {
      this.sessions.delete(id)
      return undefined
    }
    return session
  }

  delete(id: string): void {
    this.sessions.delete(id)
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

export function sessionCookie(value: string, secure: boolean, maxAgeSeconds = TTL_MS / 1000): string {
  return `${COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`
}

/**
 * Failed log-ins per client address: after `max` in a window, every log-in from there is
 * refused until the window ends, so keys cannot be guessed through the form.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, { count: number; until: number }>()

  constructor(private readonly max = 10, private readonly windowMs = 60_000) {}

  /** seconds to wait, or 0 when a log-in may be tried */
  waitSeconds(address: string, now = Date.now()): number {
    const entry = this.failures.get(address)
    if (!entry || entry.until <= now) return 0
    return entry.count >= this.max ? Math.ceil((entry.until - now) / 1000) : 0
  }

  failed(address: string, now = Date.now()): void {
    if (this.failures.size > 10_000) for (const [key, e] of this.failures) if (e.until <= now) this.failures.delete(key)
    const entry = this.failures.get(address)
    if (!entry || entry.until <= now) this.failures.set(address, { count: 1, until: now + this.windowMs })
    else entry.count++
  }
}
