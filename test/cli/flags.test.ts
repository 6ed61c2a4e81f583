/** Flags a pipeline or a new user gets wrong: colour, --version, validate -c, numbers out of range. */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { fetchRemoteState } from '../../src/api/resources.js'
import { makeProject, monitors, monitorsProcess, repo, STACK_LINE } from '../helpers/cli.js'

const ESC = '\u001b['
const project = () =>
  makeProject({
    'shop.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('flag-dns', { name: 'Flag DNS', request: { query: 'a.example.com' } })\n`,
  })

describe('colour (A10)', () => {
  // the CLI's stdout is a pipe here, as in `monitors plan > plan.txt`
  it('writes no escape codes to a file when CI is set', async () => {
    const result = await monitors(project(), ['plan', '--local'], { CI: 'true', NO_COLOR: undefined, FORCE_COLOR: undefined })
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('Plan: 1 to create')
    expect(result.output).not.toContain(ESC)
  })

  it('colours when FORCE_COLOR is set, and not with NO_COLOR or --no-color', async () => {
    const dir = project()
    const forced = await monitors(dir, ['plan'], { NO_COLOR: undefined, FORCE_COLOR: '1' })
    expect(forced.code, forced.output).toBe(0)
    expect(forced.stdout).toContain(ESC)
    const noColor = await monitors(dir, ['plan'], { NO_COLOR: '1', FORCE_COLOR: '1' })
    expect(noColor.output).not.toContain(ESC)
    const flag = await monitors(dir, ['plan', '--no-color'], { NO_COLOR: undefined, FORCE_COLOR: '1' })
    expect(flag.code, flag.output).toBe(0)
    expect(flag.stdout).toContain('Plan: 1 to create')
    expect(flag.output).not.toContain(ESC)
  })

  it('accepts --no-color on every command, before or after it', async () => {
    const dir = project()
    const validate = await monitors(dir, ['--no-color', 'validate'], { NO_COLOR: undefined, FORCE_COLOR: '1' })
    expect(validate.code, validate.output).toBe(0)
    expect(validate.output).not.toContain(ESC)
  })
})

describe('--version (A11)', () => {
  it("prints the tool's version, not the version of the user's package.json", async () => {
    const dir = project()
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'team-monitors', version: '1.0.0' }))
    const own = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).version as string
    expect(own).not.toBe('1.0.0')
    // a real process: the version comes from the installed package beside the bin
    const result = await monitorsProcess(dir, ['--version'])
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toBe(own)
  })

  it('answers from package.json alone, without loading the CLI (a fast version check)', async () => {
    // an installed package with a bin and a package.json but no built CLI: only --version can work
    const pkg = mkdtempSync(join(tmpdir(), 'monitors-version-'))
    mkdirSync(join(pkg, 'bin'))
    copyFileSync(join(repo, 'bin/monitors.cjs'), join(pkg, 'bin/monitors.cjs'))
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'monitors-as-code', version: '9.8.7', type: 'module' }))
    const result = await monitorsProcess(pkg, ['--version'], {}, join(pkg, 'bin/monitors.cjs'))
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toBe('9.8.7\n')
    expect(result.stderr).toBe('')
  })
})

describe('validate -c (A11)', () => {
  it('takes -c like plan does', async () => {
    const dir = project()
    const result = await monitors(repo, ['validate', '-c', join(dir, 'monitoring.config.ts')])
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('Valid: 1 resource in 1 file')
  })
})

describe('numbers out of range (A11)', () => {
  let server: LocalServer
  let client: ApiClient
  beforeAll(async () => {
    server = await startLocalServer({ apiKeys: [{ key: 'flags-key', accountId: 'flags' }] })
    client = new ApiClient({ baseUrl: server.url, apiKey: 'flags-key', accountId: 'flags' })
  })
  afterAll(async () => {
    await client?.close()
    await server?.close()
  })

  it.each([
    ['--concurrency', '0', 'a whole number from 1 to 64'],
    ['--concurrency', 'abc', 'a whole number from 1 to 64'],
    ['--concurrency', '2.5', 'a whole number from 1 to 64'],
    ['--timeout', '0', 'a number of seconds above 0'],
    ['--timeout', 'abc', 'a number of seconds above 0'],
    ['--retries', '-1', 'a whole number from 0 to 20'],
    ['--retries', 'abc', 'a whole number from 0 to 20'],
  ])('apply refuses %s %s: exit 1, naming what is allowed, nothing sent', async (flag, value, allowed) => {
    const dir = project()
    const result = await monitors(dir, ['apply', '--yes', flag, value], {
      MONITORING_API_URL: server.url,
      MONITORING_API_KEY: 'flags-key',
      MONITORING_ACCOUNT_ID: 'flags',
    })
    expect(result.code, result.output).toBe(1)
    expect(result.stderr).toContain(`${flag} must be ${allowed}`)
    expect(result.stdout).toBe('')
    expect(result.output).not.toMatch(STACK_LINE)
    expect(result.output).not.toContain('bug in monitors')
    expect(Object.keys((await fetchRemoteState(client, ['dns-check'])).records['dns-check'])).toEqual([])
  })

  it.each([
    [['server', '--port', 'abc'], '--port must be a port number from 0 to 65535, or 0 for a free one (got "abc").'],
    [['server', '--retention=ten'], '--retention must be a number of days above 0 (got "ten").'],
    [['server', '--agent-alert-after', 'soon'], '--agent-alert-after must be a number of minutes above 0 (got "soon").'],
    [['server', '--seed', 'x'], '--seed must be a whole number (got "x").'],
    [
      ['agent', '--locations', 'eu-west-1', '--health-port', 'eighty'],
      '--health-port must be a port number from 0 to 65535, or 0 for a free one (got "eighty").',
    ],
    [['agent', '--locations', 'eu-west-1', '--timeout', 'soon'], '--timeout must be a number of seconds above 0 and at most 3600 (got "soon").'],
    [['agent', '--locations', 'eu-west-1', '--concurrency', 'all'], '--concurrency must be a whole number from 1 to 1000 (got "all").'],
    [['test', '--concurrency', 'many'], '--concurrency must be a whole number of at least 1 (got "many").'],
    [['plan', '--timeout', 'abc'], '--timeout must be a number of seconds above 0 and at most 3600, e.g. 30 (got "abc").'],
    [['apply', '--yes', '--concurrency=lots'], '--concurrency must be a whole number from 1 to 64 (got "lots").'],
  ])('%j names the text it was given, never NaN', async (args, message) => {
    const result = await monitors(project(), args, { MONITORING_API_URL: 'http://127.0.0.1:9', MONITORING_API_KEY: 'k' })
    expect(result.code, result.output).toBe(1)
    expect(result.stderr).toContain(message)
    expect(result.output).not.toContain('NaN')
    expect(result.output).not.toMatch(STACK_LINE)
  })

  it('refuses a number flag without a value', async () => {
    const result = await monitors(project(), ['apply', '--yes', '--concurrency'], { MONITORING_API_URL: server.url, MONITORING_API_KEY: 'flags-key' })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('concurrency')
    expect(result.stdout).toBe('')
  })
})
