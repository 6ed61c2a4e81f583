import type Database from 'better-sqlite3'
import type { Db } from './migrations.js'
import type { CheckResultRecord } from '../index.js'
import {
  compactId,
  compactRecord,
  DAY_MS,
  dayOf,
  digest,
  parseCompactId,
  partitionDay,
  partitionName,
  PASSING,
  PASSING_SQL,
  shapeOf,
  type CompactValues,
  type TemplateColumns,
  type TemplateHint,
} from '../compact-rows.js'

/*
 * Compact result rows on SQLite (see ../compact-rows.ts): one table per UTC day,
 * result_runs_YYYYMMDD, made by the first row of its day and dropped whole once the day is
 * past the retention. Its rowid is the row's seq (check_results' counter, sqlite_sequence), so
 * a row is its columns and nothing else; one index, (chk), serves a check's list (an index
 * entry is its columns and the rowid: (chk, seq)). `created` is the ms into the table's day.
 *
 * A passing run's row does not name its template: it is the newest passing template of its check
 * and location written before it (seq), which the writer reads in its write transaction. SQLite
 * has one writer at a time, whatever the processes on the file, so no other template can come
 * between. A failing run's row (a failure, an error, a degraded run: see ../compact-rows.ts) is
 * in its day's other table, result_runs_YYYYMMDD_f, and names its template (`tpl`, its seq):
 * passing runs come between failures of a flapping target, and a filter on `hasFailures` reads
 * its template's flag by that key.
 */

/** The table of a day's compact rows of failing runs. */
const failsName = (day: number): string => `${partitionName(day)}_f`
const FAILS = /^(result_runs_\d{8})_f$/

interface TemplateRow {
  seq: number
  status: string
  has_failures: number
  has_errors: number
  is_degraded: number
  error: string | null
  details: string
  created_at: string
}

const columnsOfTemplate = (row: Omit<TemplateRow, 'seq' | 'created_at'>): TemplateColumns => ({
  status: row.status,
  hasFailures: row.has_failures === 1,
  hasErrors: row.has_errors === 1,
  isDegraded: row.is_degraded === 1,
  error: row.error,
  details: row.details,
})

interface CompactRow {
  seq: number
  chk: number
  loc: number
  created: number
  made: number
  dur: number
  rt: number | null
  /** a failing run's: its template's seq */
  tpl?: number
}

/** What one database's compact rows share across the store's repositories (its caches). */
const shared = new WeakMap<Db, CompactResults>()

export function compactResults(db: Db): CompactResults {
  let found = shared.get(db)
  if (!found) shared.set(db, (found = new CompactResults(db)))
  return found
}

export class CompactResults {
  private readonly days = new Set<number>()
  private readonly failDays = new Set<number>()
  private readonly locations = new Map<string, number>()
  private readonly locationNames = new Map<number, string>()
  private readonly statements = new Map<string, Database.Statement>()
  private readonly nextSeq: Database.Statement
  private readonly latestTemplate: Database.Statement
  private readonly latestFailing: Database.Statement
  private readonly templateBefore: Database.Statement
  private readonly templateBySeq: Database.Statement
  private readonly digests = new Map<number, string>()
  private readonly locationId: Database.Statement
  private readonly addLocation: Database.Statement
  private readonly allLocations: Database.Statement
  private readonly tables: Database.Statement
  private readonly cutoffOf: Database.Statement

