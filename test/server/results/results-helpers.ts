import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startLocalServer, type LocalServer } from '../../../src/server/index.js'
import { openStore } from '../../../src/server/index.js'
import type { Store } from '../../../src/server/store/index.js'
import { databaseFor, onPostgres } from '../../helpers/postgres-databases.js'
import { recordResult, type RecordOutcome } from '../../../src/server/results/index.js'
import { runCheck, type CheckRunResult, type RunnableCheck } from '../../../src/runner/index.js'
import { startDnsServer, type DnsServerHandle } from '../../helpers/dns-server.js'
import { KEY_A, KEY_B, caller, type Call } from '../helpers.js'

/**
 * The real server on a temporary SQLite file (in the PostgreSQL half of the test matrix, a
 * database of its own), a second store on the same database (as the
 * scheduler of another process would hold), and a DNS server on 127.0.0.1 to run checks
 * against. Results are real runs of src/runner, recorded with recordResult.
 */
export interface ResultsBench {
  server: LocalServer
  /** the SQLite file, or the PostgreSQL URL */
  dbPath: string
  store: Store
  dns: DnsServerHandle
  call: Call
  /** creates a DNS check through the API, asking the test DNS server for `query`; answers its id */
  createCheck(query: string, extra?: Record<string, unknown>): Promise<string>
  /** runs the check as stored (GET) once, for real, in `location`; `clockOffsetMs` shifts its wall clock */
  run(checkId: string, options?: { location?: string; clockOffsetMs?: number }): Promise<CheckRunResult>
  /** runs the check and records the result; answers both */
  runAndRecord(checkId: string, options?: { location?: string; clockOffsetMs?: number }): Promise<{ result: CheckRunResult; outcome: RecordOutcome }>
  close(): Promise<void>
}

export async function startResultsBench(): Promise<ResultsBench> {
  const dir = mkdtempSync(join(tmpdir(), 'monitors-results-'))
  const dbPath = onPostgres ? (await databaseFor(join(dir, 'monitors.db'))).url : join(dir, 'monitors.db')
  const server = await startLocalServer({
    host: '127.0.0.1',
    port: 0,
    dbPath,
    apiKeys: [
      { key: KEY_A, accountId: 'acc-a' },
      { key: KEY_B, accountId: 'acc-b' },
    ],
    rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
  })
  const store = await openStore(dbPath)
  const dns = await startDnsServer()
  const call = caller(server)

  async function stored(checkId: string): Promise<RunnableCheck & { id: string }> {
    const answer = await call('GET', `/v1/checks/${checkId}`)
    if (answer.status !== 200) throw new Error(`GET check: ${answer.status} ${answer.text}`)
    return answer.json
  }

  async function run(checkId: string, options: { location?: string; clockOffsetMs?: number } = {}): Promise<CheckRunResult> {
    const check = await stored(checkId)
    const offset = options.clockOffsetMs ?? 0
    return runCheck(check, { location: options.location ?? 'eu-west-1', retries: false, now: () => Date.now() + offset })
  }

  return {
    server,
    dbPath,
    store,
    dns,
    call,
    async createCheck(query, extra = {}) {
      const { request, ...rest } = extra as { request?: Record<string, unknown> }
      const answer = await call('POST', '/v1/checks/dns', {
        name: `check ${query}`,
        doubleCheck: false,
        // far above a loaded machine's answer time: a passing answer never fails on time
        maxResponseTime: 3000,
        ...rest,
        request: { query, nameServer: dns.address, port: dns.port, ...request },
      })
      if (answer.status !== 201) throw new Error(`POST check: ${answer.status} ${answer.text}`)
      return answer.json.id
    },
    run,
    async runAndRecord(checkId, options) {
      const result = await run(checkId, options)
      const outcome = await recordResult(store, await stored(checkId), { ...result, id: randomUUID() })
      return { result, outcome }
    },
    async close() {
      await dns.close()
      await store.close()
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
