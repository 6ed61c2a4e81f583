/**
 * The storage seam of the local server. Routes validate a request (shared zod schemas), call
 * a Store and present its records; they hold no SQL and no data of their own. A Store is
 * asynchronous and transactional so that any database can sit behind it: SQLite (./sqlite,
 * the embedded default) and PostgreSQL (./postgres, the same files one for one), with several
 * server processes on one database.
 *
 * Rules every implementation keeps:
 * - Nothing is assumed about other processes: a record read may change before the next call
 *   unless both happen in one `transaction`. Uniqueness (variable keys, page urls) comes
 *   from the database's constraints and surfaces as `UniqueViolation`, never from a read
 *   made first.
 * - A store may keep answers in memory only when every read proves them current against the
 *   database itself (see sqlite/page-cache.ts).
 * - Ids and timestamps are assigned by the store. Records are plain JSON values.
 */
import type { AlertChannelData, AlertChannelKind, CheckGroup, MaintenanceWindow, Snippet, StatusPage } from '../../schema/index.js'
import type { ServiceCheckType } from '../../schema/check-types.js'
import type { KeyRole } from '../keys.js'

export type { KeyRole }

/** A check type this service serves (src/schema/check-types.ts). */
export type CheckType = ServiceCheckType

/** A check as GET answers it: `json` is the answer's text (stored as it is answered). */
export interface CheckRecord {
  id: string
  checkType: string
  json: string
}

/** Validated check body (the schema's output): tags index the lists. */
export type CheckData = { tags: string[] } & Record<string, unknown>

/** A check's current status as GET /v1/checks?status= names it (from its newest run; a check that never ran has none). */
export type CheckStatusFilter = 'passing' | 'failing' | 'degraded'

export interface CheckListQuery {
  checkType?: string
  /** a check matches when it carries any of these */
  tags?: string[]
  /** in lower case: a check matches when its name (in lower case) contains it */
  search?: string
  /** failing: failures or errors; degraded: degraded without them; passing: neither */
  status?: CheckStatusFilter
  /** in lower case: an API check whose request URL (in lower case) contains it; no other type */
  apiUrl?: string
  limit: number
  offset: number
  /**
   * Keyset paging: the checks after this one (its id), in the list's order; `offset` is then
   * ignored and no total is counted, so a page costs the same wherever it is in the list.
   */
  after?: string
}

/**
 * One page of checks: `json` is the JSON array of the answers (text, or its UTF-8 bytes so
 * that a kept page is not encoded again per answer), `count` its length, `total` all matches
 * (undefined for a keyset page), `lastId` the id of its last check and `more` whether checks
 * follow it. Null for a keyset page whose `after` names no check of the account.
 */
export interface CheckPage {
  json: string | Buffer
  count: number
  total?: number
  lastId?: string
  more: boolean
}

/**
 * Every check of the account matching `filter`, page after page by keyset (each page costs the
 * same wherever it is in the list), as parsed answers. A check deleted while it is the page's
 * last leaves the rest unread: the list as it was is not needed, only a consistent one.
 */
export async function* eachCheck<T>(checks: Pick<CheckStore, 'list'>, account: string, filter: Pick<CheckListQuery, 'checkType' | 'tags'> = {}, pageSize = 1000): AsyncGenerator<T> {
  let after: string | undefined
  for (;;) {
    const page = await checks.list(account, { ...filter, limit: pageSize, offset: 0, after })
    if (!page) return
    yield* JSON.parse(page.json.toString()) as T[]
    if (!page.more || page.lastId === undefined) return
    after = page.lastId
  }
}

/** An offset page; without `limit`, everything from `offset`. */
export interface Paging {
  limit?: number
  offset: number
}

export interface Page<T> {
  items: T[]
  total: number
}

/**
 * A keyset page: the items that follow the one `after` names (its id; a variable's key) in the
 * list's order, at most `limit` (all of them without one), and whether items follow the page.
 * It costs what the first page costs wherever it is in the list, and counts no total. A list
 * answers null for an `after` that names none of the account's items (a foreign or unknown one).
 */
export interface KeysetPage<T> {
  items: T[]
  more: boolean
}

/** An `after` naming an integer id (a snippet, a group, a channel, a window), or undefined for any other text. */
export function integerAfter(after: string): number | undefined {
  return /^[1-9][0-9]{0,15}$/.test(after) && Number(after) <= Number.MAX_SAFE_INTEGER ? Number(after) : undefined
}

/**
 * How a table is read by keyset (sqlite/keyset.ts, postgres/keyset.ts): `after` names a row of
 * the account by `key`; the list's order is `order` (a unique integer column), ascending unless
 * `descending`.
 */
export interface KeysetTable {
  table: string
  columns: string
  key: string
  order: string
  descending?: boolean
  /** the key is an integer id: an `after` of other text names nothing */
  integerKey?: boolean
}

/** The keyset reading of a list (see KeysetPage), beside its offset reading `list`. */
export interface KeysetList<T> {
  listAfter(account: string, after: string, limit?: number): Promise<KeysetPage<T> | null>
}

export interface Timestamps {
  created_at: string
  updated_at: string | null
}

export interface VariableRecord extends Timestamps {
  key: string
  value: string
  locked: boolean
  secret: boolean
}

export interface VariableData {
  key: string
  value: string
  locked: boolean
  secret: boolean
}

/** A status-page service, in the shape every answer gives it. */
export interface ServiceRecord extends Timestamps {
  id: string
  name: string
  accountId: string
}

export interface StoredCard extends Timestamps {
  id: string
  name: string
  services: Array<{ id: string }>
}

export type StoredPage = Omit<StatusPage, 'cards'> & { cards: StoredCard[] }

export interface StatusPageRecord extends Timestamps {
  id: string
  page: StoredPage
}

/** A snippet: a named setup or teardown script of API checks. */
export interface SnippetRecord extends Timestamps {
  id: number
  snippet: Snippet
}

export interface MaintenanceWindowRecord extends Timestamps {
  id: number
  window: MaintenanceWindow
}

/** An account-level alert channel (its configuration stored in clear: deliveries need it). */
export interface AlertChannelRecord extends Timestamps {
  id: number
  channel: AlertChannelData
}

