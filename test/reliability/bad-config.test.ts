/**
 * The corpus of broken projects under test/fixtures/bad: every one must fail `monitors plan`
 * with exit 1 and a clear message naming the file, the construct and the field (no stack
 * trace), and send zero requests to the server.
 */
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'

const run = promisify(execFile)
const repo = resolve(import.meta.dirname, '../..')
const corpus = join(repo, 'test/fixtures/bad')
const cases = readdirSync(corpus, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => ({ name: d.name, ...(JSON.parse(readFileSync(join(corpus, d.name, 'expect.json'), 'utf8')) as { why: string; contains: string[]; args?: string[] }) }))

let server: LocalServer

beforeAll(async () => {
  server = await startLocalServer({ apiKeys: [{ key: 'bad-config-key', accountId: 'bad-config' }] })
})
afterAll(async () => {
  await server?.close()
})

async function plan(dir: string, args: string[]) {
  try {
    const out = await run(process.execPath, [join(repo, 'bin/monitors.js'), 'plan', ...args], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', MONITORING_API_URL: server.url, MONITORING_API_KEY: 'bad-config-key', MONITORING_ACCOUNT_ID: 'bad-config' },
    })
    return { code: 0, output: out.stdout + out.stderr }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { code: e.code ?? -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
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
