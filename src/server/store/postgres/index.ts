import { badgeTokenRepository } from './badge-tokens.js'
import pg from 'pg'
import type { Repositories, Store } from '../index.js'
import { UserError } from '../../../errors.js'
import { TYPES, migrate, redactUrl } from './migrations.js'
import { checkRepository } from './checks.js'
import { keyRepository, webSessionRepository } from './keys.js'
import { subscriberRepository } from './subscribers.js'
import { alertChannelRepository, checkGroupRepository, incidentRepository, maintenanceWindowRepository, serviceRepository, statusPageRepository, variableRepository } from './resources.js'
import { snippetRepository } from './snippets.js'
import { alertRepository, checkStatusRepository, errorGroupRepository } from './results.js'
import { heartbeatRepository } from './heartbeats.js'
import { agentRepository, resultRepository, runRepository, scheduleRepository, sessionRepository } from './runs.js'
import { rateWindowRepository } from './rate-windows.js'
import { alertDeliveryRepository } from './alerts-deliveries.js'
import { analyticsRepository } from './analytics.js'
import { unavailableOr } from './errors.js'

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

/** A statement's answer; a database that went away is StoreUnavailable (see errors.ts). */
async function query(client: pg.PoolClient | pg.Pool, text: string, values?: unknown[]): Promise<pg.QueryResult> {
  try {
    return await client.query(text, values?.map(encodeParam))
  } catch (error) {
    throw unavailableOr(error)
  }
}

function clientSql(client: pg.PoolClient | pg.Pool, atomic: Sql['atomic']): Sql {
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
async function checkOut(pool: pg.Pool): Promise<{ client: pg.PoolClient; release: (broken: boolean) => void }> {
  let client: pg.PoolClient
  try {
    client = await pool.connect()
  } catch (error) {
    throw unavailableOr(error)
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

async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
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
      throw unavailableOr(error)
    } finally {
      release(broken)
    }
  }
}

function repositories(sql: Sql): Repositories {
  return {
    checks: checkRepository(sql),
    variables: variableRepository(sql),
    services: serviceRepository(sql),
    statusPages: statusPageRepository(sql),
    maintenanceWindows: maintenanceWindowRepository(sql),
    snippets: snippetRepository(sql),
    alertChannels: alertChannelRepository(sql),
    checkGroups: checkGroupRepository(sql),
    incidents: incidentRepository(sql),
    keys: keyRepository(sql),
    webSessions: webSessionRepository(sql),
    subscribers: subscriberRepository(sql),
    badgeTokens: badgeTokenRepository(sql),
    checkStatuses: checkStatusRepository(sql),
    errorGroups: errorGroupRepository(sql),
    alerts: alertRepository(sql),
    heartbeats: heartbeatRepository(sql),
    runs: runRepository(sql),
    results: resultRepository(sql),
    sessions: sessionRepository(sql),
    agents: agentRepository(sql),
    schedule: scheduleRepository(sql),
    alertDeliveries: alertDeliveryRepository(sql),
    analytics: analyticsRepository(sql),
  }
}

/**
 * The Store on PostgreSQL, for several server processes on one database. Statements go to a
 * pool of connections; a transaction checks one connection out for its whole length, so other
 * requests of the process go on meanwhile. Nothing is kept in memory: every answer is read
 * from the database, so what another server writes is seen at once.
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
  private closed = false

  constructor(readonly pool: pg.Pool) {
    const sql = clientSql(pool, (fn) => inTransaction(pool, (client) => fn(transactionSql(client))))
    const repos = repositories(sql)
    this.checks = repos.checks
    this.variables = repos.variables
    this.services = repos.services
    this.statusPages = repos.statusPages
    this.maintenanceWindows = repos.maintenanceWindows
    this.snippets = repos.snippets
    this.alertChannels = repos.alertChannels
    this.checkGroups = repos.checkGroups
    this.incidents = repos.incidents
    this.keys = repos.keys
    this.webSessions = repos.webSessions
    this.subscribers = repos.subscribers
    this.badgeTokens = repos.badgeTokens
    this.checkStatuses = repos.checkStatuses
    this.errorGroups = repos.errorGroups
    this.alerts = repos.alerts
    this.heartbeats = repos.heartbeats
    this.runs = repos.runs
    this.results = repos.results
    this.sessions = repos.sessions
    this.agents = repos.agents
    this.schedule = repos.schedule
    this.alertDeliveries = repos.alertDeliveries
    this.analytics = repos.analytics
    this.rateWindows = rateWindowRepository(sql)
  }

  /** One connection for the whole of fn (READ COMMITTED, rows locked as the repositories read them). */
  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, (client) => fn(repositories(transactionSql(client))))
  }

  async ping(): Promise<void> {
    await query(this.pool, 'SELECT 1')
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.pool.end()
  }
}

function transactionSql(client: pg.PoolClient): Sql {
  const sql: Sql = clientSql(client, (fn) => fn(sql))
  return sql
}

/** Connects to the database at `url`, and brings its schema up to date. */
export async function openPostgresStore(url: string, options: { max?: number } = {}): Promise<PostgresStore> {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, types: TYPES, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 10_000 })
  // a connection that breaks while idle (the database restarted) is dropped, not thrown at the process
  pool.on('error', () => undefined)
  try {
    await migrate(pool)
  } catch (error) {
    await pool.end().catch(() => undefined)
    if (error instanceof UserError) throw error
    const code = (error as { code?: string }).code
    const message = (error as Error).message
    throw new UserError(`Cannot open the PostgreSQL database ${redactUrl(url)}: ${code && !/^\d/.test(code) ? `${code} ` : ''}${message}`)
  }
  return new PostgresStore(pool)
}

export { MIGRATIONS, redactUrl } from './migrations.js'
