/**
 * `monitors init` sets a team's repository up for review: a tsconfig.json so that
 * `tsc --noEmit` type-checks the config and the check files, and a .gitignore that keeps
 * node_modules/ and .monitors/ out of git. Existing files are never overwritten.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { monitors, repo } from '../helpers/cli.js'

const run = promisify(execFile)

/** A team's repository with the package installed (linked), TypeScript and Node's types. */
function teamRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'monitors-team-'))
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true })
  symlinkSync(repo, join(dir, 'node_modules', 'monitors-as-code'), 'dir')
  symlinkSync(join(repo, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir')
  return dir
}

/**
 * The compilers a team gets: the project's own TypeScript 5 (`typescript`), and TypeScript 7, what
 * `npm install typescript` brings today (the native port: its `bin/tsc` starts a platform binary),
 * installed by `npm ci` as the devDependency alias `typescript-7`.
 */
const COMPILERS = [
  { name: 'TypeScript 5', bin: join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), major: '5' },
  { name: 'TypeScript 7', bin: join(repo, 'node_modules', 'typescript-7', 'bin', 'tsc'), major: '7' },
]

async function tsc(dir: string, bin = COMPILERS[0].bin, args = ['--noEmit', '-p', dir]): Promise<{ code: number; output: string }> {
  try {
    const out = await run(process.execPath, [bin, ...args], { cwd: dir })
    return { code: 0, output: out.stdout + out.stderr }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { code: e.code ?? -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}

describe('monitors init for a team repository', () => {
  it('writes a tsconfig.json with which tsc --noEmit type-checks the check files, and a .gitignore', async () => {
    const dir = teamRepo()
    const init = await monitors(dir, ['init', '.', '--project-name', 'team'])
    expect(init.code, init.output).toBe(0)
    expect(init.stderr).toContain('created tsconfig.json')
    expect(init.stderr).toContain('created .gitignore (node_modules/, .monitors/)')
    expect(readFileSync(join(dir, '.gitignore'), 'utf8').split('\n')).toEqual(['node_modules/', '.monitors/', ''])
    const tsconfig = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8'))
    expect(tsconfig.compilerOptions).toMatchObject({ strict: true, noEmit: true })
    expect(tsconfig.include).toEqual(expect.arrayContaining(['monitoring.config.ts', '**/*.check.ts']))

    const clean = await tsc(dir)
    expect(clean.code, clean.output).toBe(0)

    // a helper module imported without an extension, and a type error in a check file
    writeFileSync(join(dir, 'checks', 'names.ts'), `export const prefix: string = 'team'\n`)
    writeFileSync(
      join(dir, 'checks', 'broken.check.ts'),
      `import { DnsCheck } from 'monitors-as-code'\nimport { prefix } from './names'\nnew DnsCheck('broken', { name: prefix, request: { query: 'a.example.com' }, frequency: 'ten' })\n`,
    )
    const broken = await tsc(dir)
    expect(broken.code).not.toBe(0)
    expect(broken.output).toMatch(/checks\/broken\.check\.ts\(3,\d+\): error TS\d+/)
    expect(broken.output).not.toContain('names')
  }, 120_000)

  for (const compiler of COMPILERS) {
    it(`the tsconfig.json init writes type-checks the config and the example with ${compiler.name} (process.env needs types: ["node"])`, async () => {
      const version = await tsc(repo, compiler.bin, ['--version'])
      expect(version.output, `${compiler.name} is installed by npm ci (package.json devDependencies)`).toMatch(new RegExp(`Version ${compiler.major}\\.`))
      const dir = teamRepo()
      const init = await monitors(dir, ['init', '.', '--project-name', 'team'])
      expect(init.code, init.output).toBe(0)
      const clean = await tsc(dir, compiler.bin)
      expect(clean.output).not.toContain("Cannot find name 'process'")
      expect(clean.code, clean.output).toBe(0)
      writeFileSync(
        join(dir, 'checks', 'broken.check.ts'),
        `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('broken', { name: 'b', request: { query: 'a.example.com' }, frequency: 'ten' })\n`,
      )
      const broken = await tsc(dir, compiler.bin)
      expect(broken.code).not.toBe(0)
      expect(broken.output).toMatch(/checks\/broken\.check\.ts\(2,\d+\): error TS\d+/)
    }, 120_000)
  }

  it('names the next steps by what the folder lacks: the registry line, and the tarball for a team without a registry', async () => {
    const team = teamRepo()
    const linked = await monitors(team, ['init', '.'])
    expect(linked.code, linked.output).toBe(0)
    const next = linked.stderr.slice(linked.stderr.indexOf('Next:'))
    expect(next).toContain('npm install --save-dev typescript   (for tsc --noEmit; not installed here yet)')
    expect(next).not.toContain('monitors-as-code')

    const bare = mkdtempSync(join(tmpdir(), 'monitors-bare-'))
    const fresh = await monitors(bare, ['init', '.'])
    expect(fresh.code, fresh.output).toBe(0)
    const version = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).version
    expect(fresh.stderr).toContain('npm install --save-dev monitors-as-code typescript @types/node   (monitors-as-code is not installed here')
    expect(fresh.stderr).toContain(`./vendor/monitors-as-code-${version}.tgz made by "npm run tarball"`)
  })

  it('never overwrites an existing tsconfig.json or .gitignore, and says what it skipped', async () => {
    const dir = teamRepo()
    writeFileSync(join(dir, 'tsconfig.json'), '{ "compilerOptions": { "strict": false } }\n')
    writeFileSync(join(dir, '.gitignore'), 'dist\nnode_modules\n.monitors/\n')
    const init = await monitors(dir, ['init', '.'])
    expect(init.code, init.output).toBe(0)
    expect(init.stderr).toMatch(/^skipped tsconfig\.json \(it exists and is never overwritten/m)
    expect(init.stderr).toMatch(/^skipped \.gitignore \(it already ignores node_modules\/ and \.monitors\/\)/m)
    expect(readFileSync(join(dir, 'tsconfig.json'), 'utf8')).toBe('{ "compilerOptions": { "strict": false } }\n')
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('dist\nnode_modules\n.monitors/\n')
  })
})
