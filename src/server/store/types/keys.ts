/** API keys, dashboard sessions and badge tokens. (Re-exported by ../index.ts.) */
import type { KeyRole } from '../../keys.js'

export type { KeyRole }

export interface KeySetup {
  /** The first given key, or the key generated now; undefined when keys already existed. */
  apiKey?: string
  accountId: string
  generated: boolean
}

/** A key as lists show it: never the key itself, nor its hash. */
export interface KeyRecord {
  id: string
  /** the first characters of the key ('' for keys stored before they had an id) */
  prefix: string
  accountId: string
  role: KeyRole
  name: string | null
  /** 'generated' (a first start), 'option' (given on a start), 'created' (monitors keys create, POST /v1/keys) */
  source: string
  created_at: string
  /** to the minute: written at most once a minute per key */
  lastUsedAt: string | null
  /** the private location a key of a location serves (an agent key that claims that location's runs only); null for other keys */
  locationId: string | null
  /** the last four characters of a key of a location (its masked form); '' for other keys */
  keyEnd: string
}

export interface KeyStore {
  /**
   * Registers the keys given on start (hashed): a new key is added (role admin unless given),
   * a known one gets the account and role given with it. No other key is touched: keys are
   * revoked only by `revoke`. With no key given and none stored, a key is made, its hash kept,
   * and the key handed back once.
   */
  setUp(given: Array<{ key: string; accountId?: string; role?: KeyRole }>): Promise<KeySetup>
  /** the key of a hash */
  find(keyHash: string): Promise<(KeyRecord & { keyHash: string }) | undefined>
  /** stores a new key (made by the caller, kept hashed) */
  create(key: string, data: { accountId: string; role: KeyRole; name?: string | null; locationId?: string | null }): Promise<KeyRecord>
  /** every key, or an account's, oldest first */
  list(accountId?: string): Promise<KeyRecord[]>
  /** deletes a key (of the account, when given) and its dashboard sessions; the key as it was, or undefined */
  revoke(id: string, accountId?: string): Promise<KeyRecord | undefined>
  /** records that the key was used at `at` (ISO) */
  touch(id: string, at: string): Promise<void>
  /** the accounts that hold at least one key (sorted): a server of one account or of several */
  accounts(): Promise<string[]>
}

/** A dashboard log-in, as stored: the browser holds the session id, the database its hash. */
export interface WebSessionRecord {
  keyId: string
  accountId: string
  role: KeyRole
  csrf: string
  /** ms */
  expiresAt: number
}

export interface WebSessionStore {
  /** a new session of a key; expired sessions are deleted on the way */
  create(idHash: string, data: { keyId: string; csrf: string; expiresAt: number }, now: number): Promise<void>
  /** a session that has not expired and whose key still exists, with the key's account and role as they are now */
  find(idHash: string, now: number): Promise<WebSessionRecord | undefined>
  delete(idHash: string): Promise<void>
  /** deletes expired sessions; answers how many */
  prune(now: number): Promise<number>
}

/** What a public badge token shows: a check now (another kind, a group, later). */
export type BadgeSubjectKind = 'check' | 'group'

export interface BadgeTokenRecord {
  token: string
  subjectKind: BadgeSubjectKind
  /** the check's id (subject kind 'check'), the group's id as text (subject kind 'group') */
  subjectId: string
  created_at: string
}

/**
 * Public badge tokens: at most one per subject. The public route finds a token by its SHA-256
 * (`tokenHash`), never by the token itself; the account's keys read the token to show its URL.
 */
export interface BadgeTokenStore {
  /** the tokens of the account's subjects of a kind, oldest first */
  list(account: string, kind: BadgeSubjectKind): Promise<BadgeTokenRecord[]>
  get(account: string, kind: BadgeSubjectKind, subjectId: string): Promise<BadgeTokenRecord | undefined>
  /** sets the subject's token, replacing the one it had (which then answers nothing) */
  set(account: string, kind: BadgeSubjectKind, subjectId: string, token: { token: string; tokenHash: string }, now: number): Promise<BadgeTokenRecord>
  /** revokes the subject's token; false when it had none */
  delete(account: string, kind: BadgeSubjectKind, subjectId: string): Promise<boolean>
  /** the token whose SHA-256 this is, with its account */
  find(tokenHash: string): Promise<(BadgeTokenRecord & { account: string }) | undefined>
}
