/**
 * Saved plans: `plan --out plan.json`, `apply plan.json` runs exactly it, or refuses it as stale
 * naming what changed: the code, the lock, or which remote resource.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { dnsCheck, file, makeProject, STACK_LINE, useServer, writeFiles } from '../helpers/use-server.js'

const api = useServer('saved')
type Check = Record<string, unknown> & { id: string; frequency: number }

describe('saved plans', () => {
  const dir = makeProject({
    'shop.check.ts': file(dnsCheck('a', { frequency: 10 }), dnsCheck('b'), `new EnvVar('TOKEN', { value: 'saved-plan-secret-v1', secret: true })\n`),
  })
  const idOf = (id: string) => api.lock(dir).resources[`dns-check:${id}`].remoteId as string

  it('apply plan.json runs exactly the saved plan; the file holds no secret', async () => {
    const plan = await api.cli(dir, ['plan', '--out', 'plan.json'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stderr).toContain('Saved the plan to plan.json; run it with: monitors apply plan.json')
    const saved = readFileSync(join(dir, 'plan.json'), 'utf8')
    expect(saved).not.toContain('saved-plan-secret-v1')
    const doc = JSON.parse(saved)
    expect(doc).toMatchObject({ formatVersion: 1, type: 'monitors-saved-plan' })
    expect(doc.plan.summary).toMatchObject({ create: 3 })

    const apply = await api.cli(dir, ['apply', 'plan.json'])
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stdout).toContain('Apply complete: 3 created, 0 updated, 0 deleted.')
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })

  it('refuses a saved plan after a remote edit, naming the resource', async () => {
    writeFiles(dir, {
      'shop.check.ts': file(dnsCheck('a', { frequency: 5 }), dnsCheck('b'), `new EnvVar('TOKEN', { value: 'saved-plan-secret-v1', secret: true })\n`),
    })
    expect((await api.cli(dir, ['plan', '--out', 'plan.json'])).code).toBe(0)
    const record = (await api.client.get<Check>(`/v1/checks/${idOf('b')}`)).body
    const { id: _id, created_at: _c, updated_at: _u, checkType: _t, ...body } = record
    await api.client.put(`/v1/checks/dns/${idOf('b')}`, { ...body, name: 'Renamed in the web app' })
    const before = api.server.requestCount()

    const apply = await api.cli(dir, ['apply', 'plan.json'])
    expect(apply.code).toBe(1)
    expect(apply.stderr).toContain('The saved plan plan.json is stale; nothing was changed.')
    expect(apply.stderr).toContain(`remote dns-check:b (id ${idOf('b')}) was changed outside monitors`)
    expect(apply.stderr).toContain('monitors plan --out plan.json')
    expect(apply.output).not.toMatch(STACK_LINE)
    // only the list read: no write was sent
    expect(api.server.requestCount() - before).toBe(2)
    expect((await api.client.get<Check>(`/v1/checks/${idOf('a')}`)).body.frequency).toBe(10)
  })

  it('refuses after a code change (a secret value too) and after a lock change', async () => {
    expect((await api.cli(dir, ['plan', '--out', 'plan.json'])).code).toBe(0)
    writeFiles(dir, {
      'shop.check.ts': file(dnsCheck('a', { frequency: 5 }), dnsCheck('b'), `new EnvVar('TOKEN', { value: 'saved-plan-secret-v2', secret: true })\n`),
    })
    const code = await api.cli(dir, ['apply', 'plan.json'])
    expect(code.code).toBe(1)
    expect(code.stderr).toContain('the code changed')
    expect(code.stderr).not.toContain('lock file changed')

    expect((await api.cli(dir, ['plan', '--out', 'plan.json'])).code).toBe(0)
    const lockPath = join(dir, 'monitoring.lock.json')
    const lock = JSON.parse(readFileSync(lockPath, 'utf8'))
    lock.resources['dns-check:b'].name = 'edited by hand'
    writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`)
    const locked = await api.cli(dir, ['apply', 'plan.json'])
    expect(locked.code).toBe(1)
    expect(locked.stderr).toContain('the lock file changed')
    expect(locked.stderr).not.toContain('the code changed')
  })

  it('a fresh saved plan still applies, and only its operations', async () => {
    expect((await api.cli(dir, ['plan', '--out', 'plan.json', '--target', 'dns-check:a'])).code).toBe(0)
    const apply = await api.cli(dir, ['apply', 'plan.json'])
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stdout).toMatch(/^~ dns-check a updated/m)
    expect(apply.stdout).not.toContain('dns-check b updated')
    expect(apply.stdout).not.toContain('variable TOKEN updated')
    expect((await api.client.get<Check>(`/v1/checks/${idOf('a')}`)).body.frequency).toBe(5)
    // b (drift) and TOKEN (secret changed) were not in the saved plan: still to do
    const rest = JSON.parse((await api.cli(dir, ['plan', '--format', 'json'])).stdout)
    expect(rest.changes.map((c: { logicalId: string }) => c.logicalId).sort()).toEqual(['TOKEN', 'b'])
  })

  it('says so when the file is not a saved plan', async () => {
    writeFileSync(join(dir, 'nonsense.json'), '{"hello": 1}')
    const result = await api.cli(dir, ['apply', 'nonsense.json'])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('nonsense.json is not a saved plan of monitors')
    const missing = await api.cli(dir, ['apply', 'missing.json'])
    expect(missing.stderr).toContain('There is no saved plan at')
  })
})
