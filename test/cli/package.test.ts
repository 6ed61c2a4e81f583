/**
 * What `npm publish` (and `npm run tarball`) would ship: exactly the files package.json `files`
 * names, no test, bench or source file; and Node.js versions every dependency agrees with.
 * .ci/registry-line publishes the package into a loopback registry and installs it from there.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repo } from '../helpers/cli.js'

const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))
const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8'))
// fastify's semver, hoisted to the root
const semver = createRequire(join(repo, 'package.json'))('semver') as {
  subset(sub: string, dom: string): boolean
  satisfies(version: string, range: string): boolean
}

/** Every file under `path` (itself when it is a file), relative to the repository. */
function walk(path: string): string[] {
  if (!statSync(path).isDirectory()) return [relative(repo, path)]
  return readdirSync(path).flatMap((name) => walk(join(path, name)))
}

describe('the published package', () => {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
  )
  const files: string[] = packed.files.map((f: { path: string }) => f.path).sort()

  it('holds exactly the files package.json `files` names, and package.json', () => {
    const named = ['package.json', ...manifest.files.flatMap((entry: string) => walk(join(repo, entry)))]
    // npm leaves these out wherever they are
    const npmIgnores = (path: string) => /(^|\/)(\.DS_Store|\.npmrc|npm-debug\.log|package-lock\.json|node_modules)(\/|$)|\.orig$/.test(path)
    expect(files).toEqual([...new Set(named)].filter((path) => !npmIgnores(path)).sort())
    expect(files).toContain('bin/monitors.cjs')
    expect(files).toContain('dist/cli/main.cjs')
    expect(files).toContain('dist/constructs/index.d.ts')
    expect(files).toContain('docs/install.md')
  })

  it('holds no test, bench, source or CI file, and no bundle analysis', () => {
    const stray = files.filter(
      (path) =>
        /^(test|bench|scripts|src|constructs|\.ci|\.github|node_modules)\//.test(path) ||
        /\.test\.[cm]?[jt]s$/.test(path) ||
        /^dist\/cli\/meta\./.test(path) ||
        /^(containers\/|tsconfig.*\.json|vitest\.config\.ts|\.containerignore)/.test(path),
    )
    expect(stray).toEqual([])
    expect(existsSync(join(repo, 'test'))).toBe(true)
  })
})

describe('Node.js versions', () => {
  const ours: string = manifest.engines.node
  const packages = Object.entries(lock.packages as Record<string, { engines?: { node?: string }; optional?: boolean; devOptional?: boolean }>).filter(
    ([path, entry]) => path !== '' && entry.engines?.node !== undefined,
  )

  it('the lock file says what package.json says', () => {
    expect(lock.packages[''].engines.node).toBe(ours)
    expect(ours).toBe('^20.19.0 || ^22.12.0 || >=24')
  })

  it('every dependency accepts every Node.js version package.json accepts', () => {
    const disagree = packages
      .filter(([_path, entry]) => !entry.optional && !entry.devOptional && !semver.subset(ours, entry.engines?.node as string))
      .map(([path, entry]) => `${path} wants ${entry.engines?.node}`)
    expect(disagree).toEqual([])
  })

  it('an optional dependency installed here (the SQLite driver) accepts the Node.js versions the CLI is tested on', () => {
    const installed = packages.filter(([path, entry]) => (entry.optional || entry.devOptional) && existsSync(join(repo, path)))
    expect(installed.map(([path]) => path)).toContain('node_modules/better-sqlite3')
    for (const [path, entry] of installed) {
      for (const version of ['20.19.0', '22.12.0', '24.0.0'])
        expect(semver.satisfies(version, entry.engines?.node as string), `${path} on ${version}`).toBe(true)
    }
  })
})
