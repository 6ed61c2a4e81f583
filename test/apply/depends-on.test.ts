/**
 * `dependsOn` in code: a check names the checks it depends on as constructs (of any check
 * type); the apply creates the dependency first and sends its remote id; a plan after it has
 * nothing to do. A cycle is a validation error naming the file, the construct and the field.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { makeProject, monitors, STACK_LINE } from '../helpers/cli.js'

let server: LocalServer
let client: ApiClient
const KEY = 'depends-on-key-0123456789abcdef'
const ACCOUNT = 'depends'

beforeAll(async () => {
  server = await startLocalServer({ apiKeys: [{ key: KEY, accountId: ACCOUNT }] })
  client = new ApiClient({ baseUrl: server.url, apiKey: KEY, accountId: ACCOUNT })
})
afterAll(async () => {
  await client?.close()
  await server?.close()
})

const env = () => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: ACCOUNT })

describe('dependsOn in check files', () => {
  it('resolves the constructs to remote ids at apply, the dependency created first; the next plan has nothing to do', async () => {
    const dir = makeProject({
      'shop.check.ts': `
import { ApiCheck, DnsCheck, TcpCheck } from 'monitors-as-code'

const database = new TcpCheck('database', { name: 'Database', request: { hostname: 'db.example.com', port: 5432 } })
const resolver = new DnsCheck('resolver', { name: 'Resolver', request: { query: 'shop.example.com' } })
// "aaa" sorts before its dependencies: the apply orders by dependsOn, not by name
new ApiCheck('aaa-shop', { name: 'Shop', dependsOn: [database, resolver], request: { method: 'GET', url: 'https://shop.example.com/health' } })
`,
    })
    const plan = await monitors(dir, ['plan'], env())
    expect(plan.code, plan.output).toBe(0)
    const apply = await monitors(dir, ['apply', '--yes'], env())
    expect(apply.code, apply.output).toBe(0)
    const checks = (await client.get<Array<{ id: string; name: string; dependsOn?: string[] }>>('/v1/checks', { limit: 100 })).body
    const id = (name: string) => checks.find((c) => c.name === name)!.id
    expect(checks.find((c) => c.name === 'Shop')!.dependsOn).toEqual([id('Database'), id('Resolver')])
    const again = await monitors(dir, ['plan', '--detailed-exitcode'], env())
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toContain('No changes')
  })

  it('import writes dependsOn as the constructs, each declared before the checks that depend on it; the next plan has nothing to do', async () => {
    // the checks the test before applied: a fresh project imports them
    const fresh = makeProject({ 'checks/other.check.ts': 'export {}\n' })
    const imported = await monitors(fresh, ['import', '--all', '--out', 'checks/back.check.ts'], env())
    expect(imported.code, imported.output).toBe(0)
    const code = readFileSync(join(fresh, 'checks', 'back.check.ts'), 'utf8')
    const database = /const (\w+) = new TcpCheck\('database'/.exec(code)?.[1]
    const resolver = /const (\w+) = new DnsCheck\('resolver'/.exec(code)?.[1]
    expect(database, code).toBeDefined()
    expect(resolver, code).toBeDefined()
    const shop = code.indexOf("new ApiCheck('shop'")
    expect(shop, code).toBeGreaterThan(code.indexOf(`const ${database} =`))
    expect(code.slice(shop)).toMatch(new RegExp(`dependsOn: \\[\\s*${database},\\s*${resolver}\\s*\\]`))
    const plan = await monitors(fresh, ['plan', '--detailed-exitcode'], env())
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('No changes')
  })

  it('refuses a cycle with a validation error naming the file, the construct and dependsOn', async () => {
    const dir = makeProject({
      'loop.check.ts': `
import { DnsCheck } from 'monitors-as-code'

// a list filled after both exist: a depends on b, b on a
const later: DnsCheck[] = []
const a = new DnsCheck('a', { name: 'a', request: { query: 'a.example.com' }, dependsOn: later })
const b = new DnsCheck('b', { name: 'b', request: { query: 'b.example.com' }, dependsOn: [a] })
later.push(b)
`,
    })
    const result = await monitors(dir, ['validate'], env())
    expect(result.code).toBe(1)
    expect(result.output).toContain('loop.check.ts')
    expect(result.output).toMatch(/dependsOn\.0.*makes a cycle of dependencies: DnsCheck "(a|b)" → DnsCheck "(a|b)" → DnsCheck "(a|b)"/)
    expect(result.output).not.toMatch(STACK_LINE)
  })

  it('refuses something else than a check construct in dependsOn', async () => {
    const dir = makeProject({
      'bad.check.ts': `
import { DnsCheck, StatusPageService } from 'monitors-as-code'

const service = new StatusPageService('svc', { name: 'Service' })
new DnsCheck('app', { name: 'App', request: { query: 'app.example.com' }, dependsOn: [service as never, 'db' as never] })
`,
    })
    const result = await monitors(dir, ['validate'], env())
    expect(result.code).toBe(1)
    expect(result.output).toContain('bad.check.ts')
    expect(result.output).toContain('dependsOn.0')
    expect(result.output).toContain('must be a check construct of this project')
    expect(result.output).toContain('StatusPageService "svc"')
    expect(result.output).toContain('dependsOn.1')
    expect(result.output).not.toMatch(STACK_LINE)
  })
})
