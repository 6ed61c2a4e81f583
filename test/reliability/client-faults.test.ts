/**
 * The client under faults, through the built CLI: 200 resources under 20 % injected faults
 * converge to exactly 200 remote resources and a matching lock; a large apply under a small
 * rate limit meets no 429; a server that never answers cannot hang apply.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { makeProject, monitors, STACK_LINE } from '../helpers/cli.js'
import { census, fleet, lockMismatches, range, readLockFile } from './helpers.js'

const KEY = 'client-faults-key-7f3a9c'
const servers: LocalServer[] = []
afterAll(async () => {
  for (const server of servers) await server.close()
})
const envOf = (server: LocalServer, account: string) => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: account })

describe('apply under injected faults', () => {
  it('200 resources under 20 % faults: exactly 200 remote resources, a matching lock, no duplicate', async () => {
    const server = await startLocalServer({
      apiKeys: [{ key: KEY, accountId: 'faults' }],
      faults: '500:0.08,reset:0.07,429:0.05',
      seed: 7,
      rateLimit: { max: 100_000, timeWindowMs: 60_000 },
    })
    servers.push(server)
    const env = envOf(server, 'faults')
    const dir = makeProject({ 'fleet.check.ts': fleet(range(0, 200)) })
    const runs: number[] = []
    for (let run = 0; run < 6; run++) {
      const started = Date.now()
      const result = await monitors(dir, ['apply', '--yes', '--concurrency', '4'], env)
      console.log(
        `apply run ${run}: exit ${result.code} in ${Date.now() - started} ms${
          result.code
            ? `\n${result.stderr
                .split('\n')
                .filter((l) => /failed|Error/.test(l))
                .slice(0, 4)
                .join('\n')}`
            : ''
        }`,
      )
      expect(result.output).not.toMatch(STACK_LINE)
      expect(result.output).not.toContain(KEY)
      runs.push(result.code)
      if (result.code === 0) break
    }
    expect(runs.at(-1), `apply exit codes: ${runs.join(', ')}`).toBe(0)
    let plan = await monitors(dir, ['plan'], env)
    for (let i = 0; i < 3 && plan.code !== 0; i++) plan = await monitors(dir, ['plan'], env)
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('No changes.')

    const faults = server.faultCounts()!
    const requests = server.requestCount()
    const remote = await census(server.url, KEY, 'faults')
    const lock = readLockFile(dir)
    console.log(
      `[200 resources, 20 % faults] apply runs: ${runs.length} (exit codes ${runs.join(', ')}); faults injected: ` +
        `500 ×${faults['500']}, reset ×${faults.reset}, 429 ×${faults['429']}; requests received: ${requests}; ` +
        `remote resources: ${remote.total}; duplicates found: ${remote.duplicates}`,
    )
    expect(faults['500'] + faults.reset + faults['429']).toBeGreaterThan(20)
    expect(faults.reset).toBeGreaterThan(0)
    expect(remote.total).toBe(200)
    expect(remote.duplicates).toBe(0)
    expect(Object.keys(lock.resources)).toHaveLength(200)
    expect(lock.pending).toBeUndefined()
    expect(lockMismatches(lock, remote)).toEqual([])
  }, 180_000)

  it('a large apply under a small rate limit meets no 429 at all', async () => {
    const statuses: number[] = []
    const server = await startLocalServer({
      apiKeys: [{ key: KEY, accountId: 'paced' }],
      rateLimit: { max: 25, timeWindowMs: 1000 },
      log: (line) => statuses.push(Number(/ (\d{3}) [\d.]+ms$/.exec(line)?.[1])),
    })
    servers.push(server)
    const dir = makeProject({ 'fleet.check.ts': fleet(range(0, 60), 0, 'p') })
    const result = await monitors(dir, ['apply', '--yes', '--concurrency', '8'], envOf(server, 'paced'))
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('Apply complete: 60 created, 0 updated, 0 deleted.')
    console.log(`[rate limit 25/s] requests: ${statuses.length}; answered 429: ${statuses.filter((s) => s === 429).length}`)
    expect(statuses.length).toBeGreaterThan(60)
    expect(statuses.filter((s) => s === 429)).toEqual([])
  })

  it('a server that never answers fails apply within the timeout, with one line; one that sometimes hangs is ridden out', async () => {
    const stuck = await startLocalServer({ apiKeys: [{ key: KEY, accountId: 'stuck' }], faults: 'hang:1' })
    servers.push(stuck)
    const dir = makeProject({ 'fleet.check.ts': fleet(range(0, 5), 0, 's') })
    const started = Date.now()
    const failed = await monitors(dir, ['apply', '--yes', '--timeout', '0.3', '--retries', '1'], envOf(stuck, 'stuck'))
    const elapsed = Date.now() - started
    console.log(`[hang:1] apply failed after ${elapsed} ms`)
    expect(failed.code).toBe(1)
    expect(failed.stderr).toMatch(
      /^Error: GET \/v1\/\S+ timed out after 0\.3 s \(http:\/\/127\.0\.0\.1:\d+\); raise --timeout to wait longer\. \(gave up after 2 attempts\)$/m,
    )
    expect(failed.output).not.toMatch(STACK_LINE)
    expect(elapsed).toBeLessThan(15_000)

    const flaky = await startLocalServer({
      apiKeys: [{ key: KEY, accountId: 'flaky' }],
      faults: 'hang:0.1',
      seed: 3,
      rateLimit: { max: 100_000, timeWindowMs: 60_000 },
    })
    servers.push(flaky)
    const dir2 = makeProject({ 'fleet.check.ts': fleet(range(0, 20), 0, 'h') })
    let code = 1
    for (let run = 0; run < 4 && code !== 0; run++) {
      const started = Date.now()
      const result = await monitors(dir2, ['apply', '--yes', '--timeout', '0.5'], envOf(flaky, 'flaky'))
      code = result.code
      console.log(`[hang:0.1] apply run ${run}: exit ${code} in ${Date.now() - started} ms`, code ? result.stderr.slice(0, 600) : '')
    }
    expect(code).toBe(0)
    const remote = await census(flaky.url, KEY, 'flaky')
    expect(flaky.faultCounts()!.hang).toBeGreaterThan(0)
    expect(remote.total).toBe(20)
    expect(remote.duplicates).toBe(0)
  }, 90_000)
})
