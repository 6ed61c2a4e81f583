/**
 * PrivateLocation end to end with the built CLI and the real local server: a location, and a
 * check and a group that run there (`privateLocations: [office]`), are planned, applied (the
 * location first), planned again as No changes., updated, imported (the check naming the
 * location's construct) and destroyed (the location after what names it).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeProject, useServer, writeFiles } from '../helpers/use-server.js'

const api = useServer('private-location-kind')

const checkFile = (name = 'Office') => `import { CheckGroup, DnsCheck, PrivateLocation } from 'monitors-as-code'
const office = new PrivateLocation('office', { name: '${name}', slugName: 'office' })
new CheckGroup('office-group', { name: 'Office group', privateLocations: [office] })
new DnsCheck('intranet', { name: 'Intranet', activated: false, privateLocations: [office], request: { query: 'intranet.example.com' } })
`

type Json = Record<string, any>

describe('PrivateLocation', () => {
  it('is applied before the check and group that run there, then No changes.; a rename is an update; destroy deletes it after them', async () => {
    const dir = makeProject({ 'office.check.ts': checkFile() })
    const applied = await api.cli(dir, ['apply', '--yes'])
    expect(applied.code, applied.output).toBe(0)
    const locations = (await api.client.get<Json[]>('/v1/private-locations')).body
    expect(locations.map((l) => [l.name, l.slugName, l.icon])).toEqual([['Office', 'office', 'location']])
    const check = (await api.client.get<Json[]>('/v1/checks', { checkType: 'DNS' })).body.find((c) => c.name === 'Intranet')!
    expect(check.privateLocations).toEqual(['office'])
    const group = (await api.client.get<Json[]>('/v1/check-groups')).body.find((g) => g.name === 'Office group')!
    expect(group.privateLocations).toEqual(['office'])

    const again = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toMatch(/^No changes\./)

    writeFiles(dir, { 'office.check.ts': checkFile('Head office') })
    const changed = await api.cli(dir, ['plan', '--format', 'json'])
    expect(changed.code, changed.output).toBe(0)
    const changes = JSON.parse(changed.stdout).changes.filter((c: Json) => c.action !== 'noop')
    expect(changes.map((c: Json) => `${c.kind}:${c.logicalId}:${c.action}`)).toEqual(['private-location:office:update'])
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    expect((await api.client.get<Json>('/v1/private-locations/office')).body.name).toBe('Head office')

    const destroyed = await api.cli(dir, ['destroy', '--yes'])
    expect(destroyed.code, destroyed.output).toBe(0)
    expect((await api.client.get<Json[]>('/v1/private-locations')).body).toEqual([])
  })

  it('import writes the location and the check naming its construct; the plan after is No changes.', async () => {
    const location = await api.client.post<Json>('/v1/private-locations', { name: 'Lab', slugName: 'lab' })
    expect(location.status).toBe(201)
    const check = await api.client.post<Json>('/v1/checks/dns', {
      name: 'Lab DNS',
      activated: false,
      privateLocations: ['lab'],
      request: { query: 'lab.example.com' },
    })
    expect(check.status).toBe(201)
    const dir = makeProject({ 'existing.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('KEEP_LOCATIONS', { value: 'x' })\n` })
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    const imported = await api.cli(dir, ['import', '--all'])
    expect(imported.code, imported.output).toBe(0)
    const written = readdirSync(dir).filter((f) => f.startsWith('imported'))
    const code = written.map((f) => readFileSync(join(dir, f), 'utf8')).join('\n')
    expect(code).toMatch(/const (\w+) = new PrivateLocation\('lab'/)
    const variable = /const (\w+) = new PrivateLocation/.exec(code)![1]
    expect(code).toContain(`privateLocations: [${variable}]`)
    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\./)
  })
})
