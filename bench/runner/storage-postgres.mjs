// Where a PostgreSQL database's bytes go, for the storage phase of bench/runner/run.mjs: each
// table's heap and its indexes apart (pg_table_size, pg_indexes_size: TOAST, free space and
// visibility maps included, as PostgreSQL allocates them), the day partitions of compact results
// (result_runs_YYYYMMDD) counted as one, and the results stored so far (check_results' identity
// sequence, which full and compact rows share). The same shape as storage.mjs's `breakdown`, so
// that its `perResult` reads both. The cluster is a throwaway one, made as the tests make theirs
// (test/helpers/postgres-cluster.ts).
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

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
        SELECT CASE WHEN c.relname ~ '^result_runs_[0-9]{8}$' THEN 'result_runs_*' ELSE c.relname END AS name,
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
    close: () => client.end(),
  }
}
