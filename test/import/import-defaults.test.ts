/**
 * monitors import in a project with a narrow checkMatch and config defaults: the written file is
 * one the project loads (or nothing is written and the lock is untouched), and the code it
 * writes cancels every default the remote resources do not have, so the next plan says
 * `No changes.`.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { dnsCheck, file, makeProject, STACK_LINE, useServer } from '../helpers/use-server.js'

const api = useServer('import-defaults')

const configWith = (body: string) => `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'imp', ${body} })\n`

const DEFAULTS = `defaults: {
    tags: ['team-a', 'prod'],
    alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
    retryStrategy: { type: 'FIXED', baseBackoffSeconds: 60, maxRetries: 2, sameRegion: true },
    alertChannels: { email: [{ address: 'oncall@example.com' }] },
    locations: ['us-east-1', 'eu-west-1'],
    frequency: 5,
    muted: true,
  }`

const lockOf = (dir: string) => (existsSync(join(dir, 'monitoring.lock.json')) ? readFileSync(join(dir, 'monitoring.lock.json'), 'utf8') : undefined)

async function remoteChecks() {
  const alertSettings = { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } }
  const retryStrategy = { type: 'FIXED', baseBackoffSeconds: 60, maxRetries: 2, sameRegion: true }
  const alertChannels = { email: [{ address: 'oncall@example.com' }] }
  // nothing of the defaults
  await api.client.post('/v1/checks/dns', { name: 'Bare', request: { query: 'bare.example.com' } })
  // exactly the defaults, locations in another order, one tag of its own
  await api.client.post('/v1/checks/dns', {
    name: 'Like defaults',
    request: { query: 'like.example.com' },
    tags: ['prod', 'dns', 'team-a'],
    alertSettings,
    retryStrategy,
    alertChannels,
    locations: ['eu-west-1', 'us-east-1'],
    frequency: 5,
    muted: true,
  })
  // other values everywhere, some tags of the defaults only
  await api.client.post('/v1/checks/dns', {
    name: 'Other',
    request: { query: 'other.example.com', recordType: 'MX' },
    tags: ['prod', 'payments'],
    alertSettings: { escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 10 } },
    retryStrategy: { type: 'NO_RETRIES' },
    locations: ['ap-southeast-1'],
    frequency: 10,
    muted: false,
    useGlobalAlertSettings: false,
  })
  // an ICMP check as other clients create it: heartbeat {} and script '' sent, default tags only
  await api.client.post('/v1/checks/icmp', {
    name: 'Edge ping',
    request: { hostname: 'edge.example.com' },
    heartbeat: {},
    script: '',
    tags: ['team-a', 'prod'],
    retryStrategy,
    alertSettings,
    frequency: 5,
    muted: true,
    locations: ['us-east-1', 'eu-west-1'],
  })
  await api.client.post('/v1/variables', { key: 'IMP_REGION', value: 'eu' })
}

describe('monitors import --all with checkMatch and defaults', () => {
  const dir = makeProject({
    'monitoring.config.ts': configWith(`checkMatch: 'checks/**/*.check.ts',\n  ${DEFAULTS},`),
    'checks/existing.check.ts': file(dnsCheck('existing')),
  })

  it('refuses an --out that checkMatch does not match: nothing written, the lock untouched', async () => {
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    await remoteChecks()
    const before = lockOf(dir)
    const result = await api.cli(dir, ['import', '--all', '--out', 'imported.check.ts'])
    expect(result.code, result.output).toBe(1)
    expect(result.stderr).toContain('imported.check.ts')
    expect(result.stderr).toContain('checkMatch (checks/**/*.check.ts)')
    expect(result.output).not.toMatch(STACK_LINE)
    expect(existsSync(join(dir, 'imported.check.ts'))).toBe(false)
    expect(lockOf(dir)).toBe(before)
    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
  })

  it('writes by default to a file checkMatch matches; the next plan says No changes. whatever the defaults', async () => {
    const result = await api.cli(dir, ['import', '--all'])
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('Wrote 5 constructs to checks/imported.check.ts and recorded them in the lock.')
    const code = readFileSync(join(dir, 'checks', 'imported.check.ts'), 'utf8')
    // the check without tags opts out of the default tags; the one with its own writes only its own
    expect(code).toMatch(/new DnsCheck\('bare', \{[\s\S]*?defaultTags: false[\s\S]*?\}\)/)
    expect(code).toMatch(/new DnsCheck\('like-defaults', \{ name: 'Like defaults', request: \{ query: 'like\.example\.com' \}, tags: \['dns'\] \}\)/)
    expect(code).toMatch(/new IcmpCheck\('edge-ping', \{\s*name: 'Edge ping',\s*request: \{ hostname: 'edge\.example\.com' \},\s*alertChannels: null,?\s*\}\)/)
    expect(code).not.toContain('heartbeat')
    expect(code).not.toContain('script')
    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\./)
    // the adopted checks still run as they did
    const checks = (await api.client.get<Array<{ name: string; updated_at: unknown }>>('/v1/checks', { limit: 100 })).body
    expect(checks.filter((c) => c.name !== 'DNS existing').every((c) => c.updated_at === null)).toBe(true)
  })

  it('picks another default file name when that one exists', async () => {
    await api.client.post('/v1/checks/dns', { name: 'Later', request: { query: 'later.example.com' } })
    const result = await api.cli(dir, ['import', '--all'])
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('to checks/imported-2.check.ts')
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })
})

