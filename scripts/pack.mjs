#!/usr/bin/env node
/**
 * Makes the package a team installs, as a tarball: `npm run tarball` writes
 * monitors-as-code-<version>.tgz in the working directory (or in `--out <dir>`).
 *
 *   node scripts/pack.mjs [--out <dir>]
 *
 * It builds first when dist/ is missing or older than src/ and constructs/ (as `npm test`'s check
 * does), then packs the package's files (package.json `files`) with a manifest that has no
 * scripts and no devDependencies: installing the tarball as a dependency then runs nothing of
 * this package (npm never runs `prepare` for a tarball, but lists it among the install scripts
 * to approve), and only better-sqlite3's native build, the local server's SQLite driver (an
 * optional dependency: an install where it cannot be fetched nor compiled leaves it out), runs.
 * Prints the tarball's path on stdout (its only output there).
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const BUNDLE = join(repo, 'dist/cli/main.cjs')

function option(name) {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}

/** The newest modification time of the files under `dir`. */
function newest(dir) {
  let time = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    time = Math.max(time, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return time
}

function fresh() {
  if (!existsSync(BUNDLE)) return false
  const built = statSync(BUNDLE).mtimeMs
  return ['src', 'constructs'].every((dir) => newest(join(repo, dir)) <= built)
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
// progress on stderr: stdout carries the tarball's path alone
if (!fresh()) {
  process.stderr.write('Building (dist/ is missing or older than the sources)...\n')
  execFileSync(npm, ['run', 'build'], { cwd: repo, stdio: ['ignore', 2, 2] })
}

const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))
const stage = mkdtempSync(join(tmpdir(), 'monitors-pack-'))
try {
  for (const entry of manifest.files) cpSync(join(repo, entry), join(stage, entry), { recursive: true })
  const { scripts: _scripts, devDependencies: _dev, allowScripts: _allow, ...installed } = manifest
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(installed, null, 2)}\n`)
  const out = resolve(option('--out') ?? '.')
  mkdirSync(out, { recursive: true })
  const answer = execFileSync(npm, ['pack', stage, '--pack-destination', out, '--json', '--ignore-scripts'], {
    cwd: out,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [packed] = JSON.parse(answer)
  process.stdout.write(`${join(out, packed.filename)}\n`)
  process.stderr.write(
    `${packed.entryCount} files, ${(packed.size / 1e6).toFixed(1)} MB. In a team's repository, copy it to vendor/ (and commit it), then:\n` +
      `  npm install --save-dev ./vendor/${packed.filename} typescript @types/node\n`,
  )
} finally {
  rmSync(stage, { recursive: true, force: true })
}
