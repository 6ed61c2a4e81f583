import { readdirSync, readFileSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { CONSTRUCT_CACHE_FILES, openConstructCache } from '../../src/project/construct-cache.js'
import { makeProject, monitorsProcess, writeFiles } from '../helpers/cli.js'

// The construct cache and the page cache (docs/writing-monitors.md "Caches"): a plan with them
// is the plan without them, whatever changed; damaged files and commands at once are harmless;
// a page the server says is unchanged (304) is reused, a changed one read again.
// The test matrix: SQLite only. What it tests is the CLI's caches; the server's side of them (ETags,
// 304s and list versions on every page) is tested on both stores by test/server/store/list-paging.test.ts.

const ACCOUNT = 'plan-cache'
const KEY = 'plan-cache-key'
let server: LocalServer
let client: ApiClient
const requests: string[] = []

beforeAll(async () => {
  server = await startLocalServer({
    apiKeys: [{ key: KEY, accountId: ACCOUNT }],
    rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
    log: (line) => requests.push(line),
  })
  client = new ApiClient({ baseUrl: server.url, apiKey: KEY, accountId: ACCOUNT })
})
afterAll(async () => {
  await client?.close()
  await server?.close()
})

const env = () => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: ACCOUNT, MONITORS_DEBUG_CACHE: '1' })
const cli = (dir: string, args: string[]) => monitorsProcess(dir, args, env())
const cacheDir = (dir: string) => join(dir, 'node_modules/.cache/monitors-as-code/0.1.0')
const cacheFiles = (dir: string, prefix: string) => readdirSync(cacheDir(dir)).filter((n) => n.startsWith(prefix) && n.endsWith('.cache'))
/** The plan memo removed: the next plan reads the lists through the page cache. */
const dropMemo = (dir: string) => {
  for (const name of cacheFiles(dir, 'plan.')) unlinkSync(join(cacheDir(dir), name))
}

const configWith = (tags: string[], frequency: number) =>
  `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'plan-cache', defaults: { tags: ${JSON.stringify(tags)}, frequency: ${frequency}, locations: ['eu-west-1'] } })\n`

/** Checks of every sort the cache meets: plain ones, options, an `undefined` prop, and a reference to a group. */
const checks = (frequencyOfA: number, p = '') => `import { DnsCheck, CheckGroup, EnvVar } from 'monitors-as-code'
new DnsCheck('a', { name: '${p}A', request: { query: 'a.example.com' }, frequency: ${frequencyOfA}, tags: ['a'] })
new DnsCheck('b', { name: '${p}B', request: { query: 'b.example.com', port: undefined }, protect: true })
new DnsCheck('c', { name: '${p}C', request: { query: 'c.example.com' }, defaultTags: false, aliases: ['c-old'] })
const group = new CheckGroup('g', { name: '${p}G', locations: ['us-east-1'] })
new DnsCheck('d', { name: '${p}D', request: { query: 'd.example.com' }, group })
new EnvVar('${p}REGION', { value: 'eu' })
`

/** The plan as a document, the same with and without the caches (compared as data). */
async function plans(dir: string): Promise<{ cached: unknown; uncached: unknown; debug: string }> {
  const cached = await cli(dir, ['plan', '--format', 'json'])
  const uncached = await cli(dir, ['plan', '--format', 'json', '--no-cache'])
  expect(cached.code, cached.output).toBe(0)
  expect(uncached.code, uncached.output).toBe(0)
  expect(uncached.stderr).not.toMatch(/construct cache:|page cache:/)
  return { cached: JSON.parse(cached.stdout), uncached: JSON.parse(uncached.stdout), debug: cached.stderr }
}

/** Each test runs the CLI as a process many times, on a machine other work shares. */
const SLOW = 300_000

const changed = (plan: unknown) =>
  (plan as { changes: Array<{ logicalId: string; action: string }> }).changes
    .filter((c) => c.action !== 'noop')
    .map((c) => `${c.action} ${c.logicalId}`)
    .sort()

/** Applies the project (the construct cache's counts: `kept`), then plans it with and without the caches: the same plan, no change (counts: `reused`). */
async function appliedAndPlanned(dir: string, kept: RegExp, reused: RegExp): Promise<{ cached: unknown; uncached: unknown; debug: string }> {
  const applied = await cli(dir, ['apply', '--yes'])
  expect(applied.code, applied.output).toBe(0)
  expect(applied.stderr).toMatch(kept)
  const planned = await plans(dir)
  expect(planned.debug).toMatch(reused)
  expect(planned.cached).toEqual(planned.uncached)
  expect(changed(planned.cached)).toEqual([])
  return planned
}

