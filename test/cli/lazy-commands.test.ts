/**
 * Start-up cost: a command loads only what it uses. `monitors --help` lists every command without
 * importing one, and `validate` / `plan` never load the runner's HTTP client, the server's
 * framework or its SQLite driver. Observed from a real process, in the packages it required.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { COMMANDS } from '../../src/cli/main.js'
import { makeProject, repo } from '../helpers/cli.js'

const run = promisify(execFile)

/** Runs the built CLI in a fresh process and lists the npm packages it loaded through require. */
async function packagesLoaded(cwd: string, args: string[]): Promise<{ code: number; output: string; packages: string[] }> {
  const script = `
    import { createRequire } from 'node:module'
    const { main } = await import(${JSON.stringify(pathToFileURL(join(repo, 'dist/cli/main.js')).href)})
    let output = ''
    const sink = { write: (t) => { output += t; return true } }
    const code = await main(${JSON.stringify(args)}, { stdout: sink, stderr: sink, isTTY: false })
    const cache = createRequire(import.meta.url).cache
    const packages = [...new Set(Object.keys(cache).map((f) => /node_modules[\\\\/]((?:@[^\\\\/]+[\\\\/])?[^\\\\/]+)/.exec(f)?.[1]).filter(Boolean))]
    process.stdout.write(JSON.stringify({ code, output, packages }))
  `
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MONITORING_') && key !== 'CI'))
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd, env: { ...env, NO_COLOR: '1' } })
  return JSON.parse(stdout)
}

describe('commands load lazily', () => {
  it('lists every command in --help without loading the project loader, the runner or the server', async () => {
    const result = await packagesLoaded(repo, ['--help'])
    expect(result.code).toBe(0)
    for (const command of COMMANDS) expect(result.output).toContain(command.describe.slice(0, 40))
    expect(result.packages).not.toContain('jiti')
    expect(result.packages).not.toContain('undici')
    expect(result.packages).not.toContain('fastify')
  })

  it('validates a project without loading the runner, the server or its SQLite driver', async () => {
    const dir = makeProject({
      'shop.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('lazy-dns', { name: 'Lazy DNS', request: { query: 'a.example.com' } })\n`,
    })
    const result = await packagesLoaded(dir, ['validate'])
    expect(result.code, result.output).toBe(0)
    expect(result.output).toContain('Valid: 1 resource in 1 file')
    expect(result.packages).toContain('jiti')
    for (const heavy of ['undici', 'fastify', 'better-sqlite3']) expect(result.packages).not.toContain(heavy)
  })

  it('names each command as its module does', async () => {
    for (const command of COMMANDS) {
      const module = await command.load()
      expect({ command: module.command, describe: module.describe }).toEqual({ command: command.command, describe: command.describe })
    }
  })
})
