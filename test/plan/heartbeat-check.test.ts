/**
 * HeartbeatCheck through the built CLI against the real local server: apply, a plan with no
 * changes afterwards (the service's ping token and URL never diff), an update, and import.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeProject, STACK_LINE, useServer, writeFiles } from '../helpers/use-server.js'

const api = useServer('heartbeat-kind')

const config = `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'hb' })\n`
const heartbeatFile = (period: number) => `import { HeartbeatCheck } from 'monitors-as-code'
new HeartbeatCheck('nightly-backup', {
  name: 'Nightly backup',
  heartbeat: { period: ${period}, periodUnit: 'days', grace: 1, graceUnit: 'hours' },
  tags: ['backup'],
})
`

describe('HeartbeatCheck', () => {
  const dir = makeProject({ 'monitoring.config.ts': config, 'backup.check.ts': heartbeatFile(1) })

  it('applies, then plans No changes. although the service added a ping token and URL', async () => {
    const applied = await api.cli(dir, ['apply', '--yes'])
    expect(applied.code, applied.output).toBe(0)
    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('No changes.')
  })

  it('monitors status shows the heartbeat check and its ping URL', async () => {
    const [remote] = (await api.client.get<Array<{ heartbeat: { pingUrl: string; pingToken: string } }>>('/v1/checks', { checkType: 'HEARTBEAT' })).body
    expect(remote.heartbeat.pingUrl).toBe(`${api.server.url}/ping/${remote.heartbeat.pingToken}`)
    const status = await api.cli(dir, ['status'])
    expect(status.code, status.output).toBe(0)
    expect(status.stdout).toContain('heartbeat-check:nightly-backup "Nightly backup"')
    expect(status.stdout).toContain(remote.heartbeat.pingUrl)
    const json = await api.cli(dir, ['status', '--format', 'json'])
    expect(JSON.parse(json.stdout).checks[0].pingUrl).toBe(remote.heartbeat.pingUrl)
  })

  it('monitors test does not run a heartbeat check: it says so, no internal error', async () => {
    const tested = await api.cli(dir, ['test'])
    expect(tested.code, tested.output).toBe(0)
    expect(tested.stdout).toContain('heartbeat-check:nightly-backup is not run: it passes on pings to its ping URL')
    expect(tested.output).not.toContain('Internal error')
  })

  it('plans and applies an update of the period', async () => {
    writeFiles(dir, { 'backup.check.ts': heartbeatFile(2) })
    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(2)
    expect(plan.stdout).toContain('heartbeat.period')
    expect(plan.stdout).not.toContain('pingToken')
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })

  it('refuses a period out of range with one line naming the file, construct and field', async () => {
    const bad = makeProject({ 'monitoring.config.ts': config, 'bad.check.ts': heartbeatFile(400) })
    const plan = await api.cli(bad, ['plan'])
    expect(plan.code).toBe(1)
    expect(plan.stderr).toContain('bad.check.ts')
    expect(plan.stderr).toContain('heartbeat.period')
    expect(plan.stderr).toContain('365 days')
    expect(plan.output).not.toMatch(STACK_LINE)
  })

  it('imports a heartbeat check as a HeartbeatCheck without token or URL, planning No changes.', async () => {
    const other = makeProject({ 'monitoring.config.ts': config, 'empty.check.ts': 'export {}\n' })
    await api.client.post('/v1/checks/heartbeat', { name: 'Weekly report', heartbeat: { period: 7, periodUnit: 'days', grace: 30, graceUnit: 'minutes' } })
    const result = await api.cli(other, ['import', '--all'])
    expect(result.code, result.output).toBe(0)
    const out = /to (\S+\.ts)/.exec(result.stdout)
    expect(out, result.stdout).not.toBeNull()
    const written = readFileSync(join(other, out![1]), 'utf8')
    expect(written).toContain('new HeartbeatCheck(')
    expect(written).toContain("'Weekly report'")
    expect(written).toMatch(/periodUnit: ['"]days['"]/)
    expect(written).not.toContain('pingToken')
    expect(written).not.toContain('pingUrl')
    const plan = await api.cli(other, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
  })
})
