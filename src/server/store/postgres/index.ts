import { badgeTokenRepository } from './badge-tokens.js'
import pg from 'pg'
import type { PoolStats, Repositories, Store } from '../index.js'
import { UserError } from '../../../errors.js'
import { MIGRATIONS, TYPES, migrate, redactUrl } from './migrations.js'
import { checkRepository } from './checks.js'
import { keyRepository, webSessionRepository } from './keys.js'
import { subscriberRepository } from './subscribers.js'
import { incidentRepository, serviceRepository, statusPageRepository, variableRepository } from './resources.js'
import { jsonBodyRepository } from './json-body.js'
import { JSON_BODY_TABLES } from '../json-body-rows.js'
import { privateLocationRepository } from './private-locations.js'
import { alertRepository, checkStatusRepository, errorGroupRepository } from './results.js'
import { heartbeatRepository } from './heartbeats.js'
import { agentRepository, resultRepository, runRepository, scheduleRepository, sessionRepository } from './runs.js'
import { rateWindowRepository } from './rate-windows.js'
import { alertDeliveryRepository } from './alerts-deliveries.js'
import { analyticsRepository } from './analytics.js'
import { storeError, type NamedPool } from './errors.js'
import { systemClock, type Clock } from '../../../runner/clock.js'

/**
 * Where the repositories send their statements: the pool (each statement on any free
 * connection) or the one connection of a transaction. `atomic` runs several statements as
 * one: in a transaction of its own on the pool, as part of the open one on a transaction's
 * connection.
 */
export interface Sql {
  rows<R>(text: string, values?: unknown[]): Promise<R[]>
  /** rows changed */
  run(text: string, values?: unknown[]): Promise<number>
  atomic<T>(fn: (sql: Sql) => Promise<T>): Promise<T>
}

/** Errors the database answers when two transactions got in each other's way: the whole transaction may be tried again. */
const RETRYABLE = new Set(['40001', '40P01'])

/*
 * PostgreSQL's text cannot hold U+0000, which the API accepts in any string (SQLite keeps it).
 * Strings go in and come out through an escape that keeps equality and uniqueness: U+0000 is
 * stored as U+E000 U+E002, and U+E000 itself as U+E000 U+E001. JSON bodies are stored as
 * JSON.stringify writes them, where U+0000 is already the six characters "\u0000".
 */
const ESCAPE = '\uE000'
const encode = (value: string): string =>
  value.includes('\0') || value.includes(ESCAPE) ? value.replaceAll(ESCAPE, '\uE000\uE001').replaceAll('\0', '\uE000\uE002') : value
const decode = (value: string): string =>
  value.includes(ESCAPE) ? value.replace(/\uE000([\uE001\uE002])/g, (_, c: string) => (c === '\uE001' ? ESCAPE : '\0')) : value

function encodeParam(value: unknown): unknown {
  if (typeof value === 'string') return encode(value)
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? encode(v) : v))
  return value
}

function decodeRow<R>(row: Record<string, unknown>): R {
  for (const key in row) {
    const value = row[key]
    if (typeof value === 'string' && value.includes(ESCAPE)) row[key] = decode(value)
  }
  return row as R
}

/** A pg pool with the name and size its errors and metrics give. */
export interface Pool extends NamedPool {
  pg: pg.Pool
}

/**
 * A statement's answer, on a pool's free connection or a transaction's; a database that went
 * away is StoreUnavailable, a pool whose connections all stayed busy StorePoolSaturated (see errors.ts).
 */
async function query(client: pg.PoolClient | Pool, text: string, values?: unknown[]): Promise<pg.QueryResult> {
  const onPool = 'pg' in client
  try {
    return await (onPool ? client.pg : client).query(text, values?.map(encodeParam))
  } catch (error) {
    throw storeError(error, onPool ? client : undefined)
  }
}

function clientSql(client: pg.PoolClient | Pool, atomic: Sql['atomic']): Sql {
  return {
    rows: async <R>(text: string, values?: unknown[]) => (await query(client, text, values)).rows.map((row) => decodeRow<R>(row)),
    run: async (text, values) => (await query(client, text, values)).rowCount ?? 0,
    atomic,
  }
}

/**
 * A connection of the pool for one transaction. While it is checked out the pool no longer
 * listens for its errors: a connection the database ends meanwhile (a restart: 57P01) would
 * emit an 'error' nobody handles, and that ends the process. It gets a listener of its own until
 * it is released, and a connection that failed is released as broken (closed, not reused).
 */
