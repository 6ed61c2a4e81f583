import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { makeProject, monitorsProcess, repo, STACK_LINE, writeFiles } from '../helpers/cli.js'

/**
 * bin/monitors.cjs runs the CLI bundle through a V8 code cache (one file per command, written
 * after the first run). The cache must only ever make a command faster: these run the real bin
 * as a process, with MONITORS_DEBUG=1, which names what the cache did on stderr.
 */
const execFileAsync = promisify(execFile)
const freshDir = () => mkdtempSync(join(tmpdir(), 'monitors-code-cache-test-'))
const cacheFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.bin'))
const run = (args: string[], cacheDir: string, cwd = repo) => monitorsProcess(cwd, args, { MONITORS_DEBUG: '1', MONITORS_CODE_CACHE_DIR: cacheDir })
const withoutNodeOptions = () => Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'NODE_OPTIONS'))
/** The bin run with Node flags of its own (`node <flags> bin/monitors.cjs <args>`). */
async function runWithFlags(flags: string[], args: string[], cacheDir: string, env: Record<string, string> = {}) {
  try {
    const out = await execFileAsync(process.execPath, [...flags, join(repo, 'bin/monitors.cjs'), ...args], {
      // NODE_OPTIONS only as given: the runs compared must differ in the flags named alone
      cwd: repo,
      env: { ...withoutNodeOptions(), NO_COLOR: '1', MONITORS_DEBUG: '1', MONITORS_CODE_CACHE_DIR: cacheDir, ...env },
    })
    return { code: 0, stdout: out.stdout, stderr: out.stderr, output: out.stdout + out.stderr }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '', output: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}
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
    const project = makeProject({
      'a.check.ts': "import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com', recordType: 'A' } })\n",
    })
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

  it("shares one cache between runs whose flags leave V8's code as it is, keeps a V8 flag's apart, and replaces one V8 rejects", async () => {
    const dir = freshDir()
    const plain = await runWithFlags([], ['--help'], dir)
    expect(plain.stderr).toMatch(/code cache: written .*-other\.bin/)
    const [shared] = cacheFiles(dir)
    // Node's own flags, on the command line or in NODE_OPTIONS, change nothing V8 compiles
    for (const [flags, env] of [
      [['--no-warnings'], {}],
      [['--enable-source-maps', '--no-deprecation'], {}],
      [[], { NODE_OPTIONS: '--no-warnings --trace-uncaught' }],
    ] as const) {
      const flagged = await runWithFlags([...flags], ['--help'], dir, env)
      expect(flagged.code, flagged.output).toBe(0)
      expect(flagged.stderr).toContain(`code cache: used ${join(dir, shared)}`)
      expect(flagged.stdout).toBe(plain.stdout)
    }
    expect(cacheFiles(dir)).toEqual([shared])

    // a V8 flag (a heap size) changes the code V8 makes, and V8 refuses a cache made without it: its own
    const heap = await runWithFlags(['--max-old-space-size=300'], ['--help'], dir)
    expect(heap.stderr).toMatch(/code cache: written/)
    const [own] = cacheFiles(dir).filter((name) => name !== shared)
    expect(own).toMatch(/-other\.bin$/)
    expect((await runWithFlags(['--max-old-space-size=300'], ['--help'], dir)).stderr).toContain(`code cache: used ${join(dir, own)}`)

    // the same data under the name of a run without flags: intact, but V8 refuses it
    writeFileSync(join(dir, shared), readFileSync(join(dir, own)))
    const rejected = await runWithFlags([], ['--help'], dir)
    expect(rejected.code).toBe(0)
    expect(rejected.stdout).toBe(plain.stdout)
    expect(rejected.stderr).toMatch(/code cache: rejected by V8, replaced after this run/)
    const next = await runWithFlags([], ['--help'], dir)
    expect(next.stderr).toContain(`code cache: used ${join(dir, shared)}`)
  })

  it('does not grow with each V8 set-up: keeps the current one and the one used last before it, and removes stale caches of the bundle', async () => {
    const dir = freshDir()
    await runWithFlags([], ['--help'], dir)
    const [first] = cacheFiles(dir)
    const bundle = first.split('-')[1]
    // a cache of this bundle from an older Node, not used for a long time
    const stale = `cli-${bundle}-v20.0.0-x64-00000000-plan.bin`
    writeFileSync(join(dir, stale), 'x')
    const longAgo = new Date(Date.now() - 3600 * 1000)
    utimesSync(join(dir, stale), longAgo, longAgo)
    const written: string[] = []
    for (const size of [200, 210, 220, 230]) {
      const result = await runWithFlags([`--max-old-space-size=${size}`], ['--help'], dir)
      expect(result.code, result.output).toBe(0)
      const name = /code cache: written .*\/(cli-[^/]+\.bin)/.exec(result.stderr)?.[1]
      expect(name, result.stderr).toBeDefined()
      written.push(name!)
      expect(cacheFiles(dir).length).toBeLessThanOrEqual(2)
    }
    expect(cacheFiles(dir).sort()).toEqual(written.slice(-2).sort())
    // the plain set-up again: compiled once more, then kept beside the one used last
    const back = await runWithFlags([], ['--help'], dir)
    expect(back.stderr).toMatch(/code cache: written/)
    expect(cacheFiles(dir).sort()).toEqual([first, written[3]].sort())
    const sizes = cacheFiles(dir).map((name) => statSync(join(dir, name)).size)
    expect(Math.max(...sizes)).toBeLessThan(4 * 1024 * 1024)
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
    const project = makeProject({
      'a.check.ts': "import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com', recordType: 'A' } })\n",
    })
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
    writeFileSync(
      probe,
      `process.on('exit', () => {
      const files = Object.keys(require('node:module')._cache)
      const packages = [...new Set(files.map((f) => /node_modules[\\\\/]((?:@[^\\\\/]+[\\\\/])?[^\\\\/]+)/.exec(f)?.[1]).filter(Boolean))]
      process.stderr.write('packages: ' + JSON.stringify(packages) + '\\n')
    })\n`,
    )
    const packages = (stderr: string) => JSON.parse(/^packages: (.*)$/m.exec(stderr)?.[1] ?? 'null') as string[]
    const dir = freshDir()
    const project = makeProject({
      'a.check.ts': "import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com', recordType: 'A' } })\n",
    })
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
    const project = makeProject({
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\n`,
    })
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
    writeFileSync(
      join(probe, 'preload.cjs'),
      `const fs = require('node:fs')
const real = fs.readdirSync
fs.readdirSync = function (dir, ...rest) { fs.appendFileSync(${JSON.stringify(log)}, String(dir) + '\\n'); return real.call(this, dir, ...rest) }
`,
    )
    writeFileSync(log, '')
    const project = makeProject({
      'a.check.ts': "import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com', recordType: 'A' } })\n",
    })
    const result = await monitorsProcess(project, ['validate'], { NODE_OPTIONS: `--require ${join(probe, 'preload.cjs')}` })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('Valid: 1 resource')
    const listed = readFileSync(log, 'utf8').split('\n').filter(Boolean)
    expect(listed.length).toBeGreaterThan(0)
    expect(listed.filter((dir) => !dir.startsWith(project) && !dir.startsWith(repo))).toEqual([])
  })
})
