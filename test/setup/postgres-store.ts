/**
 * The PostgreSQL half of the test matrix: every server a test starts (startLocalServer) and
 * every store it opens (openStore) gets a PostgreSQL database of the run's cluster instead of
 * its SQLite location. The same path names the same database (two servers on one "file"
 * share it); ':memory:' (or none) is a database of its own, dropped when the server closes.
 * The server itself is the real one: only where its data lives changes.
 */
import { vi } from 'vitest'
import type * as Server from '../../src/server/index.js'
import { databaseFor } from '../helpers/postgres-databases.js'

vi.mock('../../src/server/index.js', async (importOriginal) => {
  const original = await importOriginal<typeof Server>()
  return {
    ...original,
    startLocalServer: async (options: Server.LocalServerOptions = {}) => {
      const database = await databaseFor(options.dbPath)
      let server: Server.LocalServer
      try {
        server = await original.startLocalServer({ ...options, dbPath: database.url })
      } catch (error) {
        await database.drop()
        throw error
      }
      let closed: Promise<void> | undefined
      return { ...server, close: () => (closed ??= server.close().then(database.drop)) }
    },
    openStore: async (location: string, options?: Parameters<typeof original.openStore>[1]) => original.openStore((await databaseFor(location)).url, options),
  }
})
