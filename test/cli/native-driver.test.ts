/**
 * Without a native better-sqlite3 build (no prebuilt binary for the platform, a build for
 * another Node.js), the embedded server cannot start: the user is told how to fix it, not that
 * monitors has a bug.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { nativeLoadError } from '../../src/cli/target.js'
import { makeProject, monitors, repo, STACK_LINE } from '../helpers/cli.js'

/**
 * An installed copy of the CLI (bin, bundle, package.json) whose node_modules has every
 * dependency of this repository, except that better-sqlite3 lacks its compiled build/ folder:
 * what a failed `npm install` of the native module leaves behind.
 */
function installWithoutNativeBuild(): string {
  const root = mkdtempSync(join(tmpdir(), 'monitors-no-native-'))
  cpSync(join(repo, 'bin'), join(root, 'bin'), { recursive: true })
  cpSync(join(repo, 'dist', 'cli'), join(root, 'dist', 'cli'), { recursive: true })
  cpSync(join(repo, 'package.json'), join(root, 'package.json'))
  const modules = join(repo, 'node_modules')
  mkdirSync(join(root, 'node_modules'))
  for (const name of readdirSync(modules)) {
    if (name !== 'better-sqlite3') symlinkSync(join(modules, name), join(root, 'node_modules', name))
  }
  const driver = join(root, 'node_modules', 'better-sqlite3')
  mkdirSync(driver)
  cpSync(join(modules, 'better-sqlite3', 'package.json'), join(driver, 'package.json'))
  cpSync(join(modules, 'better-sqlite3', 'lib'), join(driver, 'lib'), { recursive: true })
  return join(root, 'bin', 'monitors.cjs')
}

describe('a missing native SQLite build', () => {
  const cli = installWithoutNativeBuild()

  it('plan on the embedded server says to run npm rebuild better-sqlite3 or set MONITORING_API_URL', async () => {
    const dir = makeProject({ 'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\n` })
    const result = await monitors(dir, ['plan'], {}, cli)
    expect(result.code).toBe(1)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('npm rebuild better-sqlite3')
    expect(lines[0]).toContain('MONITORING_API_URL')
    expect(result.output).not.toContain('bug in monitors')
    expect(result.output).not.toMatch(STACK_LINE)
  })

  it('monitors server says to run npm rebuild better-sqlite3', async () => {
    const result = await monitors(tmpdir(), ['server', '--port', '0', '--db', ':memory:'], {}, cli)
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain('npm rebuild better-sqlite3')
    expect(result.output).not.toContain('bug in monitors')
  })
})

describe('nativeLoadError', () => {
  const fix = (error: unknown) => nativeLoadError(error)?.message
  it.each([
    ['no build', new Error('Could not locate the bindings file. Tried:\n → /x/build/better_sqlite3.node')],
    ['another Node.js', new Error("The module '/x/better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 127.")],
    ['dlopen', Object.assign(new Error('/x/build/Release/better_sqlite3.node: invalid ELF header'), { code: 'ERR_DLOPEN_FAILED' })],
    ['not installed', Object.assign(new Error("Cannot find package 'better-sqlite3' imported from /x/dist/cli/chunk.js"), { code: 'ERR_MODULE_NOT_FOUND' })],
  ])('classifies %s as a fixable install problem', (_, error) => {
    const message = fix(error)
    expect(message).toContain('npm rebuild better-sqlite3')
    expect(message).toContain('MONITORING_API_URL')
    expect(message).not.toContain('\n')
  })

  it('leaves other errors alone', () => {
    expect(fix(new Error('EADDRINUSE: address already in use'))).toBeUndefined()
    expect(fix('a string')).toBeUndefined()
  })
})
