/**
 * One project, several targets: `environments` in the config, `--env NAME` on every command,
 * each environment with its target, its lock file and its overrides of the defaults; a plan for
 * one environment never uses another's lock.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { ApiClient } from '../../src/api/client.js'
import { fetchRemoteState } from '../../src/api/resources.js'
import { makeProject, monitors, STACK_LINE } from '../helpers/cli.js'
import { startDnsServer, type DnsServerHandle } from '../helpers/dns-server.js'

const STAGING_KEY = 'env-staging-key-0123456789abcdef'
const PRODUCTION_KEY = 'env-production-key-0123456789abcd'
let server: LocalServer
let dns: DnsServerHandle
const clients: ApiClient[] = []

beforeAll(async () => {
  server = await startLocalServer({
    apiKeys: [
      { key: STAGING_KEY, accountId: 'stg' },
      { key: PRODUCTION_KEY, accountId: 'prod' },
    ],
  })
  dns = await startDnsServer()
  dns.set('own.example.com', 'A', { records: [{ type: 'A', data: '192.0.2.10' }] })
})
afterAll(async () => {
  for (const client of clients) await client.close()
  await server?.close()
  await dns?.close()
})

/** The names of the DNS checks of an account that end with `suffix` (one test's), sorted. */
async function names(key: string, account: string, suffix: string): Promise<string[]> {
  const client = new ApiClient({ baseUrl: server.url, apiKey: key, accountId: account })
  clients.push(client)
  return Object.values((await fetchRemoteState(client, ['dns-check'])).records['dns-check'])
    .map((r) => String(r.name))
    .filter((n) => n.endsWith(suffix))
    .sort()
}

/** Two environments on two accounts of one server, each with its own key, read from the environment. */
const twoAccounts = (extra = '') => `import { defineConfig } from 'monitors-as-code'
export default defineConfig({
  projectName: 'envs',
  defaults: { frequency: 10, locations: ['eu-west-1'], tags: ['shop'] },
  environments: {
    staging: {
      api: { baseUrl: process.env.STAGING_URL, apiKey: process.env.STAGING_KEY, accountId: 'stg' },
      defaults: { frequency: 60, activated: false, tags: ['staging'] },
    },
    production: { api: { baseUrl: process.env.PRODUCTION_URL, apiKey: process.env.PRODUCTION_KEY, accountId: 'prod' } },
  },${extra}
})
`

/** Two environments on the same target (one URL, one account): only the lock tells them apart. */
const sameTarget = (extra = '') => `import { defineConfig } from 'monitors-as-code'
export default defineConfig({
  projectName: 'envs',
  environments: { staging: {}, production: {} },${extra}
})
`

let projects = 0
/**
 * Two checks whose names end with this project's own suffix (the tests share one server and its
 * accounts); the names and the query depend on the environment the check file is loaded for.
 */
function project(config?: string): { dir: string; suffix: string } {
  const suffix = `#${++projects}`
  const dir = makeProject({
    ...(config ? { 'monitoring.config.ts': config } : {}),
    'shop.check.ts': `import { DnsCheck, currentEnvironment } from 'monitors-as-code'
new DnsCheck('shop', { name: 'Shop ' + currentEnvironment() + ' ${suffix}', request: { query: (currentEnvironment() === 'production' ? '' : 'staging.') + 'shop.example.com' } })
new DnsCheck('own', { name: 'Own ' + currentEnvironment() + ' ${suffix}', frequency: 5, tags: ['own'], request: { query: 'own.example.com' } })
`,
  })
  return { dir, suffix }
}

