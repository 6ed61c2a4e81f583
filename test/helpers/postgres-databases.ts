/**
 * Databases of the PostgreSQL half of the test matrix (see test/setup/postgres-store.ts), in
 * the cluster test/setup/postgres.ts started: one per SQLite location a test names.
 */
import { createHash, randomUUID } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'

/** True in the PostgreSQL half of the test matrix. */
export const onPostgres = process.env.MONITORS_TEST_STORE === 'postgres'

const TEMPLATE = 'monitors_template'
let admin: Promise<pg.Client> | undefined

function adminClient(): Promise<pg.Client> {
  admin ??= (async () => {
    const client = new pg.Client({ connectionString: inject('postgresAdminUrl') })
    await client.connect()
    return client
  })()
  return admin
}

function urlOf(database: string): string {
  const url = new URL(inject('postgresAdminUrl'))
  url.pathname = `/${database}`
  return url.toString()
}

/** The database standing for a SQLite location, created from the template; `drop` forgets a private one. */
export async function databaseFor(location: string | undefined, options: { empty?: boolean } = {}): Promise<{ url: string; drop: () => Promise<void> }> {
  if (location && /^postgres(ql)?:\/\//.test(location)) return { url: location, drop: async () => undefined }
  const memory = !location || location === ':memory:'
  const name = memory ? `m_${randomUUID().replace(/-/g, '')}` : `f_${createHash('sha256').update(location).digest('hex').slice(0, 24)}`
  const client = await adminClient()
  try {
    // empty: no schema yet (a first start migrates it); else a copy of the migrated template
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${options.empty ? 'template0' : TEMPLATE}`)
  } catch (error) {
    // a path opened before: its database is there already
    if ((error as { code?: string }).code !== '42P04') throw error
  }
  const drop = memory ? async () => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined)) : async () => undefined
  return { url: urlOf(name), drop }
}
