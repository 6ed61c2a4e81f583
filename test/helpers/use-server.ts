import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { monitors as run, type CliResult } from './cli.js'

export { makeProject, writeFiles, STACK_LINE } from './cli.js'

/** One real local server per test file, an API client on it, and the CLI pointed at it. */
export function useServer(account: string) {
  const key = `${account}-key`
  const ctx = {} as { server: LocalServer; client: ApiClient }
  beforeAll(async () => {
    ctx.server = await startLocalServer({ apiKeys: [{ key, accountId: account }] })
    ctx.client = new ApiClient({ baseUrl: ctx.server.url, apiKey: key, accountId: account })
  })
  afterAll(async () => {
    await ctx.client?.close()
    await ctx.server?.close()
  })
  const env = () => ({ MONITORING_API_URL: ctx.server.url, MONITORING_API_KEY: key, MONITORING_ACCOUNT_ID: account })
  return {
    key,
    get server() {
      return ctx.server
    },
    get client() {
      return ctx.client
    },
    cli: (dir: string, args: string[]): Promise<CliResult> => run(dir, args, env()),
    lock: (dir: string) => JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8')),
    lockText: (dir: string) => readFileSync(join(dir, 'monitoring.lock.json'), 'utf8'),
  }
}

export const dnsCheck = (id: string, props: Record<string, unknown> = {}) =>
  `new DnsCheck(${JSON.stringify(id)}, ${JSON.stringify({ name: `DNS ${id}`, request: { query: `${id}.example.com` }, ...props })})\n`

export const file = (...constructs: string[]) =>
  `import { DnsCheck, IcmpCheck, EnvVar, StatusPage, StatusPageService } from 'monitors-as-code'\n${constructs.join('')}`
