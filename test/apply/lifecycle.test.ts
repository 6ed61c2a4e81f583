/**
 * The whole life of a project through the CLI, against the real local server:
 * plan → apply → plan says no changes → edit → update → remove → delete → destroy.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { makeProject, monitors, monitorsProcess, STACK_LINE, writeFiles } from '../helpers/cli.js'

let server: LocalServer
let client: ApiClient
const KEY = 'lifecycle-key'
const ACCOUNT = 'lifecycle'

beforeAll(async () => {
  server = await startLocalServer({ apiKeys: [{ key: KEY, accountId: ACCOUNT }] })
  client = new ApiClient({ baseUrl: server.url, apiKey: KEY, accountId: ACCOUNT })
})
afterAll(async () => {
  await client?.close()
  await server?.close()
})

const env = () => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: ACCOUNT })

const shop = (frequency: number, withPing = true) => `
import { DnsCheck, IcmpCheck, EnvVar, StatusPage, StatusPageService } from 'monitors-as-code'

new DnsCheck('shop-dns', {
  name: 'Shop DNS',
  request: { query: 'shop.example.com', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
  frequency: ${frequency},
  locations: ['us-east-1', 'eu-west-1'],
  tags: ['shop', 'dns'],
})
${withPing ? `new IcmpCheck('edge-ping', { name: 'Edge ping', request: { hostname: 'edge.example.com' } })` : ''}
new EnvVar('SHOP_TOKEN', { value: 'tok-${frequency}-very-secret', secret: true })
const checkout = new StatusPageService('checkout', { name: 'Checkout' })
new StatusPage('public', { name: 'Shop status', url: 'lifecycle-shop', cards: [{ name: 'Shop', services: [checkout] }] })
`

async function remoteChecks() {
  return (await client.get<Array<{ id: string; name: string; frequency: number }>>('/v1/checks', { limit: 100 })).body
}

describe('monitors plan / apply / destroy', () => {
  const dir = makeProject({ 'shop.check.ts': shop(10) })
  const lockPath = join(dir, 'monitoring.lock.json')
  const lock = () => JSON.parse(readFileSync(lockPath, 'utf8'))

  it('plans the creation of everything, without changing anything', async () => {
    const result = await monitors(dir, ['plan'], env())
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('+ dns-check shop-dns')
    expect(result.stdout).toContain('+ status-page public')
    expect(result.stdout).toContain('value: (secret)')
    expect(result.output).not.toContain('very-secret')
    expect(result.output).not.toContain(KEY)
    expect(result.stdout).toContain('Plan: 5 to create, 0 to update, 0 to delete.')
    expect(await remoteChecks()).toEqual([])
  })

  it('applies with --yes, one line per operation, and writes the lock', async () => {
    const result = await monitors(dir, ['apply', '--yes'], env())
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toMatch(/^\+ dns-check shop-dns created \(id [0-9a-f]{8}…\) \d+ms$/m)
    expect(result.stdout).toMatch(/^\+ variable SHOP_TOKEN created \(id SHOP_TOKEN\) \d+ms$/m)
    expect(result.stdout).toContain('Apply complete: 5 created, 0 updated, 0 deleted.')
    // dependency order: the service before the page that shows it
    expect(result.stdout.indexOf('status-page-service checkout created')).toBeLessThan(result.stdout.indexOf('status-page public created'))
    const written = lock()
    expect(written.target).toEqual({ id: server.url, baseUrl: server.url, accountId: ACCOUNT })
    expect(Object.keys(written.resources)).toEqual([
      'dns-check:shop-dns',
      'icmp-check:edge-ping',
      'status-page-service:checkout',
      'status-page:public',
      'variable:SHOP_TOKEN',
    ])
    const checks = await remoteChecks()
    expect(checks.map((c) => c.id).sort()).toEqual(
      [written.resources['dns-check:shop-dns'].remoteId, written.resources['icmp-check:edge-ping'].remoteId].sort(),
    )
    const text = readFileSync(lockPath, 'utf8')
    expect(text).not.toContain('very-secret')
    expect(text.endsWith('}\n')).toBe(true)
  })

  it('then plans no changes', async () => {
    const result = await monitors(dir, ['plan', '--detailed-exitcode'], env())
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toMatch(/^No changes\./m)
  })

  it('shows an edit as an update with old → new, and applies it', async () => {
    writeFiles(dir, { 'shop.check.ts': shop(5) })
    const plan = await monitors(dir, ['plan', '--detailed-exitcode'], env())
    expect(plan.code, plan.output).toBe(2)
    expect(plan.stdout).toContain('~ dns-check shop-dns')
    expect(plan.stdout).toContain('~ frequency: 10 → 5')
    expect(plan.stdout).toContain('~ value: (secret changed)')
    expect(plan.output).not.toContain('very-secret')
    expect(plan.stdout).toContain('Plan: 0 to create, 2 to update, 0 to delete.')

    const apply = await monitors(dir, ['apply', '--yes'], env())
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stdout).toMatch(/^~ dns-check shop-dns updated/m)
    expect((await remoteChecks()).find((c) => c.name === 'Shop DNS')?.frequency).toBe(5)
    expect((await monitors(dir, ['plan'], env())).stdout).toMatch(/^No changes\./m)
  })

  it('deletes what was removed from the code', async () => {
    writeFiles(dir, { 'shop.check.ts': shop(5, false) })
    const plan = await monitors(dir, ['plan'], env())
    expect(plan.stdout).toContain('- icmp-check edge-ping "Edge ping"')
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update, 1 to delete.')
    const apply = await monitors(dir, ['apply', '--yes'], env())
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stdout).toMatch(/^- icmp-check edge-ping deleted/m)
    expect((await remoteChecks()).map((c) => c.name)).toEqual(['Shop DNS'])
    expect(lock().resources['icmp-check:edge-ping']).toBeUndefined()
  })

  it('refuses to apply without a terminal and without --yes, changing nothing', async () => {
    writeFiles(dir, { 'shop.check.ts': shop(15, false) })
    // a real process, its stdin not a terminal, as in a pipeline
    const result = await monitorsProcess(dir, ['apply'], env())
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('run again with --yes')
    expect(result.output).not.toMatch(STACK_LINE)
    expect((await remoteChecks())[0].frequency).toBe(5)
  })

  it('destroys everything in the lock, pages before the services they show, and leaves others alone', async () => {
    const other = await client.post<{ id: string }>('/v1/checks/dns', { name: 'not managed', request: { query: 'other.example.com' } })
    const result = await monitors(dir, ['destroy', '--yes'], env())
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('Plan: 0 to create, 0 to update, 4 to delete.')
    expect(result.stdout).toContain('1 remote resource not in the lock was left alone (1 dns-check).')
    expect(result.stdout.indexOf('status-page public deleted')).toBeLessThan(result.stdout.indexOf('status-page-service checkout deleted'))
    expect(result.stdout).toContain('Destroy complete: 4 deleted.')
    expect((await remoteChecks()).map((c) => c.id)).toEqual([other.body.id])
    expect((await client.get<unknown[]>('/v1/variables')).body).toEqual([])
    expect(lock().resources).toEqual({})
  })
})
