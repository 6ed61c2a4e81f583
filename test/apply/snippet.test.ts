/**
 * Snippet end to end with the built CLI and the real local server: a Snippet (from a file, or
 * inline) referred to by an ApiCheck's setupSnippetId / tearDownSnippetId is planned, applied
 * (the check gets the snippet's numeric id), planned again as No changes., updated and
 * destroyed in order; `import` writes the snippet and the check referring to it; `monitors test`
 * runs the snippet as the check's setup script; bad references are clear errors.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeProject, STACK_LINE, useServer, writeFiles } from '../helpers/use-server.js'
import { startHttpServer, type HttpServerHandle } from '../helpers/http-server.js'

const api = useServer('snippet-kind')
let http: HttpServerHandle

beforeAll(async () => {
  http = await startHttpServer()
  http.route('/orders', { status: 200, body: { ok: true } })
})
afterAll(async () => {
  await http.close()
})

const checkFile = (name = 'Orders API') => `import { ApiCheck, Snippet } from 'monitors-as-code'
const sign = new Snippet('sign', { name: 'Sign requests', code: { entrypoint: './snippets/sign.ts' } })
const cleanUp = new Snippet('clean-up', { name: 'Clean up', script: "console.log('status', response.statusCode)" })
new ApiCheck('orders', {
  name: '${name}',
  activated: false,
  setupSnippetId: sign,
  tearDownSnippetId: cleanUp,
  request: { method: 'GET', url: '${http.origin}/orders' },
})
`
const SIGN = "const token: string = 'signed-' + (process.env.TENANT ?? 'none')\nrequest.headers['X-Signature'] = token\n"

describe('Snippet', () => {
  it('plans and applies snippets before the check that refers to them; the check holds their ids; then No changes.; a changed file is an update; removing them deletes them after the check', async () => {
    const dir = makeProject({ 'orders.check.ts': checkFile(), 'snippets/sign.ts': SIGN })
    const plan = await api.cli(dir, ['plan'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('Snippet')
    const applied = await api.cli(dir, ['apply', '--yes'])
    expect(applied.code, applied.output).toBe(0)
    const snippets = (await api.client.get<Array<Record<string, any>>>('/v1/snippets')).body
    const sign = snippets.find((s) => s.name === 'Sign requests')!
    const cleanUp = snippets.find((s) => s.name === 'Clean up')!
    expect(sign.script).toBe(SIGN)
    const checks = (await api.client.get<Array<Record<string, any>>>('/v1/checks', { checkType: 'API' })).body
    const check = checks.find((c) => c.name === 'Orders API')!
    expect(check).toMatchObject({ setupSnippetId: sign.id, tearDownSnippetId: cleanUp.id })
    expect(typeof check.setupSnippetId).toBe('number')

    const again = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toMatch(/^No changes\./)

    writeFiles(dir, { 'snippets/sign.ts': `${SIGN}request.headers['X-Version'] = '2'\n` })
    const changed = await api.cli(dir, ['plan', '--format', 'json'])
    expect(changed.code, changed.output).toBe(0)
    const changes = JSON.parse(changed.stdout).changes.filter((c: Record<string, any>) => c.action !== 'noop')
    expect(changes.map((c: Record<string, any>) => `${c.kind}:${c.logicalId}:${c.action}`)).toEqual(['snippet:sign:update'])
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    expect((await api.client.get<Record<string, any>>(`/v1/snippets/${sign.id}`)).body.script).toContain('X-Version')

    // the check no longer refers to them, and they are gone from code: the check is updated first
    writeFiles(dir, {
      'orders.check.ts': `import { ApiCheck } from 'monitors-as-code'\nnew ApiCheck('orders', { name: 'Orders API', activated: false, request: { method: 'GET', url: '${http.origin}/orders' } })\n`,
    })
    const removed = await api.cli(dir, ['apply', '--yes'])
    expect(removed.code, removed.output).toBe(0)
    expect((await api.client.get<Array<Record<string, any>>>('/v1/snippets')).body.filter((s) => [sign.id, cleanUp.id].includes(s.id))).toEqual([])
    const after = (await api.client.get<Array<Record<string, any>>>('/v1/checks', { checkType: 'API' })).body.find((c) => c.name === 'Orders API')!
    expect(after.setupSnippetId ?? null).toBeNull()
    expect((await api.cli(dir, ['destroy', '--yes'])).code).toBe(0)
  })

  it("monitors test runs the snippet as the check's setup script: the target sees its header", async () => {
    const dir = makeProject({
      'orders.check.ts': checkFile('Tested API').replace(
        "'monitors-as-code'\n",
        "'monitors-as-code'\nimport { EnvVar } from 'monitors-as-code'\nnew EnvVar('TENANT', { value: 'acme' })\n",
      ),
      'snippets/sign.ts': SIGN,
    })
    const before = http.requests.length
    const result = await api.cli(dir, ['test'])
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('PASSED')
    expect(http.requests.slice(before).map((r) => r.headers['x-signature'])).toEqual(['signed-acme'])
  })

  it("a snippet file importing the project's files is bundled into one script: monitors test and the server run it; a missing import names the file and line", async () => {
    const sign = "import { signature } from './lib/sign-helpers'\nrequest.headers['X-Signature'] = signature(process.env.TENANT ?? 'none')\n"
    const helpers = "import { PREFIX } from './prefix'\nexport function signature(tenant: string): string { return PREFIX + tenant }\n"
    const dir = makeProject({
      'orders.check.ts': checkFile('Bundled API').replace(
        "'monitors-as-code'\n",
        "'monitors-as-code'\nimport { EnvVar } from 'monitors-as-code'\nnew EnvVar('TENANT', { value: 'acme' })\n",
      ),
      'snippets/sign.ts': sign,
      'snippets/lib/sign-helpers.ts': helpers,
      'snippets/lib/prefix.ts': "export const PREFIX = 'bundled-'\n",
    })
    const before = http.requests.length
    const tested = await api.cli(dir, ['test'])
    expect(tested.code, tested.output).toBe(0)
    expect(http.requests.slice(before).map((r) => r.headers['x-signature'])).toEqual(['bundled-acme'])
    const applied = await api.cli(dir, ['apply', '--yes'])
    expect(applied.code, applied.output).toBe(0)
    const stored = (await api.client.get<Array<Record<string, any>>>('/v1/snippets')).body.filter((s) => s.name === 'Sign requests').at(-1)!
    // one script: the helpers inlined, no import of a local file left
    expect(stored.script).toContain('PREFIX = "bundled-"')
    expect(stored.script).not.toMatch(/from ['"]\.\//)
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
    // a helper changed: the snippet's script changes with it
    writeFiles(dir, { 'snippets/lib/prefix.ts': "export const PREFIX = 'v2-'\n" })
    const plan = await api.cli(dir, ['plan', '--format', 'json'])
    expect(
      JSON.parse(plan.stdout)
        .changes.filter((c: Record<string, any>) => c.action !== 'noop')
        .map((c: Record<string, any>) => `${c.kind}:${c.logicalId}:${c.action}`),
    ).toEqual(['snippet:sign:update'])
    writeFiles(dir, { 'snippets/lib/sign-helpers.ts': `import { gone } from './missing'\nexport const unused = gone\n${helpers}` })
    const broken = await api.cli(dir, ['validate'])
    expect(broken.code).toBe(1)
    expect(broken.output).toMatch(/snippets\/lib\/sign-helpers\.ts:1 › Snippet "sign" › imports "\.\/missing", which does not exist/)
    expect(broken.output).not.toMatch(STACK_LINE)
    expect((await api.cli(dir, ['destroy', '--yes'])).code).toBe(0)
  })

  it('a missing snippet file, or a reference that is not a Snippet construct, is a clear error naming the file, construct and field', async () => {
    const dir = makeProject({ 'orders.check.ts': checkFile() })
    const missing = await api.cli(dir, ['plan'])
    expect(missing.code, missing.output).toBe(1)
    expect(missing.output).toMatch(/orders\.check\.ts.*Snippet "sign".*code\.entrypoint.*file \.\/snippets\/sign\.ts does not exist/s)
    expect(missing.output).not.toMatch(STACK_LINE)
    writeFiles(dir, {
      'orders.check.ts': `import { ApiCheck } from 'monitors-as-code'\nnew ApiCheck('orders', { name: 'Orders', setupSnippetId: 12 as never, request: { method: 'GET', url: '${http.origin}/orders' } })\n`,
    })
    const numeric = await api.cli(dir, ['plan'])
    expect(numeric.code, numeric.output).toBe(1)
    expect(numeric.output).toMatch(/ApiCheck "orders".*setupSnippetId.*must be a Snippet construct of this project/s)
  })

  it('imports an API check and the snippet it runs: the check refers to the Snippet construct; the next plan says No changes.', async () => {
    const snippet = await api.client.post<Record<string, any>>('/v1/snippets', { name: 'Imported helper', script: "request.headers['x-imported'] = '1'" })
    expect(snippet.status).toBe(201)
    const check = await api.client.post<Record<string, any>>('/v1/checks/api', {
      name: 'Imported with snippet',
      activated: false,
      setupSnippetId: snippet.body.id,
      request: { method: 'GET', url: 'https://shop.example.com/api/orders' },
    })
    expect(check.status).toBe(201)
    const dir = makeProject({ 'existing.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('KEEP_SNIPPETS', { value: 'x' })\n` })
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    const imported = await api.cli(dir, ['import', '--all'])
    expect(imported.code, imported.output).toBe(0)
    const written = readdirSync(dir).filter((f) => f.startsWith('imported'))
    const code = readFileSync(join(dir, written[0]), 'utf8')
    expect(code).toMatch(/const (\w+) = new Snippet\('imported-helper'/)
    const variable = /const (\w+) = new Snippet/.exec(code)![1]
    expect(code).toContain(`setupSnippetId: ${variable}`)
    const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\./)
  })
})
