/**
 * Values marked `locked: true` never reach a plan, in any format or a saved plan: a check's
 * environment variables and a webhook's headers and query parameters, as well as EnvVar (see
 * readable.test.ts). A changed locked value still shows as a change, and applies.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { file, makeProject, useServer, writeFiles } from '../helpers/use-server.js'

const api = useServer('render-locked')

const ping = (n: string) => `new IcmpCheck('edge-ping', {
  name: 'Edge ping',
  request: { hostname: 'edge.example.com' },
  heartbeat: {},
  script: '',
  environmentVariables: [{ key: 'EDGE_TOKEN', value: 'env-locked-${n}', locked: true }, { key: 'REGION', value: 'eu-${n}' }],
  alertChannels: { webhook: [{ name: 'hook', url: 'https://hooks.example.com/x', headers: [{ key: 'Authorization', value: 'header-locked-${n}', locked: true }], queryParameters: [{ key: 'sig', value: 'query-locked-${n}', locked: true }] }] },
})
`

const LOCKED = (n: string) => [`env-locked-${n}`, `header-locked-${n}`, `query-locked-${n}`]

describe('locked values of checks', () => {
  const dir = makeProject({ 'edge.check.ts': file(ping('one')) })

  const outputs = async () => {
    const text = await api.cli(dir, ['plan', '--out', 'plan.json'])
    expect(text.code, text.output).toBe(0)
    const md = await api.cli(dir, ['plan', '--format', 'markdown'])
    const json = await api.cli(dir, ['plan', '--format', 'json'])
    const verbose = await api.cli(dir, ['plan', '--verbose'])
    return {
      text: text.stdout,
      md: md.stdout,
      json: json.stdout,
      verbose: verbose.stdout,
      all: [text.output, md.output, json.output, verbose.output, readFileSync(join(dir, 'plan.json'), 'utf8')],
    }
  }

  it('a create shows (locked) in every format and the saved plan; unlocked values stay visible', async () => {
    const out = await outputs()
    for (const output of out.all) for (const value of LOCKED('one')) expect(output).not.toContain(value)
    expect(out.text).toContain('value: (locked)')
    expect(out.text).toContain('value: "eu-one"')
    expect(out.md).toContain('value: (locked)')
    const doc = JSON.parse(out.json)
    const env = doc.changes[0].fieldDiffs.find((d: { path: string }) => d.path === 'environmentVariables').new
    expect(env).toContainEqual({ key: 'EDGE_TOKEN', value: '(locked)', locked: true, secret: false })
    expect(env).toContainEqual(expect.objectContaining({ key: 'REGION', value: 'eu-one' }))
  })

  it('a changed locked value reads (locked value changed), and apply still sends it', async () => {
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    writeFiles(dir, { 'edge.check.ts': file(ping('two')) })
    const out = await outputs()
    for (const output of out.all) for (const value of [...LOCKED('one'), ...LOCKED('two')]) expect(output).not.toContain(value)
    expect(out.text).toContain('~ environmentVariables[EDGE_TOKEN].value: (locked value changed)')
    expect(out.text).toContain('~ alertChannels.webhook[hook].headers[Authorization].value: (locked value changed)')
    expect(out.text).toContain('~ alertChannels.webhook[hook].queryParameters[sig].value: (locked value changed)')
    expect(out.text).toContain('~ environmentVariables[REGION].value: "eu-one" → "eu-two"')
    expect(out.md).toContain('~ environmentVariables[EDGE_TOKEN].value: (locked value changed)')
    const diffs = JSON.parse(out.json).changes[0].fieldDiffs
    expect(diffs).toContainEqual({ path: 'environmentVariables[EDGE_TOKEN].value', new: '(locked value changed)' })

    const apply = await api.cli(dir, ['apply', 'plan.json'])
    expect(apply.code, apply.output).toBe(0)
    for (const value of LOCKED('two')) expect(apply.output).not.toContain(value)
    const id = api.lock(dir).resources['icmp-check:edge-ping'].remoteId
    const check = (await api.client.get<{ environmentVariables: Array<{ key: string; value: string }> }>(`/v1/checks/${id}`)).body
    expect(check.environmentVariables.find((v) => v.key === 'EDGE_TOKEN')?.value).toBe('env-locked-two')
  })
})