/** A check group (reference: CheckGroup); its checks name it by their own groupId. */
export interface CheckGroupRecord extends Timestamps {
  id: number
  group: CheckGroup
}

export interface IncidentData {
  name: string
  severity: string
  services: Array<{ id: string }>
  [field: string]: unknown
}

export interface IncidentUpdateRecord extends Timestamps {
  id: string
  update: Record<string, unknown>
}

export interface IncidentRecord extends Timestamps {
  id: string
  incident: IncidentData
  /** newest first */
  updates: IncidentUpdateRecord[]
}

export interface KeySetup {
  /** The first given key, or the key generated now; undefined when keys already existed. */
  apiKey?: string
  accountId: string
  generated: boolean
}

/**
 * The database cannot take the call now: PostgreSQL is restarting or unreachable, a SQLite file
 * is locked by another process beyond the busy timeout, its disk is full or it cannot be written.
 * Nothing of the call was stored, except when the database went away during a commit (then the
 * outcome is unknown, as for any lost answer). The server answers 503 with Retry-After, and its
 * background work tries again; nothing needs restarting once the database is back.
 */
export class StoreUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'StoreUnavailable'
  }
}

/**
 * The database is up, but every connection of the server's pool stayed busy for the whole wait
 * for one (PostgreSQL: `--db-pool-size` connections, all in transactions or statements): the
 * server is overloaded, not cut off. A StoreUnavailable, so it is answered 503 with Retry-After
 * and background work waits it out the same way; told apart in the log, the answer's message,
 * the metrics and the readiness probe (which it does not fail).
 */
export class StorePoolSaturated extends StoreUnavailable {
  constructor(message: string, readonly pool: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'StorePoolSaturated'
  }
}

/** The connections of a pool, now (PostgreSQL; for the metrics). */
export interface PoolStats {
  /** `main` (requests, recording, planning, claims), `auth` (key look-ups, the rate limit) or `lease` (lease extensions, readiness) */
  pool: string
  size: number
  total: number
  idle: number
  waiting: number
  /** times a wait for a connection ran out (the pool saturated) */
  saturated: number
}

/** Raised by a write that a unique constraint refuses (another writer may have got there first). */
export class UniqueViolation extends Error {
  constructor(readonly field: 'variable.key' | 'statusPage.url' | 'statusPage.customDomain', readonly value: string) {
    super(`${field} ${value} is taken`)
  }
}

export interface CheckStore {
  list(account: string, query: CheckListQuery): Promise<CheckPage | null>
  get(account: string, id: string): Promise<CheckRecord | undefined>
  create(account: string, type: CheckType, data: CheckData): Promise<CheckRecord>
  /** replaces the body of a check of this type; keeps created_at; undefined when there is none */
  replace(account: string, id: string, type: CheckType, data: CheckData): Promise<CheckRecord | undefined>
  delete(account: string, id: string): Promise<boolean>
}

export interface VariableStore extends KeysetList<VariableRecord> {
  list(account: string, paging: Paging): Promise<Page<VariableRecord>>
  get(account: string, key: string): Promise<VariableRecord | undefined>
  /** throws UniqueViolation('variable.key') when the account has the key */
  create(account: string, data: VariableData): Promise<VariableRecord>
  update(account: string, key: string, data: Omit<VariableData, 'key'>): Promise<VariableRecord | undefined>
  delete(account: string, key: string): Promise<boolean>
}

export interface ServiceStore extends KeysetList<ServiceRecord> {
  list(account: string, paging: Paging): Promise<Page<ServiceRecord>>
  /** every service of the account, by id (an account has few) */
  byId(account: string): Promise<Map<string, ServiceRecord>>
  /** which of these ids are services of the account */
  existing(account: string, ids: string[]): Promise<Set<string>>
  get(account: string, id: string): Promise<ServiceRecord | undefined>
  create(account: string, name: string): Promise<ServiceRecord>
  update(account: string, id: string, name: string): Promise<ServiceRecord | undefined>
  delete(account: string, id: string): Promise<boolean>
  /** a status page whose cards use the service, if any */
  usedBy(account: string, id: string): Promise<{ id: string; url: string } | undefined>
}

export interface StatusPageStore {
  /** cursor paging from the page `nextId` (included); null when the cursor is not a page of the account */
  list(account: string, query: { nextId?: string; limit: number }): Promise<{ entries: StatusPageRecord[]; nextId: string | null } | null>
  get(account: string, id: string): Promise<StatusPageRecord | undefined>
  /**
   * The account's pages, counted for a create in the same transaction: until it ends, another
   * transaction counting them for the account waits (SQLite: one writer; PostgreSQL: a lock of
   * the account's pages), so two creates at once cannot both pass a limit.
   */
  countForCreate(account: string): Promise<number>
  /** cards get ids; throws UniqueViolation('statusPage.url' or 'statusPage.customDomain') */
  create(account: string, data: StatusPage): Promise<StatusPageRecord>
  /** cards sent with a known id keep it and its created_at; throws UniqueViolation('statusPage.url' or 'statusPage.customDomain') */
  update(account: string, id: string, data: StatusPage): Promise<StatusPageRecord | undefined>
  delete(account: string, id: string): Promise<boolean>
  /**
   * The page served at a public address (its url, or its custom domain, compared without case),
   * of any account. A custom domain is unique across accounts (create and update throw
   * UniqueViolation('statusPage.customDomain')).
   */
  findPublic(by: { url: string } | { customDomain: string }): Promise<{ account: string; record: StatusPageRecord } | undefined>
}

export interface MaintenanceWindowStore extends KeysetList<MaintenanceWindowRecord> {
  list(account: string, paging: Paging): Promise<Page<MaintenanceWindowRecord>>
  get(account: string, id: number): Promise<MaintenanceWindowRecord | undefined>
  create(account: string, data: MaintenanceWindow): Promise<MaintenanceWindowRecord>
  update(account: string, id: number, data: MaintenanceWindow): Promise<MaintenanceWindowRecord | undefined>
  delete(account: string, id: number): Promise<boolean>
}