async function checkOut(pool: Pool): Promise<{ client: pg.PoolClient; release: (broken: boolean) => void }> {
  let client: pg.PoolClient
  try {
    client = await pool.pg.connect()
  } catch (error) {
    throw storeError(error, pool)
  }
  let failed: Error | undefined
  const onError = (error: Error) => {
    failed = error
  }
  client.on('error', onError)
  return {
    client,
    release: (broken) => {
      client.removeListener('error', onError)
      client.release(failed ?? broken)
    },
  }
}

async function inTransaction<T>(pool: Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const { client, release } = await checkOut(pool)
    let broken = false
    try {
      await query(client, 'BEGIN')
      const result = await fn(client)
      await query(client, 'COMMIT')
      return result
    } catch (error) {
      try {
        await client.query('ROLLBACK')
      } catch {
        // the connection is gone (the database rolls the transaction back itself): not reused
        broken = true
      }
      if (attempt < 3 && RETRYABLE.has((error as { code?: string }).code ?? '')) continue
      throw storeError(error)
    } finally {
      release(broken)
    }
  }
}

function repositories(sql: Sql, clock: Clock): Repositories {
  return {
    checks: checkRepository(sql, clock),
    variables: variableRepository(sql, clock),
    services: serviceRepository(sql, clock),
    statusPages: statusPageRepository(sql, clock),
    maintenanceWindows: jsonBodyRepository(sql, clock, JSON_BODY_TABLES.maintenanceWindows),
    snippets: jsonBodyRepository(sql, clock, JSON_BODY_TABLES.snippets),
    alertChannels: jsonBodyRepository(sql, clock, JSON_BODY_TABLES.alertChannels),
    checkGroups: jsonBodyRepository(sql, clock, JSON_BODY_TABLES.checkGroups),
    incidents: incidentRepository(sql, clock),
    keys: keyRepository(sql, clock),
    webSessions: webSessionRepository(sql),
    subscribers: subscriberRepository(sql),
    badgeTokens: badgeTokenRepository(sql),
    privateLocations: privateLocationRepository(sql, clock),
    checkStatuses: checkStatusRepository(sql, clock),
    errorGroups: errorGroupRepository(sql),
    alerts: alertRepository(sql, clock),
    heartbeats: heartbeatRepository(sql),
    runs: runRepository(sql),
    results: resultRepository(sql, clock),
    sessions: sessionRepository(sql),
    agents: agentRepository(sql),
    schedule: scheduleRepository(sql),
    alertDeliveries: alertDeliveryRepository(sql, clock),
    analytics: analyticsRepository(sql, clock),
  }
}

/**
 * The Store on PostgreSQL, for several server processes on one database. Statements go to a
 * pool of connections (`--db-pool-size`, default 10); a transaction checks one connection out
 * for its whole length, so other requests of the process go on meanwhile. The statements that
 * must never wait behind those have small pools of their own: lease extensions and the
 * readiness ping (LEASE_POOL_SIZE), key look-ups and the rate limit's count (AUTH_POOL_SIZE),
 * so a server whose main pool is saturated still keeps its leases, authenticates and says it is
 * ready, and a burst of requests does not delay a lease. Nothing is kept in
 * memory: every answer is read from the database, so what another server writes is seen at once.
 */
export class PostgresStore implements Store {
  readonly checks
  readonly variables
  readonly services
  readonly statusPages
  readonly maintenanceWindows
  readonly snippets
  readonly alertChannels
  readonly checkGroups
  readonly incidents
  readonly keys
  readonly webSessions
  readonly subscribers
  readonly badgeTokens
  readonly privateLocations
  readonly checkStatuses
  readonly errorGroups
  readonly alerts
  readonly heartbeats
  readonly runs
  readonly results
  readonly sessions
  readonly agents
  readonly schedule
  readonly alertDeliveries
  readonly analytics
  /** the rate limit's windows, shared by every server on the database */
  readonly rateWindows
  /**
   * a group commit's rows stay locked until its last run is written, and another server's (or
   * an agent's) result of the same check waits for them: small groups
   */
  readonly maxGroupCommit = 8
  /** groups recorded at once: their rows are taken in one order, so they wait on each other briefly, never deadlock */
  readonly commitConcurrency = 4
  private closed = false
  /** the pool of the lease extensions and readiness */
  private readonly leaseSql: Sql

