/**
 * Drift: with the lock's applied hash, the code and the remote, "changed outside code" is told
 * apart from "changed in code"; drift shows remote → code, and applying reverts it.
 */
import { describe, expect, it } from 'vitest'
import { dnsCheck, file, makeProject, useServer, writeFiles } from '../helpers/use-server.js'

const api = useServer('drift')

type Check = { id: string; name: string; frequency: number; tags: string[]; request: { query: string } }

describe('drift', () => {
  const dir = makeProject({ 'shop.check.ts': file(dnsCheck('a', { frequency: 10 }), dnsCheck('b', { frequency: 10 })) })
  const idOf = (id: string) => api.lock(dir).resources[`dns-check:${id}`].remoteId as string
  const editRemote = async (id: string, change: Partial<Check>) => {
    const current = (await api.client.get<Check>(`/v1/checks/${idOf(id)}`)).body
    const { id: _id, ...rest } = current as Check & Record<string, unknown>
    for (const key of ['created_at', 'updated_at', 'checkType']) delete (rest as Record<string, unknown>)[key]
    await api.client.put(`/v1/checks/dns/${idOf(id)}`, { ...rest, ...change })
  }

  it('shows a remote edit as drift, remote value → code value, apart from code changes', async () => {
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    await editRemote('a', { frequency: 30 })
    await editRemote('b', { frequency: 60 })
    // b also changes in code: an update flagged as drifted too
    writeFiles(dir, { 'shop.check.ts': file(dnsCheck('a', { frequency: 10 }), dnsCheck('b', { frequency: 5 }), dnsCheck('c')) })

    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(2)
    expect(plan.stdout).toContain('~ dns-check a (DnsCheck in shop.check.ts)')
    expect(plan.stdout).toMatch(
      /~ dns-check a .*\(drift\)\n\s+# changed outside monitors \(the code is as last applied\): applying reverts it to the code; values read remote → code\n\s+~ frequency: 30 → 10/,
    )
    expect(plan.stdout).toMatch(/~ dns-check b .*\(drift\)\n\s+# changed in code and outside monitors/)
    expect(plan.stdout).toContain('Plan: 1 to create, 2 to update, 0 to delete. 2 changed outside monitors (drift).')

    const json = JSON.parse((await api.cli(dir, ['plan', '--format', 'json'])).stdout)
    const byId = Object.fromEntries(json.changes.map((c: { logicalId: string }) => [c.logicalId, c]))
    expect(byId.a).toMatchObject({ action: 'update', changedOutside: true, changedInCode: false, fieldDiffs: [{ path: 'frequency', old: 30, new: 10 }] })
    expect(byId.b).toMatchObject({ action: 'update', changedOutside: true, changedInCode: true })
    expect(byId.c).toMatchObject({ action: 'create', changedOutside: false })
  })

  it('plan --refresh-only shows the drift alone', async () => {
    const plan = await api.cli(dir, ['plan', '--refresh-only', '--format', 'json', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(2)
    const doc = JSON.parse(plan.stdout)
    expect(doc.changes.map((c: { logicalId: string }) => c.logicalId).sort()).toEqual(['a', 'b'])
    const md = await api.cli(dir, ['plan', '--refresh-only', '--format', 'markdown'])
    expect(md.stdout).toContain('values read last applied → now remote')
    expect(md.stdout).not.toContain('dns-check c')
  })

  it('applying reverts the drift; then neither plan nor refresh-only sees any', async () => {
    const apply = await api.cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    expect((await api.client.get<Check>(`/v1/checks/${idOf('a')}`)).body.frequency).toBe(10)
    expect((await api.client.get<Check>(`/v1/checks/${idOf('b')}`)).body.frequency).toBe(5)
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
    const refresh = await api.cli(dir, ['plan', '--refresh-only', '--detailed-exitcode'])
    expect(refresh.code).toBe(0)
    expect(refresh.stdout).toContain('No changes. Nothing was changed outside monitors since the last apply.')
  })
})
