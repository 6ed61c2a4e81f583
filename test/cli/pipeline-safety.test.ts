/**
 * A pipeline must never deploy to a throwaway server, or apply everything, because a value it
 * meant to pass came through empty: GitHub Actions turns an unset secret into "", and an unset
 * shell variable after --target into nothing at all.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { fetchRemoteState } from '../../src/api/resources.js'
import { makeProject, monitors, STACK_LINE } from '../helpers/cli.js'

const KEY = 'pipeline-key'
const ACCOUNT = 'pipeline'
let server: LocalServer
let client: ApiClient
beforeAll(async () => {
  server = await startLocalServer({ apiKeys: [{ key: KEY, accountId: ACCOUNT }] })
  client = new ApiClient({ baseUrl: server.url, apiKey: KEY, accountId: ACCOUNT })
})
afterAll(async () => {
  await client?.close()
  await server?.close()
})

const remote = () => server.url
const target = () => ({ MONITORING_API_URL: remote(), MONITORING_API_KEY: KEY, MONITORING_ACCOUNT_ID: ACCOUNT })
const checkNames = async () =>
  Object.values((await fetchRemoteState(client, ['dns-check'])).records['dns-check'])
    .map((r) => r.name)
    .sort()

const checks = (prefix: string) => ({
  'shop.check.ts': `import { DnsCheck } from 'monitors-as-code'
new DnsCheck('${prefix}-a', { name: '${prefix} A', request: { query: 'a.example.com' } })
new DnsCheck('${prefix}-b', { name: '${prefix} B', request: { query: 'b.example.com' } })
`,
})

/** The one line the refusal prints: names the variable and how to use the local server on purpose. */
function expectRefusal(result: { code: number; stdout: string; stderr: string; output: string }, dir: string) {
  expect(result.code, result.output).toBe(1)
  expect(result.stdout).toBe('')
  const lines = result.stderr.trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain('MONITORING_API_URL')
  expect(lines[0]).toContain('--local')
  expect(result.output).not.toMatch(STACK_LINE)
  // no embedded server was started
  expect(existsSync(join(dir, '.monitors', 'local.db'))).toBe(false)
  expect(existsSync(join(dir, '.monitors', 'local.lock.json'))).toBe(false)
}

