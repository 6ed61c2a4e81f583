import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadProject } from '../../src/project/index.js'
import { placementCounts } from '../../src/project/loader.js'
import type { DesiredResource } from '../../src/resources/types.js'
import { RESOURCE_KINDS } from '../../src/resources/registry.js'
import { DnsCheck } from '../../constructs/index.js'
import { FIXTURES, REPO_ROOT, tempProject } from './helpers.js'

const shopDir = path.join(FIXTURES, 'shop')
const byId = (resources: DesiredResource[], kind: string, id: string) => {
  const found = resources.find((r) => r.kind === kind && r.logicalId === id)
  if (!found) throw new Error(`no ${kind} ${id}`)
  return found
}

describe('loadProject on a valid project', () => {
  it('finds the config from a subdirectory and loads only the files checkMatch matches, sorted', async () => {
    const project = await loadProject({ cwd: path.join(shopDir, 'checks', 'payments') })
    expect(project.configFile).toBe(path.join(shopDir, 'monitoring.config.ts'))
    expect(project.rootDir).toBe(shopDir)
    // drafts/ is left out by `ignore`; lib/ is not matched
    expect(project.files).toEqual(['checks/payments/payments.check.ts', 'checks/shop.check.ts'])
    expect(project.config).toEqual({
      projectName: 'shop',
      checkMatch: ['checks/**/*.check.ts'],
      ignore: ['**/drafts/**'],
      defaults: { frequency: 5, locations: ['eu-west-1', 'us-east-1'], tags: ['shop'], muted: true },
      api: { baseUrl: 'http://127.0.0.1:9999', accountId: 'acct-1' },
      // no environments declared: none chosen
      environments: {},
    })
  })

  it('returns one resource per construct, sorted by kind order then logical id', async () => {
    const { resources } = await loadProject({ cwd: shopDir })
    expect(resources.map((r) => `${r.kind}:${r.logicalId}`)).toEqual([
      'variable:API_TOKEN',
      'status-page-service:checkout',
      'maintenance-window:nightly',
      'dns-check:dns-api.example.com',
      'dns-check:payments-dns',
      'dns-check:shop-dns',
      'icmp-check:edge-ping',
      'status-page:public',
    ])
    const order = resources.map((r) => RESOURCE_KINDS.indexOf(r.kind))
    expect([...order].sort((a, b) => a - b)).toEqual(order)
  })

  it('merges config defaults into checks: tags are a union with the config first, other fields only where unset', async () => {
    const { resources } = await loadProject({ cwd: shopDir })
    const shopDns = byId(resources, 'dns-check', 'shop-dns')
    expect(shopDns.payload).toMatchObject({ frequency: 5, locations: ['eu-west-1', 'us-east-1'], tags: ['shop'], muted: true })
    const edge = byId(resources, 'icmp-check', 'edge-ping')
    expect(edge.payload).toMatchObject({ frequency: 10, tags: ['shop', 'edge'], muted: false, locations: ['eu-west-1', 'us-east-1'] })
    const payments = byId(resources, 'dns-check', 'payments-dns')
    expect(payments.payload.locations).toEqual(['ap-south-1'])
    // defaults apply to checks only
    expect(byId(resources, 'maintenance-window', 'nightly').payload.tags).toEqual(['shop'])
    expect(byId(resources, 'status-page-service', 'checkout').payload).toEqual({ name: 'Checkout' })
  })

  it('stores the schema output as payload, with API defaults applied and ICMP heartbeat and script filled in', async () => {
    const { resources } = await loadProject({ cwd: shopDir })
    expect(byId(resources, 'dns-check', 'shop-dns').payload).toEqual({
      name: 'Shop DNS',
      activated: true,
      muted: true,
      doubleCheck: true,
      shouldFail: false,
      locations: ['eu-west-1', 'us-east-1'],
      tags: ['shop'],
      useGlobalAlertSettings: true,
      runParallel: false,
      frequency: 5,
      degradedResponseTime: 500,
      maxResponseTime: 1000,
      request: { query: 'shop.example.com', recordType: 'A', assertions: [], protocol: 'UDP' },
      checkType: 'DNS',
    })
    const edge = byId(resources, 'icmp-check', 'edge-ping').payload
    expect(edge).toMatchObject({ heartbeat: {}, script: '', checkType: 'ICMP', degradedPacketLossThreshold: 10, maxPacketLossThreshold: 20 })
    expect(edge.request).toEqual({ hostname: 'edge.example.com', ipFamily: 'IPv4', pingCount: 10, assertions: [] })
    expect(byId(resources, 'variable', 'API_TOKEN').payload).toEqual({ key: 'API_TOKEN', value: 'not-a-real-token', locked: false, secret: true })
  })

  it('keeps resource options out of the payload and in options', async () => {
    const { resources } = await loadProject({ cwd: shopDir })
    const edge = byId(resources, 'icmp-check', 'edge-ping')
    expect(edge.options).toEqual({ aliases: ['old-edge-ping'], protect: true })
    expect(edge.payload).not.toHaveProperty('aliases')
    expect(edge.payload).not.toHaveProperty('protect')
    expect(byId(resources, 'dns-check', 'payments-dns').options).toEqual({ retainOnDelete: true })
    expect(byId(resources, 'dns-check', 'shop-dns').options).toEqual({})
  })

  it('turns references to constructs into placeholders with refs, also across files', async () => {
    const { resources } = await loadProject({ cwd: shopDir })
    const page = byId(resources, 'status-page', 'public')
    expect(page.payload.cards).toEqual([{ name: 'Shop', services: [{ id: 'status-page-service:checkout' }] }])
    expect(page.refs).toEqual([{ path: 'cards.0.services.0.id', kind: 'status-page-service', logicalId: 'checkout' }])
    const payments = byId(resources, 'dns-check', 'payments-dns')
    expect(payments.payload.triggerIncident).toEqual({
      serviceId: 'status-page-service:checkout',
      severity: 'MAJOR',
      name: 'Payments down',
      description: 'Payments do not resolve',
      notifySubscribers: false,
    })
    expect(payments.refs).toEqual([{ path: 'triggerIncident.serviceId', kind: 'status-page-service', logicalId: 'checkout' }])
  })

  it('records the declaring file relative to the root; a construct made by a helper function belongs to the calling check file', async () => {
    const { resources } = await loadProject({ cwd: shopDir })
    expect(byId(resources, 'dns-check', 'payments-dns').file).toBe('checks/payments/payments.check.ts')
    expect(byId(resources, 'dns-check', 'dns-api.example.com').file).toBe('checks/shop.check.ts')
  })

  it('gives the same result when loaded twice in one process', async () => {
    const first = await loadProject({ cwd: shopDir })
    const second = await loadProject({ cwd: shopDir })
    expect(second.resources).toEqual(first.resources)
    expect(second.resources).toHaveLength(8)
  })

  it('accepts --config as a file or a directory, relative to cwd', async () => {
    const asFile = await loadProject({ cwd: FIXTURES, config: 'shop/monitoring.config.ts' })
    const asDir = await loadProject({ cwd: FIXTURES, config: 'shop' })
    expect(asFile.resources).toHaveLength(8)
    expect(asDir.configFile).toBe(asFile.configFile)
  })

  it('loads the repository root project and the examples, which import the package by name', async () => {
    const root = await loadProject({ cwd: REPO_ROOT })
    expect(root.files.every((f) => f.startsWith('examples/shop/'))).toBe(true)
    expect(root.resources.length).toBeGreaterThan(0)
    const shop = await loadProject({ cwd: path.join(REPO_ROOT, 'examples', 'shop') })
    expect(shop.resources.map((r) => r.logicalId)).toEqual(root.resources.map((r) => r.logicalId))
    const minimal = await loadProject({ cwd: path.join(REPO_ROOT, 'examples', 'minimal') })
    expect(minimal.resources.map((r) => r.construct)).toEqual(['DnsCheck'])
  })

  it('loads .mts, .js and .mjs configs and a project installed from node_modules', async () => {
    for (const name of ['monitoring.config.mts', 'monitoring.config.js', 'monitoring.config.mjs']) {
      const dir = tempProject({
        'package.json': '{ "type": "module" }',
        [name]: `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'p', checkMatch: 'monitors/*.check.{ts,js}' })\n`,
        'monitors/a.check.js': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('A_KEY', { value: 'v' })\n`,
        'monitors/b.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('B_KEY', { value: 'v' as string })\n`,
      })
      const project = await loadProject({ cwd: dir })
      expect(project.configFile).toBe(path.join(dir, name))
      expect(project.files).toEqual(['monitors/a.check.js', 'monitors/b.check.ts'])
      expect(project.resources.map((r) => r.logicalId)).toEqual(['A_KEY', 'B_KEY'])
    }
  })

  it('never searches node_modules or .git', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p', checkMatch: '**/*.check.ts' }\n`,
      'a.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('A', { value: 'v' })\n`,
      'node_modules/dep/x.check.ts': `throw new Error('must not be loaded')\n`,
      '.git/y.check.ts': `throw new Error('must not be loaded')\n`,
    })
    const project = await loadProject({ cwd: dir })
    expect(project.files).toEqual(['a.check.ts'])
  })
})

describe("the package's own constructs", () => {
  const config = `export default { projectName: 'p', checkMatch: '**/*.check.ts' }\n`
  const check = `import * as api from 'monitors-as-code'\nexport const constructs = api\nnew api.EnvVar('A_KEY', { value: 'v' })\n`

  it('are handed to a project that resolves monitors-as-code to this package, without loading the package again', async () => {
    const dir = tempProject({ 'monitoring.config.ts': config, 'a.check.ts': check })
    const { resources } = await loadProject({ cwd: dir })
    expect(resources.map((r) => r.logicalId)).toEqual(['A_KEY'])
    const loaded = (await import('../../src/project/loader.js')).importFile
    const result = await loaded(path.join(dir, 'a.check.ts'), (abs) => abs)
    expect('module' in result && (result.module.constructs as { DnsCheck: unknown }).DnsCheck).toBe(DnsCheck)
  })

  it('are not handed to a project whose monitors-as-code is another copy: that copy is loaded', async () => {
    const dir = tempProject(
      {
        'monitoring.config.ts': config,
        'a.check.ts': check,
        'node_modules/monitors-as-code/package.json': JSON.stringify({ name: 'monitors-as-code', version: '0.0.1', main: 'index.cjs' }),
        // another copy: its constructs register the same way, and are its own classes
        'node_modules/monitors-as-code/index.cjs': [
          "const slot = Symbol.for('monitors-as-code.loading')",
          'class EnvVar { constructor(id, props) { this.logicalId = id; this.props = props; globalThis[slot]?.register(this, EnvVar) } }',
          "Object.defineProperty(EnvVar.prototype, '__monitorsKind', { value: 'variable' })",
          "Object.defineProperty(EnvVar.prototype, '__monitorsConstruct', { value: 'EnvVar' })",
          'module.exports = { EnvVar, copy: true }',
        ].join('\n'),
      },
      { link: false },
    )
    const { resources } = await loadProject({ cwd: dir })
    expect(resources.map((r) => r.logicalId)).toEqual(['A_KEY'])
    const result = await (await import('../../src/project/loader.js')).importFile(path.join(dir, 'a.check.ts'), (abs) => abs)
    expect('module' in result && (result.module.constructs as { copy?: boolean }).copy).toBe(true)
  })

  it('are not handed to a project where monitors-as-code cannot be found: the import fails as before', async () => {
    const dir = tempProject({ 'monitoring.config.ts': config, 'a.check.ts': check }, { link: false })
    await expect(loadProject({ cwd: dir })).rejects.toThrow(/cannot find module "monitors-as-code"/)
  })
})

describe('constructs outside loading', () => {
  it('keep their props and logical id and register nowhere', () => {
    const check = new DnsCheck('solo', { name: 'Solo', request: { query: 'x.example.com' }, protect: true })
    expect(check.logicalId).toBe('solo')
    expect(check.props.name).toBe('Solo')
    expect(check.options).toEqual({ protect: true })
    expect((check as unknown as { __monitorsKind: string }).__monitorsKind).toBe('dns-check')
  })
})

describe('placing constructs without a stack', () => {
  const check = (id: string) => `new DnsCheck('${id}', { name: '${id}', request: { query: 'example.com' } })`
  const config = `export default { projectName: 'p', checkMatch: '**/*.check.ts' }\n`

  it("places what a check file's own code makes without asking V8 for a stack, in that file", async () => {
    const dir = tempProject({
      'monitoring.config.ts': config,
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\n${check('one')}\n${check('two')}\n`,
      'b.check.ts': `import { DnsCheck } from 'monitors-as-code'\nfor (const id of ['three', 'four']) ${check('${id}').replace(`'\${id}'`, 'id')}\n`,
    })
    const before = placementCounts()
    const { resources } = await loadProject({ cwd: dir })
    const after = placementCounts()
    expect(resources.map((r) => [r.logicalId, r.file])).toEqual([
      ['four', 'b.check.ts'],
      ['one', 'a.check.ts'],
      ['three', 'b.check.ts'],
      ['two', 'a.check.ts'],
    ])
    expect(after.withoutStack - before.withoutStack).toBe(4)
    expect(after.fromStack - before.fromStack).toBe(0)
  })

  it('names the line of the first of two constructs with one id in one file', async () => {
    const dir = tempProject({
      'monitoring.config.ts': config,
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\n\n${check('twice')}\n// another\n${check('twice')}\n`,
    })
    await expect(loadProject({ cwd: dir })).rejects.toThrow(
      'a.check.ts › DnsCheck "twice" › duplicate logical id: DnsCheck "twice" is also declared at a.check.ts:3; logical ids must be unique per kind',
    )
  })

  it('places a construct made by a function of another check file in that file, as the stack says', async () => {
    const dir = tempProject({
      'monitoring.config.ts': config,
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nimport { make } from './b.check'\n${check('own')}\nmake('made')\n${check('after')}\n`,
      'b.check.ts': `import { DnsCheck } from 'monitors-as-code'\nexport function make(id: string) {\n  return new DnsCheck(id, { name: id, request: { query: 'example.com' } })\n}\n${check('bs-own')}\n`,
    })
    const { resources } = await loadProject({ cwd: dir })
    expect(Object.fromEntries(resources.map((r) => [r.logicalId, r.file]))).toEqual({
      own: 'a.check.ts',
      made: 'b.check.ts',
      after: 'a.check.ts',
      'bs-own': 'b.check.ts',
    })
  })

  it("reports a construct made at the top of a helper module a check file's function loads lazily as outside the project", async () => {
    const dir = tempProject({
      'monitoring.config.ts': config,
      'lib/late.ts': `import { DnsCheck } from 'monitors-as-code'\n${check('late')}\n`,
      'lib/load.ts': `export function loadLate() {\n  require('./late')\n}\n`,
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nimport { loadLate } from './lib/load'\n${check('own')}\nloadLate()\n`,
    })
    await expect(loadProject({ cwd: dir })).rejects.toThrow(/lib\/late\.ts › DnsCheck "late" › is created at lib\/late\.ts:2, a file that checkMatch/)
  })
})