  constructor(
    readonly pool: Pool,
    readonly leasePool: Pool,
    readonly authPool: Pool,
    private readonly clock: Clock,
  ) {
    const onPool = (p: Pool): Sql => clientSql(p, (fn) => inTransaction(p, (client) => fn(transactionSql(client))))
    const sql = onPool(pool)
    this.leaseSql = onPool(leasePool)
    const authSql = onPool(authPool)
    const repos = repositories(sql, clock)
    const lease = repositories(this.leaseSql, clock)
    const auth = repositories(authSql, clock)
    this.checks = repos.checks
    this.variables = repos.variables
    this.services = repos.services
    this.statusPages = repos.statusPages
    this.maintenanceWindows = repos.maintenanceWindows
    this.snippets = repos.snippets
    this.alertChannels = repos.alertChannels
    this.checkGroups = repos.checkGroups
    this.incidents = repos.incidents
    this.keys = { ...repos.keys, find: auth.keys.find, touch: auth.keys.touch }
    this.webSessions = repos.webSessions
    this.subscribers = repos.subscribers
    this.badgeTokens = repos.badgeTokens
    this.privateLocations = repos.privateLocations
    this.checkStatuses = repos.checkStatuses
    this.errorGroups = repos.errorGroups
    this.alerts = repos.alerts
    this.heartbeats = repos.heartbeats
    this.runs = { ...repos.runs, extend: lease.runs.extend }
    this.results = repos.results
    this.sessions = repos.sessions
    this.agents = repos.agents
    this.schedule = repos.schedule
    this.alertDeliveries = repos.alertDeliveries
    this.analytics = repos.analytics
    this.rateWindows = rateWindowRepository(authSql)
  }

  /** One connection for the whole of fn (READ COMMITTED, rows locked as the repositories read them). */
  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, (client) => fn(repositories(transactionSql(client), this.clock)))
  }

  /** A statement on the lease pool: it answers, or the database is away (the main pool's load does not count). */
  async ping(): Promise<void> {
    await this.leaseSql.run('SELECT 1')
  }

  poolStats(): PoolStats[] {
    return [this.pool, this.authPool, this.leasePool].map((p) => ({
      pool: p.name,
      size: p.size,
      total: p.pg.totalCount,
      idle: p.pg.idleCount,
      waiting: p.pg.waitingCount,
      saturated: p.saturated,
    }))
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await Promise.all([this.pool.pg.end(), this.authPool.pg.end(), this.leasePool.pg.end()])
  }
}

function transactionSql(client: pg.PoolClient): Sql {
  const sql: Sql = clientSql(client, (fn) => fn(sql))
  return sql
}

/** Connections of the main pool by default (`--db-pool-size`). */
export const DEFAULT_POOL_SIZE = 10
/** Connections of the pool of lease extensions and readiness. */
export const LEASE_POOL_SIZE = 2
/** Connections of the pool of key look-ups and the rate limit's count (one or two statements a request). */
export const AUTH_POOL_SIZE = 3
/** How long a statement waits for a free connection (and a new connection for the database) before the pool counts as saturated, ms. */
export const DEFAULT_POOL_WAIT_MS = 10_000

export interface PostgresOptions {
  /** connections of the main pool (default 10) */
  poolSize?: number
  /** wait for a free connection, ms (default 10,000) */
  poolWaitMs?: number
  /** the server's clock, of the rows' times (default the system's) */
  clock?: Clock
}

function makePool(url: string, name: string, size: number, waitMs: number): Pool {
  const pool = new pg.Pool({ connectionString: url, max: size, types: TYPES, idleTimeoutMillis: 30_000, connectionTimeoutMillis: waitMs })
  // a connection that breaks while idle (the database restarted) is dropped, not thrown at the process
  pool.on('error', () => undefined)
  return { pg: pool, name, size, waitMs, saturated: 0 }
}

/** Connects to the database at `url`, and brings its schema up to date. */
export async function openPostgresStore(url: string, options: PostgresOptions = {}): Promise<PostgresStore> {
  const size = options.poolSize ?? DEFAULT_POOL_SIZE
  const clock = options.clock ?? systemClock
  if (!Number.isInteger(size) || size < 1 || size > 1000) throw new UserError(`The database pool size must be a whole number from 1 to 1000, got ${size}`)
  const waitMs = options.poolWaitMs ?? DEFAULT_POOL_WAIT_MS
  const pool = makePool(url, 'main', size, waitMs)
  try {
    await migrate(pool.pg, MIGRATIONS, clock)
  } catch (error) {
    await pool.pg.end().catch(() => undefined)
    if (error instanceof UserError) throw error
    const code = (error as { code?: string }).code
    const message = (error as Error).message
    throw new UserError(`Cannot open the PostgreSQL database ${redactUrl(url)}: ${code && !/^\d/.test(code) ? `${code} ` : ''}${message}`)
  }
  return new PostgresStore(pool, makePool(url, 'lease', LEASE_POOL_SIZE, waitMs), makePool(url, 'auth', AUTH_POOL_SIZE, waitMs), clock)
}

export { MIGRATIONS, redactUrl } from './migrations.js'
