/**
 * ApiCheck end to end with the built CLI and the real local server: apply, then `No changes.`,
 * a changed field planned as an update, secrets kept out of plans, saved plans and the lock;
 * import of an API check writes an ApiCheck; `monitors test` runs one against a local HTTP server.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeProject, STACK_LINE, useServer, writeFiles } from '../helpers/use-server.js'
import { startHttpServer, type HttpServerHandle } from '../helpers/http-server.js'

const api = useServer('api-kind')
let http: HttpServerHandle

beforeAll(async () => {
  http = await startHttpServer()
  http.route('/health', { status: 200, body: { status: 'ok' } })
})
afterAll(async () => {
  await http.close()
})

const SECRET_HEADER = 'hdr-secret-7f3a'
const PASSWORD = 'pw-secret-91bc'

const checkFile = (
  maxResponseTime = 20000,
  password = PASSWORD,
  lockedValue = 'locked-value-1',
  headerSecret = SECRET_HEADER,
) => `import { ApiCheck, EnvVar } from 'monitors-as-code'
new EnvVar('REGION', { value: 'eu-central' })
new ApiCheck('health', {
  name: 'Health API',
  frequency: 0,
  frequencyOffset: 10,
  maxResponseTime: ${maxResponseTime},
  request: {
    method: 'GET',
    url: '${http.origin}/health',
    headers: [{ key: 'X-Plain', value: 'visible' }, { key: 'X-Token', value: '${headerSecret}', secret: true }, { key: 'X-Locked', value: '${lockedValue}', locked: true }],
    queryParameters: [{ key: 'region', value: '{{REGION}}' }],
    basicAuth: { username: 'monitor', password: '${password}' },
    assertions: [
      { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
      { source: 'JSON_BODY', property: '$.status', comparison: 'EQUALS', target: 'ok' },
    ],
  },
})
`

/** The same check under another name and without the variable, beside the first test's. */
const rotating = (...args: Parameters<typeof checkFile>) =>
  checkFile(...args)
    .replace("name: 'Health API'", "name: 'Rotating API'")
    .replace(/new EnvVar\('REGION'[^\n]*\n/, '')
    .replace('{{REGION}}', 'eu')

const noSecret = (text: string) => {
  expect(text).not.toContain(SECRET_HEADER)
  expect(text).not.toContain(PASSWORD)
}

describe('ApiCheck', () => {
  it('applies, then plans No changes.; a changed field is an update; secrets never in plans or the lock', async () => {
    const dir = makeProject({ 'api.check.ts': checkFile() })
    const first = await api.cli(dir, ['plan'])
    expect(first.code, first.output).toBe(0)
    expect(first.stdout).toContain('ApiCheck')
    noSecret(first.output)
    const json = await api.cli(dir, ['plan', '--format', 'json'])
    expect(json.code, json.output).toBe(0)
    noSecret(json.output)
    const saved = await api.cli(dir, ['plan', '--out', 'saved.plan.json'])
    expect(saved.code, saved.output).toBe(0)
    noSecret(readFileSync(join(dir, 'saved.plan.json'), 'utf8'))

    const applied = await api.cli(dir, ['apply', '--yes'])
    expect(applied.code, applied.output).toBe(0)
    noSecret(applied.output)
    noSecret(api.lockText(dir))
    const checks = (await api.client.get<Array<Record<string, any>>>('/v1/checks', { checkType: 'API' })).body
    expect(checks).toHaveLength(1)
    expect(checks[0]).toMatchObject({ name: 'Health API', frequency: 0, frequencyOffset: 10, checkType: 'API' })

    const again = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toMatch(/^No changes\./)

    writeFiles(dir, { 'api.check.ts': checkFile(15000) })
    const changed = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(changed.code, changed.output).toBe(2)
    expect(changed.stdout).toContain('maxResponseTime')
    expect(changed.stdout).toMatch(/update|~/)
    noSecret(changed.output)
    const changedJson = await api.cli(dir, ['plan', '--format', 'json'])
    noSecret(changedJson.output)
    const update = await api.cli(dir, ['apply', '--yes'])
    expect(update.code, update.output).toBe(0)
    noSecret(api.lockText(dir))
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })

  it('a changed secret value alone is planned as an update (lock fingerprint), never shown; a locked header is masked', async () => {
    const dir = makeProject({ 'api.check.ts': rotating() })
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    const plain = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plain.code, plain.output).toBe(0)
    expect(plain.output).not.toContain('locked-value-1')

    // only the password changes: both sides read "", the lock's fingerprint tells
    const NEW_PASSWORD = 'pw-rotated-33d1'
    writeFiles(dir, { 'api.check.ts': rotating(20000, NEW_PASSWORD) })
    const saved = await api.cli(dir, ['plan', '--out', 'rotated.plan.json'])
    expect(saved.code, saved.output).toBe(0)
    const changed = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(changed.code, changed.output).toBe(2)
    expect(changed.stdout).toContain('(secret changed)')
    expect(changed.stdout).toContain('request.basicAuth.password')
    expect(changed.output).not.toContain(NEW_PASSWORD)
    expect(changed.output).not.toContain(PASSWORD)
    const json = JSON.parse((await api.cli(dir, ['plan', '--format', 'json'])).stdout)
    const change = json.changes.find((c: Record<string, any>) => c.kind === 'api-check')
    expect(change.action).toBe('update')
    expect(JSON.stringify(json)).not.toContain(NEW_PASSWORD)

    // a saved plan made with another secret value is stale
    writeFiles(dir, { 'api.check.ts': rotating(20000, 'pw-other-7777') })
    const stale = await api.cli(dir, ['apply', 'rotated.plan.json', '--yes'])
    expect(stale.code, stale.output).toBe(1)
    writeFiles(dir, { 'api.check.ts': rotating(20000, NEW_PASSWORD) })
    const applied = await api.cli(dir, ['apply', 'rotated.plan.json', '--yes'])
    expect(applied.code, applied.output).toBe(0)
    noSecret(api.lockText(dir))
    expect(api.lockText(dir)).not.toContain(NEW_PASSWORD)
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)

    // a locked header's change reads (locked value changed), never the values
    writeFiles(dir, { 'api.check.ts': rotating(20000, NEW_PASSWORD, 'locked-value-2') })
    const locked = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(locked.code, locked.output).toBe(2)
    expect(locked.stdout).toContain('(locked value changed)')
    expect(locked.output).not.toMatch(/locked-value-[12]/)
    const lockedJson = await api.cli(dir, ['plan', '--format', 'json'])
    expect(lockedJson.output).not.toMatch(/locked-value-[12]/)
    const lockedMd = await api.cli(dir, ['plan', '--format', 'markdown'])
    expect(lockedMd.output).not.toMatch(/locked-value-[12]/)

    // a change of two secret values names both paths together
    writeFiles(dir, { 'api.check.ts': rotating(20000, 'pw-two-1', 'locked-value-1', 'hdr-two-2') })
    const two = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(two.code, two.output).toBe(2)
    expect(two.stdout).toContain('request.headers[X-Token].value')
    expect(two.stdout).toContain('request.basicAuth.password')
    expect(two.output).not.toMatch(/pw-two-1|hdr-two-2/)
  })

  it('monitors test runs the ApiCheck against a local HTTP server, {{REGION}} from the EnvVar', async () => {
    const dir = makeProject({ 'api.check.ts': checkFile() })
    const before = http.requests.length
    const result = await api.cli(dir, ['test'])
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('api-check:health')
    expect(result.stdout).toContain('PASSED')
    noSecret(result.output)
    const request = http.requests.slice(before).find((r) => r.path.startsWith('/health'))!
    expect(request.path).toBe('/health?region=eu-central')
    expect(request.headers['x-token']).toBe(SECRET_HEADER)
  })

  it('imports an API check created through the API as an ApiCheck; the next plan says No changes.', async () => {
    const created = await api.client.post<Record<string, any>>('/v1/checks/api', {
      name: 'Imported API',
      request: {
        method: 'POST',
        url: 'https://shop.example.com/api/orders',
        bodyType: 'JSON',
        body: '{"a":1}',
        headers: [{ key: 'X-Key', value: 'imp-secret-55', secret: true }],
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '201' }],
      },
    })
    expect(created.status).toBe(201)
    const dir = makeProject({ 'existing.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('KEEP', { value: 'x' })\n` })
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    const imported = await api.cli(dir, ['import', '--all'])
    expect(imported.code, imported.output).toBe(0)
    expect(imported.output).not.toMatch(STACK_LINE)
    const written = readdirSync(dir).filter((f) => f.startsWith('imported'))
    expect(written.length).toBe(1)
    const code = readFileSync(join(dir, written[0]), 'utf8')
    expect(code).toMatch(/import \{[^}]*ApiCheck[^}]*\} from 'monitors-as-code'/)
    expect(code).toContain("new ApiCheck('imported-api'")
    expect(code).toContain('https://shop.example.com/api/orders')
    expect(code).not.toContain('imp-secret-55')
    // the secret header's value, which the service never returns, is read from the environment
    expect(code).toContain("value: process.env.IMPORTED_API_X_KEY ?? ''")
    expect(code).toContain('read from the environment (IMPORTED_API_X_KEY)')
    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\./)
  })

  it("takes the config's check defaults like every check", async () => {
    const dir = makeProject({
      'monitoring.config.ts': `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: 'api-defaults', defaults: { tags: ['team-api'], locations: ['eu-west-1'], muted: true } })\n`,
      'd.check.ts': `import { ApiCheck } from 'monitors-as-code'\nnew ApiCheck('defaulted', { name: 'Defaulted API', tags: ['own'], request: { method: 'GET', url: '${http.origin}/health' } })\n`,
    })
    const applied = await api.cli(dir, ['apply', '--yes'])
    expect(applied.code, applied.output).toBe(0)
    const checks = (await api.client.get<Array<Record<string, any>>>('/v1/checks', { checkType: 'API' })).body
    expect(checks.find((c) => c.name === 'Defaulted API')).toMatchObject({ tags: ['team-api', 'own'], locations: ['eu-west-1'], muted: true })
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })
})
