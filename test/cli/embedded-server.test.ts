/**
 * With no API URL configured anywhere, the CLI starts the local server in-process on
 * `.monitors/local.db`, with its own key and lock file, and says so in one line: a fresh clone
 * plans the repository's own example project without an account.
 */
import { cpSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeProject, monitors, repo } from '../helpers/cli.js'

describe('the embedded default target', () => {
  const dir = makeProject({})
  cpSync(join(repo, 'monitoring.config.ts'), join(dir, 'monitoring.config.ts'))
  cpSync(join(repo, 'examples/shop'), join(dir, 'examples/shop'), { recursive: true })

  it('plans the example project against a local server it starts itself', async () => {
    const result = await monitors(dir, ['plan'])
    expect(result.code, result.output).toBe(0)
    expect(result.stderr.trim().split('\n')).toEqual([
      // the example reads its secret from API_TOKEN, unset here: said, not an error
      expect.stringMatching(/^Warning: examples\/shop\/shop\.check\.ts › EnvVar API_TOKEN: the secret value is empty/),
      'Using the embedded local server (.monitors/local.db); set MONITORING_API_URL to use a remote service.',
    ])
    expect(result.stdout).toContain('+ dns-check shop-dns')
    expect(result.stdout).toMatch(/Plan: \d+ to create, 0 to update, 0 to delete\./)
    const key = readFileSync(join(dir, '.monitors/local-api-key'), 'utf8').trim()
    expect(statSync(join(dir, '.monitors/local-api-key')).mode & 0o777).toBe(0o600)
    expect(result.output).not.toContain(key)
  })

  it('applies to it, keeps its own lock under .monitors/, and then plans no changes', async () => {
    const apply = await monitors(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stdout).toMatch(/Apply complete: \d+ created, 0 updated, 0 deleted\./)
    const lock = JSON.parse(readFileSync(join(dir, '.monitors/local.lock.json'), 'utf8'))
    expect(lock.target).toEqual({ id: 'local', baseUrl: 'embedded:.monitors/local.db', accountId: 'local' })
    expect(Object.keys(lock.resources)).toContain('dns-check:shop-dns')
    expect(() => statSync(join(dir, 'monitoring.lock.json'))).toThrow()

    const plan = await monitors(dir, ['plan'])
    expect(plan.code, plan.output).toBe(0)
    expect(plan.stdout).toMatch(/^No changes\./m)
  })

  it('destroys what it applied', async () => {
    const destroy = await monitors(dir, ['destroy', '--yes'])
    expect(destroy.code, destroy.output).toBe(0)
    expect(destroy.stdout).toMatch(/Destroy complete: \d+ deleted\./)
    expect(JSON.parse(readFileSync(join(dir, '.monitors/local.lock.json'), 'utf8')).resources).toEqual({})
  })
})
