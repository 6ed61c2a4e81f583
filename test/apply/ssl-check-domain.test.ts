/**
 * `sslCheckDomain` with the built CLI and the real local server: a TcpCheck naming a domain
 * applies, the next plan says `No changes.`, a changed domain is an update; a value that is not
 * a domain is refused before any request (file › construct › field), nothing applied.
 */
import { describe, expect, it } from 'vitest'
import { makeProject, STACK_LINE, useServer, writeFiles } from '../helpers/use-server.js'

const api = useServer('ssl-domain')

const checkFile = (domain: string) => `import { TcpCheck } from 'monitors-as-code'
new TcpCheck('db', {
  name: 'Database',
  activated: false,
  request: { hostname: 'db.example.com', port: 5432 },
  sslCheckDomain: '${domain}',
  alertSettings: { sslCertificates: { alertThreshold: 14 } },
})
`

describe('sslCheckDomain in a project', () => {
  it('applies, then plans No changes.; a changed domain is an update', async () => {
    const dir = makeProject({ 'db.check.ts': checkFile('db.example.com') })
    const applied = await api.cli(dir, ['apply', '--yes'])
    expect(applied.code, applied.output).toBe(0)
    const checks = (await api.client.get<Array<Record<string, any>>>('/v1/checks', { checkType: 'TCP' })).body
    expect(checks.map((c) => c.sslCheckDomain)).toEqual(['db.example.com'])
    const again = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toContain('No changes.')
    writeFiles(dir, { 'db.check.ts': checkFile('www.example.com') })
    const changed = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(changed.code, changed.output).toBe(2)
    expect(changed.stdout).toContain('sslCheckDomain')
    expect(changed.stdout).toContain('www.example.com')
  })

  it('a URL, a path or a port is refused before any request, naming file, construct and field', async () => {
    const dir = makeProject({ 'db.check.ts': checkFile('https://db.example.com:8443/') })
    const before = (await api.client.get<unknown[]>('/v1/checks')).body.length
    const result = await api.cli(dir, ['apply', '--yes'])
    expect(result.code, result.output).not.toBe(0)
    expect(result.output).not.toMatch(STACK_LINE)
    expect(result.output).toContain(
      'db.check.ts › TcpCheck "db" › sslCheckDomain: must be a domain name such as example.com (no scheme, path or port): remove the scheme (got "https://db.example.com:8443/")',
    )
    expect((await api.client.get<unknown[]>('/v1/checks')).body.length).toBe(before)
  })
})