  constructor(private readonly db: Db) {
    this.nextSeq = db.prepare(`UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'check_results' RETURNING seq`).pluck()
    const columns = 'seq, status, has_failures, has_errors, is_degraded, error, details, created_at'
    this.latestTemplate = db.prepare(`SELECT ${columns} FROM check_results
      WHERE check_id = ? AND run_location = ? AND is_template AND ${PASSING_SQL} ORDER BY seq DESC LIMIT 1`)
    this.latestFailing = db.prepare(`SELECT ${columns} FROM check_results
      WHERE check_id = ? AND run_location = ? AND is_template AND NOT ${PASSING_SQL} ORDER BY seq DESC LIMIT 1`)
    this.templateBefore = db.prepare(`SELECT seq, details FROM check_results
      WHERE check_id = ? AND run_location = ? AND is_template AND ${PASSING_SQL} AND seq < ? ORDER BY seq DESC LIMIT 1`)
    this.templateBySeq = db.prepare(`SELECT ${columns} FROM check_results WHERE seq = ?`)
    this.locationId = db.prepare(`SELECT id FROM result_locations WHERE name = ?`).pluck()
    this.addLocation = db.prepare(`INSERT INTO result_locations (name) VALUES (?) ON CONFLICT (name) DO NOTHING`)
    this.allLocations = db.prepare(`SELECT id, name FROM result_locations`)
    this.tables = db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'result_runs_*'`).pluck()
    this.cutoffOf = db.prepare(`SELECT cutoff_ms FROM result_retention WHERE id = 1`).pluck()
  }

  private statement(sql: string): Database.Statement {
    let found = this.statements.get(sql)
    if (!found) {
      if (this.statements.size > 500) this.statements.clear()
      this.statements.set(sql, (found = this.db.prepare(sql)))
    }
    return found
  }

  /** Results that stopped before this time (ms) are no longer answered. */
  cutoff(): number {
    return (this.cutoffOf.get() as number | undefined) ?? 0
  }

  /** The days that have a table, oldest first, with the kinds of rows they have tables of. */
  private tablesByDay(): Map<number, { runs: boolean; fails: boolean }> {
    const out = new Map<number, { runs: boolean; fails: boolean }>()
    for (const name of this.tables.all() as string[]) {
      const fails = FAILS.exec(name)
      const day = partitionDay(fails ? fails[1] : name)
      if (day === undefined) continue
      const kinds = out.get(day) ?? { runs: false, fails: false }
      kinds[fails ? 'fails' : 'runs'] = true
      out.set(day, kinds)
    }
    return new Map([...out].sort((a, b) => a[0] - b[0]))
  }

  /** The days that have a table (of either kind), oldest first. */
  partitions(): number[] {
    return [...this.tablesByDay().keys()]
  }

  /**
   * The newest template of a check and location of a kind (passing, or not: failing, erring or
   * degraded): its seq, its UTC day and the digest of its shape (compact-rows.ts shapeOf).
   */
  template(checkId: string, location: string, passing = true): TemplateHint | undefined {
    const row = (passing ? this.latestTemplate : this.latestFailing).get(checkId, location) as TemplateRow | undefined
    if (!row) return undefined
    let hash = this.digests.get(row.seq)
    if (hash === undefined) {
      if (this.digests.size > 100_000) this.digests.clear()
      const columns = columnsOfTemplate(row)
      this.digests.set(row.seq, (hash = digest(shapeOf(columns, row.details))))
    }
    return { seq: row.seq, day: dayOf(Date.parse(row.created_at)), digest: hash }
  }

  private location(name: string): number {
    let id = this.locations.get(name)
    if (id === undefined) {
      this.addLocation.run(name)
      id = this.locationId.get(name) as number
      this.locations.set(name, id)
      this.locationNames.set(id, name)
    }
    return id
  }

  private locationName(id: number): string {
    let name = this.locationNames.get(id)
    if (name === undefined) {
      for (const row of this.allLocations.all() as Array<{ id: number; name: string }>) this.locationNames.set(row.id, row.name)
      name = this.locationNames.get(id) ?? 'unknown'
    }
    return name
  }

  /** Makes a day's table of passing runs' rows, or (`fails`) of failing runs' rows, unless made already. */
  private ensure(day: number, fails = false): string {
    const name = fails ? failsName(day) : partitionName(day)
    const made = fails ? this.failDays : this.days
    if (!made.has(day)) {
      this.db.exec(`CREATE TABLE IF NOT EXISTS ${name} (
        seq INTEGER PRIMARY KEY, chk INTEGER NOT NULL, loc INTEGER NOT NULL,${fails ? ' tpl INTEGER NOT NULL,' : ''}
        created INTEGER NOT NULL, made INTEGER NOT NULL, dur INTEGER NOT NULL, rt INTEGER);
        CREATE INDEX IF NOT EXISTS ${name}_chk ON ${name} (chk);`)
      made.add(day)
    }
    return name
  }

  /**
   * Writes a compact row (inside the caller's transaction); answers its record's id. `template`:
   * a failing run's template's seq (its row goes to the day's table of failing runs).
   */
  insert(record: CheckResultRecord, checkSeq: number, values: CompactValues, template?: number): string {
    const created = values.started + values.dur + values.made
    const day = dayOf(created)
    const fails = template !== undefined
    const name = this.ensure(day, fails)
    const seq = this.nextSeq.get() as number
    const params = [seq, checkSeq, this.location(record.runLocation), ...(fails ? [template] : []), created - day * DAY_MS, values.made, values.dur, values.rt]
    const sql = fails
      ? `INSERT INTO ${name} (seq, chk, loc, tpl, created, made, dur, rt) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
      : `INSERT INTO ${name} (seq, chk, loc, created, made, dur, rt) VALUES (?, ?, ?, ?, ?, ?, ?)`
    try {
      this.statement(sql).run(...params)
    } catch (error) {
      // the day's table was dropped by another process (a clock far behind the retention)
      if (!/no such table/.test(String((error as Error).message))) throw error
      ;(fails ? this.failDays : this.days).delete(day)
      this.ensure(day, fails)
      this.statement(sql).run(...params)
    }
    return compactId(created, seq)
  }

  /**
   * What a compact row takes from its template: a failing run's, the row its `tpl` names; a
   * passing run's, the details of the newest passing template of its check and location before it.
   */
  private templateOf(checkId: string, location: string, row: CompactRow): TemplateColumns {
    if (row.tpl !== undefined && row.tpl !== null) {
      const found = this.templateBySeq.get(row.tpl) as TemplateRow | undefined
      return found ? columnsOfTemplate(found) : { ...PASSING, details: '{}' }
    }
    const found = this.templateBefore.get(checkId, location, row.seq) as { seq: number; details: string } | undefined
    return { ...PASSING, details: found?.details ?? '{}' }
  }

