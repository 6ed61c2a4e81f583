/**
 * What a pipeline must never do silently, through the built CLI against the real local server:
 * create duplicates after a lost lock update, hide a reorder, drop protection unseen, print
 * nothing on an error, or plan a delete the service must refuse.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { makeProject, monitors, STACK_LINE, writeFiles } from '../helpers/cli.js'

let server: LocalServer
const ACCOUNTS = ['dup', 'dupsaved', 'dupvar', 'order', 'protect', 'docs', 'conflict', 'lints']
const clients: Record<string, ApiClient> = {}

beforeAll(async () => {
  server = await startLocalServer({ apiKeys: ACCOUNTS.map((a) => ({ key: `key-${a}`, accountId: a })) })
  for (const a of ACCOUNTS) clients[a] = new ApiClient({ baseUrl: server.url, apiKey: `key-${a}`, accountId: a })
})
afterAll(async () => {
  for (const c of Object.values(clients)) await c.close()
  await server?.close()
})

const env = (account: string) => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: `key-${account}`, MONITORING_ACCOUNT_ID: account })
const list = async (account: string, path: string) => (await clients[account].get<Array<Record<string, unknown>>>(path, { limit: 100 })).body
const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'monitoring.lock.json'), 'utf8'))

describe('a lost lock update (A4)', () => {
  const check = (frequency: number) => `
import { DnsCheck, EnvVar } from 'monitors-as-code'
new DnsCheck('api-dns', { name: 'API DNS', request: { query: 'api.example.com' }, frequency: ${frequency} })
new EnvVar('API_TOKEN', { value: 'token-1' })
`
  const dir = makeProject({ 'api.check.ts': check(10) })

  it('marks the create of an existing resource as a duplicate and apply refuses it', async () => {
    expect((await monitors(dir, ['apply', '--yes'], env('dupvar'))).code).toBe(0)
    const [remote] = await list('dupvar', '/v1/checks')
    // the commit-back of the lock failed: the old lock (none) comes back
    rmSync(join(dir, 'monitoring.lock.json'))

    // plan refuses what apply refuses: shown, then refused (exit 1), never counted as a create
    const text = await monitors(dir, ['plan'], env('dupvar'))
    expect(text.code, text.output).toBe(1)
    expect(text.stdout).toContain('duplicate')
    expect(text.stdout).toContain(String(remote.id))
    expect(text.stdout).toContain('Plan: 0 to create, 0 to update, 0 to delete. 2 refused: already exist (duplicate).')

    const json = await monitors(dir, ['plan', '--format', 'json'], env('dupvar'))
    expect(json.code).toBe(1)
    const doc = JSON.parse(json.stdout)
    expect(doc.ok).toBe(false)
    expect(doc.refused).toContain('already exist')
    expect(doc.summary).toMatchObject({ create: 0, duplicate: 2 })
    const change = doc.changes.find((c: { logicalId: string }) => c.logicalId === 'api-dns')
    expect(change.duplicateOf).toEqual({ remoteId: remote.id, name: 'API DNS' })
    expect(doc.changes.find((c: { logicalId: string }) => c.logicalId === 'API_TOKEN').duplicateOf.remoteId).toBe('API_TOKEN')

    const md = await monitors(dir, ['plan', '--format', 'markdown'], env('dupvar'))
    expect(md.stdout).toContain(String(remote.id))

    const refused = await monitors(dir, ['apply', '--yes'], env('dupvar'))
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('--adopt-existing')
    expect(refused.stderr).toContain('--allow-duplicates')
    expect(refused.stderr).toContain('dns-check api-dns')
    expect(refused.stderr).toMatch(/API_TOKEN.*(cannot|never)/)
    expect(refused.output).not.toMatch(STACK_LINE)
    expect(await list('dupvar', '/v1/checks')).toHaveLength(1)

    // a variable can never be duplicated: --allow-duplicates alone does not help
    const still = await monitors(dir, ['apply', '--yes', '--allow-duplicates'], env('dupvar'))
    expect(still.code).toBe(1)
    expect(still.stderr).toContain('--adopt-existing')
    expect(await list('dupvar', '/v1/checks')).toHaveLength(1)
  })

  it('--adopt-existing records the remote resources, then applies the differences', async () => {
    writeFiles(dir, { 'api.check.ts': check(5) })
    const preview = await monitors(dir, ['plan', '--adopt-existing', '--format', 'json'], env('dupvar'))
    expect(preview.code, preview.output).toBe(0)
    const change = JSON.parse(preview.stdout).changes.find((c: { logicalId: string }) => c.logicalId === 'api-dns')
    expect(change.action).toBe('update')
    expect(change.fieldDiffs).toEqual([{ path: 'frequency', old: 10, new: 5 }])

    const result = await monitors(dir, ['apply', '--yes', '--adopt-existing'], env('dupvar'))
    expect(result.code, result.output).toBe(0)
    const checks = await list('dupvar', '/v1/checks')
    expect(checks).toHaveLength(1)
    expect(checks[0].frequency).toBe(5)
    expect(lockOf(dir).resources['dns-check:api-dns'].remoteId).toBe(checks[0].id)
    expect(lockOf(dir).resources['variable:API_TOKEN'].remoteId).toBe('API_TOKEN')
    const again = await monitors(dir, ['plan'], env('dupvar'))
    expect(again.stdout).toContain('No changes.')
  })

  it('--allow-duplicates creates a second copy on purpose', async () => {
    const only = makeProject({
      'api.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('api-dns', { name: 'API DNS', request: { query: 'api.example.com' } })\n`,
    })
    expect((await monitors(only, ['apply', '--yes'], env('dup'))).code).toBe(0)
    rmSync(join(only, 'monitoring.lock.json'))
    expect((await monitors(only, ['apply', '--yes'], env('dup'))).code).toBe(1)
    expect(await list('dup', '/v1/checks')).toHaveLength(1)
    const result = await monitors(only, ['apply', '--yes', '--allow-duplicates'], env('dup'))
    expect(result.code, result.output).toBe(0)
    expect(await list('dup', '/v1/checks')).toHaveLength(2)
  })
})

describe('a lost lock update in a pipeline that applies saved plans (A4)', () => {
  it('plan --adopt-existing --out saves a plan that records the existing resources; apply runs it', async () => {
    const dir = makeProject({
      'api.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('api-dns', { name: 'API DNS', request: { query: 'api.example.com' } })\n`,
    })
    expect((await monitors(dir, ['apply', '--yes'], env('dupsaved'))).code).toBe(0)
    rmSync(join(dir, 'monitoring.lock.json'))
    // a plan apply would refuse is refused when it is made: nothing is saved
    const refused = await monitors(dir, ['plan', '--out', 'plain.json'], env('dupsaved'))
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('--adopt-existing')
    expect(existsSync(join(dir, 'plain.json'))).toBe(false)
    expect((await monitors(dir, ['plan', '--adopt-existing', '--out', 'plan.json'], env('dupsaved'))).code).toBe(0)
    const applied = await monitors(dir, ['apply', 'plan.json'], env('dupsaved'))
    expect(applied.code, applied.output).toBe(0)
    expect(await list('dupsaved', '/v1/checks')).toHaveLength(1)
    expect(lockOf(dir).resources['dns-check:api-dns']).toBeDefined()
    expect((await monitors(dir, ['plan'], env('dupsaved'))).stdout).toContain('No changes.')
  })
})

describe('a reorder beside another change (A6)', () => {
  const page = (order: string, theme: string) => `
import { StatusPage, StatusPageService } from 'monitors-as-code'
const a = new StatusPageService('svc-a', { name: 'Service A' })
const b = new StatusPageService('svc-b', { name: 'Service B' })
new StatusPage('public', { name: 'Status', url: 'order-page', defaultTheme: '${theme}', cards: [{ name: 'Main', services: [${order}] }] })
`
  const dir = makeProject({ 'page.check.ts': page('a, b', 'AUTO') })

  it('shows the new order of services together with the theme', async () => {
    expect((await monitors(dir, ['apply', '--yes'], env('order'))).code).toBe(0)
    writeFiles(dir, { 'page.check.ts': page('b, a', 'DARK') })
    const json = await monitors(dir, ['plan', '--format', 'json'], env('order'))
    expect(json.code, json.output).toBe(0)
    const change = JSON.parse(json.stdout).changes.find((c: { logicalId: string }) => c.logicalId === 'public')
    const paths = change.fieldDiffs.map((d: { path: string }) => d.path)
    expect(paths).toContain('defaultTheme')
    expect(paths.some((p: string) => p.includes('services'))).toBe(true)
    const text = await monitors(dir, ['plan'], env('order'))
    expect(text.stdout).toContain('services')
  })
})

describe('protection changes (A7)', () => {
  const check = (protect: boolean) => `
import { DnsCheck } from 'monitors-as-code'
new DnsCheck('core-dns', { name: 'Core DNS', request: { query: 'core.example.com' }, protect: ${protect} })
`
  const dir = makeProject({ 'core.check.ts': check(true) })

  it('plans protect: true → false as a lock-only update, and destroy waits for it to be recorded', async () => {
    expect((await monitors(dir, ['apply', '--yes'], env('protect'))).code).toBe(0)
    expect(lockOf(dir).resources['dns-check:core-dns'].protect).toBe(true)
    writeFiles(dir, { 'core.check.ts': check(false) })

    const text = await monitors(dir, ['plan'], env('protect'))
    expect(text.stdout).not.toContain('No changes.')
    expect(text.stdout).toContain('protect')
    const doc = JSON.parse((await monitors(dir, ['plan', '--format', 'json'], env('protect'))).stdout)
    expect(doc.summary.update).toBe(1)
    expect(doc.changes[0].fieldDiffs).toEqual([expect.objectContaining({ path: 'protect', old: true, new: false })])

    const destroy = await monitors(dir, ['destroy', '--yes'], env('protect'))
    expect(destroy.code).toBe(1)
    expect(destroy.stderr).toContain('apply first')
    expect(await list('protect', '/v1/checks')).toHaveLength(1)

    const apply = await monitors(dir, ['apply', '--yes'], env('protect'))
    expect(apply.code, apply.output).toBe(0)
    expect(lockOf(dir).resources['dns-check:core-dns'].protect).toBeUndefined()
    expect((await monitors(dir, ['plan'], env('protect'))).stdout).toContain('No changes.')
    expect((await monitors(dir, ['destroy', '--yes'], env('protect'))).code).toBe(0)
    expect(await list('protect', '/v1/checks')).toHaveLength(0)
  })
})

describe('documents on errors (A8)', () => {
  it('writes the plan with protected when the plan is refused', async () => {
    const dir = makeProject({
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('keep', { name: 'Keep', request: { query: 'k.example.com' }, protect: true })\n`,
    })
    expect((await monitors(dir, ['apply', '--yes'], env('docs'))).code).toBe(0)
    writeFiles(dir, {
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('other', { name: 'Other', request: { query: 'o.example.com' } })\n`,
    })
    const json = await monitors(dir, ['plan', '--format', 'json'], env('docs'))
    expect(json.code).toBe(1)
    const doc = JSON.parse(json.stdout)
    expect(doc.protected).toEqual([expect.objectContaining({ kind: 'dns-check', logicalId: 'keep', action: 'delete' })])
    const md = await monitors(dir, ['plan', '--format', 'markdown'], env('docs'))
    expect(md.code).toBe(1)
    expect(md.stdout).toContain('keep')
    expect(md.stdout.toLowerCase()).toContain('protected')
  })

  it('writes the problems when the project does not validate', async () => {
    const dir = makeProject({
      'bad.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('bad', { name: 'Bad', request: { query: 'b.example.com' }, frequency: 7 })\n`,
    })
    const json = await monitors(dir, ['plan', '--format', 'json'], env('docs'))
    expect(json.code).toBe(1)
    const doc = JSON.parse(json.stdout)
    expect(doc.ok).toBe(false)
    expect(doc.problems).toEqual([expect.objectContaining({ file: 'bad.check.ts', construct: 'DnsCheck', field: 'frequency' })])
    const md = await monitors(dir, ['plan', '--format', 'markdown'], env('docs'))
    expect(md.code).toBe(1)
    expect(md.stdout).toContain('frequency')
  })

  it('writes the error when the API cannot be reached', async () => {
    const dir = makeProject({
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A', request: { query: 'a.example.com' } })\n`,
    })
    const json = await monitors(dir, ['plan', '--format', 'json', '--retries', '0', '--timeout', '2'], {
      ...env('docs'),
      MONITORING_API_URL: 'http://127.0.0.1:9',
    })
    expect(json.code).toBe(1)
    const doc = JSON.parse(json.stdout)
    expect(doc.ok).toBe(false)
    expect(doc.problems[0].message).toBeTruthy()
    expect(json.stdout).not.toContain('key-docs')
  })
})

describe('conflicts (A11)', () => {
  it('refuses aliases claimed twice or still live', async () => {
    const twice = makeProject({
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('one', { name: 'One', request: { query: 'a.example.com' }, aliases: ['old'] })\n`,
      'b.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('two', { name: 'Two', request: { query: 'b.example.com' }, aliases: ['old'] })\n`,
    })
    const result = await monitors(twice, ['validate'])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('a.check.ts')
    expect(result.stderr).toContain('b.check.ts')
    expect(result.stderr).toContain('"one"')
    expect(result.stderr).toContain('"two"')

    const live = makeProject({
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('one', { name: 'One', request: { query: 'a.example.com' }, aliases: ['two'] })\nnew DnsCheck('two', { name: 'Two', request: { query: 'b.example.com' } })\n`,
    })
    const second = await monitors(live, ['validate'])
    expect(second.code).toBe(1)
    expect(second.stderr).toMatch(/aliases.*two/)
  })

  it('refuses up front a delete of a service a page that stays still uses', async () => {
    const dir = makeProject({
      'page.check.ts': `import { StatusPage, StatusPageService } from 'monitors-as-code'
const s = new StatusPageService('svc', { name: 'Svc' })
new StatusPage('kept', { name: 'Kept', url: 'kept-page', cards: [{ name: 'Main', services: [s] }], retainOnDelete: true })
`,
    })
    expect((await monitors(dir, ['apply', '--yes'], env('conflict'))).code).toBe(0)
    writeFiles(dir, { 'page.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('x', { name: 'X', request: { query: 'x.example.com' } })\n` })
    const plan = await monitors(dir, ['plan'], env('conflict'))
    expect(plan.code).toBe(1)
    expect(plan.stderr).toContain('status-page-service svc')
    expect(plan.stderr).toContain('kept-page')
    const json = await monitors(dir, ['plan', '--format', 'json'], env('conflict'))
    expect(json.code).toBe(1)
    const doc = JSON.parse(json.stdout)
    expect(doc.ok).toBe(false)
    expect(doc.blocked).toEqual([expect.objectContaining({ kind: 'status-page-service', logicalId: 'svc' })])
    expect(doc.refused).toContain('still used by')
    const apply = await monitors(dir, ['apply', '--yes'], env('conflict'))
    expect(apply.code).toBe(1)
    expect(await list('conflict', '/v1/checks')).toHaveLength(0)
  })
})

describe('lints (C)', () => {
  it('warns, without failing, about settings that have no effect or match nothing', async () => {
    const dir = makeProject({
      'a.check.ts': `import { DnsCheck, MaintenanceWindow } from 'monitors-as-code'
new DnsCheck('a', { name: 'A', request: { query: 'a.example.com' }, tags: ['shop'], alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } } })
new DnsCheck('b', { name: 'B', request: { query: 'b.example.com' }, degradedResponseTime: 2000, maxResponseTime: 1000 })
new MaintenanceWindow('mw', { name: 'Nightly', tags: ['shop', 'nosuchtag'], startsAt: '2030-01-01T00:00:00Z', endsAt: '2030-01-01T01:00:00Z' })
`,
    })
    const text = await monitors(dir, ['plan'], env('lints'))
    expect(text.code, text.output).toBe(0)
    expect(text.stderr).toContain('useGlobalAlertSettings')
    expect(text.stderr).toContain('degradedResponseTime')
    expect(text.stderr).toContain('nosuchtag')
    const doc = JSON.parse((await monitors(dir, ['plan', '--format', 'json'], env('lints'))).stdout)
    expect(doc.warnings).toHaveLength(3)
    expect(doc.warnings).toContainEqual(expect.objectContaining({ file: 'a.check.ts', construct: 'MaintenanceWindow', field: 'tags' }))
    const md = await monitors(dir, ['plan', '--format', 'markdown'], env('lints'))
    expect(md.stdout).toContain('nosuchtag')
    const validate = await monitors(dir, ['validate'])
    expect(validate.code, validate.output).toBe(0)
    expect(validate.stderr).toContain('nosuchtag')
    const validateJson = await monitors(dir, ['validate', '--format', 'json'])
    expect(validateJson.code).toBe(0)
    expect(JSON.parse(validateJson.stdout).warnings).toHaveLength(3)
  })
})
