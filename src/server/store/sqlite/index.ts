import { badgeTokenRepository } from './badge-tokens.js'
import type { Db } from './migrations.js'
import { openDatabase } from './migrations.js'
import { StoreUnavailable, type CheckPage, type Repositories, type Store } from '../index.js'
import { checkRepository } from './checks.js'
import { keyRepository, webSessionRepository } from './keys.js'
import { subscriberRepository } from './subscribers.js'
import { incidentRepository, serviceRepository, statusPageRepository, variableRepository } from './resources.js'
import { jsonBodyRepository } from './json-body.js'
import { JSON_BODY_TABLES } from '../json-body-rows.js'
import { privateLocationRepository } from './private-locations.js'
import { PageCache } from './page-cache.js'
import { alertRepository, checkStatusRepository, errorGroupRepository } from './results.js'
import { heartbeatRepository } from './heartbeats.js'
import { alertDeliveryRepository } from './alerts-deliveries.js'
import { analyticsRepository } from './analytics.js'
import { agentRepository, resultRepository, runRepository, scheduleRepository, sessionRepository } from './runs.js'
import { isUnavailable, unavailableOr } from './errors.js'
import { systemClock, type Clock } from '../../../runner/clock.js'

/** Runs a group of statements; asynchronous to the routes, synchronous underneath. */
export type Exec = <T>(fn: () => T) => Promise<T>

/**
 * One connection serves every request. better-sqlite3 is synchronous, so a statement group
 * never interleaves with another; a transaction spans awaits, though, so while one is open
 * every other call waits for it (else it would see, or add to, uncommitted work).
 */
class Gate {
  private held: Promise<void> | undefined

  run: Exec = (fn) => {
    if (this.held) return this.held.then(() => this.run(fn))
    try {
      return Promise.resolve(fn())
    } catch (error) {
      // busy beyond the timeout, disk full, not writable: StoreUnavailable (see errors.ts)
      return Promise.reject(unavailableOr(error))
    }
  }

  async hold<T>(fn: () => Promise<T>): Promise<T> {
    while (this.held) await this.held
    let release!: () => void
    this.held = new Promise((resolve) => (release = resolve))
    try {
      return await fn()
    } finally {
      this.held = undefined
      release()
    }
  }
}

const direct: Exec = async (fn) => fn()

/** Check list pages kept while the database is unchanged: at most 32 MiB, none above 4 MiB. */
const LIST_CACHE = { maxBytes: 32 * 1024 * 1024, maxEntryBytes: 4 * 1024 * 1024 }

export class SqliteStore implements Store {
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
  private readonly gate = new Gate()
  private readonly tx: Repositories