const targets = () => ({ STAGING_URL: server.url, STAGING_KEY, PRODUCTION_URL: server.url, PRODUCTION_KEY })
const oneTarget = () => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: STAGING_KEY, MONITORING_ACCOUNT_ID: 'stg' })
const readJson = (dir: string, file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8'))

/** The create payloads of a JSON plan, by logical id. */
function creates(doc: { changes: Array<{ logicalId: string; fieldDiffs: Array<{ path: string; new?: unknown }> }> }): Record<string, Record<string, unknown>> {
  return Object.fromEntries(doc.changes.map((c) => [c.logicalId, Object.fromEntries(c.fieldDiffs.map((d) => [d.path, d.new]))]))
}

describe('choosing an environment', () => {
  it('refuses a command without one when the config declares environments, naming them and how to choose', async () => {
    const { dir, suffix } = project(twoAccounts())
    for (const command of [['plan'], ['apply', '--yes'], ['destroy', '--yes'], ['status'], ['test'], ['import']]) {
      const result = await monitors(dir, command, targets())
      expect(result.code, `${command[0]}: ${result.output}`).toBe(1)
      expect(result.stderr).toContain('monitoring.config.ts › environments: declares the environments staging, production: choose one with --env NAME')
      expect(result.output).not.toMatch(STACK_LINE)
    }
    expect(await names(STAGING_KEY, 'stg', suffix)).toEqual([])
    const json = await monitors(dir, ['plan', '--format', 'json'], targets())
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, problems: [{ file: 'monitoring.config.ts', field: 'environments' }] })
  })

  it('takes --env, else MONITORS_ENV, else defaultEnvironment; refuses an unknown or an empty name', async () => {
    const { dir } = project(twoAccounts())
    const envOf = async (args: string[], env: Record<string, string> = {}) => {
      const result = await monitors(dir, ['plan', '--format', 'json', ...args], { ...targets(), ...env })
      return { result, doc: JSON.parse(result.stdout) }
    }
    expect((await envOf(['--env', 'staging'])).doc.environment).toBe('staging')
    expect((await envOf([], { MONITORS_ENV: 'production' })).doc.environment).toBe('production')
    // the flag wins over the variable
    expect((await envOf(['--env', 'staging'], { MONITORS_ENV: 'production' })).doc.environment).toBe('staging')

    const unknown = await envOf(['--env', 'prod'])
    expect(unknown.result.code).toBe(1)
    expect(unknown.result.stderr).toContain('environments: has no environment "prod" (given by --env): the environments are staging, production')
    const empty = await envOf([], { MONITORS_ENV: '' })
    expect(empty.result.code).toBe(1)
    expect(empty.result.stderr).toContain('MONITORS_ENV is set but empty')

    writeFileSync(join(dir, 'monitoring.config.ts'), twoAccounts(`\n  defaultEnvironment: 'staging',`))
    expect((await envOf([])).doc.environment).toBe('staging')
    expect((await envOf([], { MONITORS_ENV: 'production' })).doc.environment).toBe('production')
  })

  it('refuses --env (and MONITORS_ENV) when the config declares no environments', async () => {
    const { dir } = project()
    const flag = await monitors(dir, ['plan', '--env', 'staging'], oneTarget())
    expect(flag.code).toBe(1)
    expect(flag.stderr).toContain('--env staging names an environment, but the config declares none')
    const variable = await monitors(dir, ['validate'], { MONITORS_ENV: 'staging' })
    expect(variable.code).toBe(1)
    expect(variable.stderr).toContain('MONITORS_ENV=staging names an environment, but the config declares none')
  })

  it('checks the environments in the config: names, settings, lock files, defaultEnvironment', async () => {
    const { dir } = project(`import { defineConfig } from 'monitors-as-code'
export default defineConfig({
  projectName: 'envs',
  environments: {
    Staging: {},
    qa: { lock: 'monitoring.production.lock.json', url: 'x' },
    production: { defaults: { frequency: 7, colour: 'red' } },
  },
  defaultEnvironment: 'prod',
} as any)
`)
    const result = await monitors(dir, ['validate'])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('environments.Staging: is not an environment name: write lower-case letters, digits, - and _')
    expect(result.stderr).toContain('environments.qa.url: is not an environment setting (allowed: api, lock, defaults)')
    expect(result.stderr).toContain(
      'environments.production.lock: is monitoring.production.lock.json, the lock file of the environment qa too: each environment needs its own lock file',
    )
    expect(result.stderr).toContain('environments.production.defaults.frequency: must be one of')
    expect(result.stderr).toContain('environments.production.defaults.colour: is not a check default')
    expect(result.stderr).toContain('defaultEnvironment: is "prod", which is not an environment of this config (environments: Staging, qa, production)')
    expect(result.output).not.toMatch(STACK_LINE)
  })
})

