/**
 * The corpus of broken projects under test/fixtures/bad: every one must fail `monitors plan`
 * with exit 1 and a clear message naming the file, the construct and the field (no stack
 * trace), and send zero requests to the server.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { monitors, repo } from '../helpers/cli.js'

const corpus = join(repo, 'test/fixtures/bad')
const cases = readdirSync(corpus, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => ({
    name: d.name,
    ...(JSON.parse(readFileSync(join(corpus, d.name, 'expect.json'), 'utf8')) as { why: string; contains: string[]; args?: string[] }),
  }))

let server: LocalServer

beforeAll(async () => {
  server = await startLocalServer({ apiKeys: [{ key: 'bad-config-key', accountId: 'bad-config' }] })
})
afterAll(async () => {
  await server?.close()
})

function plan(dir: string, args: string[]) {
  return monitors(dir, ['plan', ...args], { MONITORING_API_URL: server.url, MONITORING_API_KEY: 'bad-config-key', MONITORING_ACCOUNT_ID: 'bad-config' })
}

describe('broken projects', () => {
  it('has at least 50 of them', () => {
    expect(cases.length).toBeGreaterThanOrEqual(50)
  })

  it.concurrent.each(cases)('$name: $why', async ({ name, contains, args }) => {
    const result = await plan(join(corpus, name), args ?? [])
    expect(result.code, result.output).toBe(1)
    for (const text of contains) expect(result.output).toContain(text)
    // a clear message, not a stack trace
    expect(result.output).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m)
    expect(result.output).not.toContain('Internal error')
  })

  it('sent no request to the server for any of them', () => {
    expect(server.requestCount()).toBe(0)
  })
})