describe('monitors import: where the file goes', () => {
  it('refuses an --out that ignore leaves out', async () => {
    const dir = makeProject({
      'monitoring.config.ts': configWith(`ignore: ['legacy/**']`),
      'a.check.ts': file(dnsCheck('where-a')),
    })
    await api.client.post('/v1/checks/dns', { name: 'Where b', request: { query: 'where-b.example.com' } })
    const result = await api.cli(dir, ['import', '--all', '--out', 'legacy/b.check.ts'])
    expect(result.code, result.output).toBe(1)
    expect(result.stderr).toContain('legacy/b.check.ts')
    expect(result.stderr).toContain('ignore (legacy/**)')
    expect(existsSync(join(dir, 'legacy'))).toBe(false)
    expect(existsSync(join(dir, 'monitoring.lock.json'))).toBe(false)
  })

  it('asks for --out when no file name can be derived from checkMatch', async () => {
    const dir = makeProject({
      'monitoring.config.ts': configWith(`checkMatch: ['monitors/[a-c]*.check.ts']`),
      'monitors/a.check.ts': file(dnsCheck('derive-a')),
    })
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    await api.client.post('/v1/checks/dns', { name: 'Derive b', request: { query: 'derive-b.example.com' } })
    const before = api.lockText(dir)
    const result = await api.cli(dir, ['import', '--all'])
    expect(result.code, result.output).toBe(1)
    expect(result.stderr).toContain('pass --out')
    expect(result.stderr).toContain('monitors/[a-c]*.check.ts')
    expect(readdirSync(join(dir, 'monitors'))).toEqual(['a.check.ts'])
    expect(api.lockText(dir)).toBe(before)
    const ok = await api.cli(dir, ['import', '--all', '--out', 'monitors/b.check.ts'])
    expect(ok.code, ok.output).toBe(0)
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })
})

