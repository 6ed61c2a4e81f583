/** Every example project, and the repository's own, applies and then plans as `No changes.`. */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { monitors, repo, STACK_LINE } from '../helpers/cli.js'

const examples = readdirSync(join(repo, 'examples')).filter((name) => existsSync(join(repo, 'examples', name, 'monitoring.config.ts')))

let server: LocalServer
beforeAll(async () => {
  server = await startLocalServer({ apiKeys: examples.map((name) => ({ key: `key-${name}`, accountId: name })) })
})
afterAll(() => server?.close())

describe('example projects', () => {
  it('there are some', () => {
    expect(examples).toEqual(expect.arrayContaining(['minimal', 'shop']))
  })

  it.each(examples)('%s applies, then plans as No changes, then destroys', async (name) => {
    // a copy, so the lock file lands outside the repository, with the package linked as a user has it
    const dir = mkdtempSync(join(tmpdir(), `monitors-example-${name}-`))
    cpSync(join(repo, 'examples', name), dir, { recursive: true })
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(repo, join(dir, 'node_modules', 'monitors-as-code'), 'dir')
    const env = { MONITORING_API_URL: server.url, MONITORING_API_KEY: `key-${name}`, MONITORING_ACCOUNT_ID: name }

    const apply = await monitors(dir, ['apply', '--yes'], env)
    expect(apply.code, apply.output).toBe(0)
    expect(apply.output).toMatch(/Apply complete: \d+ created, 0 updated, 0 deleted\./)
    expect(apply.output).not.toMatch(STACK_LINE)

    const plan = await monitors(dir, ['plan', '--detailed-exitcode'], env)
    expect(plan.output).toContain('No changes.')
    expect(plan.code).toBe(0)

    const destroy = await monitors(dir, ['destroy', '--yes'], env)
    expect(destroy.code, destroy.output).toBe(0)
  })
})
