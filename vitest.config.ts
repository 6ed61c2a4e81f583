import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // most tests wait on a server, a retry's backoff or a child process: two files at once on two cores
    // (vitest's default leaves one core idle there)
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default'],
    // most tests run the built CLI: refuse a dist/ older than the sources
    globalSetup: ['test/setup/fresh-build.ts'],
    // the CLI bundle runs in-process as Node loads it for bin/monitors.js, not transformed
    server: { deps: { external: [/\/dist\//] } },
  },
})