describe('monitors import with every default set', () => {
  it('cancels each default a remote check does not have; the next plan says No changes.', async () => {
    // a check's groupId names a group of its account
    const seven = (await api.client.post<{ id: number }>('/v1/check-groups', { name: 'Seven' })).body.id
    const dir = makeProject({
      'monitoring.config.ts': configWith(`defaults: {
    activated: false, muted: true, doubleCheck: false, shouldFail: true, locations: ['eu-north-1'], tags: ['all'],
    alertSettings: { escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 5 } },
    useGlobalAlertSettings: false, groupId: ${seven}, groupOrder: 2, runtimeId: '2024.09',
    alertChannelSubscriptions: [{ alertChannelId: 3 }], retryStrategy: { type: 'LINEAR', maxRetries: 3 },
    runParallel: true, frequency: 5, frequencyOffset: 20, alertChannels: { slack: [{ url: 'https://hooks.example.com/x' }] },
  },`),
      'all.check.ts': file(dnsCheck('all-existing')),
    })
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    await api.client.post('/v1/checks/dns', { name: 'All bare', request: { query: 'all-bare.example.com' } })
    // a group and a channel of the account, which the import brings along as constructs
    const group = await api.client.post<{ id: number }>('/v1/check-groups', { name: 'All group' })
    const channel = await api.client.post<{ id: number }>('/v1/alert-channels', { type: 'EMAIL', config: { address: 'all@example.com' } })
    await api.client.post('/v1/checks/icmp', {
      name: 'All custom',
      request: { hostname: 'all.example.com', pingCount: 3 },
      heartbeat: { interval: 5 },
      script: 'noop',
      activated: true,
      tags: ['all', 'edge'],
      groupId: group.body.id,
      runtimeId: '2025.04',
      alertChannelSubscriptions: [{ alertChannelId: channel.body.id, activated: false }],
      frequency: 60,
      frequencyOffset: 2,
      locations: ['eu-north-1', 'us-west-2'],
    })
    const svc = await api.client.post<{ id: string }>('/v1/status-pages/services', { name: 'All service' })
    await api.client.post('/v1/checks/dns', {
      name: 'All incident',
      request: { query: 'all-incident.example.com' },
      tags: ['edge'],
      triggerIncident: { serviceId: svc.body.id, severity: 'MAJOR', name: 'Down', description: 'DNS fails' },
    })
    const result = await api.cli(dir, ['import', '--all'])
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('to imported.check.ts')
    const code = readFileSync(join(dir, 'imported.check.ts'), 'utf8')
    expect(code).toContain('heartbeat: { interval: 5 }')
    expect(code).toContain("script: 'noop'")
    expect(code).toContain('serviceId: allService')
    expect(code).toContain('group: allGroup')
    expect(code).toContain('alertChannelSubscriptions: [{ alertChannelId: allExampleCom, activated: false }]')
    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\./)
  })
})

describe('opting out of config defaults in code', () => {
  it('defaultTags: false and null take none of the defaults; a wrong defaultTags is one clear problem', async () => {
    const dir = makeProject({
      'monitoring.config.ts': configWith(DEFAULTS),
      'own.check.ts': file(
        `new DnsCheck('own-tags', { name: 'Own tags', request: { query: 'own.example.com' }, defaultTags: false, tags: ['payments'], retryStrategy: null, alertSettings: null, alertChannels: null })\n`,
        dnsCheck('merged-tags', { tags: ['payments'] }),
      ),
    })
    const applied = await api.cli(dir, ['apply', '--yes'])
    expect(applied.code, applied.output).toBe(0)
    const lock = api.lock(dir).resources
    const own = (await api.client.get<Record<string, unknown>>(`/v1/checks/${lock['dns-check:own-tags'].remoteId}`)).body
    expect(own.tags).toEqual(['payments'])
    expect(own.retryStrategy ?? undefined).toBeUndefined()
    expect(own.alertSettings ?? undefined).toBeUndefined()
    expect(own.alertChannels ?? undefined).toBeUndefined()
    const merged = (await api.client.get<Record<string, unknown>>(`/v1/checks/${lock['dns-check:merged-tags'].remoteId}`)).body
    expect(merged.tags).toEqual(['team-a', 'prod', 'payments'])
    expect(merged.retryStrategy).toMatchObject({ type: 'FIXED' })
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)

    const bad = makeProject({ 'bad.check.ts': file(dnsCheck('bad', { defaultTags: 'no' })) })
    const validate = await api.cli(bad, ['validate'])
    expect(validate.code).toBe(1)
    expect(validate.output).toContain('defaultTags')
    expect(validate.output).toContain('must be a boolean')
    expect(validate.output).not.toContain('is not a known field')
    expect(validate.output).not.toMatch(STACK_LINE)
  })
})