describe('the construct cache', () => {
  it(
    "gives the plan validation gives, after a change of props, of the config's defaults, and of nothing",
    async () => {
      const dir = makeProject({ 'monitoring.config.ts': configWith(['base'], 10), 'checks/all.check.ts': checks(5) })
      // the apply keeps the valid constructs, the one referring to the group too; b's payload holds
      // its `port: undefined`: not plain data, so it is validated every time
      let { cached, uncached, debug } = await appliedAndPlanned(
        dir,
        /construct cache: 0 reused, 6 validated \(5 kept\), 0 not cacheable/,
        /construct cache: 5 reused, 1 validated \(0 kept\), 0 not cacheable/,
      )

      // the props of one check (the memo, which would plan that construct alone, dropped: the cache is read)
      writeFiles(dir, { 'checks/all.check.ts': checks(15) })
      dropMemo(dir)
      ;({ cached, uncached, debug } = await plans(dir))
      expect(debug).toMatch(/construct cache: 4 reused, 2 validated \(1 kept\)/)
      expect(cached).toEqual(uncached)
      expect(changed(cached)).toEqual(['update a'])

      // the config's defaults: no entry is for them
      writeFiles(dir, { 'monitoring.config.ts': configWith(['base', 'more'], 10) })
      ;({ cached, uncached, debug } = await plans(dir))
      expect(debug).toMatch(/construct cache: 0 reused, 6 validated \(5 kept\)/)
      expect(cached).toEqual(uncached)
      expect(changed(cached)).toEqual(['update a', 'update b', 'update d'])
      writeFiles(dir, { 'monitoring.config.ts': configWith(['base', 'more'], 30) })
      ;({ cached, uncached, debug } = await plans(dir))
      expect(debug).toMatch(/construct cache: 0 reused, 6 validated \(5 kept\)/)
      expect(cached).toEqual(uncached)
      expect(changed(cached)).toEqual(['update a', 'update b', 'update c', 'update d'])
    },
    SLOW,
  )

  it(
    'reuses constructs that refer to others, and validates them again when what they read of those changes',
    async () => {
      const project = (groupProps: string, channelFile = 'checks/all.check.ts'): Record<string, string> => {
        const channel = `export const ops = new WebhookAlertChannel('ops', { name: 'referred ops', url: 'https://hooks.example.com/ops' })\n`
        const checksText = `import { DnsCheck, CheckGroup, WebhookAlertChannel } from 'monitors-as-code'
${channelFile === 'checks/all.check.ts' ? channel : "import { ops } from '../lib/channel.js'\n"}export const group = new CheckGroup('g', { name: 'Referred G', ${groupProps} })
const db = new DnsCheck('db', { name: 'Referred DB', request: { query: 'db.example.com' }, group, alertChannels: [ops] })
new DnsCheck('web', { name: 'Referred Web', request: { query: 'web.example.com' }, group, dependsOn: [db], alertChannels: [ops] })
`
        return channelFile === 'checks/all.check.ts'
          ? { 'checks/all.check.ts': checksText }
          : { 'checks/all.check.ts': checksText, 'lib/channel.ts': `import { WebhookAlertChannel } from 'monitors-as-code'\n${channel}` }
      }
      const dir = makeProject({ 'monitoring.config.ts': configWith(['base'], 10), ...project("locations: ['us-east-1']") })
      let { cached, uncached, debug } = await appliedAndPlanned(
        dir,
        /construct cache: 0 reused, 4 validated \(4 kept\), 0 not cacheable/,
        /construct cache: 4 reused, 0 validated \(0 kept\), 0 not cacheable/,
      )

      // the group's frequency is the frequency of the checks in it that set none: they are validated again
      writeFiles(dir, project("locations: ['us-east-1'], frequency: 30"))
      ;({ cached, uncached, debug } = await plans(dir))
      expect(debug).toMatch(/construct cache: 1 reused, 3 validated \(3 kept\), 0 not cacheable/)
      expect(cached).toEqual(uncached)
      expect(changed(cached)).toEqual(['update db', 'update g', 'update web'])
      // the group's name is not read by the checks in it: they are reused
      writeFiles(dir, project("locations: ['us-east-1'], frequency: 30, tags: ['x']"))
      ;({ cached, uncached, debug } = await plans(dir))
      expect(debug).toMatch(/construct cache: 3 reused, 1 validated \(1 kept\), 0 not cacheable/)
      expect(cached).toEqual(uncached)

      // the channel created outside the check files: the checks referring to it say so, as without the cache
      writeFiles(dir, project("locations: ['us-east-1'], frequency: 30, tags: ['x']", 'lib/channel.ts'))
      const withCache = await cli(dir, ['plan'])
      const without = await cli(dir, ['plan', '--no-cache'])
      expect(withCache.code).toBe(1)
      expect(without.code).toBe(1)
      expect(withCache.stdout).toBe(without.stdout)
      expect(withCache.stderr.replace(/^(construct cache|plan memo|page cache):.*\n/gm, '')).toBe(without.stderr)
      expect(without.stderr).toMatch(/alertChannels\.0.*refers to WebhookAlertChannel "ops", which is not part of this project/)
    },
    SLOW,
  )

  it(
    'ignores a truncated or altered file, and two commands at once leave a whole one',
    async () => {
      const dir = makeProject({ 'monitoring.config.ts': configWith(['base'], 10), 'checks/all.check.ts': checks(5, 'S') })
      const applied = await cli(dir, ['apply', '--yes'])
      expect(applied.code, applied.output).toBe(0)
      const [file] = cacheFiles(dir, 'constructs.')
      const whole = readFileSync(join(cacheDir(dir), file))
      const expected = (await cli(dir, ['plan', '--format', 'json', '--no-cache'])).stdout

      truncateSync(join(cacheDir(dir), file), Math.floor(whole.length / 2))
      let run = await cli(dir, ['plan', '--format', 'json'])
      expect(run.code, run.output).toBe(0)
      expect(run.stderr).toMatch(/construct cache: 0 reused, 6 validated \(5 kept\), 0 not cacheable \(the file was damaged: ignored\)/)
      expect(run.stdout).toBe(expected)

      // a payload changed inside an intact-looking file: its hash no longer matches
      const altered = Buffer.from(whole.toString('latin1').replace('"a.example.com"', '"z.example.com"'), 'latin1')
      expect(altered.equals(whole)).toBe(false)
      writeFileSync(join(cacheDir(dir), file), altered)
      // the plan memo the last plan kept would spare the construct cache: gone, so the cache is read
      dropMemo(dir)
      run = await cli(dir, ['plan', '--format', 'json'])
      expect(run.stderr).toMatch(/the file was damaged: ignored/)
      expect(run.stdout).toBe(expected)

      writeFiles(dir, { 'checks/all.check.ts': checks(15, 'S') })
      const together = await Promise.all([
        cli(dir, ['plan', '--format', 'json']),
        cli(dir, ['plan', '--format', 'json']),
        cli(dir, ['plan', '--format', 'json', '--no-cache']),
      ])
      for (const r of together) expect(r.code, r.output).toBe(0)
      expect(together[0].stdout).toBe(together[2].stdout)
      expect(together[1].stdout).toBe(together[2].stdout)
      dropMemo(dir)
      run = await cli(dir, ['plan', '--format', 'json'])
      // the plans at once planned the edit from the memo, which validates the edited construct alone and keeps it nowhere
      expect(run.stderr).toMatch(/construct cache: 4 reused, 2 validated \(1 kept\)/)
      expect(run.stdout).toBe(together[2].stdout)
      expect(readdirSync(cacheDir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([])
    },
    SLOW,
  )

  it('keeps no entry across builds, versions, Node.js versions or defaults, and keeps a bounded number of files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-construct-cache-'))
    const scope = { configFile: '/p/monitoring.config.ts', defaults: { tags: ['x'] }, buildId: 'a'.repeat(64), version: '1.0.0', node: 'v20.0.0' }
    const value = { payload: { name: 'A', tags: ['x'] }, options: {}, refs: [] }
    const first = openConstructCache(dir, scope)!
    expect(first.get('k')).toBeUndefined()
    first.set('k', value)
    first.save()
    expect(openConstructCache(dir, scope)!.get('k')).toEqual(value)
    for (const other of [{ buildId: 'b'.repeat(64) }, { version: '1.0.1' }, { node: 'v22.0.0' }, { defaults: { tags: ['y'] } }]) {
      expect(openConstructCache(dir, { ...scope, ...other })!.get('k'), JSON.stringify(other)).toBeUndefined()
    }
    // defaults that are not plain data, or no build id: no cache at all
    expect(openConstructCache(dir, { ...scope, defaults: { tags: [new Date()] } })).toBeUndefined()
    expect(openConstructCache(dir, { ...scope, buildId: undefined })).toBeUndefined()
    // a payload that is not plain data is not kept
    const c = openConstructCache(dir, scope)!
    c.set('d', { payload: { when: new Date() }, options: {} })
    c.save()
    expect(openConstructCache(dir, scope)!.get('d')).toBeUndefined()
    for (let i = 0; i < 40; i++) {
      const cache = openConstructCache(dir, { ...scope, configFile: `/p${i}/monitoring.config.ts` })!
      cache.set('k', value)
      cache.save()
    }
    expect(readdirSync(dir).filter((n) => n.startsWith('constructs.')).length).toBeLessThanOrEqual(CONSTRUCT_CACHE_FILES)
  })

  it("keeps one file per check file: an edit of one check file reads and writes that file's entries alone", () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-construct-cache-'))
    const scope = { configFile: '/p/monitoring.config.ts', defaults: {}, buildId: 'a'.repeat(64), version: '1.0.0' }
    const value = (name: string) => ({ payload: { name }, options: {}, refs: [] })
    const first = openConstructCache(dir, scope)!
    first.set('a1', value('A1'), '/p/checks/a.check.ts')
    first.set('b1', value('B1'), '/p/checks/b.check.ts')
    first.save()
    const files = () =>
      Object.fromEntries(
        readdirSync(dir)
          .filter((n) => n.startsWith('constructs.'))
          .map((n) => [n, statSync(join(dir, n)).mtimeMs]),
      )
    const written = files()
    expect(Object.keys(written)).toHaveLength(2)
    // b's constructs unchanged, a's edited: only a's file is written again
    const second = openConstructCache(dir, scope)!
    expect(second.get('b1', '/p/checks/b.check.ts')).toEqual(value('B1'))
    expect(second.get('a1', '/p/checks/a.check.ts')).toEqual(value('A1'))
    expect(second.get('a2', '/p/checks/a.check.ts')).toBeUndefined()
    second.set('a2', value('A2'), '/p/checks/a.check.ts')
    const before = Date.now()
    while (Date.now() - before < 20) {
      // a later mtime for what is written now
    }
    second.save()
    const now = files()
    const changedFiles = Object.keys(now).filter((n) => now[n] !== written[n])
    expect(changedFiles).toHaveLength(1)
    // an entry is found in its own file only
    const third = openConstructCache(dir, scope)!
    expect(third.get('a2', '/p/checks/b.check.ts')).toBeUndefined()
    expect(third.get('a2', '/p/checks/a.check.ts')).toEqual(value('A2'))
  })
})