export interface SnippetStore extends KeysetList<SnippetRecord> {
  list(account: string, paging: Paging): Promise<Page<SnippetRecord>>
  get(account: string, id: number): Promise<SnippetRecord | undefined>
  /** the account's snippets among these ids (another account's are not found) */
  byIds(account: string, ids: number[]): Promise<SnippetRecord[]>
  create(account: string, data: Snippet): Promise<SnippetRecord>
  update(account: string, id: number, data: Snippet): Promise<SnippetRecord | undefined>
  delete(account: string, id: number): Promise<boolean>
}

export interface AlertChannelStore extends KeysetList<AlertChannelRecord> {
  list(account: string, paging: Paging): Promise<Page<AlertChannelRecord>>
  get(account: string, id: number): Promise<AlertChannelRecord | undefined>
  /** the account's channels among these ids (another account's are not found), by id */
  byIds(account: string, ids: number[]): Promise<AlertChannelRecord[]>
  create(account: string, data: AlertChannelData): Promise<AlertChannelRecord>
  update(account: string, id: number, data: AlertChannelData): Promise<AlertChannelRecord | undefined>
  delete(account: string, id: number): Promise<boolean>
}

export interface CheckGroupStore extends KeysetList<CheckGroupRecord> {
  list(account: string, paging: Paging): Promise<Page<CheckGroupRecord>>
  get(account: string, id: number): Promise<CheckGroupRecord | undefined>
  create(account: string, data: CheckGroup): Promise<CheckGroupRecord>
  update(account: string, id: number, data: CheckGroup): Promise<CheckGroupRecord | undefined>
  delete(account: string, id: number): Promise<boolean>
}

