import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { defineConfig } from 'vitest/config'
import { postgresBinDir } from './test/helpers/postgres-cluster.js'

/**
 * A file whose subject is the CLI, not the store, may say so on a line of its own: it then runs on
 * SQLite only, and names the file that tests the server's side of it on both stores.
 */
const SQLITE_ONLY = /^\/\/ The test matrix: SQLite only\b/m

/**
 * The test matrix: every test file that starts the local server in-process (startLocalServer,
 * directly or through the helpers), or opens a PostgreSQL database itself (databaseFor), runs
 * a second time with the server on PostgreSQL (test/setup/postgres-store.ts), unless it says
 * `// The test matrix: SQLite only` (SQLITE_ONLY). Without PostgreSQL on the machine that half is
 * skipped with a note, except under CI (CI or MONITORS_REQUIRE_POSTGRES set, as .ci/run does),
 * where it runs (and fails to start) instead.
 */
function serverTestFiles(dir = 'test'): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'fixtures') out.push(...serverTestFiles(path))
    } else if (
      entry.name.endsWith('.test.ts') &&
      /startLocalServer|startTestServer|useServer\(|startResultsBench|startAlertsBench|databaseFor\(/.test(readFileSync(path, 'utf8')) &&
      !SQLITE_ONLY.test(readFileSync(path, 'utf8'))
    ) {
      out.push(path)
    }
  }
  return out.sort()
}

const postgres = postgresBinDir() !== undefined || Boolean(process.env.CI) || Boolean(process.env.MONITORS_REQUIRE_POSTGRES)
// (the config is read more than once per run: one note)
if (!postgres && !process.env.MONITORS_PG_NOTE_SHOWN) {
  process.env.MONITORS_PG_NOTE_SHOWN = '1'
  process.stderr.write(
    '\nNote: PostgreSQL is not installed (no initdb): the PostgreSQL half of the test matrix is SKIPPED. Debian: apt-get install postgresql\n\n',
  )
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // most tests wait on a server, a retry's backoff, a browser or a child process, and a file's
    // imports keep its worker off the CPU's work too: measured on two cores, two workers had 1.6
    // files running on average and 1.15 cores busy, three workers 2.4 files and 1.3 cores (the
    // suite 1,324 s, then 1,124 s); four files at once there
    maxWorkers: availableParallelism() * 2,
    reporters: ['default'],
    // most tests run the built CLI: refuse a dist/ older than the sources
    globalSetup: ['test/setup/fresh-build.ts'],
    // the CLI bundle runs in-process as Node loads it for bin/monitors.cjs, not transformed
    // (this checkout's dist/ only: a checkout in a folder named dist is not all "built")
    server: { deps: { external: [new RegExp(`${join(import.meta.dirname, 'dist').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/`)] } },
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'] } },
      ...(postgres
        ? [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                include: serverTestFiles(),
                globalSetup: ['test/setup/postgres.ts'],
                setupFiles: ['test/setup/postgres-store.ts'],
                env: { MONITORS_TEST_STORE: 'postgres' },
              },
            },
          ]
        : []),
    ],
  },
})
