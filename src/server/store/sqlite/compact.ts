import type Database from 'better-sqlite3'
import type { Db } from './migrations.js'
import type { CheckResultRecord } from '../index.js'
import {
  compactId, compactRecord, DAY_MS, dayOf, digest, parseCompactId, partitionDay, partitionName,
  type CompactValues, type TemplateHint,
} from '../compact-rows.js'

/*
 * Compact result rows on SQLite (see ../compact-rows.ts): one table per UTC day,
 * result_runs_YYYYMMDD, made by the first row of its day and dropped whole once the day is
 * past the retention. Its rowid is the row's seq (check_results' counter, sqlite_sequence), so
 * a row is its columns and nothing else; one index, (chk), serves a check's list (an index
 * entry is its columns and the rowid: (chk, seq)). `created` is the ms into the table's day.
 *
 * A row does not name its template: it is the newest template of its check and location
 * written before it (seq), which the writer reads in its write transaction. SQLite has one
 * writer at a time, whatever the processes on the file, so no other template can come between.
 */

interface CompactRow {
  seq: number
  chk: number
  loc: number
  created: number
  made: number
  dur: number
  rt: number | null
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
  private readonly locations = new Map<string, number>()
  private readonly locationNames = new Map<number, string>()
  private readonly statements = new Map<string, Database.Statement>()
  private readonly nextSeq: Database.Statement
  private readonly latestTemplate: Database.Statement
  private readonly templateBefore: Database.Statement
  private readonly digests = new Map<number, string>()
  private readonly locationId: Database.Statement
  private readonly addLocation: Database.Statement
  private readonly allLocations: Database.Statement
  private readonly tables: Database.Statement
  private readonly cutoffOf: Database.Statement

  constructor(private readonly db: Db) {
    this.nextSeq = db.prepare(`UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'check_results' RETURNING seq`).pluck()
    this.latestTemplate = db.prepare(`SELECT seq, details, created_at FROM check_results
      WHERE check_id = ? AND run_location = ? AND is_template ORDER BY seq DESC LIMIT 1`)
    this.templateBefore = db.prepare(`SELECT seq, details FROM check_results
      WHERE check_id = ? AND run_location = ? AND is_template AND seq < ? ORDER BY seq DESC LIMIT 1`)
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

  /** The days that have a table, oldest first. */
  partitions(): number[] {
    return (this.tables.all() as string[]).map(partitionDay).filter((d): d is number => d !== undefined).sort((a, b) => a - b)
  }

  /** The newest template of a check and location: its seq, its UTC day and the digest of its details. */
  template(checkId: string, location: string): TemplateHint | undefined {
    const row = this.latestTemplate.get(checkId, location) as { seq: number; details: string; created_at: string } | undefined
    if (!row) return undefined
    let hash = this.digests.get(row.seq)
    if (hash === undefined) {
      if (this.digests.size > 100_000) this.digests.clear()
      this.digests.set(row.seq, (hash = digest(row.details)))
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

  private ensure(day: number): string {
    const name = partitionName(day)
    if (!this.days.has(day)) {
      this.db.exec(`CREATE TABLE IF NOT EXISTS ${name} (
        seq INTEGER PRIMARY KEY, chk INTEGER NOT NULL, loc INTEGER NOT NULL,
        created INTEGER NOT NULL, made INTEGER NOT NULL, dur INTEGER NOT NULL, rt INTEGER);
        CREATE INDEX IF NOT EXISTS ${name}_chk ON ${name} (chk);`)
      this.days.add(day)
    }
    return name
  }

  /** Writes a compact row (inside the caller's transaction); answers its record's id. */
  insert(record: CheckResultRecord, checkSeq: number, values: CompactValues): string {
    const created = values.started + values.dur + values.made
    const day = dayOf(created)
    const name = this.ensure(day)
    const seq = this.nextSeq.get() as number
    const params = [seq, checkSeq, this.location(record.runLocation), created - day * DAY_MS, values.made, values.dur, values.rt]
    const sql = `INSERT INTO ${name} (seq, chk, loc, created, made, dur, rt) VALUES (?, ?, ?, ?, ?, ?, ?)`
    try {
      this.statement(sql).run(...params)
    } catch (error) {
      // the day's table was dropped by another process (a clock far behind the retention)
      if (!/no such table/.test(String((error as Error).message))) throw error
      this.days.delete(day)
      this.ensure(day)
      this.statement(sql).run(...params)
    }
    return compactId(created, seq)
  }

  /** The details of a compact row's template: the newest template of its check and location before it. */
  private detailsOf(checkId: string, location: string, seq: number): string {
    const row = this.templateBefore.get(checkId, location, seq) as { seq: number; details: string } | undefined
    if (!row) return '{}'
    return row.details
  }

  private record(row: CompactRow, day: number, checkId: string): CheckResultRecord {
    const created = day * DAY_MS + row.created
    const stopped = created - row.made
    const location = this.locationName(row.loc)
    return compactRecord({
      seq: row.seq, checkId, location, started: stopped - row.dur, dur: row.dur, made: row.made, rt: row.rt,
    }, this.detailsOf(checkId, location, row.seq))
  }

  /** A compact row by its id, when it is the account's and inside the retention. */
  get(account: string, id: string): CheckResultRecord | undefined {
    const parsed = parseCompactId(id)
    if (!parsed) return undefined
    const day = dayOf(parsed.created)
    if (!this.partitions().includes(day)) return undefined
    const row = this.statement(`SELECT r.*, c.id AS check_id FROM ${partitionName(day)} r JOIN checks c ON c.seq = r.chk
      WHERE r.seq = ? AND c.account_id = ?`).get(parsed.seq, account) as (CompactRow & { check_id: string }) | undefined
    if (!row || day * DAY_MS + row.created !== parsed.created || day * DAY_MS + row.created - row.made < this.cutoff()) return undefined
    return this.record(row, day, row.check_id)
  }

  /**
   * The SQL of a check's compact rows in each day's table inside the retention: `seq` and `day`,
   * for a union. With `@loc` (a location's key) of that location only; with `@from` and `@to`
   * (ms), started in that range (a compact row started before it was created: a day that ends
   * before `from` holds none).
   */
  parts(cutoff: number, filter: { location?: boolean; from?: number; to?: number } = {}): string[] {
    return this.partitions()
      .filter((day) => (day + 1) * DAY_MS > cutoff && (filter.from === undefined || (day + 1) * DAY_MS > filter.from))
      .map((day) => [
        `SELECT seq, ${day} AS day FROM ${partitionName(day)} WHERE chk = @chk AND created - made >= @cutoff - ${day * DAY_MS}`,
        filter.location ? ' AND loc = @loc' : '',
        filter.from !== undefined ? ` AND created - made - dur >= @from - ${day * DAY_MS}` : '',
        filter.to !== undefined ? ` AND created - made - dur < @to - ${day * DAY_MS}` : '',
      ].join(''))
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

  /** The compact rows of these (seq, day) pairs, of one check. */
  rows(pairs: Array<{ seq: number; day: number }>, checkId: string): Map<number, CheckResultRecord> {
    const out = new Map<number, CheckResultRecord>()
    for (const { seq, day } of pairs) {
      const row = this.statement(`SELECT * FROM ${partitionName(day)} WHERE seq = ?`).get(seq) as CompactRow | undefined
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
    for (const day of this.partitions()) {
      if ((day + 1) * DAY_MS > before) continue
      this.db.exec(`DROP TABLE ${partitionName(day)}`)
      this.days.delete(day)
    }
  }
}