  private record(row: CompactRow, day: number, checkId: string): CheckResultRecord {
    const created = day * DAY_MS + row.created
    const stopped = created - row.made
    const location = this.locationName(row.loc)
    return compactRecord(
      {
        seq: row.seq,
        checkId,
        location,
        started: stopped - row.dur,
        dur: row.dur,
        made: row.made,
        rt: row.rt,
      },
      this.templateOf(checkId, location, row),
    )
  }

  /** A compact row by its id, when it is the account's and inside the retention. */
  get(account: string, id: string): CheckResultRecord | undefined {
    const parsed = parseCompactId(id)
    if (!parsed) return undefined
    const day = dayOf(parsed.created)
    const kinds = this.tablesByDay().get(day)
    if (!kinds) return undefined
    const find = (name: string) =>
      this.statement(`SELECT r.*, c.id AS check_id FROM ${name} r JOIN checks c ON c.seq = r.chk
      WHERE r.seq = ? AND c.account_id = ?`).get(parsed.seq, account) as (CompactRow & { check_id: string }) | undefined
    const row = (kinds.runs ? find(partitionName(day)) : undefined) ?? (kinds.fails ? find(failsName(day)) : undefined)
    if (!row || day * DAY_MS + row.created !== parsed.created || day * DAY_MS + row.created - row.made < this.cutoff()) return undefined
    return this.record(row, day, row.check_id)
  }

  /**
   * The SQL of a check's compact rows in each day's tables inside the retention: `seq`, `day` and
   * `f` (1: a failing run's row), for a union. With `@loc` (a location's key) of that location
   * only; with `@from` and `@to` (ms), started in that range (a compact row started before it was
   * created: a day that ends before `from` holds none); with `failures` (`@failures`, 0 or 1),
   * those whose `hasFailures` is that: no passing run has failures, a failing run's is its template's.
   */
  parts(cutoff: number, filter: { location?: boolean; from?: number; to?: number; failures?: boolean } = {}): string[] {
    const out: string[] = []
    for (const [day, kinds] of this.tablesByDay()) {
      if ((day + 1) * DAY_MS <= cutoff || (filter.from !== undefined && (day + 1) * DAY_MS <= filter.from)) continue
      const where = [
        `chk = @chk AND created - made >= @cutoff - ${day * DAY_MS}`,
        filter.location ? ' AND loc = @loc' : '',
        filter.from !== undefined ? ` AND created - made - dur >= @from - ${day * DAY_MS}` : '',
        filter.to !== undefined ? ` AND created - made - dur < @to - ${day * DAY_MS}` : '',
      ].join('')
      if (kinds.runs && filter.failures !== true) out.push(`SELECT seq, ${day} AS day, 0 AS f FROM ${partitionName(day)} WHERE ${where}`)
      if (kinds.fails) {
        const failures = filter.failures === undefined ? '' : ' AND (SELECT t.has_failures FROM check_results t WHERE t.seq = tpl) = @failures'
        out.push(`SELECT seq, ${day} AS day, 1 AS f FROM ${failsName(day)} WHERE ${where}${failures}`)
      }
    }
    return out
  }

  /** A location's key among compact rows; undefined when no compact row ever ran there. */
  locationKey(name: string): number | undefined {
    if (!this.locations.has(name)) {
      const id = this.locationId.get(name) as number | undefined
      if (id === undefined) return undefined
      this.locations.set(name, id)
      this.locationNames.set(id, name)
    }
    return this.locations.get(name)
  }

  /** The compact rows of these (seq, day, f) rows of parts(), of one check. */
  rows(pairs: Array<{ seq: number; day: number; f: number }>, checkId: string): Map<number, CheckResultRecord> {
    const out = new Map<number, CheckResultRecord>()
    for (const { seq, day, f } of pairs) {
      const row = this.statement(`SELECT * FROM ${f === 1 ? failsName(day) : partitionName(day)} WHERE seq = ?`).get(seq) as CompactRow | undefined
      if (row) out.set(seq, this.record(row, day, checkId))
    }
    return out
  }

  run<T>(sql: string, params: Record<string, unknown>, how: 'all' | 'get'): T {
    const statement = this.statement(sql)
    return (how === 'all' ? statement.all(params) : statement.get(params)) as T
  }

  /** Sets the cutoff and drops the tables of days wholly before it (not counted: a drop does not read its rows). */
  drop(before: number): void {
    this.db.prepare(`UPDATE result_retention SET cutoff_ms = ? WHERE id = 1`).run(before)
    for (const [day, kinds] of this.tablesByDay()) {
      if ((day + 1) * DAY_MS > before) continue
      if (kinds.runs) this.db.exec(`DROP TABLE ${partitionName(day)}`)
      if (kinds.fails) this.db.exec(`DROP TABLE ${failsName(day)}`)
      this.days.delete(day)
      this.failDays.delete(day)
    }
  }
}
