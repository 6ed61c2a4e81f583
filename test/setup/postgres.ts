/**
 * Global setup of the PostgreSQL half of the test matrix: one cluster for the whole run, and a
 * template database holding the schema, so that each server's database is a quick copy.
 */
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { startPostgresCluster } from '../helpers/postgres-cluster.js'
import { migrate } from '../../src/server/store/postgres/migrations.js'

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string
  }
}

export const TEMPLATE = 'monitors_template'

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startPostgresCluster()
  try {
    const admin = new pg.Client({ connectionString: cluster.url('postgres') })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${TEMPLATE}`)
    await admin.end()
    const pool = new pg.Pool({ connectionString: cluster.url(TEMPLATE), max: 1 })
    await migrate(pool)
    await pool.end()
  } catch (error) {
    await cluster.stop()
    throw error
  }
  project.provide('postgresAdminUrl', cluster.url('postgres'))
  return () => cluster.stop()
}
