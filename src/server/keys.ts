import { createHash, randomBytes } from 'node:crypto'
import { KEY_ROLES, type KeyRole } from '../schema/index.js'

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

/** A key's id: what lists show and what revokes it; says nothing about the key itself. */
export function newKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`
}

/** What presentKey reads of a stored key (the store's KeyRecord has them, and more). */
interface PresentedKeyFields {
  id: string
  prefix: string
  accountId: string
  role: KeyRole
  name: string | null
  locationId: string | null
  created_at: string
  lastUsedAt: string | null
}

/**
 * A key as the API and `monitors keys list --format json` answer it: never the key, except once in
 * the answer to its creation. A key of a private location names it (`privateLocationId`; null for
 * other keys).
 */
export function presentKey(record: PresentedKeyFields) {
  return {
    id: record.id,
    prefix: record.prefix,
    accountId: record.accountId,
    role: record.role,
    name: record.name,
    privateLocationId: record.locationId,
    created_at: record.created_at,
    lastUsedAt: record.lastUsedAt,
  }
}

/**
 * The start of a key, shown beside its id so that a person can tell which key is which: at
 * most 8 characters and never more than a quarter of the key (a key chosen by hand may be short).
 */
export function keyPrefix(key: string): string {
  return key.slice(0, Math.min(8, Math.floor(key.length / 4)))
}

/*
 * What a key may do (docs/security.md):
 * - read: GET only (plan, status, import, the dashboard's pages);
 * - write: read, and every write of the account's resources (apply, destroy, Run now, archive);
 * - agent: only the agent routes (claim runs, extend leases, post results; the claim carries the
 *   runs' variables); nothing else;
 * - admin: everything: write, the agent routes, and the account's keys (/v1/keys).
 * Every role may read GET /v1/accounts/me: the key's own account and role (what `monitors
 * whoami` shows, and how the CLI refuses a write with a read key before sending it).
 */
export { KEY_ROLES, type KeyRole } from '../schema/index.js'

export function isKeyRole(value: unknown): value is KeyRole {
  return typeof value === 'string' && (KEY_ROLES as readonly string[]).includes(value)
}

/** The role of a key given on start without one, of the key made on a first start, and of keys stored before roles existed. */
export const DEFAULT_ROLE: KeyRole = 'admin'

/** Shorter keys are accepted with a warning: a guessable key is the account. */
export const MIN_KEY_LENGTH = 16

/** Which part of the API a route is, for the role check. */
export type RouteArea = 'agent' | 'keys' | 'self' | 'resources'

/** GET /v1/accounts/me: who the key is (its account and its role), which every role may ask. */
export const SELF_ROUTE = '/v1/accounts/me'

export function routeArea(url: string): RouteArea {
  if (url === SELF_ROUTE) return 'self'
  if (url.startsWith('/v1/agent/')) return 'agent'
  if (url === '/v1/keys' || url.startsWith('/v1/keys/')) return 'keys'
  return 'resources'
}

/** Whether a key of this role may call a route of this area with this method. */
export function roleAllows(role: KeyRole, method: string, area: RouteArea): boolean {
  if (role === 'admin') return true
  if (area === 'self') return method === 'GET' || method === 'HEAD'
  if (area === 'agent') return role === 'agent'
  if (area === 'keys') return false
  if (role === 'agent') return false
  if (role === 'write') return true
  return method === 'GET' || method === 'HEAD'
}