describe('the page cache', () => {
  it(
    'reads unchanged pages with If-None-Match (304, records reused) and sees a change made on the server',
    async () => {
      const many = Array.from({ length: 150 }, (_, i) => `new DnsCheck('p${i}', { name: 'P ${i}', request: { query: 'p${i}.example.com' } })`).join('\n')
      const dir = makeProject({ 'checks/many.check.ts': `import { DnsCheck } from 'monitors-as-code'\n${many}\n` })
      const applied = await cli(dir, ['apply', '--yes', '--concurrency', '16'])
      expect(applied.code, applied.output).toBe(0)
      const first = await cli(dir, ['plan'])
      expect(first.stdout).toMatch(/^No changes\./m)
      expect(cacheFiles(dir, 'pages.')).toHaveLength(1)

      requests.length = 0
      dropMemo(dir)
      const second = await cli(dir, ['plan'])
      expect(second.stdout).toMatch(/^No changes\./m)
      const lists = requests.filter((line) => line.startsWith('GET /v1/checks?'))
      // page 1 by number, answered 304 with the list version both pages were kept at: page 2 is not asked for
      expect(lists).toHaveLength(1)
      expect(lists[0]).toMatch(/^GET \/v1\/checks\?limit=100&page=1 304 /)
      expect(second.stderr).toMatch(/page cache: GET \/v1\/checks: 2 pages reused \(304\), 0 read/)

      // changed outside monitors: the page holding it is read again, and the plan says so
      const lock = JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8'))
      const remoteId = lock.resources['dns-check:p120'].remoteId as string
      const record = (await client.get<Record<string, unknown>>(`/v1/checks/${remoteId}`)).body
      await client.put(`/v1/checks/dns/${remoteId}`, { ...record, name: 'Renamed outside' })
      requests.length = 0
      dropMemo(dir)
      const third = await cli(dir, ['plan'])
      expect(third.stdout).toMatch(/p120/)
      expect(third.stdout).toMatch(/Renamed outside/)
      expect(third.stdout).not.toMatch(/^No changes\./m)
      const statuses = requests.filter((line) => line.startsWith('GET /v1/checks?')).map((line) => line.split(' ')[2])
      expect(statuses.sort()).toEqual(['200', '304'])

      // a damaged page cache is ignored: every page read whole, the same plan
      const [file] = cacheFiles(dir, 'pages.')
      truncateSync(join(cacheDir(dir), file), 100)
      requests.length = 0
      dropMemo(dir)
      const fourth = await cli(dir, ['plan'])
      expect(fourth.code, fourth.output).toBe(0)
      expect(fourth.stdout).toBe(third.stdout)
      expect(fourth.stderr).toMatch(/page cache: GET \/v1\/checks: 0 pages reused \(304\), 2 read \(the file was damaged: ignored\)/)
      // --no-cache sends no If-None-Match: every page answered whole
      requests.length = 0
      const fifth = await cli(dir, ['plan', '--no-cache'])
      expect(fifth.stdout).toBe(third.stdout)
      expect(requests.filter((line) => line.startsWith('GET /v1/checks?')).map((line) => line.split(' ')[2])).toEqual(['200', '200'])
    },
    SLOW,
  )

  it(
    'sees records added past a full last page, whose body a 304 says is unchanged',
    async () => {
      const dir = makeProject({
        'checks/one.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('only', { name: 'Only managed', request: { query: 'only.example.com' } })\n`,
      })
      // an account of its own: exactly two full pages with the managed check
      const key = 'grow-key'
      const grow = await startLocalServer({
        apiKeys: [{ key, accountId: 'grow' }],
        rateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
        log: (line) => requests.push(line),
      })
      const api = new ApiClient({ baseUrl: grow.url, apiKey: key, accountId: 'grow' })
      const run = (args: string[]) =>
        monitorsProcess(dir, args, { MONITORING_API_URL: grow.url, MONITORING_API_KEY: key, MONITORING_ACCOUNT_ID: 'grow', MONITORS_DEBUG_CACHE: '1' })
      const unmanaged = async (i: number) => api.post('/v1/checks/dns', { name: `Unmanaged ${i}`, request: { query: `u${i}.example.com` } })
      try {
        expect((await run(['apply', '--yes'])).code).toBe(0)
        for (let i = 0; i < 199; i++) await unmanaged(i)
        const first = await run(['plan', '--format', 'json'])
        expect(first.code, first.output).toBe(0)
        expect(JSON.parse(first.stdout).unmanaged).toEqual({ 'dns-check': 199 })
        await unmanaged(199)
        requests.length = 0
        dropMemo(dir)
        const second = await run(['plan', '--format', 'json'])
        expect(second.code, second.output).toBe(0)
        expect(JSON.parse(second.stdout).unmanaged).toEqual({ 'dns-check': 200 })
        // both full pages unchanged (304), the third read
        expect(requests.filter((line) => line.startsWith('GET /v1/checks?')).map((line) => line.split(' ')[2])).toEqual(['304', '304', '200'])
      } finally {
        await api.close()
        await grow.close()
      }
    },
    SLOW,
  )
})