  constructor(
    readonly db: Db,
    clock: Clock = systemClock,
  ) {
    const run = this.gate.run
    const cache = new PageCache<CheckPage & { bytes: number }>(LIST_CACHE.maxBytes, LIST_CACHE.maxEntryBytes)
    const checkWrites = { count: 0 }
    this.checks = checkRepository(db, run, clock, cache, { groupCommit: true, writes: checkWrites })
    this.variables = variableRepository(db, run, clock)
    this.services = serviceRepository(db, run, clock)
    this.statusPages = statusPageRepository(db, run, clock)
    this.maintenanceWindows = jsonBodyRepository(db, run, clock, JSON_BODY_TABLES.maintenanceWindows)
    this.snippets = jsonBodyRepository(db, run, clock, JSON_BODY_TABLES.snippets)
    this.alertChannels = jsonBodyRepository(db, run, clock, JSON_BODY_TABLES.alertChannels)
    this.checkGroups = jsonBodyRepository(db, run, clock, JSON_BODY_TABLES.checkGroups)
    this.incidents = incidentRepository(db, run, clock)
    this.keys = keyRepository(db, run, clock)
    this.webSessions = webSessionRepository(db, run)
    this.subscribers = subscriberRepository(db, run)
    this.badgeTokens = badgeTokenRepository(db, run)
    this.privateLocations = privateLocationRepository(db, run, clock)
    this.checkStatuses = checkStatusRepository(db, run, clock)
    this.errorGroups = errorGroupRepository(db, run)
    this.alerts = alertRepository(db, run, clock)
    this.heartbeats = heartbeatRepository(db, run)
    this.runs = runRepository(db, run)
    this.results = resultRepository(db, run, clock)
    this.sessions = sessionRepository(db, run)
    this.agents = agentRepository(db, run)
    this.schedule = scheduleRepository(db, run)
    this.alertDeliveries = alertDeliveryRepository(db, run, clock)
    this.analytics = analyticsRepository(db, run)
    // inside a transaction: the same statements, run at once, and no cached pages
    this.tx = {
      checks: checkRepository(db, direct, clock, undefined, { writes: checkWrites }),
      variables: variableRepository(db, direct, clock),
      services: serviceRepository(db, direct, clock),
      statusPages: statusPageRepository(db, direct, clock),
      maintenanceWindows: jsonBodyRepository(db, direct, clock, JSON_BODY_TABLES.maintenanceWindows),
      snippets: jsonBodyRepository(db, direct, clock, JSON_BODY_TABLES.snippets),
      alertChannels: jsonBodyRepository(db, direct, clock, JSON_BODY_TABLES.alertChannels),
      checkGroups: jsonBodyRepository(db, direct, clock, JSON_BODY_TABLES.checkGroups),
      incidents: incidentRepository(db, direct, clock),
      keys: keyRepository(db, direct, clock),
      webSessions: webSessionRepository(db, direct),
      subscribers: subscriberRepository(db, direct),
      badgeTokens: badgeTokenRepository(db, direct),
      privateLocations: privateLocationRepository(db, direct, clock),
      checkStatuses: checkStatusRepository(db, direct, clock),
      errorGroups: errorGroupRepository(db, direct),
      alerts: alertRepository(db, direct, clock),
      heartbeats: heartbeatRepository(db, direct),
      runs: runRepository(db, direct),
      results: resultRepository(db, direct, clock),
      sessions: sessionRepository(db, direct),
      agents: agentRepository(db, direct),
      schedule: scheduleRepository(db, direct),
      alertDeliveries: alertDeliveryRepository(db, direct, clock),
      analytics: analyticsRepository(db, direct),
    }
  }

  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    return this.gate.hold(async () => {
      // IMMEDIATE takes the write lock now: another process's writer waits (busy_timeout)
      // instead of failing when this transaction's first write would upgrade its read
      this.db.exec('BEGIN IMMEDIATE')
      try {
        const result = await fn(this.tx)
        this.db.exec('COMMIT')
        return result
      } catch (error) {
        try {
          if (this.db.inTransaction) this.db.exec('ROLLBACK')
        } catch (failed) {
          // a file that cannot be written may refuse the rollback too: SQLite undoes the rest on the next open
          throw unavailableOr(isUnavailable(error) ? error : failed)
        }
        throw unavailableOr(error)
      }
    })
  }

  /**
   * Takes the write lock and gives it back, without waiting when another process holds it: a few
   * tries 200 ms apart (the event loop runs between them), then StoreUnavailable.
   */
  async ping(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.gate.run(() => {
          if (!this.db.open) throw new StoreUnavailable('The SQLite database is closed')
          const timeout = this.db.pragma('busy_timeout', { simple: true }) as number
          this.db.pragma('busy_timeout = 0')
          try {
            this.db.exec('BEGIN IMMEDIATE')
            this.db.exec('ROLLBACK')
          } finally {
            this.db.pragma(`busy_timeout = ${timeout}`)
          }
        })
        return
      } catch (error) {
        if (attempt >= 5 || !isUnavailable(error)) throw error
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    }
  }

  async close(): Promise<void> {
    await this.gate.hold(async () => {
      if (this.db.open) this.db.close()
    })
  }
}

/** Opens the SQLite file (':memory:' keeps nothing) and brings its schema up to date. */
export function openSqliteStore(path: string, clock: Clock = systemClock): SqliteStore {
  return new SqliteStore(openDatabase(path), clock)
}

export { MIGRATIONS } from './migrations.js'
