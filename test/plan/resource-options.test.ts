/**
 * Resource options and targeting: aliases (a rename moves the lock entry with zero API calls),
 * protect, retainOnDelete, --target.
 */
import { describe, expect, it } from 'vitest'
import { dnsCheck, file, makeProject, STACK_LINE, useServer, writeFiles } from '../helpers/use-server.js'

const api = useServer('options')
type Check = { id: string; name: string; created_at: string; frequency: number }
const checks = async (prefix = '') => (await api.client.get<Check[]>('/v1/checks', { limit: 100 })).body.filter((c) => c.name.startsWith(prefix))

describe('aliases', () => {
  const dir = makeProject({ 'shop.check.ts': file(dnsCheck('old-id', { name: 'Shop', request: { query: 'shop.example.com' } })) })

  it('a rename with aliases is a move: the lock entry moves, no API write, same remote resource', async () => {
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    const remoteId = api.lock(dir).resources['dns-check:old-id'].remoteId
    const [before] = await checks('Shop')
    writeFiles(dir, { 'shop.check.ts': file(dnsCheck('new-id', { name: 'Shop', request: { query: 'shop.example.com' }, aliases: ['old-id'] })) })

    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(2)
    expect(plan.stdout).toContain('→ dns-check new-id (moved from old-id)')
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update, 0 to delete, 1 to move.')
    const md = await api.cli(dir, ['plan', '--format', 'markdown'])
    expect(md.stdout).toContain('| 0 | 0 | 0 | 1 | 0 |')

    // a plan reads the lists; an apply of a move must add no request to that
    let count = api.server.requestCount()
    expect((await api.cli(dir, ['plan'])).code).toBe(0)
    const planRequests = api.server.requestCount() - count
    count = api.server.requestCount()
    const apply = await api.cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    expect(api.server.requestCount() - count).toBe(planRequests)
    expect(apply.stdout).toMatch(/^→ dns-check new-id moved \(id [0-9a-f]{8}…\) \(from old-id; lock only\)/m)

    const lock = api.lock(dir)
    expect(lock.resources['dns-check:old-id']).toBeUndefined()
    expect(lock.resources['dns-check:new-id']).toMatchObject({ remoteId, logicalId: 'new-id' })
    expect(await checks('Shop')).toEqual([before])
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })

  it('a rename with a field change is a move and an update in one', async () => {
    writeFiles(dir, {
      'shop.check.ts': file(dnsCheck('newer-id', { name: 'Shop', request: { query: 'shop.example.com' }, frequency: 5, aliases: ['new-id'] })),
    })
    const apply = await api.cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stdout).toContain('~ dns-check newer-id (moved from new-id)')
    expect(apply.stdout).toContain('Apply complete: 0 created, 1 updated, 0 deleted.')
    expect(Object.keys(api.lock(dir).resources)).toEqual(['dns-check:newer-id'])
    expect((await checks('Shop')).map((c) => c.frequency)).toEqual([5])
  })
})

describe('protect and retainOnDelete', () => {
  const dir = makeProject({
    'shop.check.ts': file(dnsCheck('keep', { protect: true }), dnsCheck('leave', { retainOnDelete: true }), dnsCheck('plain')),
  })

  it('refuses a plan, an apply and a destroy that would delete a protected resource, saying how to unprotect', async () => {
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    expect(api.lock(dir).resources['dns-check:keep'].protect).toBe(true)
    const destroy = await api.cli(dir, ['destroy', '--yes'])
    expect(destroy.code).toBe(1)
    expect(destroy.stderr).toContain('dns-check keep')
    expect(destroy.stderr).toContain('set protect: false')
    expect(destroy.output).not.toMatch(STACK_LINE)

    writeFiles(dir, { 'shop.check.ts': file(dnsCheck('leave', { retainOnDelete: true }), dnsCheck('plain')) })
    for (const args of [['plan'], ['apply', '--yes']]) {
      const result = await api.cli(dir, args)
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('This plan would delete a protected resource:\n  dns-check keep: it would be deleted (it is no longer in the code)')
      expect(result.stderr).toContain('put it back in the code first')
    }
    expect(await checks('DNS ')).toHaveLength(3)
  })

  it('unprotected through the code and an apply, it can then be removed', async () => {
    writeFiles(dir, { 'shop.check.ts': file(dnsCheck('keep', { protect: false }), dnsCheck('leave', { retainOnDelete: true }), dnsCheck('plain')) })
    const unprotect = await api.cli(dir, ['apply', '--yes'])
    expect(unprotect.code, unprotect.output).toBe(0)
    expect(api.lock(dir).resources['dns-check:keep'].protect).toBeUndefined()
    writeFiles(dir, { 'shop.check.ts': file(dnsCheck('leave', { retainOnDelete: true }), dnsCheck('plain')) })
    const apply = await api.cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stdout).toMatch(/^- dns-check keep deleted/m)
  })

  it('retainOnDelete: removed from the code, it is forgotten from the lock and keeps running', async () => {
    writeFiles(dir, { 'shop.check.ts': file(dnsCheck('plain')) })
    const plan = await api.cli(dir, ['plan'])
    expect(plan.stdout).toContain('- dns-check leave "DNS leave"')
    expect(plan.stdout).toContain('(forget)')
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update, 0 to delete, 1 to forget.')
    const apply = await api.cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stdout).toContain('(retainOnDelete: removed from the lock, still running)')
    expect(apply.stdout).toContain('Apply complete: 0 created, 0 updated, 0 deleted, 1 forgotten.')
    expect(api.lock(dir).resources['dns-check:leave']).toBeUndefined()
    expect((await checks('DNS ')).map((c) => c.name).sort()).toEqual(['DNS leave', 'DNS plain'])
  })
})

describe('--target', () => {
  const page = `const svc = new StatusPageService('svc', { name: 'Checkout' })
new StatusPage('public', { name: 'Status', url: 'options-target-page', cards: [{ name: 'Shop', services: [svc] }] })
new StatusPageService('other-svc', { name: 'Other' })
`
  const dir = makeProject({ 'shop.check.ts': file(dnsCheck('t1'), dnsCheck('t2'), page) })

  it('limits plan and apply to the targets and what they depend on', async () => {
    const plan = await api.cli(dir, ['plan', '--format', 'json', '--target', 'status-page:public', '--target', 'DnsCheck:t1'])
    expect(plan.code, plan.output).toBe(0)
    expect(
      JSON.parse(plan.stdout)
        .changes.map((c: { kind: string; logicalId: string }) => `${c.kind}:${c.logicalId}`)
        .sort(),
    ).toEqual(['dns-check:t1', 'status-page-service:svc', 'status-page:public'])
    const apply = await api.cli(dir, ['apply', '--yes', '--target', 'status-page:public'])
    expect(apply.code, apply.output).toBe(0)
    expect(Object.keys(api.lock(dir).resources).sort()).toEqual(['status-page-service:svc', 'status-page:public'])
    const rest = await api.cli(dir, ['plan'])
    expect(rest.stdout).toContain('Plan: 3 to create, 0 to update, 0 to delete.')
  })

  it('refuses a target that names nothing, saying what is allowed', async () => {
    const result = await api.cli(dir, ['plan', '--target', 'dns-check:nope', '--target', 'page'])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('--target "dns-check:nope", "page" name no resource in the code or the lock')
    expect(result.stderr).toContain('kind:logicalId')
  })
})