describe("an environment's settings", () => {
  it("override the defaults field by field, a check's own props still winning; check files know the environment", async () => {
    const { dir, suffix } = project(twoAccounts())
    const staging = await monitors(dir, ['plan', '--env', 'staging', '--format', 'json'], targets())
    expect(staging.code, staging.output).toBe(0)
    const s = creates(JSON.parse(staging.stdout))
    expect(s.shop).toMatchObject({
      name: `Shop staging ${suffix}`,
      frequency: 60,
      activated: false,
      tags: ['staging'],
      locations: ['eu-west-1'],
      request: { query: 'staging.shop.example.com' },
    })
    expect(s.own).toMatchObject({ name: `Own staging ${suffix}`, frequency: 5, activated: false, tags: ['staging', 'own'] })
    const production = await monitors(dir, ['plan', '--env', 'production', '--format', 'json'], targets())
    const p = creates(JSON.parse(production.stdout))
    expect(p.shop).toMatchObject({ name: `Shop production ${suffix}`, frequency: 10, activated: true, tags: ['shop'], request: { query: 'shop.example.com' } })
    expect(p.own).toMatchObject({ frequency: 5, tags: ['shop', 'own'] })
  })

  it('each applies to its own target and writes its own lock, which records the environment', async () => {
    const { dir, suffix } = project(twoAccounts())
    const staging = await monitors(dir, ['apply', '--env', 'staging', '--yes'], targets())
    expect(staging.code, staging.output).toBe(0)
    expect(await names(STAGING_KEY, 'stg', suffix)).toEqual([`Own staging ${suffix}`, `Shop staging ${suffix}`])
    expect(await names(PRODUCTION_KEY, 'prod', suffix)).toEqual([])
    expect(existsSync(join(dir, 'monitoring.lock.json'))).toBe(false)
    const lock = readJson(dir, 'monitoring.staging.lock.json')
    expect(lock.environment).toBe('staging')
    expect(lock.target).toMatchObject({ accountId: 'stg' })

    const production = await monitors(dir, ['apply', '--env', 'production', '--yes'], targets())
    expect(production.code, production.output).toBe(0)
    expect(await names(PRODUCTION_KEY, 'prod', suffix)).toEqual([`Own production ${suffix}`, `Shop production ${suffix}`])
    expect(readJson(dir, 'monitoring.production.lock.json').environment).toBe('production')
    // each is up to date on its own
    for (const env of ['staging', 'production']) {
      const plan = await monitors(dir, ['plan', '--env', env, '--detailed-exitcode'], targets())
      expect(plan.code, plan.output).toBe(0)
      expect(plan.stdout).toContain(`Environment: ${env}\nNo changes.`)
    }
    const destroy = await monitors(dir, ['destroy', '--env', 'staging', '--yes'], targets())
    expect(destroy.code, destroy.output).toBe(0)
    expect(await names(STAGING_KEY, 'stg', suffix)).toEqual([])
    expect(await names(PRODUCTION_KEY, 'prod', suffix)).toEqual([`Own production ${suffix}`, `Shop production ${suffix}`])
  })

  it("a flag still wins over the environment's api, which wins over the config's api and MONITORING_API_URL", async () => {
    const { dir } = project(`import { defineConfig } from 'monitors-as-code'
export default defineConfig({
  projectName: 'envs',
  api: { baseUrl: 'http://127.0.0.1:9/top' },
  environments: { staging: { api: { baseUrl: process.env.STAGING_URL } }, production: {} },
})
`)
    const env = { STAGING_URL: server.url, MONITORING_API_URL: 'http://127.0.0.1:9/variable', MONITORING_API_KEY: STAGING_KEY, MONITORING_ACCOUNT_ID: 'stg' }
    const staging = await monitors(dir, ['plan', '--env', 'staging', '--format', 'json'], env)
    expect(JSON.parse(staging.stdout).target.baseUrl).toBe(server.url)
    // production sets none: the config's api, not the variable
    const production = await monitors(dir, ['plan', '--env', 'production', '--format', 'json', '--retries', '0'], env)
    expect(production.code).toBe(1)
    expect(production.stderr).toContain('127.0.0.1:9')
    expect(JSON.parse(production.stdout).problems[0].message).toContain('http://127.0.0.1:9/top')
    const flag = await monitors(dir, ['plan', '--env', 'production', '--format', 'json', '--api-url', server.url], env)
    expect(flag.code, flag.output).toBe(0)
    expect(JSON.parse(flag.stdout)).toMatchObject({ environment: 'production', target: { baseUrl: server.url } })
  })

  it("refuses an environment's api field written but empty (an unset secret) instead of using another target", async () => {
    const { dir, suffix } = project(`import { defineConfig } from 'monitors-as-code'
export default defineConfig({
  projectName: 'envs',
  api: { baseUrl: process.env.MONITORING_API_URL },
  environments: {
    staging: { api: { baseUrl: process.env.STAGING_URL, accountId: process.env.STAGING_ACCOUNT } },
    production: {},
  },
})
`)
    // in CI an unset secret comes through empty: the config's api (production's URL here) must not stand in for it
    const env = {
      CI: 'true',
      STAGING_URL: '',
      STAGING_ACCOUNT: '',
      MONITORING_API_URL: server.url,
      MONITORING_API_KEY: STAGING_KEY,
      MONITORING_ACCOUNT_ID: 'stg',
    }
    for (const command of [['plan'], ['apply', '--yes'], ['status']]) {
      const run = await monitors(dir, [...command, '--env', 'staging'], env)
      expect(run.code, run.output).toBe(1)
      expect(run.stderr).toContain('environments.staging.api.baseUrl, environments.staging.api.accountId are empty (an unset secret in CI?)')
      expect(run.output).not.toMatch(STACK_LINE)
    }
    expect(existsSync(join(dir, 'monitoring.staging.lock.json'))).toBe(false)
    expect(await names(STAGING_KEY, 'stg', suffix)).toEqual([])
    // given by flags, they win; unset (undefined) fields still come from the config's api
    const flags = await monitors(dir, ['plan', '--env', 'staging', '--format', 'json', '--api-url', server.url, '--account-id', 'stg'], env)
    expect(flags.code, flags.output).toBe(0)
    const unset = await monitors(dir, ['plan', '--env', 'staging', '--format', 'json'], { ...env, STAGING_URL: undefined, STAGING_ACCOUNT: undefined })
    expect(unset.code, unset.output).toBe(0)
    expect(JSON.parse(unset.stdout)).toMatchObject({ environment: 'staging', target: { baseUrl: server.url } })
  })

  it('the embedded local server keeps one database and one lock per environment', async () => {
    const { dir } = project(sameTarget())
    const apply = await monitors(dir, ['apply', '--env', 'staging', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stderr).toContain('Using the embedded local server (.monitors/local.staging.db)')
    expect(readJson(dir, '.monitors/local.staging.lock.json').environment).toBe('staging')
    // production's embedded service is another one: nothing of staging's is there
    const plan = await monitors(dir, ['plan', '--env', 'production', '--format', 'json'])
    const doc = JSON.parse(plan.stdout)
    expect(doc).toMatchObject({
      environment: 'production',
      target: { id: 'local', baseUrl: 'embedded:.monitors/local.production.db' },
      summary: { create: 2 },
      unmanaged: {},
    })
    expect(existsSync(join(dir, '.monitors', 'local.db'))).toBe(false)
  })
})

describe("a plan for one environment never uses another's lock", () => {
  it('refuses the lock of another environment, even on the same target', async () => {
    const { dir, suffix } = project(sameTarget())
    const staging = await monitors(dir, ['apply', '--env', 'staging', '--yes'], oneTarget())
    expect(staging.code, staging.output).toBe(0)
    const before = await names(STAGING_KEY, 'stg', suffix)

    // by --lock, and as production's own lock file (copied over it)
    const byFlag = await monitors(dir, ['apply', '--env', 'production', '--yes', '--lock', 'monitoring.staging.lock.json'], oneTarget())
    expect(byFlag.code).toBe(1)
    expect(byFlag.stderr).toContain(
      'belongs to the environment "staging", but this run is for the environment "production": a plan for one environment never uses another\'s lock (its 2 resources stay as they are). Run with --env staging to use it',
    )
    copyFileSync(join(dir, 'monitoring.staging.lock.json'), join(dir, 'monitoring.production.lock.json'))
    for (const command of [['plan'], ['apply', '--yes'], ['destroy', '--yes'], ['status'], ['import', '--adopt']]) {
      const result = await monitors(dir, [...command, '--env', 'production'], oneTarget())
      expect(result.code, `${command[0]}: ${result.output}`).toBe(1)
      expect(result.stderr).toContain('monitoring.production.lock.json belongs to the environment "staging", but this run is for the environment "production"')
      expect(result.output).not.toMatch(STACK_LINE)
    }
    expect(await names(STAGING_KEY, 'stg', suffix)).toEqual(before)
  })

  it('refuses a lock of an environment in a run without one, and a lock without one in a run with one', async () => {
    const { dir } = project(sameTarget())
    expect((await monitors(dir, ['apply', '--env', 'staging', '--yes'], oneTarget())).code).toBe(0)
    // the same project without environments, pointed at staging's lock
    const plain = project().dir
    copyFileSync(join(dir, 'monitoring.staging.lock.json'), join(plain, 'monitoring.lock.json'))
    const noEnv = await monitors(plain, ['plan'], oneTarget())
    expect(noEnv.code).toBe(1)
    expect(noEnv.stderr).toContain('belongs to the environment "staging", but this run names no environment')

    // a lock written before environments were declared is no environment's
    const old = project().dir
    expect((await monitors(old, ['apply', '--yes'], oneTarget())).code).toBe(0)
    writeFileSync(join(old, 'monitoring.config.ts'), sameTarget())
    const byFlag = await monitors(old, ['plan', '--env', 'production', '--lock', 'monitoring.lock.json'], oneTarget())
    expect(byFlag.code).toBe(1)
    expect(byFlag.stderr).toContain(
      'monitoring.lock.json records no environment (it was written without one), but this run is for the environment "production"',
    )
    expect(byFlag.stderr).toContain("environments: { production: { lock: 'monitoring.lock.json' } }")
  })

  it("takes a lock without environment as the one the environment's own lock setting names, and records the environment", async () => {
    const { dir } = project()
    expect((await monitors(dir, ['apply', '--yes'], oneTarget())).code).toBe(0)
    writeFileSync(
      join(dir, 'monitoring.config.ts'),
      `import { defineConfig } from 'monitors-as-code'
export default defineConfig({ projectName: 'envs', environments: { staging: {}, production: { lock: 'monitoring.lock.json' } } })
`,
    )
    const plan = await monitors(dir, ['plan', '--env', 'production'], oneTarget())
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toContain('Plan: 0 to create, 2 to update, 0 to delete.')
    const apply = await monitors(dir, ['apply', '--env', 'production', '--yes'], oneTarget())
    expect(apply.code, apply.output).toBe(0)
    expect(readJson(dir, 'monitoring.lock.json').environment).toBe('production')
    // from now on it is production's: staging may not use it
    const staging = await monitors(dir, ['plan', '--env', 'staging', '--lock', 'monitoring.lock.json'], oneTarget())
    expect(staging.code).toBe(1)
    expect(staging.stderr).toContain('belongs to the environment "production"')
  })

  it('refuses to apply a saved plan made for another environment, before anything is sent', async () => {
    const { dir, suffix } = project(sameTarget())
    const saved = await monitors(dir, ['plan', '--env', 'staging', '--out', 'plan.json'], oneTarget())
    expect(saved.code, saved.output).toBe(0)
    expect(readJson(dir, 'plan.json').plan.environment).toBe('staging')
    const before = await names(STAGING_KEY, 'stg', suffix)

    const other = await monitors(dir, ['apply', 'plan.json', '--env', 'production'], oneTarget())
    expect(other.code).toBe(1)
    expect(other.stderr).toContain(
      'The saved plan plan.json cannot be applied: the plan was made for the environment "staging", but this run is for the environment "production": a plan for one environment is never applied to another (run: monitors apply plan.json --env staging)',
    )
    const viaVariable = await monitors(dir, ['apply', 'plan.json'], { ...oneTarget(), MONITORS_ENV: 'production' })
    expect(viaVariable.code).toBe(1)
    expect(viaVariable.stderr).toContain('the plan was made for the environment "staging"')
    expect(await names(STAGING_KEY, 'stg', suffix)).toEqual(before)
    expect(existsSync(join(dir, 'monitoring.production.lock.json'))).toBe(false)

    // a plan made without environments is no environment's either
    const plain = project().dir
    expect((await monitors(plain, ['plan', '--out', 'plan.json'], oneTarget())).code).toBe(0)
    writeFileSync(join(plain, 'monitoring.config.ts'), sameTarget())
    const unnamed = await monitors(plain, ['apply', 'plan.json', '--env', 'staging'], oneTarget())
    expect(unnamed.code).toBe(1)
    expect(unnamed.stderr).toContain('the plan was made without an environment, but this run is for the environment "staging"')

    const right = await monitors(dir, ['apply', 'plan.json', '--env', 'staging', '--format', 'json'], oneTarget())
    expect(right.code, right.output).toBe(0)
    expect(JSON.parse(right.stdout)).toMatchObject({ environment: 'staging', ok: true, plan: { environment: 'staging' } })
  })
})

describe('the environment in every header and document', () => {
  it('plan in text, markdown and JSON, with and without changes; apply, status, test and validate documents', async () => {
    const { dir } = project(sameTarget())
    const text = await monitors(dir, ['plan', '--env', 'staging'], oneTarget())
    expect(text.stdout.split('\n').slice(0, 2)).toEqual(['Environment: staging', `Target: ${server.url} (account stg)`])
    const markdown = await monitors(dir, ['plan', '--env', 'staging', '--format', 'markdown'], oneTarget())
    expect(markdown.stdout.split('\n').slice(0, 5)).toEqual([
      '### monitors plan: staging',
      '',
      'Environment: **staging**',
      '',
      `Target: ${server.url} (account stg)`,
    ])
    const failed = await monitors(dir, ['plan', '--env', 'staging', '--format', 'markdown', '--api-url', 'http://127.0.0.1:9', '--retries', '0'], oneTarget())
    expect(failed.code).toBe(1)
    expect(failed.stdout).toMatch(/^### monitors plan: staging\n\n\*\*No plan: 1 problem\*\*/)

    const apply = await monitors(dir, ['apply', '--env', 'staging', '--yes', '--format', 'json'], oneTarget())
    expect(apply.code, apply.output).toBe(0)
    expect(Object.keys(JSON.parse(apply.stdout)).slice(0, 2)).toEqual(['formatVersion', 'environment'])
    const none = await monitors(dir, ['plan', '--env', 'staging'], oneTarget())
    expect(none.stdout).toMatch(/^Environment: staging\nNo changes\./)

    const status = await monitors(dir, ['status', '--env', 'staging', '--format', 'json'], oneTarget())
    expect(status.code, status.output).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({ environment: 'staging', summary: { total: 2 } })
    expect(status.stderr).toContain('Environment: staging')
    const test = await monitors(dir, ['test', '--env', 'production', '--target', 'dns-check:own', '--name-server', `127.0.0.1:${dns.port}`, '--format', 'json'])
    expect(JSON.parse(test.stdout)).toMatchObject({ environment: 'production', results: [{ logicalId: 'own' }] })
    expect(test.stderr).toContain('Testing 1 check of the environment production from this machine')
    const validate = await monitors(dir, ['validate', '--env', 'production', '--format', 'json'])
    expect(validate.code).toBe(0)
    expect(JSON.parse(validate.stdout)).toMatchObject({ formatVersion: 1, environment: 'production', valid: true })
  })
})

describe('validate and init with environments', () => {
  it('validate without --env checks every environment, naming the one a problem is in', async () => {
    const { dir } = project(`import { defineConfig } from 'monitors-as-code'
export default defineConfig({
  projectName: 'envs',
  defaults: { frequency: 10, frequencyOffset: 50 },
  environments: { staging: { defaults: { frequency: 120 } }, production: {} },
})
`)
    const text = await monitors(dir, ['validate'])
    expect(text.code).toBe(1)
    expect(text.stdout).toBe('Valid for production: 2 resources in 1 file (2 DnsCheck)\n')
    expect(text.stderr).toContain('Environment staging:')
    expect(text.stderr).toContain('frequencyOffset')
    const json = JSON.parse((await monitors(dir, ['validate', '--format', 'json'])).stdout)
    expect(json.valid).toBe(false)
    expect(json.environments.map((e: { environment: string; valid: boolean }) => [e.environment, e.valid])).toEqual([
      ['staging', false],
      ['production', true],
    ])
    expect(json.problems.length).toBeGreaterThan(0)
    expect(json.problems.every((p: { environment: string }) => p.environment === 'staging')).toBe(true)
    // one environment: that one only
    expect((await monitors(dir, ['validate', '--env', 'production'])).code).toBe(0)
  })

  it('init --env declares the environments; the scaffold validates and asks for one', async () => {
    const dir = makeProject({})
    const target = join(dir, 'fresh')
    const init = await monitors(dir, ['init', 'fresh', '--env', 'staging', '--env', 'production'])
    expect(init.code, init.output).toBe(0)
    expect(init.stderr).toContain('npx monitors plan --env staging')
    const config = readFileSync(join(target, 'monitoring.config.ts'), 'utf8')
    expect(config).toContain('environments: {\n    staging: {},\n    production: {},\n  },')
    const validate = await monitors(target, ['validate'])
    expect(validate.code, validate.output).toBe(0)
    expect(validate.stdout).toContain('Valid for staging:')
    expect(validate.stdout).toContain('Valid for production:')
    const plan = await monitors(target, ['plan'])
    expect(plan.code).toBe(1)
    expect(plan.stderr).toContain('declares the environments staging, production')
    const bad = await monitors(dir, ['init', 'other', '--env', 'Prod'])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('--env "Prod": an environment\'s name is lower-case letters')
  })
})
