/**
 * monitors import: lists what the lock does not know, writes constructs for it (the props a
 * user would write) and records them, so that the next plan says `No changes.`; --adopt
 * recovers a lost lock file without duplicates.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { dnsCheck, file, makeProject, STACK_LINE, useServer } from '../helpers/use-server.js'
import { monitors } from '../helpers/cli.js'

const api = useServer('importing')

describe('monitors import', () => {
  const dir = makeProject({ 'existing.check.ts': file(dnsCheck('existing')) })

  it('lists the remote resources the lock does not know', async () => {
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    const svc = await api.client.post<{ id: string }>('/v1/status-pages/services', { name: 'Checkout API' })
    await api.client.post('/v1/status-pages', { name: 'Shop status', url: 'import-shop', cards: [{ name: 'Shop', services: [{ id: svc.body.id }] }] })
    await api.client.post('/v1/checks/dns', {
      name: "Shop's DNS",
      request: { query: 'shop.example.com', recordType: 'AAAA', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
      frequency: 5,
      locations: ['eu-west-1'],
      tags: ['shop'],
    })
    await api.client.post('/v1/checks/icmp', { name: 'Edge ping', request: { hostname: 'edge.example.com', pingCount: 20 }, heartbeat: {}, script: '' })
    await api.client.post('/v1/variables', { key: 'REGION', value: 'eu' })

    const list = await api.cli(dir, ['import'])
    expect(list.code, list.output).toBe(0)
    expect(list.stdout).toContain('5 remote resources not in the lock:')
    expect(list.stdout).toContain(`status-page-service:checkout-api  "Checkout API"  (id ${svc.body.id})`)
    expect(list.stdout).toContain('dns-check:shop-s-dns  "Shop\'s DNS"')
    expect(list.stdout).not.toContain('existing')
    expect(existsSync(join(dir, 'imported.check.ts'))).toBe(false)
  })

  it('import --all writes readable constructs with only non-default props; the next plan says No changes.', async () => {
    const result = await api.cli(dir, ['import', '--all', '--out', 'imported.check.ts'])
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('Wrote 5 constructs to imported.check.ts and recorded them in the lock.')
    const code = readFileSync(join(dir, 'imported.check.ts'), 'utf8')
    expect(code).toContain("import { DnsCheck, EnvVar, IcmpCheck, StatusPage, StatusPageService } from 'monitors-as-code'")
    expect(code).toContain("const checkoutApi = new StatusPageService('checkout-api', { name: 'Checkout API' })")
    expect(code).toContain('services: [checkoutApi]')
    expect(code).toContain("new EnvVar('REGION', { value: 'eu' })")
    expect(code).toContain("name: 'Shop\\'s DNS'")
    expect(code).toContain("recordType: 'AAAA'")
    expect(code).toContain('pingCount: 20')
    // defaults are left out, as a user would
    expect(code).not.toContain('activated')
    expect(code).not.toContain("protocol: 'UDP'")
    expect(code).not.toMatch(/"|\t/)
    expect(Object.keys(api.lock(dir).resources).sort()).toEqual([
      'dns-check:existing',
      'dns-check:shop-s-dns',
      'icmp-check:edge-ping',
      'status-page-service:checkout-api',
      'status-page:shop-status',
      'variable:REGION',
    ])

    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\. .*6 resources up to date/)
    expect(plan.stdout).not.toContain('not in the lock')
    expect((await api.cli(dir, ['import'])).stdout).toContain('nothing to import')
  })

  it('never overwrites a file and names unknown ids', async () => {
    await api.client.post('/v1/checks/dns', { name: 'Later', request: { query: 'later.example.com' } })
    const exists = await api.cli(dir, ['import', '--all', '--out', 'imported.check.ts'])
    expect(exists.code).toBe(1)
    expect(exists.stderr).toContain('imported.check.ts already exists')
    const unknown = await api.cli(dir, ['import', 'dns-check:nope'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('"dns-check:nope": not a remote resource missing from the lock')
    expect(unknown.output).not.toMatch(STACK_LINE)
    const one = await api.cli(dir, ['import', 'dns-check:later', '--out', 'later.check.ts'])
    expect(one.code, one.output).toBe(0)
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })

  it('--adopt recovers a lost lock file: the same remote resources, no duplicates', async () => {
    const before = api.lock(dir).resources
    rmSync(join(dir, 'monitoring.lock.json'))
    const count = (await api.client.get<unknown[]>('/v1/checks', { limit: 100 })).body.length
    const adopt = await api.cli(dir, ['import', '--adopt'])
    expect(adopt.code, adopt.output).toBe(0)
    expect(adopt.stdout).toContain('Adopted 7 remote resources into the lock')
    // never a silent take-over: the service cannot tell this project's resources from another's
    expect(adopt.stdout).toContain('if one belongs to another project, remove its entry from monitoring.lock.json before applying, or both projects change it')
    const after = api.lock(dir).resources
    for (const key of Object.keys(before)) expect(after[key].remoteId).toBe(before[key].remoteId)
    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
    expect((await api.client.get<unknown[]>('/v1/checks', { limit: 100 })).body.length).toBe(count)
  })
})

describe('monitors import with the embedded default target', () => {
  it('adopts and imports from the embedded server into its own lock', async () => {
    const dir = makeProject({ 'a.check.ts': file(dnsCheck('a')), 'vars.check.ts': file(`new EnvVar('REGION', { value: 'eu' })\n`) })
    expect((await monitors(dir, ['apply', '--yes'])).code).toBe(0)
    // the embedded lock is lost and a.check.ts deleted: adopt what the code has, import the rest
    rmSync(join(dir, '.monitors', 'local.lock.json'))
    rmSync(join(dir, 'a.check.ts'))
    const adopt = await monitors(dir, ['import', '--adopt'])
    expect(adopt.code, adopt.output).toBe(0)
    expect(adopt.stdout).toContain('= variable REGION adopted (id REGION)')
    const result = await monitors(dir, ['import', '--all', '--out', 'back.check.ts'])
    expect(result.code, result.output).toBe(0)
    expect(readFileSync(join(dir, 'back.check.ts'), 'utf8')).toContain("new DnsCheck('dns-a', { name: 'DNS a', request: { query: 'a.example.com' } })")
    const plan = await monitors(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
  })
})