describe('a missing API URL in a pipeline (A1)', () => {
  it('refuses apply with CI=true and MONITORING_API_URL set but empty (an unset secret), exit 1', async () => {
    const dir = makeProject(checks('empty-url'))
    const result = await monitors(dir, ['apply', '--yes'], { CI: 'true', MONITORING_API_URL: '', MONITORING_API_KEY: '' })
    expectRefusal(result, dir)
    expect(result.stderr).toMatch(/MONITORING_API_URL is set but empty/)
  })

  it('refuses an empty MONITORING_API_URL outside CI too: empty is never "not configured"', async () => {
    const dir = makeProject(checks('empty-url-dev'))
    const result = await monitors(dir, ['plan'], { MONITORING_API_URL: '' })
    expectRefusal(result, dir)
  })

  it('refuses an empty URL read through the config (baseUrl: process.env.MONITORING_API_URL)', async () => {
    const dir = makeProject({
      ...checks('config-url'),
      'monitoring.config.ts': `import { defineConfig } from 'monitors-as-code'
export default defineConfig({ projectName: 'e2e', api: { baseUrl: process.env.MONITORING_API_URL, accountId: process.env.MONITORING_ACCOUNT_ID } })
`,
    })
    const result = await monitors(dir, ['apply', '--yes'], { CI: 'true', MONITORING_API_URL: '', MONITORING_ACCOUNT_ID: '' })
    expectRefusal(result, dir)
  })

  it('refuses plan, apply, destroy and import with CI set and no target configured at all', async () => {
    const dir = makeProject(checks('no-url'))
    for (const args of [['plan'], ['apply', '--yes'], ['destroy', '--yes'], ['import']]) {
      const result = await monitors(dir, args, { CI: 'true' })
      expectRefusal(result, dir)
      expect(result.stderr).toMatch(/^Error: No target: CI is set but MONITORING_API_URL is not/)
    }
  })

  it('still validates in CI without a target: validate sends nothing', async () => {
    const dir = makeProject(checks('validate'))
    const result = await monitors(dir, ['validate'], { CI: 'true' })
    expect(result.code, result.output).toBe(0)
    expect(result.stdout).toContain('Valid: 2 resources')
  })

  it('uses the embedded server in CI when asked on purpose: --local', async () => {
    const dir = makeProject(checks('local-flag'))
    const apply = await monitors(dir, ['apply', '--yes', '--local'], { CI: 'true' })
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stderr).toContain('Using the embedded local server')
    expect(apply.stdout).toMatch(/Apply complete: 2 created/)
    expect(existsSync(join(dir, '.monitors', 'local.lock.json'))).toBe(true)
    // --local wins over an empty URL: the choice is explicit
    const plan = await monitors(dir, ['plan', '--local'], { CI: 'true', MONITORING_API_URL: '' })
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\./m)
  })

  it("uses the embedded server in CI when the config says api.baseUrl: 'local'", async () => {
    const dir = makeProject({
      ...checks('local-config'),
      'monitoring.config.ts': `import { defineConfig } from 'monitors-as-code'
export default defineConfig({ projectName: 'e2e', api: { baseUrl: 'local' } })
`,
    })
    const validate = await monitors(dir, ['validate'])
    expect(validate.code, validate.output).toBe(0)
    const plan = await monitors(dir, ['plan'], { CI: 'true' })
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stderr).toContain('Using the embedded local server')
    expect(plan.stdout).toMatch(/Plan: 2 to create/)
  })

  it('refuses --local together with --api-url, and an empty --api-url', async () => {
    const dir = makeProject(checks('both'))
    const both = await monitors(dir, ['plan', '--local', '--api-url', remote()], { MONITORING_API_KEY: KEY })
    expect(both.code).toBe(1)
    expect(both.stderr).toContain('--local and --api-url')
    const empty = await monitors(dir, ['plan', '--api-url', ''], { CI: 'true' })
    expect(empty.code).toBe(1)
    expect(empty.stderr).toContain('--api-url is empty')
    expect(existsSync(join(dir, '.monitors', 'local.db'))).toBe(false)
  })

  it('applies to the configured service in CI as before', async () => {
    const dir = makeProject(checks('ci-remote'))
    const apply = await monitors(dir, ['apply', '--yes'], { CI: 'true', ...target() })
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stderr).not.toContain('embedded')
    expect(await checkNames()).toEqual(expect.arrayContaining(['ci-remote A', 'ci-remote B']))
  })
})

describe('--target without a value (A5)', () => {
  it.each([
    ['no value', ['--target']],
    ['an empty value', ['--target', '']],
    ['an empty value after =', ['--target=']],
    ['an empty value after a real one', ['--target', 'dns-check:empty-target-a', '--target=']],
  ])('refuses %s: exit 1, nothing applied', async (_, flags) => {
    const dir = makeProject(checks('empty-target'))
    const before = await checkNames()
    const result = await monitors(dir, ['apply', '--yes', ...flags], target())
    expect(result.code, result.output).toBe(1)
    expect(result.stderr).toContain('--target needs a resource: kind:logicalId')
    expect(result.stdout).not.toContain('Plan:')
    expect(result.output).not.toMatch(STACK_LINE)
    expect(await checkNames()).toEqual(before)
    expect(existsSync(join(dir, 'monitoring.lock.json'))).toBe(false)
  })

  it('still applies a named target alone', async () => {
    const dir = makeProject(checks('one-target'))
    const result = await monitors(dir, ['apply', '--yes', '--target', 'dns-check:one-target-a'], target())
    expect(result.code, result.output).toBe(0)
    const names = await checkNames()
    expect(names).toContain('one-target A')
    expect(names).not.toContain('one-target B')
  })
})
