#!/usr/bin/env node
// Where a SQLite database's bytes go: the pages of each table and index (sqlite3's dbstat),
// the day tables of compact results (result_runs_YYYYMMDD; of failing runs, result_runs_YYYYMMDD_f) counted as one, and per result
// (results: check_results' counter, which full and compact rows share).
//   node bench/runner/storage.mjs DB [--since BREAKDOWN.json]
// With --since (the JSON this printed for an earlier state of the same database), the growth
// between both states, per result stored meanwhile. bench/runner/run.mjs uses `breakdown`.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json'))

/** Bytes in use by each table and index (compact day tables and their indexes as `result_runs_*`, failing runs' as `result_runs_*_f`), and the results stored so far. */
export function breakdown(db) {
  const rows = db
    .prepare(`SELECT CASE WHEN name GLOB 'result_runs_*_f_chk' THEN 'result_runs_*_f (index)'
      WHEN name GLOB 'result_runs_*_f' THEN 'result_runs_*_f' WHEN name GLOB 'result_runs_*_chk' THEN 'result_runs_* (index)'
      WHEN name GLOB 'result_runs_*' THEN 'result_runs_*' ELSE name END AS name, sum(pgsize) AS bytes
    FROM dbstat GROUP BY 1`)
    .all()
  const results = db.prepare(`SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'check_results'), 0)`).pluck().get()
  const full = db.prepare(`SELECT count(*) FROM check_results`).pluck().get()
  return { results, full, bytes: Object.fromEntries(rows.map((r) => [r.name, r.bytes])) }
}

/** The growth from `before` to `after` per result stored meanwhile, largest first; check_runs (bounded: done runs are kept 10 minutes) apart. */
export function perResult(before, after) {
  const n = after.results - before.results
  const names = new Set([...Object.keys(before.bytes), ...Object.keys(after.bytes)])
  const tables = [...names]
    .map((name) => ({ name, bytes: (after.bytes[name] ?? 0) - (before.bytes[name] ?? 0) }))
    .filter((t) => t.bytes !== 0)
    .sort((a, b) => b.bytes - a.bytes)
  const runs = (name) =>
    name === 'check_runs' || name.startsWith('sqlite_autoindex_check_runs') || name.startsWith('check_runs_') || name.startsWith('check_runs ')
  const total = tables.filter((t) => !runs(t.name)).reduce((sum, t) => sum + t.bytes, 0)
  return {
    results: n,
    full: after.full - before.full,
    perResult: n > 0 ? total / n : NaN,
    tables: tables.map((t) => ({ ...t, perResult: n > 0 ? t.bytes / n : NaN, bounded: runs(t.name) })),
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [path, flag, since] = process.argv.slice(2)
  if (!path) {
    console.error('usage: node bench/runner/storage.mjs DB [--since BREAKDOWN.json]')
    process.exit(2)
  }
  const Database = require('better-sqlite3')
  const db = new Database(path, { readonly: true, fileMustExist: true })
  const now = breakdown(db)
  db.close()
  if (flag === '--since') {
    const growth = perResult(JSON.parse(readFileSync(since, 'utf8')), now)
    console.log(`results: ${growth.results} (${growth.full} kept in full), bytes per result: ${growth.perResult.toFixed(1)}`)
    for (const t of growth.tables) console.log(`  ${t.name}: ${t.perResult.toFixed(1)}${t.bounded ? ' (bounded, not counted)' : ''}`)
  } else console.log(JSON.stringify(now))
}
