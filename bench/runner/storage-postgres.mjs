// Where a PostgreSQL database's bytes go, for the storage phase of bench/runner/run.mjs: each
// table's heap and its indexes apart (pg_table_size, pg_indexes_size: TOAST, free space and
// visibility maps included, as PostgreSQL allocates them), the partitions of each partitioned table
// (result_runs_*, result_blocks_*, analytics_deltas_*, analytics_rollups_*) counted as one, and the results stored so far (check_results' identity
// sequence, which full and compact rows share). The same shape as storage.mjs's `breakdown`, so
// that its `perResult` reads both. The cluster is a throwaway one, made as the tests make theirs
// (test/helpers/postgres-cluster.ts).
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const require = createRequire(join(root, 'package.json'))

/** A throwaway cluster with an empty database `bench`, or undefined (and why) when PostgreSQL is not installed. */
export async function benchCluster() {
  const { createJiti } = require('jiti')
  const { startPostgresCluster, postgresBinDir } = await createJiti(import.meta.url).import(join(root, 'test', 'helpers', 'postgres-cluster.ts'))
  if (!postgresBinDir()) return { why: 'PostgreSQL is not installed (no initdb; set MONITORS_PG_BIN)' }
  const cluster = await startPostgresCluster()
  const pg = require('pg')
  const admin = new pg.Client({ connectionString: cluster.url('postgres') })
  await admin.connect()
  await admin.query('CREATE DATABASE bench')
  await admin.end()
  return { url: cluster.url('bench'), stop: () => cluster.stop() }
}

/** A reader of the database's breakdown (`read()`), closed by `close()`. */
export async function postgresReader(url) {
  const pg = require('pg')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  return {
    async read() {
      const { rows } = await client.query(`
        SELECT CASE WHEN c.relname ~ '^(result_runs|result_blocks|analytics_deltas|analytics_rollups)_[0-9]{8,10}$' THEN regexp_replace(c.relname, '_[0-9]+$', '_*') ELSE c.relname END AS name,
          sum(pg_table_size(c.oid))::bigint AS heap, sum(pg_indexes_size(c.oid))::bigint AS indexes
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r' GROUP BY 1`)
      const bytes = {}
      for (const r of rows) {
        bytes[r.name] = Number(r.heap)
        if (Number(r.indexes) > 0) bytes[`${r.name} (indexes)`] = Number(r.indexes)
      }
      const [{ sequence }] = (await client.query(`SELECT pg_get_serial_sequence('check_results', 'seq') AS sequence`)).rows
      const [{ n }] = (await client.query(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS n FROM ${sequence}`)).rows
      const [{ full }] = (await client.query('SELECT count(*)::bigint AS full FROM check_results')).rows
      return { results: Number(n), full: Number(full), bytes }
    },
    /**
     * Rows updated and deleted so far, per table (partitions counted as their parent), from the
     * statistics (pg_stat_user_tables): each update leaves a dead row version for autovacuum.
     * A server's backends report theirs when their transaction ends (at most once a second) and
     * when they exit: read once the server has stopped for a window's exact figure.
     */
    async writes() {
      await client.query('SELECT pg_stat_clear_snapshot()')
      const { rows } = await client.query(`
        SELECT CASE WHEN relname ~ '^(result_runs|result_blocks|analytics_deltas|analytics_rollups)_[0-9]{8,10}$' THEN regexp_replace(relname, '_[0-9]+$', '_*') ELSE relname END AS name,
          sum(n_tup_upd)::bigint AS updated, sum(n_tup_del)::bigint AS deleted
        FROM pg_stat_user_tables WHERE schemaname = 'public' GROUP BY 1`)
      return Object.fromEntries(rows.map((r) => [r.name, { updated: Number(r.updated), deleted: Number(r.deleted) }]))
    },
    close: () => client.end(),
  }
}

/**
 * Packs what the server's prune packs once an hour has ended: compact rows into blocks, analytics
 * deltas into their rollup rows, as the prune would at `now` (ms, the server's clock), through the
 * store itself (`dist/`), without deleting anything (the cutoff at 0).
 */
export async function packAsPrune(url, now) {
  const { openStore } = await import(pathToFileURL(join(root, 'dist', 'src', 'server', 'index.js')).href)
  const store = await openStore(url)
  try {
    await store.results.prune(new Date(0).toISOString(), now)
    await store.analytics.prune(0, now)
  } finally {
    await store.close()
  }
}