export interface IncidentStore extends KeysetList<IncidentRecord> {
  /** newest first */
  list(account: string, paging: Paging): Promise<Page<IncidentRecord>>
  get(account: string, id: string): Promise<IncidentRecord | undefined>
  create(account: string, data: IncidentData): Promise<IncidentRecord>
  update(account: string, id: string, data: IncidentData): Promise<IncidentRecord | undefined>
  delete(account: string, id: string): Promise<boolean>
  /** updates of an incident of the account; undefined when the incident is not there */
  addUpdate(account: string, incidentId: string, data: Record<string, unknown>): Promise<IncidentUpdateRecord | undefined>
  getUpdate(account: string, incidentId: string, id: string): Promise<IncidentUpdateRecord | undefined>
  replaceUpdate(account: string, incidentId: string, id: string, data: Record<string, unknown>): Promise<IncidentUpdateRecord | undefined>
  deleteUpdate(account: string, incidentId: string, id: string): Promise<boolean>
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

// ---------------------------------------------------------------------------------------
// Check runs, results, sessions and agents (scheduling). A due run is a row that a runner
// (the server's own or an agent) claims with a lease in one statement; its FINAL result and
// the ATTEMPT results before it are recorded when the run is completed.
// ---------------------------------------------------------------------------------------

/** A due run to create; `key` makes planning idempotent across processes (a second insert is ignored). */
export interface PlannedRun {
  key: string
  account: string
  checkId: string
  location: string
  /** ms since the epoch */
  dueAt: number
  sessionId: string | null
  /** a run nobody claimed by then is skipped (ms; null: never skipped) */
  staleAt: number | null
  /**
   * planned as skipped, not to run (counted once, by the process whose insert made the row):
   * `maintenance` (a window covers it), `missed` (found after its check's grace) or `no-agent`
   * (of a private location no agent of which is alive)
   */
  skipReason?: 'maintenance' | 'missed' | 'no-agent'
}

/**
 * Why a due run was not run, counted (monitors_scheduler_runs_skipped_total, GET
 * /v1/scheduler/skipped-runs): `late`, a newer run of its check fell due before it was claimed
 * (the runners were behind: each check keeps its newest due run); `missed`, no server planned it
 * within its check's grace (they were down or stalled); `maintenance`, a maintenance window
 * covered it; `no-agent`, it is of a private location where no agent was alive when it fell due
 * (only agents run those). (A run planned before its check was paused is dropped, not counted:
 * nothing was due.)
 */
export const SKIP_REASONS = ['late', 'missed', 'maintenance', 'no-agent'] as const
export type SkipReason = (typeof SKIP_REASONS)[number]

/** Runs one statement skipped, counted by reason, check type and location. */
export interface SkipCount {
  reason: SkipReason
  checkType: string
  location: string
  count: number
}

/** What a plan wrote: due runs added, and the skipped ones it inserted (counted once, whichever server plans). */
export interface PlanOutcome {
  added: number
  skipped: SkipCount[]
}

/** Skipped runs of a check, location and reason in a window (whole UTC hours of their due times). */
export interface SkippedRunsRow {
  checkId: string
  location: string
  reason: SkipReason
  count: number
  /** the latest due time skipped, ms */
  lastDueAt: number
}

/** Due runs waiting for a claim (never claimed, due now or before), per location. */
export interface BacklogRow {
  location: string
  due: number
  /** ms */
  oldestDueAt: number
}

export interface ClaimQuery {
  owner: string
  /** only runs of this account (an agent); undefined: every account (the server's runner) */
  account?: string
  /** only runs of these locations; undefined: any location */
  locations?: string[]
  /** leave the (account, location) pairs a live agent serves, and every private location (the server's runner: only agents run those) */
  skipAgentLocations?: boolean
  /** leave the runs of checks of these types (the runner's script places are taken) */
  skipCheckTypes?: readonly string[]
  /** only runs of checks of these types */
  onlyCheckTypes?: readonly string[]
  max: number
  leaseMs: number
  now: number
}

/** A claimed run: `runId` names this claim (a later claim of the same run gets another). */
export interface ClaimedRun {
  runId: string
  account: string
  checkId: string
  location: string
  dueAt: number
  leaseExpiresAt: number
  sessionId: string | null
  /** the check as GET /v1/checks/{id} answers it, at claim time */
  checkJson: string
}

/** A result as the runner made it (src/runner RunResult, without `attempts`). */
export type StoredResultInput = Record<string, unknown> & {
  runLocation: string
  resultType: 'FINAL' | 'ATTEMPT'
  status: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  responseTime: number | null
  startedAt: string
  stoppedAt: string
  error: string | null
}

export interface CheckResultRecord {
  id: string
  checkId: string
  sessionId: string | null
  runId: string
  runLocation: string
  resultType: 'FINAL' | 'ATTEMPT'
  status: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  responseTime: number | null
  startedAt: string
  stoppedAt: string
  error: string | null
  /** the runner's whole result (assertions, details, attempt number, …) */
  details: Record<string, unknown>
  created_at: string
}

export type CompleteOutcome =
  | { outcome: 'completed'; run: ClaimedRun; final: CheckResultRecord; attempts: CheckResultRecord[] }
  /** the same claim posted its result again: nothing recorded twice */
  | { outcome: 'duplicate' }
  /** another claim took the run after this lease expired, or completed it */
  | { outcome: 'lost' }
  | { outcome: 'unknown' }

/** The lease of a run held now: who holds it (the claim's owner), until when (ms), and the run's location. */
export interface RunLease {
  owner: string | null
  until: number
  location: string
}

export interface RunStore {
  /** inserts the runs not planned yet (by key); answers how many due runs were new, and the skipped ones it inserted */
  plan(runs: PlannedRun[]): Promise<PlanOutcome>
  /**
   * Skips the scheduled runs never claimed that a newer due run of their check supersedes
   * (reason `late`), counting them per check and hour in the same statement; answers what it
   * skipped. Each check keeps its newest due run, so a runner that fell behind runs every
   * check's latest run instead of dropping whatever is older than a period.
   */
  skipLate(now: number): Promise<SkipCount[]>
  /** Due runs never claimed, due at or before `now`, per location (of one account, or every one's) */
  backlog(now: number, account?: string): Promise<BacklogRow[]>
  /** The account's skipped runs due in [fromHour, toHour) (whole UTC hours, ms), per check, location and reason */
  skipped(account: string, fromHour: number, toHour: number, checkId?: string): Promise<SkippedRunsRow[]>
  /** Forgets the counts of skipped runs due before `before` (ms): the results' retention */
  pruneSkipped(before: number): Promise<number>
  /** claims due runs atomically: a run is held by one claim until its lease expires */
  claim(query: ClaimQuery): Promise<ClaimedRun[]>
  /**
   * new lease end (ms); 'completed' when this claim's result is recorded already (an extension
   * that crossed the result), 'lost' when another claim has the run, 'unknown'. PostgreSQL
   * never waits on a lock for it: a run being recorded keeps the lease it has.
   */
  extend(account: string | undefined, runId: string, leaseMs: number, now: number): Promise<number | 'lost' | 'unknown' | 'completed'>
  /**
   * Locks the rows of these runs for the caller's transaction, in the order of their row ids
   * (PostgreSQL; SQLite's write lock holds every row already): the first lock a group commit takes.
   */
  lock(runIds: readonly string[]): Promise<void>
  /**
   * The lease `runId` names, when it is held at `now`; 'done' when the run is complete (by this
   * claim or another); 'lost' when that claim is not the run's current one, the run was skipped
   * or the lease ran out; 'unknown' when the account has no such run (or no longer: done runs are pruned)
   */
  lease(account: string, runId: string, now: number): Promise<RunLease | 'lost' | 'done' | 'unknown'>
  /** records the final result and its attempts (oldest first) and marks the run done */
  complete(account: string | undefined, runId: string, final: StoredResultInput, attempts: StoredResultInput[], now: number): Promise<CompleteOutcome>
  /** deletes runs done or skipped before `before` (ms); answers how many */
  prune(before: number, now: number): Promise<number>
}

export interface ResultQuery {
  checkId: string
  resultType?: 'FINAL' | 'ATTEMPT'
  /** true: the results with failures; false: those without */
  hasFailures?: boolean
  /** run in this location */
  location?: string
  /** started at or after this time (ms) */
  from?: number
  /** started before this time (ms) */
  to?: number
  limit: number
  offset: number
}

export interface ResultStore {
  /** newest first */
  list(account: string, query: ResultQuery): Promise<Page<CheckResultRecord>>
  /** `checkId`, when the caller knows it, only narrows the search (a result of another check is answered still) */
  get(account: string, id: string, checkId?: string): Promise<CheckResultRecord | undefined>
  /** results of a session, oldest first */
  ofSession(account: string, sessionId: string): Promise<CheckResultRecord[]>
  /**
   * Stores a FINAL result that no run made (a heartbeat check's ping or missed period) under
   * the id it was recorded with (its run id is the same); false when that id is stored already.
   */
  add(account: string, checkId: string, id: string, result: StoredResultInput): Promise<boolean>
  /** deletes results that stopped before `before` (ISO date-time), `now` the clock's time (ms); answers how many */
  prune(before: string, now?: number): Promise<number>
}

export interface SessionRecord {
  id: string
  checkId: string
  checkType: string
  name: string
  runLocations: string[]
  startedAt: string
}

export interface SessionStore {
  /** creates the session and one due run per location, due now */
  create(account: string, check: { id: string; checkType: string; name: string }, locations: string[], now: number): Promise<SessionRecord>
  get(account: string, id: string): Promise<SessionRecord | undefined>
}

export interface AgentStore {
  /** the agent serves these locations of the account until `until` (ms) */
  heartbeat(account: string, agentId: string, locations: string[], until: number): Promise<void>
}

/** What a private location is (reference: privateLocationCreate); its slug never changes. */
export interface PrivateLocationData {
  name: string
  slugName: string
  icon: string
  proxyUrl: string | null
}

export interface PrivateLocationRecord extends Timestamps {
  id: string
  location: PrivateLocationData
  /** ms: an agent of the location last claimed; null: never */
  lastSeenAt: number | null
  /** ms: no agent alive there since then, as the health sweep last saw it; null: one is alive */
  noAgentSince: number | null
  /** ms: the alert that no agent is alive was sent then; null when not (or it recovered) */
  alertedAt: number | null
}

/** What a location's agents are doing now (private-locations/health.ts). */
export interface PrivateLocationLoad {
  account: string
  slugName: string
  /** agents whose last claim named the location and whose heartbeat has not run out */
  agents: number
  /** due runs of the location no runner holds */
  waiting: number
  /** ms: the due time of the oldest of them; null when none waits */
  oldestDueAt: number | null
}

/**
 * Private locations of an account (/v1/private-locations). Runs of their slugs are claimed by
 * agents only (the server's runner leaves them); checks and groups name them by slug.
 */
export interface PrivateLocationStore {
  /** the account's locations, oldest first */
  list(account: string): Promise<PrivateLocationRecord[]>
  /** every account's locations (the health sweep, the metrics) */
  all(): Promise<Array<PrivateLocationRecord & { account: string }>>
  get(account: string, id: string): Promise<PrivateLocationRecord | undefined>
  bySlug(account: string, slugName: string): Promise<PrivateLocationRecord | undefined>
  /** 'exists' when the account has a location of that slug */
  create(account: string, data: PrivateLocationData): Promise<PrivateLocationRecord | 'exists'>
  update(account: string, id: string, data: Omit<PrivateLocationData, 'slugName'>): Promise<PrivateLocationRecord | undefined>
  /** deletes the location and its keys; false when the account has none of that id */
  delete(account: string, id: string): Promise<boolean>
  /** the checks (ids) and groups (ids) of the account whose privateLocations name the slug */
  usedBy(account: string, slugName: string): Promise<{ checks: string[]; groups: number[] }>
  /** an agent of these slugs of the account claimed at `now` */
  seen(account: string, slugNames: string[], now: number): Promise<void>
  /** agents alive and runs waiting at `now`, per location (of the account, when given) */
  load(now: number, account?: string): Promise<PrivateLocationLoad[]>
  /** records since when no agent is alive (kept while it stays so); null: one is alive again */
  setNoAgentSince(account: string, id: string, since: number | null): Promise<void>
  /**
   * Marks the no-agent alert sent (`at`) or recovered (null), only if it was not already: true
   * for the one caller that changed it (that server sends the alert), false for the others.
   */
  markAlerted(account: string, id: string, at: number | null): Promise<boolean>
}

/** Every check of every account, for the scheduler (JSON as GET answers it). */
export interface SchedulableCheck {
  account: string
  id: string
  json: string
}

export interface ScheduleStore {
  /** every check of every account (the planner filters) */
  allChecks(): Promise<SchedulableCheck[]>
  /** every maintenance window of every account */
  allMaintenanceWindows(): Promise<Array<{ account: string; window: MaintenanceWindow }>>
  /** every check group of every account */
  allCheckGroups(): Promise<Array<{ account: string; id: number; group: CheckGroup }>>
  /**
   * A token that moves whenever a check or a maintenance window is created, changed or deleted
   * (by any process on the database): the planner re-reads both only when it moved. A store
   * without one answers a new token each time.
   */
  scheduleVersion(): Promise<string>
}

export interface RunRepositories {
  runs: RunStore
  results: ResultStore
  sessions: SessionStore
  agents: AgentStore
  schedule: ScheduleStore
}
// ---------------------------------------------------------------------------------------

/** A person subscribed by email to a status page. */
export interface SubscriberRecord {
  id: string
  accountId: string
  pageId: string
  email: string
  /** the capability of their confirm and unsubscribe links */
  token: string
  /** the origin they subscribed at: the links of their emails */
  baseUrl: string
  confirmed: boolean
}

export type SubscriberEmailKind = 'CONFIRM' | 'INCIDENT' | 'MAINTENANCE'

export interface NewSubscriberEmail {
  subscriberId: string
  kind: SubscriberEmailKind
  subject: string
  body: string
}

/** An email of the outbox held by one sender until its lease ends. */
export interface ClaimedSubscriberEmail {
  seq: number
  to: string
  kind: SubscriberEmailKind
  subject: string
  body: string
  /** attempts made before this one */
  attempts: number
  subscriber: SubscriberRecord
}

export interface SubscriberEmailRecord {
  to: string
  kind: SubscriberEmailKind
  subject: string
  body: string
  status: 'PENDING' | 'SENT' | 'FAILED'
  attempts: number
  error: string | null
}

/**
 * Status pages' email subscribers (double opt-in) and the outbox of their emails. Pages are
 * named by id within the account; a subscriber is found by its page and token only.
 */
export interface SubscriberStore {
  /**
   * Subscribes `email` (compared lower case) to the page. A new subscriber, or an unconfirmed
   * one whose last confirmation is older than `resendAfterMs`, gets the confirmation email
   * `confirmation` makes (in the same transaction); a confirmed one gets nothing. Undefined when
   * the page is not the account's.
   */
  subscribe(account: string, pageId: string, email: string, fresh: { token: string; baseUrl: string }, now: number, resendAfterMs: number,
    confirmation: (subscriber: SubscriberRecord) => { subject: string; body: string }): Promise<{ subscriber: SubscriberRecord; sent: boolean } | undefined>
  /** Confirms the subscriber of this page and token; undefined when there is none. */
  confirm(pageId: string, token: string, now: number): Promise<SubscriberRecord | undefined>
  byToken(pageId: string, token: string): Promise<SubscriberRecord | undefined>
  /** Removes the subscriber (and its unsent emails); false when there was none. */
  unsubscribe(pageId: string, token: string): Promise<boolean>
  /** The confirmed subscribers of these pages of the account. */
  confirmedOf(account: string, pageIds: string[]): Promise<SubscriberRecord[]>
  enqueue(emails: NewSubscriberEmail[], now: number): Promise<void>
  claim(query: { owner: string; max: number; leaseMs: number; now: number }): Promise<ClaimedSubscriberEmail[]>
  /** Moves a held email on: SENT, FAILED, or PENDING again at `nextAttemptAt`; false when the lease was lost. */
  finish(owner: string, seq: number, next: { status: 'SENT' | 'FAILED' | 'PENDING'; nextAttemptAt: number | null; error: string | null }): Promise<boolean>
  /** Gives a held email back unattempted (the sender is stopping). */
  release(owner: string, seq: number): Promise<void>
  /** The emails of a page's subscribers, oldest first (for the dashboard and tests). */
  emailsOf(account: string, pageId: string): Promise<SubscriberEmailRecord[]>
}

export interface Repositories extends RunRepositories {
  checks: CheckStore
  variables: VariableStore
  services: ServiceStore
  statusPages: StatusPageStore
  maintenanceWindows: MaintenanceWindowStore
  snippets: SnippetStore
  alertChannels: AlertChannelStore
  checkGroups: CheckGroupStore
  incidents: IncidentStore
  keys: KeyStore
  webSessions: WebSessionStore
  subscribers: SubscriberStore
  badgeTokens: BadgeTokenStore
  privateLocations: PrivateLocationStore
  // --- results of check runs: statuses, error groups, alert state (see ../results)
  checkStatuses: CheckStatusStore
  errorGroups: ErrorGroupStore
  alerts: AlertStore
  // --- end of results of check runs
  // --- heartbeat checks (see ../heartbeats)
  heartbeats: HeartbeatStore
  // --- end of heartbeat checks
  // --- alert deliveries (see ../alerts)
  alertDeliveries: AlertDeliveryStore
  // --- end of alert deliveries
  // --- analytics rollups (see ../results/analytics.ts)
  analytics: AnalyticsStore
  // --- end of analytics rollups
}

// --- results of check runs: statuses, error groups, alert state (see ../results) -----------

/** What one FINAL result changes in its check's status (flags from the newest run win). */
export interface StatusUpdate {
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  /** ms; null when nothing was measured */
  responseTime: number | null
  runLocation: string
  checkRunId: string
  sslDaysRemaining: number | null
  /** when the run started: a result older than the status's newest run changes only longest/shortest */
  startedAt: string
}

export interface CheckStatusRecord {
  /** the check's current name */
  name: string
  checkId: string
  hasFailures: boolean
  hasErrors: boolean
  isDegraded: boolean
  longestRun: number | null
  shortestRun: number | null
  lastRunLocation: string | null
  lastCheckRunId: string | null
  sslDaysRemaining: number | null
  /** response time of the newest run (for badges); not part of the answer */
  lastResponseTime: number | null
  created_at: string
  updated_at: string | null
}

export interface CheckStatusStore {
  /** account of a check, by its id alone (results carry no account); undefined when it is gone */
  accountOf(checkId: string): Promise<string | undefined>
  /**
   * Claims a result id for recording: true the first time, false when some process recorded
   * it already (recording is idempotent per result id).
   */
  claimResult(resultId: string, checkId: string): Promise<boolean>
  /** forgets result ids claimed before `time` (ISO), with the results' retention; answers how many */
  forgetResultsBefore(time: string): Promise<number>
  /** one upsert: longest/shortest by MAX/MIN in the database, flags only from a newer run */
  record(account: string, checkId: string, update: StatusUpdate): Promise<void>
  /** every status of the account, in the order of its checks */
  list(account: string): Promise<CheckStatusRecord[]>
  /** a page of them (GET /v1/check-statuses?limit=&page=), with how many there are */
  page(account: string, paging: { limit: number; offset: number }): Promise<Page<CheckStatusRecord>>
  get(account: string, checkId: string): Promise<CheckStatusRecord | undefined>
}

export interface ErrorGroupRecord {
  id: string
  checkId: string
  errorHash: string
  rawErrorMessage: string | null
  cleanedErrorMessage: string
  firstSeen: string
  lastSeen: string
  archivedUntilNextEvent: boolean
  archiveForEver: boolean
}

export interface ErrorEvent {
  errorHash: string
  rawErrorMessage: string
  cleanedErrorMessage: string
  seenAt: string
}

export interface ErrorGroupStore {
  /** one upsert per (check, hash): a known hash moves lastSeen and clears archivedUntilNextEvent */
  record(account: string, checkId: string, event: ErrorEvent): Promise<void>
  /** oldest first, one page; `checkId`: the groups of that check only */
  list(account: string, query: { checkId?: string; limit: number; offset: number }): Promise<Page<ErrorGroupRecord>>
  get(account: string, id: string): Promise<ErrorGroupRecord | undefined>
  /** sets the flags given; undefined when the group is not the account's */
  update(account: string, id: string, flags: { archiveForEver?: boolean; archivedUntilNextEvent?: boolean }): Promise<ErrorGroupRecord | undefined>
}

export type AlertLevel = 'NONE' | 'DEGRADED' | 'FAILURE'
export type AlertNotificationKind = 'ALERT_FAILURE' | 'ALERT_DEGRADED' | 'ALERT_RECOVERY' | 'REMINDER' | 'ALERT_SSL' | 'ALERT_SSL_RECOVERY'
  // a private location without a live agent, and its recovery (../alerts/private-locations.ts): never a check's
  | 'ALERT_NO_AGENT' | 'ALERT_NO_AGENT_RECOVERY'

/** A check's alerting state, kept between results. */
export interface AlertState {
  consecutiveFailures: number
  consecutiveDegraded: number
  failingSince: string | null
  degradedSince: string | null
  level: AlertLevel
  alertedAt: string | null
  remindersSent: number
  /** the incident opened by triggerIncident, until it is resolved */
  incidentId: string | null
  /** location -> whether its newest run failed (for parallelRunFailureThreshold) */
  locations: Record<string, boolean>
  /** the certificate is within the check's sslCertificates threshold and ALERT_SSL was given (absent: no) */
  sslAlerted?: boolean
  /** the subscribed channels (sslExpiry) whose sslExpiryThreshold the certificate is within, ALERT_SSL given (absent: none) */
  sslAlertedChannels?: number[]
}

export interface AlertNotificationRecord {
  id: string
  checkId: string
  kind: AlertNotificationKind
  checkRunId: string | null
  created_at: string
}

export interface AlertStore {
  /** read inside a transaction, so that the state cannot change before `save` */
  state(checkId: string): Promise<AlertState | undefined>
  save(account: string, checkId: string, state: AlertState): Promise<void>
  notify(account: string, checkId: string, kind: AlertNotificationKind, checkRunId: string | null): Promise<AlertNotificationRecord>
  /** oldest first */
  notifications(account: string, checkId?: string): Promise<AlertNotificationRecord[]>
}

// --- end of results of check runs ---------------------------------------------------------------

// --- heartbeat checks: ping tokens, periods and events (see ../heartbeats) ---------------------

/** The ping state of one heartbeat check. Times in ms. */
export interface HeartbeatRecord {
  checkId: string
  account: string
  token: string
  periodMs: number
  graceMs: number
  /** start of the current period: the last ping, or when the check was created */
  since: number
  /**
   * the start of the last period recorded as FAILING (`since + k × periodMs`, k from 0: every
   * period that passes without a ping is one), if any; null or before `since` when none of the
   * current silence was recorded. The next period to record starts at `since` then, else at
   * `failedSince + periodMs`.
   */
  failedSince: number | null
}

export interface HeartbeatEventRecord {
  id: string
  checkId: string
  state: string
  /** ms */
  at: number
  source: string | null
  userAgent: string | null
}

export interface HeartbeatStore {
  /** Creates the record of a new heartbeat check (period starting at `now`), or updates period and grace of an existing one. */
  save(account: string, checkId: string, token: string, periodMs: number, graceMs: number, now: number): Promise<void>
  byToken(token: string): Promise<HeartbeatRecord | undefined>
  get(account: string, checkId: string): Promise<HeartbeatRecord | undefined>
  /** A ping at `at`: the next period starts there. */
  ping(checkId: string, at: number): Promise<void>
  /** Activated or not, every heartbeat whose next period to record (see failedSince) ended, grace included, before `now` without a ping. */
  overdue(now: number): Promise<HeartbeatRecord[]>
  /**
   * Marks the period starting at `start` as failed when it is the next one to record (see
   * failedSince); false when it is not: marked before (by any process), or a ping came since.
   */
  markFailing(checkId: string, start: number): Promise<boolean>
  addEvent(account: string, event: Omit<HeartbeatEventRecord, 'id'>): Promise<HeartbeatEventRecord>
  /** Events of a check with from <= at < to, oldest first (the newest `limit` when given). */
  events(account: string, checkId: string, from: number, to: number, limit?: number): Promise<HeartbeatEventRecord[]>
  event(account: string, checkId: string, id: string): Promise<HeartbeatEventRecord | undefined>
  /** Deletes events older than `before` (ms), as results are pruned; returns how many. */
  pruneEvents(before: number): Promise<number>
}

// --- end of heartbeat checks ----------------------------------------------------------------------

// --- analytics rollups: one row per check, hour, location, status code and status -------------

/** One FINAL result as analytics keep it. */
export interface AnalyticsSample {
  /** when the run started, ms */
  at: number
  runLocation: string
  /** an API check's response status; null for other types or when no response came */
  statusCode: number | null
  /** 'success' or 'failure'; a heartbeat's event state (RECEIVED, GRACE, LATE, FAILING) */
  status: string
  /** attempts retried before this final result */
  retries: number
  /** measured metric name -> value (ms or percent); a metric not measured is left out */
  values: Record<string, number>
}

/** count, sum, sum of squares, min and max of one metric's values in a rollup row */
export type MetricTotals = [n: number, sum: number, sumOfSquares: number, min: number, max: number]

/**
 * The runs of a rollup row, oldest first, column by column: run i started `seconds[i]` after
 * the row's hour, had `retries[i]` retries and measured `values[metric][i]` (null: not measured).
 */
export interface RollupRuns {
  seconds: number[]
  retries: number[]
  values: Record<string, Array<number | null>>
}

export interface AnalyticsRollupRow {
  /** ms, a whole UTC hour */
  hourStart: number
  runLocation: string
  statusCode: number | null
  status: string
  runs: number
  retries: number
  totals: Record<string, MetricTotals>
  /** every run of the row; only when asked for */
  samples?: RollupRuns
}

export interface AnalyticsStore {
  /**
   * Adds one result to its row. Called inside the transaction that records the result (see
   * ../results), so a result lands in analytics exactly when it is recorded; an
   * implementation makes the read and write of the row one step (SQLite: the transaction's
   * write lock; PostgreSQL: SELECT … FOR UPDATE, or an upsert).
   */
  record(account: string, checkId: string, sample: AnalyticsSample): Promise<void>
  /** Many results of one check at once (fills, imports): the same rows as one `record` each, fewer writes. */
  recordMany(account: string, checkId: string, samples: AnalyticsSample[]): Promise<void>
  /** Rows of a check with fromHour <= hourStart < toHour (ms), oldest first; `samples` filled when withSamples. */
  rows(account: string, checkId: string, fromHour: number, toHour: number, withSamples: boolean): Promise<AnalyticsRollupRow[]>
  /** The rows of every check of the account with fromHour <= hourStart < toHour, by check id, each check's oldest first (one query). */
  rowsOfAccount(account: string, fromHour: number, toHour: number, withSamples: boolean): Promise<Map<string, AnalyticsRollupRow[]>>
  /** Deletes rows of hours that ended before `before` (ms), with the results' retention, `now` the clock's time (ms); answers how many. */
  prune(before: number, now?: number): Promise<number>
}

// --- end of analytics rollups ---------------------------------------------------------------------

export interface Store extends Repositories {
  /**
   * Runs fn with repositories that see and write one transaction: all of it commits, or
   * nothing when fn throws (the error is thrown on). Writers of other transactions and other
   * processes wait or retry as the database requires. Inside fn, use only tx: the store's
   * own repositories wait for the transaction to end.
   */
  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T>
  /**
   * Resolves when the database takes work now (PostgreSQL: a statement answers; SQLite: its write
   * lock can be taken), throws StoreUnavailable when it cannot (the server's readiness), and
   * StorePoolSaturated when the database is up but no connection was free for the ping.
   */
  ping(): Promise<void>
  /**
   * Runs the scheduler records in one transaction at most (default 256): PostgreSQL keeps its
   * groups small, so the rows of a group's first checks are not held while the last ones are written.
   */
  readonly maxGroupCommit?: number
  /**
   * Group commits the scheduler runs at once (default 1): PostgreSQL takes several, since every
   * group locks its rows in one order; SQLite has one writer.
   */
  readonly commitConcurrency?: number
  /** The connection pools' state (PostgreSQL); absent for a store without a pool (SQLite). */
  poolStats?(): PoolStats[]
  close(): Promise<void>
  /**
   * The rate limit's windows kept in the database, for a limit per key across every server on
   * it (PostgreSQL); absent, each server counts its own requests (SQLite).
   */
  rateWindows?: RateWindowStore
}

export interface RateWindowStore {
  /** counts one request of the key when `spend`, and answers its window (count and end, ms) as it now stands */
  hit(keyHash: string, max: number, windowMs: number, now: number, spend: boolean): Promise<{ count: number; resetAt: number }>
}

/** A custom domain as stored and looked up: lower case, without a trailing dot; null for none. */
export function domainKey(domain: string | null | undefined): string | null {
  if (typeof domain !== 'string') return null
  const key = domain.toLowerCase().replace(/\.$/, '')
  return key === '' ? null : key
}

/** Cards as stored: a card sent with the id of a card of the previous version keeps its id and created_at. */
export function storedCards(data: StatusPage, previous: StoredCard[], time: string, newId: () => string): StoredCard[] {
  const old = new Map(previous.map((c) => [c.id, c]))
  return data.cards.map((card) => {
    const kept = card.id !== undefined ? old.get(card.id) : undefined
    return {
      id: kept ? kept.id : newId(),
      name: card.name,
      services: card.services.map((s) => ({ id: s.id })),
      created_at: kept ? kept.created_at : time,
      updated_at: kept ? time : null,
    }
  })
}

// --- alert deliveries: the outbox of notifications to send to a check's alert channels (see ../alerts)

/** The types of channel a delivery goes to: the account-level channel types (an inline channel of a check is one of them). */
export type AlertChannelType = AlertChannelKind
/**
 * PENDING: waiting for its next attempt; DELIVERED: the channel accepted it; FAILED: refused
 * for good or out of attempts; NOT_DELIVERED: never attempted (`reason` says why).
 */
export type AlertDeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED' | 'NOT_DELIVERED'

/** One delivery to write, in the transaction that records its notification. */
export interface NewAlertDelivery {
  notificationId: string
  checkId: string
  alertType: AlertNotificationKind
  channelType: AlertChannelType
  /** the channel as the check had it when the notification was recorded */
  channel: Record<string, unknown>
  /** what is delivered (see ../alerts/event.ts) */
  event: Record<string, unknown>
  /** NOT_DELIVERED: recorded as never to be attempted (with `reason`) */
  status: 'PENDING' | 'NOT_DELIVERED'
  reason: string | null
  /** ms; when the first attempt is due */
  dueAt: number
}

/** One attempt to deliver: what the channel answered, or the error. */
export interface AlertDeliveryAttempt {
  /** 1 for the first */
  attempt: number
  startedAt: string
  durationMs: number
  /** HTTP status, or the SMTP reply code; null when no answer came */
  statusCode: number | null
  error: string | null
  /** DELIVERED, RETRY (another attempt follows) or FAILED (none follows) */
  outcome: 'DELIVERED' | 'RETRY' | 'FAILED'
}

export interface AlertDeliveryRecord {
  id: string
  notificationId: string
  checkId: string
  alertType: AlertNotificationKind
  channelType: AlertChannelType
  channel: Record<string, unknown>
  event: Record<string, unknown>
  status: AlertDeliveryStatus
  reason: string | null
  /** ms; the next attempt of a PENDING delivery, else null */
  nextAttemptAt: number | null
  /** oldest first */
  attempts: AlertDeliveryAttempt[]
  created_at: string
  updated_at: string | null
}

/** A PENDING delivery claimed by one sender until `leaseExpiresAt` (ms). */
export interface ClaimedAlertDelivery {
  id: string
  account: string
  checkId: string
  alertType: AlertNotificationKind
  channelType: AlertChannelType
  channel: Record<string, unknown>
  event: Record<string, unknown>
  /** attempts made before this claim */
  attempts: number
  leaseExpiresAt: number
}

export interface AlertDeliveryQuery {
  checkId?: string
  notificationId?: string
  limit: number
  offset: number
}

/** The notifications GET /v1/alert-notifications lists: every filter given narrows them. */
export interface AlertNotificationQuery {
  /** of one check */
  checkId?: string
  /** recorded at or after this time (ISO date-time) */
  from?: string
  /** recorded before this time (ISO date-time) */
  to?: string
  /** with a delivery to this channel of the account */
  alertChannelId?: number
  /** true: a delivery of it failed (FAILED, or NOT_DELIVERED); false: none did */
  hasFailures?: boolean
  limit: number
  offset: number
}

export interface AlertDeliveryStore {
  /** writes deliveries (call it in the transaction that records their notification) */
  enqueue(account: string, deliveries: NewAlertDelivery[]): Promise<void>
  /** claims due PENDING deliveries atomically: each is held by one owner until its lease ends */
  claim(query: { owner: string; max: number; leaseMs: number; now: number }): Promise<ClaimedAlertDelivery[]>
  /**
   * Records an attempt of a delivery the owner holds and moves it on (PENDING again with the
   * next attempt's time, or finished); the lease ends. False when the claim was lost.
   */
  recordAttempt(owner: string, id: string, attempt: AlertDeliveryAttempt, next: { status: AlertDeliveryStatus; nextAttemptAt: number | null }): Promise<boolean>
  /** finishes a held delivery without an attempt (e.g. NOT_DELIVERED: no SMTP server) */
  finish(owner: string, id: string, status: AlertDeliveryStatus, reason: string): Promise<boolean>
  /** gives a held delivery back unattempted, due at once (the sender is stopping) */
  release(owner: string, id: string): Promise<void>
  /** newest first */
  list(account: string, query: AlertDeliveryQuery): Promise<Page<AlertDeliveryRecord>>
  /**
   * The deliveries kept, by account and status (the metrics' outbox depth and failures); only
   * `account`'s when given
   */
  counts(account?: string): Promise<Array<{ account: string; status: AlertDeliveryStatus; count: number }>>
  get(account: string, id: string): Promise<AlertDeliveryRecord | undefined>
  /** notifications, newest first, filtered (AlertNotificationQuery) */
  notifications(account: string, query: AlertNotificationQuery): Promise<Page<AlertNotificationRecord>>
  /** the deliveries of these notifications, oldest first */
  ofNotifications(account: string, notificationIds: string[]): Promise<AlertDeliveryRecord[]>
  /**
   * deletes finished deliveries (and their attempts) created before `before` (ISO), and the
   * notifications recorded before then that have no delivery left; answers how many deliveries
   */
  prune(before: string): Promise<number>
}

// --- end of alert deliveries ----------------------------------------------------------------------
