/**
 * Transpiled check files are kept in the project's node_modules/.cache/monitors-as-code/<version>/
 * (never committed), reused while a file's content is the same, and redone when it changes.
 * Beside them, V8's compiled code of the config and the check files (`*.v8`), so that a command
 * after the first one neither transpiles nor compiles them again. MONITORS_DEBUG_CODE_CACHE=1
 * prints what happened to each file's entry on stderr.
 */
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeCacheCounts } from '../../src/project/compile-cache.js'
import { loadProject } from '../../src/project/index.js'
import { makeProject, monitors, monitorsProcess, repo, STACK_LINE, writeFiles, type CliResult } from '../helpers/cli.js'
import { FIXTURES, tempProject } from './helpers.js'

const version = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).version as string
const check = (props: string) =>
  `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('cached-dns', { name: 'Cached DNS', request: { query: 'a.example.com' }${props} })\n`

const DEBUG = { MONITORS_DEBUG_CODE_CACHE: '1' }
/** `monitors validate` as its own process (each run starts with nothing in memory), with the cache's report. */
const validate = (dir: string, env: Record<string, string> = {}) => monitorsProcess(dir, ['validate'], { ...DEBUG, ...env })
/** The code cache's report of a run: `hit shop.check.ts`, ... */
const events = (run: CliResult) =>
  run.stderr
    .split('\n')
    .filter((line) => line.startsWith('code cache: '))
    .map((line) => line.slice('code cache: '.length))
/** What a user sees of a run: the output without the cache's report. */
const shown = (run: CliResult) =>
  run.output
    .split('\n')
    .filter((line) => !line.startsWith('code cache: '))
    .join('\n')
const cacheDir = (dir: string) => join(dir, 'node_modules', '.cache', 'monitors-as-code', version)
/** The code cache entry of a file of the project's root folder. */
function entryOf(dir: string, file: string): string {
  const name = readdirSync(cacheDir(dir)).find((n) => n.includes(`-${file}.`) && n.endsWith('.v8'))
  expect(name, `no code cache entry for ${file}`).toBeDefined()
  return join(cacheDir(dir), name!)
}
const BAD_FREQUENCY = /frequency: must be one of .*\(got 7\)/

describe('compile cache', () => {
  it('keeps transpiled check files under node_modules/.cache/monitors-as-code/<version>, keyed by content', async () => {
    const dir = makeProject({ 'shop.check.ts': check('') })
    const first = await monitors(dir, ['validate'])
    expect(first.code, first.output).toBe(0)
    const cache = join(dir, 'node_modules', '.cache', 'monitors-as-code', version)
    expect(existsSync(cache)).toBe(true)
    expect(readdirSync(cache).some((name) => name.includes('shop.check'))).toBe(true)

    // the same file name with other content: the cached output is not reused
    writeFileSync(join(dir, 'shop.check.ts'), check(', frequncy: 5'))
    const second = await monitors(dir, ['validate'])
    expect(second.code).toBe(1)
    expect(second.output).toContain('frequncy: is not a known field (did you mean frequency?)')
  })
})

