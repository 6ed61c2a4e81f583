/**
 * `new EnvVar('X', { value: process.env.X ?? '', secret: true })` with X unset in the pipeline
 * would empty the variable without a word: validate, plan and apply warn, naming the file, the
 * construct and the variable, on stderr, and carry on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalServer, type LocalServer } from '../../src/server/index.js'
import { makeProject, monitors } from '../helpers/cli.js'

const files = {
  'vars.check.ts': `import { EnvVar } from 'monitors-as-code'
new EnvVar('PARTNER_TOKEN', { value: process.env.PARTNER_TOKEN ?? '', secret: true })
new EnvVar('REGION', { value: process.env.REGION ?? '' })
new EnvVar('SET_TOKEN', { value: 'abc', secret: true })
`,
}
const WARNING = /^Warning: vars\.check\.ts › EnvVar PARTNER_TOKEN: the secret value is empty/m

let server: LocalServer
beforeAll(async () => {
  server = await startLocalServer({ apiKeys: [{ key: 'secret-key', accountId: 'secret' }] })
})
afterAll(() => server?.close())

describe('an empty secret value', () => {
  const env = () => ({ MONITORING_API_URL: server.url, MONITORING_API_KEY: 'secret-key', MONITORING_ACCOUNT_ID: 'secret', PARTNER_TOKEN: undefined })

  it('warns once on validate, plan and apply (stderr), and does not fail', async () => {
    const dir = makeProject(files)
    for (const args of [['validate'], ['plan'], ['plan', '--format', 'json'], ['apply', '--yes']]) {
      const result = await monitors(dir, args, env())
      expect(result.code, result.output).toBe(0)
      expect(result.stderr).toMatch(WARNING)
      expect(result.stderr.match(/Warning:/g)).toHaveLength(1)
      expect(result.stdout).not.toContain('Warning')
    }
  })

  it('says nothing once the variable is set', async () => {
    const dir = makeProject(files)
    const result = await monitors(dir, ['validate'], { ...env(), PARTNER_TOKEN: 'from-the-pipeline' })
    expect(result.code, result.output).toBe(0)
    expect(result.stderr).not.toContain('Warning')
  })
})