describe('the plan memo', () => {
  /** The same plan with the caches and with none: stdout byte for byte, and what the memo did. */
  const both = async (dir: string, args: string[]) => {
    const cached = await cli(dir, ['plan', ...args])
    const uncached = await cli(dir, ['plan', ...args, '--no-cache'])
    expect(cached.code, cached.output).toBe(uncached.code)
    expect(uncached.stderr).not.toMatch(/plan memo:/)
    expect(cached.stdout).toBe(uncached.stdout)
    return { stdout: cached.stdout, memo: /plan memo: (.*)/.exec(cached.stderr)?.[1] ?? '(no line)', stderr: cached.stderr }
  }
  const USED = /^used /

  it(
    'shows the kept plan when nothing changed, and the plan without it after any change of code, config, lock, server or options',
    async () => {
      const many = (n: number, p = '') =>
        `import { DnsCheck } from 'monitors-as-code'\n${Array.from({ length: n }, (_, i) => `new DnsCheck('m${i}', { name: '${p}M ${i}', request: { query: 'm${i}.example.com' }${i === 3 ? ', protect: true' : ''} })`).join('\n')}\n`
      const dir = makeProject({ 'monitoring.config.ts': configWith(['base'], 10), 'checks/many.check.ts': many(120) })
      const applied = await cli(dir, ['apply', '--yes', '--concurrency', '16'])
      expect(applied.code, applied.output).toBe(0)

      let run = await both(dir, [])
      expect(run.memo).toBe('not used (none kept)')
      expect(run.stdout).toMatch(/^No changes\./m)
      // the memo's plan: no construct validated, no record read, every list page answered 304
      requests.length = 0
      const hit = await cli(dir, ['plan'])
      const sent = [...requests]
      expect(hit.stderr).toMatch(/plan memo: used/)
      expect(hit.stderr).not.toMatch(/construct cache:|page cache:/)
      expect(hit.stdout).toBe(run.stdout)
      // the list's pages (the account's other tests' checks too: more than one page): the first alone asked
      // with its ETag, answered 304 with the list version every page was read at
      const lists = sent.filter((line) => line.startsWith('GET /v1/'))
      expect(lists, sent.join('\n')).toHaveLength(1)
      expect(lists[0]).toMatch(/^GET \/v1\/checks\?limit=100&page=1 304 /)
      expect(hit.stderr).toMatch(/plan memo: used \(([2-9]|\d\d+) list pages unchanged\)/)
      for (const format of [['--format', 'json'], ['--format', 'markdown'], ['--detailed-exitcode'], ['--refresh-only'], ['--verbose']]) {
        run = await both(dir, format)
        expect(run.memo, format.join(' ')).toMatch(USED)
      }

      // a construct's props: the file planned again from the kept plan
      writeFiles(dir, { 'checks/many.check.ts': many(120).replace("name: 'M 7'", "name: 'M seven'") })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toMatch(/^used \(\d+ list pages unchanged; 1 of 1 check files planned again\)$/)
      expect(changed(JSON.parse(run.stdout))).toEqual(['update m7'])
      expect((await both(dir, ['--format', 'json'])).memo).toMatch(USED)

      // the config's defaults
      writeFiles(dir, { 'monitoring.config.ts': configWith(['base', 'more'], 10) })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toBe('not used (the build, config, lock, target or options changed)')
      expect(changed(JSON.parse(run.stdout))).toHaveLength(120)
      expect((await both(dir, [])).memo).toMatch(USED)

      // the lock file's bytes (the same entries, written otherwise; then one entry gone)
      const lockFile = join(dir, 'monitoring.lock.json')
      const lock = JSON.parse(readFileSync(lockFile, 'utf8'))
      writeFileSync(lockFile, JSON.stringify(lock, null, 4))
      run = await both(dir, [])
      expect(run.memo).toBe('not used (the build, config, lock, target or options changed)')
      const before = run.stdout
      delete lock.resources['dns-check:m5']
      writeFileSync(lockFile, JSON.stringify(lock, null, 2))
      run = await both(dir, [])
      expect(run.memo).toBe('not used (the build, config, lock, target or options changed)')
      expect(run.stdout).not.toBe(before)
      expect(run.stdout).toMatch(/m5/)
      expect((await both(dir, [])).memo).toMatch(USED)
      // a lock that does not read (the memo parses it only when it plans): the error of a plan without the memo
      const lockText = readFileSync(lockFile)
      writeFileSync(lockFile, '{ "version": 1, ')
      run = await both(dir, [])
      expect(run.memo).toBe('not used (the build, config, lock, target or options changed)')
      expect(run.stderr).toMatch(/is not valid JSON/)
      writeFileSync(lockFile, lockText)
      expect((await both(dir, [])).memo).toMatch(USED)

      // a record changed on the server by another client: the list's last one, on its last page (that the first page does not hold)
      const total = Number((await client.get<unknown[]>('/v1/checks', { limit: 100, page: 1 })).headers['content-range']?.toString().split('/')[1])
      expect(total).toBeGreaterThan(100)
      const lastPage = (await client.get<Array<Record<string, unknown>>>('/v1/checks', { limit: 100, page: Math.ceil(total / 100) })).body
      const record = lastPage.at(-1)!
      const lastId = Object.entries(lock.resources as Record<string, { remoteId: string }>)
        .find(([, entry]) => entry.remoteId === record.id)?.[0]
        .split(':')[1]
      expect(lastId).toMatch(/^m\d+$/)
      await client.put(`/v1/checks/dns/${record.id}`, { ...record, name: 'Renamed outside' })
      run = await both(dir, [])
      expect(run.memo).toBe('not used (a list changed on the server)')
      expect(run.stdout).toMatch(/Renamed outside/)
      expect((await both(dir, [])).memo).toMatch(USED)
      // the same with an edit of the project: the memo's edit path sees it too
      await client.put(`/v1/checks/dns/${record.id}`, { ...record, name: 'Renamed outside again' })
      writeFiles(dir, { 'checks/many.check.ts': many(120).replace("name: 'M 7'", "name: 'M seven'") })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toBe('not used (a list changed on the server)')
      expect(JSON.parse(run.stdout).changes.find((c: { logicalId: string }) => c.logicalId === lastId)).toMatchObject({ action: 'update' })
      writeFiles(dir, { 'checks/many.check.ts': many(120) })

      // the options that change the plan
      for (const options of [['--target', 'dns-check:m1'], ['--adopt-existing']]) {
        run = await both(dir, options)
        expect(run.memo, options.join(' ')).toBe('not used (the build, config, lock, target or options changed)')
        expect((await both(dir, options)).memo, options.join(' ')).toMatch(USED)
      }

      // a damaged memo is ignored
      const [file] = cacheFiles(dir, 'plan.')
      const whole = readFileSync(join(cacheDir(dir), file))
      truncateSync(join(cacheDir(dir), file), Math.floor(whole.length / 2))
      run = await both(dir, ['--adopt-existing'])
      expect(run.memo).toBe('not used (the file was damaged: ignored)')
      writeFileSync(join(cacheDir(dir), file), Buffer.from(whole.toString('latin1').replace('"M 1"', '"M 9"'), 'latin1'))
      run = await both(dir, ['--adopt-existing'])
      expect(run.memo).toBe('not used (the file was damaged: ignored)')
      // MONITORS_CACHE=0 and --out: not used
      const off = await monitorsProcess(dir, ['plan'], { ...env(), MONITORS_CACHE: '0' })
      expect(off.stderr).not.toMatch(/plan memo: used/)
      const saved = await cli(dir, ['plan', '--out', join(dir, 'saved.plan')])
      expect(saved.stderr).toMatch(/plan memo: not used \(--out/)
    },
    SLOW,
  )

  it(
    'plans again only the check files an edit touched, and gives the plan made without it: an edit, a reference into an edited file, a file removed or renamed, a construct moved',
    async () => {
      const many = (p: string, n: number) =>
        Array.from({ length: n }, (_, i) => `new DnsCheck('${p}${i}', { name: 'Edited ${p} ${i}', request: { query: '${p}${i}.example.com' }, frequency: 10 })`)
      const file = (lines: string[], extra = '') => `import { DnsCheck } from 'monitors-as-code'\n${extra}${lines.join('\n')}\n`
      const group = (locations: string[]) =>
        `import { CheckGroup } from 'monitors-as-code'\nexport const group = new CheckGroup('g', { name: 'Edited G', locations: ${JSON.stringify(locations)} })\n`
      const a = many('a', 30)
      const b = many('b', 30)
      // c's names end with what a module that is not a check file exports
      const cs = Array.from(
        { length: 5 },
        (_, i) => `new DnsCheck('c${i}', { name: 'Edited c ${i}' + tail, request: { query: 'c${i}.example.com' }, frequency: 10 })`,
      )
      const dir = makeProject({
        'monitoring.config.ts': configWith(['base'], 10),
        'checks/a.check.ts': file(
          [...a, "new DnsCheck('ag', { name: 'Edited in G', request: { query: 'ag.example.com' }, group })"],
          "import { group } from './group.check'\n",
        ),
        'checks/b.check.ts': file(b),
        'checks/c.check.ts': file(cs, "import { tail } from './names'\n"),
        'checks/names.ts': "export const tail = ''\n",
        'checks/group.check.ts': group(['us-east-1']),
      })
      const applied = await cli(dir, ['apply', '--yes', '--concurrency', '16'])
      expect(applied.code, applied.output).toBe(0)
      expect((await both(dir, ['--format', 'json'])).memo).toBe('not used (none kept)')
      expect((await both(dir, ['--format', 'json'])).memo).toMatch(USED)
      const planned = (run: { stdout: string }) => JSON.parse(run.stdout) as { changes: Array<{ logicalId: string; action: string; file?: string }> }

      // one value of one check: that file alone planned again (its JavaScript patched, not transpiled again), the others' plan kept
      b[7] = b[7].replace("name: 'Edited b 7'", "name: 'Edited b seven'")
      writeFiles(dir, { 'checks/b.check.ts': file(b) })
      const patched = await monitorsProcess(dir, ['plan', '--format', 'json'], { ...env(), MONITORS_DEBUG_CODE_CACHE: '1' })
      expect(patched.stderr).toMatch(/^transpile: patched checks\/b\.check\.ts$/m)
      expect(patched.stderr).toMatch(/plan memo: used \(\d+ list pages unchanged; 1 of 4 check files planned again\)/)
      let run = await both(dir, ['--format', 'json'])
      expect(run.stdout).toBe(patched.stdout)
      expect(changed(planned(run))).toEqual(['update b7'])
      // two more, in one edit: the same
      b[8] = b[8].replace('frequency: 10', 'frequency: 5')
      b[9] = b[9].replace("name: 'Edited b 9'", "name: 'Edited b nine'")
      writeFiles(dir, { 'checks/b.check.ts': file(b) })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toMatch(/^used \(\d+ list pages unchanged; 1 of 4 check files planned again\)$/)
      expect(changed(planned(run))).toEqual(['update b7', 'update b8', 'update b9'])
      // the lock as monitors writes it: the edited resources' entries read from its bytes alone
      expect(run.stderr).toMatch(/^plan memo: the lock's entries of their resources read alone$/m)
      // a lock written otherwise (by hand, by another tool): read whole, the same plan
      const lockFile = join(dir, 'monitoring.lock.json')
      const lockBytes = readFileSync(lockFile)
      writeFileSync(lockFile, JSON.stringify(JSON.parse(lockBytes.toString('utf8')), null, 4))
      expect((await both(dir, ['--format', 'json'])).memo).toBe('not used (the build, config, lock, target or options changed)')
      b[9] = b[9].replace("name: 'Edited b nine'", "name: 'Edited b 9'")
      writeFiles(dir, { 'checks/b.check.ts': file(b) })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toMatch(/^used \(\d+ list pages unchanged; 1 of 4 check files planned again\)$/)
      expect(run.stderr).not.toMatch(/lock's entries/)
      expect(changed(planned(run))).toEqual(['update b7', 'update b8'])
      b[9] = b[9].replace("name: 'Edited b 9'", "name: 'Edited b nine'")
      writeFiles(dir, { 'checks/b.check.ts': file(b) })
      writeFileSync(lockFile, lockBytes)
      run = await both(dir, ['--format', 'json'])
      expect(changed(planned(run))).toEqual(['update b7', 'update b8', 'update b9'])

      // an edit of the imported module: c makes other constructs, so c is planned again
      writeFiles(dir, { 'checks/names.ts': "export const tail = ' renamed'\n" })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toMatch(/^used \(\d+ list pages unchanged; 1 of 4 check files planned again\)$/)
      expect(changed(planned(run))).toEqual(['update b7', 'update b8', 'update b9', 'update c0', 'update c1', 'update c2', 'update c3', 'update c4'])

      // a record changed on the server, with an edit: the lists are read again, and both are seen
      const lock = JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8'))
      const record = (await client.get<Record<string, unknown>>(`/v1/checks/${lock.resources['dns-check:a0'].remoteId}`)).body
      await client.put(`/v1/checks/dns/${record.id}`, { ...record, name: 'Renamed outside' })
      writeFiles(dir, { 'checks/b.check.ts': file(b.map((line, i) => (i === 10 ? line.replace("'Edited b 10'", "'Edited b ten'") : line))) })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toBe('not used (a list changed on the server)')
      expect(changed(planned(run))).toEqual([
        'update a0',
        'update b10',
        'update b7',
        'update b8',
        'update b9',
        'update c0',
        'update c1',
        'update c2',
        'update c3',
        'update c4',
      ])
      // all of it undone: the lists read again, the plan of the files alone
      await client.put(`/v1/checks/dns/${record.id}`, { ...record })
      writeFiles(dir, { 'checks/b.check.ts': file(b), 'checks/names.ts': "export const tail = ''\n" })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toBe('not used (a list changed on the server)')
      expect(changed(planned(run))).toEqual(['update b7', 'update b8', 'update b9'])
      expect((await both(dir, ['--format', 'json'])).memo).toMatch(/^used \(\d+ list pages unchanged\)$/)

      // the group's locations changed: the check of another file that is in it reads them, so that file changed too; a group is planned from scratch
      writeFiles(dir, { 'checks/group.check.ts': group(['eu-west-1']) })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toBe('not used (the code changed in 2 of 4 check files: a change of theirs depends on other resources)')
      expect(changed(planned(run))).toEqual(['update b7', 'update b8', 'update b9', 'update g'])
      expect((await both(dir, ['--format', 'json'])).memo).toMatch(USED)

      // a file removed: its checks are deletes, planned from scratch
      unlinkSync(join(dir, 'checks/c.check.ts'))
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toBe('not used (the code changed in 1 of 3 check files: they hold other resources than before)')
      expect(changed(planned(run))).toEqual([
        'delete c0',
        'delete c1',
        'delete c2',
        'delete c3',
        'delete c4',
        'update b7',
        'update b8',
        'update b9',
        'update g',
      ])

      // a file renamed: its resources planned again in their new file
      unlinkSync(join(dir, 'checks/b.check.ts'))
      writeFiles(dir, { 'checks/b2.check.ts': file(b) })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toMatch(/^used \(\d+ list pages unchanged; 2 of 3 check files planned again\)$/)
      // (the JSON lists the updates alone; the next step finds the others by their new file, or misses)
      const inB = planned(run).changes.filter((c) => c.logicalId.startsWith('b'))
      expect(inB.map((c) => c.logicalId)).toEqual(['b7', 'b8', 'b9'])
      for (const change of inB) expect(change.file).toBe('checks/b2.check.ts')

      // a construct moved from one file to another, unchanged
      const moved = a.splice(5, 1)[0]
      writeFiles(dir, {
        'checks/a.check.ts': file(
          [...a, "new DnsCheck('ag', { name: 'Edited in G', request: { query: 'ag.example.com' }, group })"],
          "import { group } from './group.check'\n",
        ),
        'checks/b2.check.ts': file([...b, moved]),
      })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toMatch(/^used \(\d+ list pages unchanged; 2 of 3 check files planned again\)$/)
      // the moved one is a noop (not in the JSON): edited in its new file, it is planned from the memo there
      writeFiles(dir, { 'checks/b2.check.ts': file([...b, moved.replace("name: 'Edited a 5'", "name: 'Edited a five'")]) })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toMatch(/^used \(\d+ list pages unchanged; 1 of 3 check files planned again\)$/)
      expect(planned(run).changes.find((c) => c.logicalId === 'a5')).toMatchObject({ action: 'update', file: 'checks/b2.check.ts' })

      // the page cache gone: the edited file's records cannot be read alone, so the lists are read
      for (const name of cacheFiles(dir, 'pages.')) unlinkSync(join(cacheDir(dir), name))
      writeFiles(dir, { 'checks/b2.check.ts': file([...b, moved.replace("name: 'Edited a 5'", "name: 'Edited a 5 again'")]) })
      run = await both(dir, ['--format', 'json'])
      expect(run.memo).toBe('not used (the code changed in 1 of 3 check files: the page cache does not hold their records)')
      expect(planned(run).changes.find((c) => c.logicalId === 'a5')).toMatchObject({ action: 'update', file: 'checks/b2.check.ts' })

      // a construct with a problem in the edited file: the error of a plan without the memo
      writeFiles(dir, { 'checks/b2.check.ts': file([...b, moved.replace('frequency: 10', 'frequency: 7')]) })
      run = await both(dir, [])
      expect(run.memo).toBe('not used (the code changed in 1 of 3 check files: a construct has a problem)')
      expect(run.stderr).toMatch(/a5.*frequency/)
    },
    SLOW,
  )

  it(
    'is not used when records are added past a full last page (a 304 without a Link header is read whole, as a plan reads it)',
    async () => {
      const dir = makeProject({
        'checks/one.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('only', { name: 'Only managed', request: { query: 'only.example.com' } })\n`,
      })
      const key = 'grow-memo-key'
      const grow = await startLocalServer({ apiKeys: [{ key, accountId: 'grow-memo' }], rateLimit: { max: 1_000_000, timeWindowMs: 60_000 } })
      const api = new ApiClient({ baseUrl: grow.url, apiKey: key, accountId: 'grow-memo' })
      const run = (args: string[]) =>
        monitorsProcess(dir, args, { MONITORING_API_URL: grow.url, MONITORING_API_KEY: key, MONITORING_ACCOUNT_ID: 'grow-memo', MONITORS_DEBUG_CACHE: '1' })
      const unmanaged = async (i: number) => api.post('/v1/checks/dns', { name: `Unmanaged ${i}`, request: { query: `u${i}.example.com` } })
      try {
        expect((await run(['apply', '--yes'])).code).toBe(0)
        for (let i = 0; i < 199; i++) await unmanaged(i)
        expect((await run(['plan', '--format', 'json'])).code).toBe(0)
        // two full pages, the second the last: the memo is used
        const same = await run(['plan', '--format', 'json'])
        expect(same.stderr).toMatch(/plan memo: used \(2 list pages unchanged\)/)
        expect(JSON.parse(same.stdout).unmanaged).toEqual({ 'dns-check': 199 })
        await unmanaged(199)
        const grown = await run(['plan', '--format', 'json'])
        expect(grown.code, grown.output).toBe(0)
        expect(grown.stderr).toMatch(/plan memo: not used \(a list changed on the server\)/)
        expect(JSON.parse(grown.stdout).unmanaged).toEqual({ 'dns-check': 200 })
        expect(grown.stdout).toBe((await run(['plan', '--format', 'json', '--no-cache'])).stdout)
      } finally {
        await api.close()
        await grow.close()
      }
    },
    SLOW,
  )
})
