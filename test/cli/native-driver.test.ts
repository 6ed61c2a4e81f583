/**
 * better-sqlite3 is an optional dependency: without its native build (no prebuilt binary for the
 * platform, a build for another Node.js), or without the package at all (its install failed, as
 * on a machine with no compiler that cannot fetch a prebuilt binary), the SQLite server cannot
 * start and the user is told what to run or install, not that monitors has a bug; everything
 * that talks to a remote service works without it.
 */
import { spawn } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nativeLoadError, SQLITE_DRIVER } from '../../src/cli/target.js'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { makeProject, monitors, repo, STACK_LINE } from '../helpers/cli.js'
import { databaseFor, onPostgres } from '../helpers/postgres-databases.js'

/** Node.js's own SQLite as the store takes it (src/server/store/sqlite/driver.ts): Node.js 22.16 and newer. */
const builtinSqlite = (() => {
  const [major, minor] = process.versions.node.split('.').map(Number)
  return major > 22 || (major === 22 && minor >= 16)
})()
/** Without the fallback to Node.js's own SQLite, so that a missing better-sqlite3 shows on any Node.js. */
const onlyBetterSqlite = { MONITORS_SQLITE_DRIVER: 'better-sqlite3' }

/**
 * An installed copy of the CLI (bin, bundle, package.json) whose node_modules has every
 * dependency of this repository, except that better-sqlite3 lacks its compiled build/ folder:
 * what a failed `npm install` of the native module leaves behind.
 */
function installWithoutNativeBuild(): string {
  const root = installWithoutDriver()
  const modules = join(repo, 'node_modules')
  const driver = join(root, 'node_modules', 'better-sqlite3')
  mkdirSync(driver)
  cpSync(join(modules, 'better-sqlite3', 'package.json'), join(driver, 'package.json'))
  cpSync(join(modules, 'better-sqlite3', 'lib'), join(driver, 'lib'), { recursive: true })
  return join(root, 'bin', 'monitors.cjs')
}

/** An installed copy of the CLI without better-sqlite3 at all: what npm leaves when an optional dependency fails to install. Its root. */
function installWithoutDriver(): string {
  const root = mkdtempSync(join(tmpdir(), 'monitors-no-native-'))
  cpSync(join(repo, 'bin'), join(root, 'bin'), { recursive: true })
  cpSync(join(repo, 'dist', 'cli'), join(root, 'dist', 'cli'), { recursive: true })
  cpSync(join(repo, 'package.json'), join(root, 'package.json'))
  const modules = join(repo, 'node_modules')
  mkdirSync(join(root, 'node_modules'))
  for (const name of readdirSync(modules)) {
    if (name !== 'better-sqlite3') symlinkSync(join(modules, name), join(root, 'node_modules', name))
  }
  return root
}

