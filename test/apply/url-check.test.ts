/**
 * UrlCheck end to end with the built CLI and the real local server: its rules before any
 * request, plan, apply, `No changes.`, import as a UrlCheck, and `monitors test` against a local
 * HTTP server.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeProject, STACK_LINE, useServer, writeFiles } from '../helpers/use-server.js'
import { startHttpServer, type HttpServerHandle } from '../helpers/http-server.js'

const api = useServer('url-kind')
let http: HttpServerHandle

beforeAll(async () => {
  http = await startHttpServer()
  http.route('/home', { status: 200, body: 'welcome' })
  http.route('/gone', { status: 410, body: 'gone' })
})
afterAll(async () => {
  await http.close()
})

const checkFile = (path = '/home', maxResponseTime = 2000) => `import { UrlCheck } from 'monitors-as-code'
new UrlCheck('home', {
  name: 'Home',
  activated: false,
  maxResponseTime: ${maxResponseTime},
  request: { url: '${http.origin}${path}', assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
})
`

describe('UrlCheck', () => {
  it('its rules are reported as file › construct › field before any request', async () => {
    const dir = makeProject({
      'url.check.ts': `// @ts-nocheck\nimport { UrlCheck } from 'monitors-as-code'
new UrlCheck('post', { name: 'U', request: { url: 'https://a.example.com', method: 'POST' } })
new UrlCheck('sub', { name: 'U', request: { url: 'https://a.example.com' }, frequency: 0, frequencyOffset: 10 })
new UrlCheck('vars', { name: 'U', request: { url: 'https://a.example.com/{{X}}' } })
new UrlCheck('code', { name: 'U', request: { url: 'https://a.example.com', assertions: [{ source: 'STATUS_CODE', comparison: 'LESS_THAN', target: '999' }] } })
`,
    })
    const result = await api.cli(dir, ['validate'])
    expect(result.code).toBe(1)
    expect(result.output).not.toMatch(STACK_LINE)
    expect(result.output).toContain('url.check.ts › UrlCheck "post" › request.method: must be one of GET (got "POST")')
    expect(result.output).toContain(
      'url.check.ts › UrlCheck "sub" › frequency: must not be 0: sub-minute frequencies are only for API and TCP checks (allowed: 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440)',
    )
    expect(result.output).toContain(
      'url.check.ts › UrlCheck "vars" › request.url: cannot hold {{VARIABLE}} references: a URL check has no variables (use an ApiCheck)',
    )
    expect(result.output).toContain('url.check.ts › UrlCheck "code" › request.assertions.0.target: must be a status code, a number from 100 to 599 (got "999")')
  })

  it('plans, applies, then plans No changes.; a changed field is an update; import writes a UrlCheck', async () => {
    const dir = makeProject({ 'url.check.ts': checkFile() })
    const first = await api.cli(dir, ['plan'])
    expect(first.code, first.output).toBe(0)
    expect(first.stdout).toContain('UrlCheck')
    expect((await api.cli(dir, ['apply', '--yes'])).code).toBe(0)
    const checks = (await api.client.get<Array<Record<string, any>>>('/v1/checks', { checkType: 'URL' })).body
    expect(checks).toHaveLength(1)
    expect(checks[0]).toMatchObject({ name: 'Home', checkType: 'URL', request: { method: 'GET', url: `${http.origin}/home` } })
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
    writeFiles(dir, { 'url.check.ts': checkFile('/home', 1500) })
    const changed = await api.cli(dir, ['plan', '--detailed-exitcode'])
    expect(changed.code, changed.output).toBe(2)
    expect(changed.stdout).toContain('maxResponseTime')

    const other = makeProject({ 'keep.check.ts': `import { EnvVar } from 'monitors-as-code'\nnew EnvVar('KEEP', { value: 'x' })\n` })
    expect((await api.cli(other, ['apply', '--yes'])).code).toBe(0)
    const imported = await api.cli(other, ['import', '--all'])
    expect(imported.code, imported.output).toBe(0)
    const written = readdirSync(other).filter((f) => f.startsWith('imported'))
    const code = readFileSync(join(other, written[0]), 'utf8')
    expect(code).toContain("new UrlCheck('home'")
    expect((await api.cli(other, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })

  it('monitors test runs it against a local HTTP server; a 410 fails with exit 1', async () => {
    const dir = makeProject({ 'url.check.ts': checkFile() })
    const ok = await api.cli(dir, ['test'])
    expect(ok.code, ok.output).toBe(0)
    expect(ok.stdout).toMatch(/url-check:home "Home".*PASSED/)
    writeFiles(dir, { 'url.check.ts': checkFile('/gone') })
    const failed = await api.cli(dir, ['test'])
    expect(failed.code, failed.output).toBe(1)
    expect(failed.stdout).toContain('STATUS_CODE EQUALS "200" failed: got 410')
  })
})