describe('V8 code cache', () => {
  it('compiles the config and each check file once; the next command runs the stored code', async () => {
    const dir = makeProject({ 'shop.check.ts': check('') })
    const first = await validate(dir)
    expect(first.code, first.output).toBe(0)
    expect(events(first)).toEqual(['miss monitoring.config.ts', 'stored monitoring.config.ts', 'miss shop.check.ts', 'stored shop.check.ts'])
    expect(readFileSync(entryOf(dir, 'shop.check.ts')).subarray(0, 22).toString()).toBe('monitors-code-cache-1 ')

    const second = await validate(dir)
    expect(second.code, second.output).toBe(0)
    expect(events(second)).toEqual(['hit monitoring.config.ts', 'hit shop.check.ts'])
    expect(shown(second)).toBe(shown(first))
    expect(second.stdout).toContain('Valid: 1 resource')
  })

  it('recompiles an edited file, even when its length is unchanged, and keeps the others', async () => {
    const dir = makeProject({ 'shop.check.ts': check(', frequency: 7') })
    expect((await validate(dir)).output).toMatch(BAD_FREQUENCY)
    // V8 accepts a cache made for any source of the same length: the entry is keyed by content
    writeFileSync(join(dir, 'shop.check.ts'), check(', frequency: 5'))
    const edited = await validate(dir)
    expect(edited.code, edited.output).toBe(0)
    expect(events(edited)).toEqual(['hit monitoring.config.ts', 'stale shop.check.ts', 'stored shop.check.ts'])
    expect(events(await validate(dir))).toEqual(['hit monitoring.config.ts', 'hit shop.check.ts'])
    // back to the first content: compiled again, never the entry of another content
    writeFileSync(join(dir, 'shop.check.ts'), check(', frequency: 7'))
    const back = await validate(dir)
    expect(back.code).toBe(1)
    expect(back.output).toMatch(BAD_FREQUENCY)
    expect(events(back)).toContain('stale shop.check.ts')
  })

  const damage: Array<[string, (whole: Buffer) => Buffer]> = [
    ['with bytes flipped in its data', (whole) => Buffer.from(whole).map((byte, i) => (i > whole.length / 2 && i % 7 === 0 ? byte ^ 0xff : byte)) as Buffer],
    ['cut in half', (whole) => whole.subarray(0, Math.floor(whole.length / 2))],
    ['without its header', () => Buffer.from('not a cache at all')],
    ['that is empty', () => Buffer.alloc(0)],
  ]
  it.each(damage)('ignores and replaces an entry %s, which V8 itself could crash on', async (_what, damaged) => {
    const dir = makeProject({ 'shop.check.ts': check('') })
    const first = await validate(dir)
    const entry = entryOf(dir, 'shop.check.ts')
    writeFileSync(entry, damaged(readFileSync(entry)))
    const run = await validate(dir)
    expect(run.code, run.output).toBe(0)
    expect(shown(run)).toBe(shown(first))
    expect(events(run)).toEqual(['hit monitoring.config.ts', 'invalid shop.check.ts', 'stored shop.check.ts'])
    expect(events(await validate(dir))).toEqual(['hit monitoring.config.ts', 'hit shop.check.ts'])
  })

  it('keeps an entry per set of V8 flags: commands alternating them both run stored code', async () => {
    const dir = makeProject({ 'shop.check.ts': check('') })
    const plain = { NODE_OPTIONS: '' }
    const flagged = { NODE_OPTIONS: '--max-old-space-size=1000' }
    const first = await validate(dir, plain)
    expect(first.code, first.output).toBe(0)
    const second = await validate(dir, flagged)
    expect(second.code, second.output).toBe(0)
    expect(shown(second)).toBe(shown(first))
    // a Node.js with other flags has entries of its own: it neither uses nor replaces the first ones
    expect(events(second)).toEqual(['miss monitoring.config.ts', 'stored monitoring.config.ts', 'miss shop.check.ts', 'stored shop.check.ts'])
    for (let round = 0; round < 2; round++) {
      expect(events(await validate(dir, plain))).toEqual(['hit monitoring.config.ts', 'hit shop.check.ts'])
      expect(events(await validate(dir, flagged))).toEqual(['hit monitoring.config.ts', 'hit shop.check.ts'])
    }
    expect(readdirSync(cacheDir(dir)).filter((name) => name.includes('-shop.check.ts.') && name.endsWith('.v8'))).toHaveLength(2)
  })

  it('keeps at most four entries per file, removing the oldest written', async () => {
    const dir = makeProject({ 'shop.check.ts': check('') })
    const flags = ['', '--max-old-space-size=1000', '--max-old-space-size=2000', '--max-old-space-size=3000', '--max-old-space-size=4000']
    for (const flag of flags) expect((await validate(dir, { NODE_OPTIONS: flag })).code).toBe(0)
    expect(readdirSync(cacheDir(dir)).filter((name) => name.includes('-shop.check.ts.') && name.endsWith('.v8'))).toHaveLength(4)
    // the newest are kept: the last flags still hit, the first ones compile again
    expect(events(await validate(dir, { NODE_OPTIONS: '--max-old-space-size=4000' }))).toEqual(['hit monitoring.config.ts', 'hit shop.check.ts'])
    expect(events(await validate(dir, { NODE_OPTIONS: '' }))).toContain('miss shop.check.ts')
  })

  it("replaces an entry V8 refuses: V8 data another Node.js made, under this one's key", async () => {
    const dir = makeProject({ 'shop.check.ts': check('') })
    expect((await validate(dir, { NODE_OPTIONS: '' })).code).toBe(0)
    const ownEntry = entryOf(dir, 'shop.check.ts')
    expect((await validate(dir, { NODE_OPTIONS: '--max-old-space-size=1000' })).code).toBe(0)
    const other = readdirSync(cacheDir(dir)).find((name) => name.includes('-shop.check.ts.') && name.endsWith('.v8') && join(cacheDir(dir), name) !== ownEntry)!
    const otherBytes = readFileSync(join(cacheDir(dir), other))
    const own = readFileSync(ownEntry)
    const [format, key] = own.subarray(0, own.indexOf(10)).toString('latin1').split(' ')
    const [, , dataHash, length] = otherBytes.subarray(0, otherBytes.indexOf(10)).toString('latin1').split(' ')
    writeFileSync(ownEntry, Buffer.concat([Buffer.from(`${format} ${key} ${dataHash} ${length}\n`, 'latin1'), otherBytes.subarray(otherBytes.indexOf(10) + 1)]))
    const refused = await validate(dir, { NODE_OPTIONS: '' })
    expect(refused.code, refused.output).toBe(0)
    expect(events(refused)).toEqual(['hit monitoring.config.ts', 'rejected shop.check.ts', 'stored shop.check.ts'])
    expect(events(await validate(dir, { NODE_OPTIONS: '' }))).toEqual(['hit monitoring.config.ts', 'hit shop.check.ts'])
  })

  it('goes on when an entry cannot be written, or there is no cache folder at all', async () => {
    const dir = makeProject({ 'shop.check.ts': check('') })
    const first = await validate(dir)
    // a folder where the entry should be: it can be neither read nor replaced
    const entry = entryOf(dir, 'shop.check.ts')
    rmSync(entry)
    mkdirSync(entry)
    const blocked = await validate(dir)
    expect(blocked.code, blocked.output).toBe(0)
    expect(shown(blocked)).toBe(shown(first))
    expect(events(blocked)).toEqual(['hit monitoring.config.ts', 'miss shop.check.ts', 'unwritten shop.check.ts'])
    expect(readdirSync(cacheDir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([])

    // a file where the cache folder should be: nothing is cached, nothing breaks
    rmSync(cacheDir(dir), { recursive: true })
    writeFileSync(cacheDir(dir), 'in the way')
    const none = await validate(dir)
    expect(none.code, none.output).toBe(0)
    expect(shown(none)).toBe(shown(first))
    expect(events(none)).toEqual([])
  })

  it('leaves whole entries when two commands write them at once', async () => {
    const dir = makeProject({ 'a.check.ts': check(''), 'b.check.ts': check('').replaceAll('cached-dns', 'other-dns') })
    const runs = await Promise.all([validate(dir), validate(dir), validate(dir)])
    for (const run of runs) {
      expect(run.code, run.output).toBe(0)
      expect(run.stdout).toContain('Valid: 2 resources')
    }
    expect(readdirSync(cacheDir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([])
    expect(events(await validate(dir))).toEqual(['hit monitoring.config.ts', 'hit a.check.ts', 'hit b.check.ts'])
  })

  const located: Array<[string, () => string, RegExp[]]> = [
    [
      'syntax errors',
      () =>
        makeProject({
          // sucrase gives up: babel's location
          'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\n\nnew DnsCheck('a', {\n  name: 'A',,\n})\n`,
          // sucrase lets it through, V8 refuses it
          'b.check.ts': `const twice = 1\nconst twice = 2\n`,
          'c.check.ts': check(''),
        }),
      [/^✖ a\.check\.ts:4:\d+ › syntax error: .+/m, /^✖ b\.check\.ts:2:\d+ › syntax error: .*twice.*/m],
    ],
    [
      'throws and missing modules',
      () => copyFixture('throws'),
      [/^✖ a\.check\.ts:5 › threw an error: NO_SUCH_VARIABLE_FOR_TESTS is not set$/m, /^✖ b\.check\.ts:3 › cannot find module "\.\/no-such-module\.js"$/m],
    ],
    [
      'lines of duplicates',
      () => copyFixture('duplicates'),
      [/^✖ b\.check\.ts › DnsCheck "shop-dns" › duplicate logical id: DnsCheck "shop-dns" is also declared at a\.check\.ts:3;/m],
    ],
    [
      'constructs made in the config or at the top of a helper',
      () => copyFixture('references'),
      [
        /^✖ lib\/services\.ts › StatusPageService "search" › is created at lib\/services\.ts:3, /m,
        /^✖ monitoring\.config\.ts › StatusPageService "from-config" › is created at monitoring\.config\.ts:4, /m,
      ],
    ],
    [
      "constructs made by a helper's function",
      helperProject,
      [
        /^✖ b\.check\.ts › DnsCheck "made" › duplicate logical id: DnsCheck "made" is also declared at a\.check\.ts:4;/m,
        /^✖ lib\/make\.ts › DnsCheck "top" › is created at lib\/make\.ts:3, /m,
      ],
    ],
  ]
  it.each(located)('reports %s exactly as without it', async (_what, project, expected) => {
    const dir = project()
    const cold = await validate(dir)
    const warm = await validate(dir)
    expect(cold.code, cold.output).toBe(1)
    expect(warm.code).toBe(1)
    expect(
      events(warm).some((e) => e.startsWith('hit ')),
      warm.stderr,
    ).toBe(true)
    expect(shown(warm)).toBe(shown(cold))
    expect(warm.output).not.toMatch(STACK_LINE)
    for (const line of expected) expect(warm.output).toMatch(line)
  })

  it('sees an edit when a project is loaded twice in one process', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'twice' }\n`,
      'a.check.ts': check(', frequency: 5'),
    })
    const before = codeCacheCounts()
    const first = await loadProject({ cwd: dir })
    expect(first.resources.map((r) => r.payload.frequency)).toEqual([5])
    writeFileSync(join(dir, 'a.check.ts'), check(', frequency: 2'))
    const second = await loadProject({ cwd: dir })
    expect(second.resources.map((r) => r.payload.frequency)).toEqual([2])
    const third = await loadProject({ cwd: dir })
    expect(third.resources.map((r) => r.payload.frequency)).toEqual([2])
    const after = codeCacheCounts()
    // config: miss, hit, hit; check file: miss, stale, hit
    expect(after.miss - before.miss).toBe(2)
    expect(after.stale - before.stale).toBe(1)
    expect(after.hit - before.hit).toBe(3)
  })

  it("keeps jiti's module behaviour: default and namespace imports, import.meta, a helper importing a check file back", async () => {
    const dir = tempProject({
      'monitoring.config.ts': `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'interop' })\n`,
      'lib/def.ts': `export default { id: 'from-default' }\nexport const other = 'named'\n`,
      'lib/shared.ts': `import { first } from '../a.check.js'\nexport const seen = () => first?.logicalId ?? 'nothing yet'\n`,
      'a.check.ts':
        `import { DnsCheck } from 'monitors-as-code'\nimport { seen } from './lib/shared.js'\n` +
        `export const first = new DnsCheck('first', { name: 'First ' + import.meta.url.split('/').pop(), request: { query: 'a.example.com' } })\n` +
        `new DnsCheck('second', { name: 'Second saw ' + seen(), request: { query: 'b.example.com' } })\n`,
      'b.check.ts':
        `import def from './lib/def.js'\nimport * as ns from './lib/def.js'\nimport { DnsCheck } from 'monitors-as-code'\n` +
        `new DnsCheck(def.id, { name: ns.default.id + ' ' + ns.other, request: { query: 'c.example.com' } })\n`,
      'c.check.ts': `import { DnsCheck } from 'monitors-as-code'\nimport { seen } from './lib/shared.js'\nnew DnsCheck('third', { name: 'Third saw ' + seen(), request: { query: 'd.example.com' } })\n`,
    })
    const before = codeCacheCounts()
    for (let load = 0; load < 2; load++) {
      const project = await loadProject({ cwd: dir })
      expect(project.resources.map((r) => `${r.logicalId}: ${String(r.payload.name)} (${r.file})`)).toEqual([
        'first: First a.check.ts (a.check.ts)',
        'from-default: from-default named (b.check.ts)',
        'second: Second saw first (a.check.ts)',
        'third: Third saw first (c.check.ts)',
      ])
    }
    expect(codeCacheCounts().hit - before.hit).toBe(4) // the second load: the config and three check files
  })
})

describe('V8 code cache without node_modules', () => {
  const uid = process.getuid?.()
  /** A project with no node_modules above it: the cache goes to the temporary folder `tmp`. */
  function bare(): { dir: string; tmp: string; own: string } {
    const dir = tempProject(
      {
        'monitoring.config.ts': `export default { projectName: 'bare' }\n`,
        'a.check.ts': check('').replace(`'monitors-as-code'`, JSON.stringify(join(repo, 'dist', 'constructs', 'index.js'))),
      },
      { link: false },
    )
    const tmp = mkdtempSync(join(tmpdir(), 'monitors-tmpdir-'))
    return { dir, tmp, own: join(tmp, `monitors-as-code-cache-${uid}`) }
  }

  it.runIf(uid !== undefined)("keeps it in a folder of the user's own under the temporary folder, closed to others", async () => {
    const { dir, tmp, own } = bare()
    const first = await validate(dir, { TMPDIR: tmp })
    expect(first.code, first.output).toBe(0)
    expect(statSync(own).mode & 0o777).toBe(0o700)
    expect(readdirSync(join(own, version)).some((n) => n.endsWith('.v8'))).toBe(true)
    expect(events(await validate(dir, { TMPDIR: tmp }))).toEqual(['hit monitoring.config.ts', 'hit a.check.ts'])

    // found open to others: closed again before use
    chmodSync(own, 0o777)
    const reopened = await validate(dir, { TMPDIR: tmp })
    expect(reopened.code).toBe(0)
    expect(statSync(own).mode & 0o777).toBe(0o700)
  })

  it.runIf(uid !== undefined)('uses no cache when that folder is a link or belongs to someone else', async () => {
    const { dir, tmp, own } = bare()
    const elsewhere = mkdtempSync(join(tmpdir(), 'monitors-elsewhere-'))
    symlinkSync(elsewhere, own, 'dir')
    const linked = await validate(dir, { TMPDIR: tmp })
    expect(linked.code, linked.output).toBe(0)
    expect(linked.stdout).toContain('Valid: 1 resource')
    expect(events(linked)).toEqual([])
    expect(readdirSync(elsewhere)).toEqual([])

    if (uid !== 0) return // only root can hand a folder to another user
    rmSync(own)
    mkdirSync(own, { mode: 0o700 })
    chownSync(own, 65534, 65534)
    const foreign = await validate(dir, { TMPDIR: tmp })
    expect(foreign.code, foreign.output).toBe(0)
    expect(events(foreign)).toEqual([])
    expect(readdirSync(own)).toEqual([])
  })
})

/** A copy of a fixture project, with `monitors-as-code` linked in its own node_modules. */
function copyFixture(name: string): string {
  const dir = makeProject({})
  cpSync(join(FIXTURES, name), dir, { recursive: true })
  return dir
}

/** Constructs made by a helper: called from check files (theirs), at the helper's top level (outside the project). */
function helperProject(): string {
  const dir = makeProject({})
  writeFiles(dir, {
    'lib/make.ts': `import { DnsCheck } from 'monitors-as-code'\nexport const make = (id: string) => new DnsCheck(id, { name: id, request: { query: 'a.example.com' } })\nexport const top = new DnsCheck('top', { name: 'Top', request: { query: 'a.example.com' } })\n`,
    'a.check.ts': `import { make } from './lib/make.js'\n\n// the construct belongs here\nmake('made')\n`,
    'b.check.ts': `import { make } from './lib/make.js'\nmake('made')\n`,
  })
  return dir
}
