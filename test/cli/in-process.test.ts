/**
 * `main(argv, io)`: the CLI run inside a process that goes on (the test suite, a tool embedding
 * it). Every byte goes to the given streams, nothing is left behind (signal and exit listeners,
 * working directory, environment), and a project edited between two runs is read afresh.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { makeProject, repo, writeFiles } from '../helpers/cli.js'

type Main = (argv: string[], io: Record<string, unknown>) => Promise<number>
const { main } = (await import(/* @vite-ignore */ pathToFileURL(join(repo, 'dist/cli/main.js')).href)) as { main: Main }

const KEY = 'in-process-key'
let server: LocalServer
beforeAll(async () => {
  server = await startLocalServer({ apiKeys: [{ key: KEY, accountId: 'in-process' }] })
})
afterAll(() => server?.close())

const dns = (ids: string[]) =>
  `import { DnsCheck } from 'monitors-as-code'\n${ids.map((id) => `new DnsCheck('${id}', { name: '${id}', request: { query: '${id}.example.com' } })\n`).join('')}`

async function run(dir: string, argv: string[], extra: Record<string, unknown> = {}) {
  let stdout = ''
  let stderr = ''
  const env = { PATH: process.env.PATH, NO_COLOR: '1', MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: 'in-process' }
  const code = await main(argv, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env,
    cwd: dir,
    ...extra,
  })
  return { code, stdout, stderr }
}

describe('the CLI run in-process through main(argv, io)', () => {
  it('writes only to the given streams and leaves no listener, directory or variable behind', async () => {
    const dir = makeProject({ 'a.check.ts': dns(['a', 'b']) })
    const listeners = () => ['SIGINT', 'SIGTERM', 'exit'].map((e) => process.listenerCount(e))
    const before = { listeners: listeners(), cwd: process.cwd(), url: process.env.MONITORING_API_URL }
    const stdoutWrite = vi.spyOn(process.stdout, 'write')
    const stderrWrite = vi.spyOn(process.stderr, 'write')
    try {
      const apply = await run(dir, ['apply', '--yes'])
      expect(apply.code, apply.stderr).toBe(0)
      expect(apply.stdout).toContain('Apply complete: 2 created')
      const bad = await run(dir, ['plan', '--nope'])
      expect(bad.code).toBe(1)
      expect(bad.stderr).toContain('Unknown argument: nope')
      const help = await run(dir, ['--help'])
      expect(help.code).toBe(0)
      expect(help.stdout).toContain('monitors apply [plan]')
      expect(stdoutWrite).not.toHaveBeenCalled()
      expect(stderrWrite).not.toHaveBeenCalled()
    } finally {
      stdoutWrite.mockRestore()
      stderrWrite.mockRestore()
    }
    expect({ listeners: listeners(), cwd: process.cwd(), url: process.env.MONITORING_API_URL }).toEqual(before)
  })

  it('reads a check file edited between two runs afresh', async () => {
    const dir = makeProject({ 'a.check.ts': dns(['one']) })
    expect((await run(dir, ['validate'])).stdout).toContain('Valid: 1 resource in 1 file')
    writeFiles(dir, { 'a.check.ts': dns(['one', 'two', 'three']) })
    expect((await run(dir, ['validate'])).stdout).toContain('Valid: 3 resources in 1 file')
    writeFiles(dir, { 'a.check.ts': `${dns(['one'])}new DnsCheck('one', { name: 'again', request: { query: 'x.example.com' } })\n` })
    const duplicate = await run(dir, ['validate'])
    expect(duplicate.code).toBe(1)
    expect(duplicate.stderr).toContain('duplicate logical id')
  })

  it('colours by whether the given stdout is a terminal, not the process’s', async () => {
    const dir = makeProject({ 'a.check.ts': dns(['c']) })
    const env = { PATH: process.env.PATH }
    expect((await run(dir, ['validate'], { env, isTTY: true })).stdout).toContain('\u001b[')
    expect((await run(dir, ['validate'], { env, isTTY: false })).stdout).not.toContain('\u001b[')
  })
})
