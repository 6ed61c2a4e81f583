import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { makeProject, monitorsProcess, repo, STACK_LINE, writeFiles } from '../helpers/cli.js'

/**
 * bin/monitors.cjs runs the CLI bundle through a V8 code cache (one file per command, written
 * after the first run). The cache must only ever make a command faster: these run the real bin
 * as a process, with MONITORS_DEBUG=1, which names what the cache did on stderr.
 */
const freshDir = () => mkdtempSync(join(tmpdir(), 'monitors-code-cache-test-'))
const cacheFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.bin'))
const run = (args: string[], cacheDir: string, cwd = repo) =>
  monitorsProcess(cwd, args, { MONITORS_DEBUG: '1', MONITORS_CODE_CACHE_DIR: cacheDir })
const version = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).version as string

describe('the CLI code cache', () => {
  it('is written by the first run of a command and used by the second, with the same output', async () => {
    const dir = freshDir()
    const first = await run(['--help'], dir)
    expect(first.code).toBe(0)
    expect(first.stderr).toMatch(/code cache: written .*-other\.bin/)
    expect(cacheFiles(dir)).toHaveLength(1)

    const second = await run(['--help'], dir)
    expect(second.code).toBe(0)
    expect(second.stderr).toMatch(/code cache: used .*-other\.bin/)
    expect(second.stderr).not.toContain('written')
    expect(second.stdout).toBe(first.stdout)
    expect(second.stdout).toContain('monitors <command> [options]')
  })

  it('keeps one cache per command, and none for a word that is not a command', async () => {
    const dir = freshDir()
    const project = makeProject({ 'a.check.ts': "import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com', recordType: 'A' } })\n" })
    const unknown = await run(['frobnicate'], dir, project)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('Unknown argument: frobnicate')
    expect(cacheFiles(dir)).toEqual([])

    for (const expected of ['written', 'used']) {
      const validate = await run(['validate'], dir, project)
      expect(validate.code).toBe(0)
      expect(validate.stdout).toContain('Valid: 1 resource')
      expect(validate.stderr).toMatch(new RegExp(`code cache: ${expected} .*-validate\\.bin`))
    }
    expect(cacheFiles(dir)).toEqual([expect.stringMatching(/-validate\.bin$/)])
  })

  it('keeps exit codes and one-line errors without a stack when it is used', async () => {
    const dir = freshDir()
    const project = makeProject({ 'bad.check.ts': "import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('bad', { name: 42 } as any)\n" })
    for (const expected of ['written', 'used']) {
      const result = await run(['validate'], dir, project)
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(new RegExp(`code cache: ${expected}`))
      expect(result.output).toContain('bad.check.ts › DnsCheck "bad" › name: must be a string (got number)')
      expect(result.output).not.toMatch(STACK_LINE)
    }
  })

  it('ignores a corrupt cache and replaces it', async () => {
    const dir = freshDir()
    const first = await run(['--help'], dir)
    const [file] = cacheFiles(dir)
    const data = readFileSync(join(dir, file))
    // flip bytes in the middle of the V8 data: V8 itself would not notice
    data[data.length >> 1] ^= 0xff
    data[(data.length >> 1) + 1] ^= 0xff
    writeFileSync(join(dir, file), data)

    const corrupt = await run(['--help'], dir)
    expect(corrupt.code).toBe(0)
    expect(corrupt.stdout).toBe(first.stdout)
    expect(corrupt.stderr).toMatch(/code cache: corrupt, replaced after this run/)
    expect(corrupt.stderr).toMatch(/code cache: written/)

    writeFileSync(join(dir, file), 'not a cache at all')
    const garbage = await run(['--help'], dir)
    expect(garbage.code).toBe(0)
    expect(garbage.stderr).toMatch(/code cache: corrupt/)

    const next = await run(['--help'], dir)
    expect(next.stderr).toMatch(/code cache: used/)
    expect(next.stdout).toBe(first.stdout)
  })

  it('keeps caches made under other V8 flags apart, and replaces one V8 rejects', async () => {
    const dir = freshDir()
    // NODE_OPTIONS' V8 flags (a heap size, say) change the code V8 makes: their own cache
    const flagged = await monitorsProcess(repo, ['--help'], { MONITORS_DEBUG: '1', MONITORS_CODE_CACHE_DIR: dir, NODE_OPTIONS: '--stack-trace-limit=50' })
    expect(flagged.code).toBe(0)
    const [name] = cacheFiles(dir)
    expect(name).toMatch(/-[0-9a-f]{8}-other\.bin$/)

    // the same data under the name of a run without flags: intact, but V8 refuses it
    const plain = name.replace(/-[0-9a-f]{8}-other\.bin$/, '-other.bin')
    writeFileSync(join(dir, plain), readFileSync(join(dir, name)))
    const rejected = await run(['--help'], dir)
    expect(rejected.code).toBe(0)
    expect(rejected.stdout).toBe(flagged.stdout)
    expect(rejected.stderr).toMatch(/code cache: rejected by V8, replaced after this run/)
    const next = await run(['--help'], dir)
    expect(next.stderr).toMatch(/code cache: used .*-other\.bin/)
  })

  it('removes, in a shared folder, caches unused for 30 days and files of killed writers, and keeps the rest', async () => {
    const dir = freshDir()
    const longAgo = new Date(Date.now() - 40 * 24 * 3600 * 1000)
    const files = {
      'cli-0000000000000000-v20.0.0-x64-plan.bin': longAgo, // another install's, unused for 40 days
      'cli-1111111111111111-v20.0.0-x64-plan.bin': new Date(), // another install's, in use
      'cli-2222222222222222-v20.0.0-x64-plan.bin.123.tmp': longAgo, // a writer killed long ago
      'notes.txt': longAgo, // not the cache's
    }
    for (const [name, time] of Object.entries(files)) {
      writeFileSync(join(dir, name), 'x')
      utimesSync(join(dir, name), time, time)
    }
    const result = await run(['--help'], dir)
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/code cache: written/)
    const left = readdirSync(dir)
    expect(left).toHaveLength(3)
    expect(left).toEqual(expect.arrayContaining(['cli-1111111111111111-v20.0.0-x64-plan.bin', 'notes.txt', expect.stringMatching(/-other\.bin$/)]))
  })

  it('runs the command when the cache folder cannot be created', async () => {
    const blocker = join(freshDir(), 'a-file')
    writeFileSync(blocker, '')
    const project = makeProject({ 'a.check.ts': "import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com', recordType: 'A' } })\n" })
    for (let i = 0; i < 2; i++) {
      const result = await run(['validate'], join(blocker, 'cache'), project)
      expect(result.code).toBe(0)
      expect(result.stdout).toContain('Valid: 1 resource')
      expect(result.stderr).toMatch(/code cache: no folder this user may write to/)
      expect(result.stderr).not.toMatch(STACK_LINE)
    }
  })

  it('runs the command when the cache file cannot be written', async () => {
    // the name the cache takes, from a run elsewhere; here a folder is in its way
    const elsewhere = freshDir()
    await run(['--help'], elsewhere)
    const [name] = cacheFiles(elsewhere)
    const dir = freshDir()
    writeFiles(join(dir, name), { 'in-the-way': '' })
    for (let i = 0; i < 2; i++) {
      const result = await run(['--help'], dir)
      expect(result.code).toBe(0)
      expect(result.stdout).toContain('monitors <command> [options]')
      expect(result.stderr).toMatch(/code cache: not written/)
      expect(result.stderr).not.toMatch(STACK_LINE)
    }
    expect(readdirSync(dir)).toEqual([name])
  })

  it.skipIf(process.platform === 'win32')('writes caches only to a folder of this user that nobody else may write to', async () => {
    const open = freshDir()
    chmodSync(open, 0o777)
    const result = await run(['--help'], open)
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/is not this user's own folder, or others may write to it: not used/)
    expect(cacheFiles(open)).toEqual([])

    const dir = join(freshDir(), 'new')
    await run(['--help'], dir)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, cacheFiles(dir)[0])).mode & 0o777).toBe(0o600)
  })

  it('loads, through the bin, only what the command uses', async () => {
    // lists the npm packages the process required, as it exits
    const probe = join(freshDir(), 'probe.cjs')
    writeFileSync(probe, `process.on('exit', () => {
      const files = Object.keys(require('node:module')._cache)
      const packages = [...new Set(files.map((f) => /node_modules[\\\\/]((?:@[^\\\\/]+[\\\\/])?[^\\\\/]+)/.exec(f)?.[1]).filter(Boolean))]
      process.stderr.write('packages: ' + JSON.stringify(packages) + '\\n')
    })\n`)
    const packages = (stderr: string) => JSON.parse(/^packages: (.*)$/m.exec(stderr)?.[1] ?? 'null') as string[]
    const dir = freshDir()
    const project = makeProject({ 'a.check.ts': "import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com', recordType: 'A' } })\n" })
    for (let i = 0; i < 2; i++) {
      const env = { MONITORS_DEBUG: '1', MONITORS_CODE_CACHE_DIR: dir, NODE_OPTIONS: `--require ${probe}` }
      const help = await monitorsProcess(repo, ['--help'], env)
      expect(help.code).toBe(0)
      expect(packages(help.stderr)).toEqual([])
      const validate = await monitorsProcess(project, ['validate'], env)
      expect(validate.code).toBe(0)
      expect(packages(validate.stderr)).toContain('jiti')
      for (const heavy of ['undici', 'fastify', 'better-sqlite3', 'pg']) expect(packages(validate.stderr)).not.toContain(heavy)
    }
  })

  it("imports files outside the bundle only through the bin's own import(), which a cached script lacks", async () => {
    // Node 20 drops a vm.Script's dynamic-import callback when it is built from cached data:
    // an import() compiled into the bundle fails from a command's second run on
    const source = readFileSync(join(repo, 'dist/cli/main.cjs'), 'utf8')
    const file = ts.createSourceFile('main.cjs', source, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS)
    const imports: string[] = []
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        let fn: ts.Node | undefined = node.parent
        while (fn && !ts.isFunctionDeclaration(fn)) fn = fn.parent
        imports.push(fn && ts.isFunctionDeclaration(fn) ? (fn.name?.text ?? '(anonymous)') : '(top level)')
      }
      ts.forEachChild(node, visit)
    }
    visit(file)
    expect(imports.filter((name) => name !== 'nativeImport')).toEqual([])
    // and the bin hands its import() to the bundle on every run, cache or not
    const dir = freshDir()
    const probe = join(dir, 'probe.cjs')
    writeFileSync(probe, `process.on('exit', () => process.stderr.write('host import: ' + typeof globalThis[Symbol.for('monitors.nativeImport')] + '\\n'))\n`)
    for (let i = 0; i < 2; i++) {
      const result = await monitorsProcess(repo, ['--help'], { MONITORS_DEBUG: '1', MONITORS_CODE_CACHE_DIR: dir, NODE_OPTIONS: `--require ${probe}` })
      expect(result.code).toBe(0)
      expect(result.stderr).toContain('host import: function')
      if (i === 1) expect(result.stderr).toContain('code cache: used')
    }
  })

  it('answers --version without loading the CLI bundle', async () => {
    const dir = freshDir()
    const result = await run(['--version'], dir)
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(`${version}\n`)
    expect(result.stderr).toBe('')
    expect(cacheFiles(dir)).toEqual([])
  })

  it("still runs from the command's former path, bin/monitors.js, with the same output and exit codes", async () => {
    const dir = freshDir()
    const former = join(repo, 'bin', 'monitors.js')
    const versionRun = await monitorsProcess(repo, ['--version'], { MONITORS_CODE_CACHE_DIR: dir }, former)
    expect(versionRun).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' })
    const project = makeProject({ 'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\n` })
    const now = await monitorsProcess(project, ['validate'], { MONITORS_CODE_CACHE_DIR: dir })
    const before = await monitorsProcess(project, ['validate'], { MONITORS_CODE_CACHE_DIR: dir }, former)
    expect(before.code).toBe(0)
    expect(before.stdout).toBe(now.stdout)
    const unknown = await monitorsProcess(repo, ['no-such-command'], { MONITORS_CODE_CACHE_DIR: dir }, former)
    expect(unknown.code).not.toBe(0)
    expect(unknown.output).not.toMatch(STACK_LINE)
  })

  it('is off with MONITORS_CODE_CACHE=0', async () => {
    const dir = freshDir()
    const result = await monitorsProcess(repo, ['--help'], { MONITORS_DEBUG: '1', MONITORS_CODE_CACHE: '0', MONITORS_CODE_CACHE_DIR: dir })
    expect(result.code).toBe(0)
    expect(result.stderr).not.toContain('code cache')
    expect(cacheFiles(dir)).toEqual([])
  })
})

describe('the CLI start', () => {
  it('lists no folder above the project (yargs looks for a package.json at the package root only)', async () => {
    // a preload records every folder the process lists; a project under a crowded folder (as
    // /tmp often is) paid for listing it on every command
    const probe = freshDir()
    const log = join(probe, 'listed.txt')
    writeFileSync(join(probe, 'preload.cjs'), `const fs = require('node:fs')
const real = fs.readdirSync
fs.readdirSync = function (dir, ...rest) { fs.appendFileSync(${JSON.stringify(log)}, String(dir) + '\\n'); return real.call(this, dir, ...rest) }
`)
    writeFileSync(log, '')
    const project = makeProject({ 'a.check.ts': "import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com', recordType: 'A' } })\n" })
    const result = await monitorsProcess(project, ['validate'], { NODE_OPTIONS: `--require ${join(probe, 'preload.cjs')}` })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('Valid: 1 resource')
    const listed = readFileSync(log, 'utf8').split('\n').filter(Boolean)
    expect(listed.length).toBeGreaterThan(0)
    expect(listed.filter((dir) => !dir.startsWith(project) && !dir.startsWith(repo))).toEqual([])
  })
})