describe('a missing native SQLite build', () => {
  const cli = installWithoutNativeBuild()

  it('plan on the embedded server says to run npm rebuild better-sqlite3 or set MONITORING_API_URL', async () => {
    const dir = makeProject({
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\n`,
    })
    const result = await monitors(dir, ['plan'], onlyBetterSqlite, cli)
    expect(result.code).toBe(1)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('npm rebuild better-sqlite3')
    expect(lines[0]).toContain('MONITORING_API_URL')
    expect(result.output).not.toContain('bug in monitors')
    expect(result.output).not.toMatch(STACK_LINE)
  })

  it('monitors server says to run npm rebuild better-sqlite3', async () => {
    const result = await monitors(tmpdir(), ['server', '--port', '0', '--db', ':memory:'], onlyBetterSqlite, cli)
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain('npm rebuild better-sqlite3')
    expect(result.output).not.toContain('bug in monitors')
  })
})

describe('no SQLite driver installed', () => {
  const cli = join(installWithoutDriver(), 'bin', 'monitors.cjs')
  const check = `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\n`
  let server: LocalServer
  beforeAll(async () => {
    server = await startLocalServer({ apiKeys: [{ key: 'remote-key', accountId: 'remote' }] })
  })
  afterAll(() => server?.close())

  it('asks for the range package.json declares as an optional dependency', () => {
    const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))
    expect(manifest.dependencies['better-sqlite3']).toBeUndefined()
    expect(`better-sqlite3@${manifest.optionalDependencies['better-sqlite3']}`).toBe(SQLITE_DRIVER)
  })

  it('plans and applies against a remote service', async () => {
    const dir = makeProject({ 'a.check.ts': check })
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: 'remote-key', MONITORING_ACCOUNT_ID: 'remote' }
    const plan = await monitors(dir, ['plan'], env, cli)
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('Plan: 1 to create, 0 to update, 0 to delete.')
    const apply = await monitors(dir, ['apply', '--yes'], env, cli)
    expect(apply.code, apply.output).toBe(0)
    expect(apply.output).not.toContain('better-sqlite3')
  })

  it('plan on the embedded server says what to install, or to set MONITORING_API_URL', async () => {
    const result = await monitors(makeProject({ 'a.check.ts': check }), ['plan'], onlyBetterSqlite, cli)
    expect(result.code).toBe(1)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`npm install --save-dev ${SQLITE_DRIVER}`)
    expect(lines[0]).toContain('MONITORING_API_URL')
    expect(result.output).not.toContain('npm rebuild')
    expect(result.output).not.toMatch(STACK_LINE)
  })

  it('monitors server on a SQLite file says what to install', async () => {
    const result = await monitors(tmpdir(), ['server', '--port', '0', '--db', ':memory:'], onlyBetterSqlite, cli)
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain(`npm install --save-dev ${SQLITE_DRIVER}`)
    expect(result.stderr).toContain('PostgreSQL')
    expect(result.output).not.toContain('bug in monitors')
  })

  it.runIf(builtinSqlite)(
    'on a Node.js with a built-in SQLite, the embedded server plans and applies without better-sqlite3, and says nothing of it',
    async () => {
      const dir = makeProject({ 'a.check.ts': check })
      const plan = await monitors(dir, ['plan'], {}, cli)
      expect(plan.code, plan.output).toBe(0)
      expect(plan.stdout).toContain('Plan: 1 to create, 0 to update, 0 to delete.')
      expect(plan.output).not.toMatch(/better-sqlite3|ExperimentalWarning/)
      expect((await monitors(dir, ['apply', '--yes'], {}, cli)).code).toBe(0)
      expect((await monitors(dir, ['plan'], {}, cli)).stdout).toContain('No changes.')
      // three CLI processes, each starting the embedded server
    },
    60_000,
  )

  it.runIf(onPostgres)('monitors server on PostgreSQL needs no SQLite driver', async () => {
    const database = await databaseFor(':memory:')
    const child = spawn(process.execPath, [cli, 'server', '--port', '0', '--db', database.url], { cwd: tmpdir(), env: { ...process.env, NO_COLOR: '1' } })
    try {
      let output = ''
      const url = await new Promise<string>((resolve, reject) => {
        const seen = (chunk: Buffer) => {
          output += chunk.toString()
          const match = /listening on (http:\/\/\S+)/.exec(output)
          if (match) resolve(match[1])
        }
        child.stdout.on('data', seen)
        child.stderr.on('data', seen)
        child.on('exit', (code) => reject(new Error(`monitors server exited (${code}): ${output}`)))
      })
      const answer = await fetch(`${url}/-/readiness`)
      expect(answer.status).toBe(200)
      expect(output).not.toContain('better-sqlite3')
    } finally {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('close', resolve))
      await database.drop()
    }
  })
})

describe('nativeLoadError', () => {
  const fix = (error: unknown) => nativeLoadError(error)?.message
  it.each([
    ['no build', new Error('Could not locate the bindings file. Tried:\n → /x/build/better_sqlite3.node')],
    [
      'another Node.js',
      new Error(
        "The module '/x/better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 127.",
      ),
    ],
    ['dlopen', Object.assign(new Error('/x/build/Release/better_sqlite3.node: invalid ELF header'), { code: 'ERR_DLOPEN_FAILED' })],
  ])('classifies %s as a fixable build problem', (_, error) => {
    const message = fix(error)
    expect(message).toContain('npm rebuild better-sqlite3')
    expect(message).toContain('MONITORING_API_URL')
    expect(message).not.toContain('\n')
  })

  it.each([
    ['ES module', Object.assign(new Error("Cannot find package 'better-sqlite3' imported from /x/dist/cli/chunk.js"), { code: 'ERR_MODULE_NOT_FOUND' })],
    ['CommonJS', Object.assign(new Error("Cannot find module 'better-sqlite3'\nRequire stack:\n- /x/dist/cli/main.cjs"), { code: 'MODULE_NOT_FOUND' })],
  ])('says what to install when the driver is not installed (%s)', (_, error) => {
    const message = fix(error)
    expect(message).toContain(`npm install --save-dev ${SQLITE_DRIVER}`)
    expect(message).not.toContain('npm rebuild')
    expect(message).not.toContain('\n')
  })

  it('leaves other errors alone', () => {
    expect(fix(new Error('EADDRINUSE: address already in use'))).toBeUndefined()
    expect(fix('a string')).toBeUndefined()
  })
})
