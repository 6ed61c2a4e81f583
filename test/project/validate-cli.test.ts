import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { monitors as run } from '../helpers/cli.js'
import { FIXTURES, REPO_ROOT, tempProject } from './helpers.js'

/** Runs the built CLI (npm test builds first) as a user would, without colour. */
async function monitors(args: string[], cwd: string) {
  const result = await run(cwd, args, { FORCE_COLOR: undefined })
  return { code: result.code, stdout: result.stdout, stderr: result.stderr }
}

describe('monitors validate', () => {
  it('prints a summary and exits 0 for a valid project', async () => {
    const { code, stdout, stderr } = await monitors(['validate'], path.join(FIXTURES, 'shop'))
    expect(stderr).toBe('')
    expect(stdout).toBe('Valid: 8 resources in 2 files (1 EnvVar, 1 StatusPageService, 1 MaintenanceWindow, 3 DnsCheck, 1 IcmpCheck, 1 StatusPage)\n')
    expect(code).toBe(0)
  })

  it('validates the repository’s own example project and the examples', async () => {
    expect(await monitors(['validate'], REPO_ROOT)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Valid: \d+ resources in 2 files \(/) })
    expect(await monitors(['validate'], path.join(REPO_ROOT, 'examples', 'shop'))).toMatchObject({ code: 0 })
    expect(await monitors(['validate'], path.join(REPO_ROOT, 'examples', 'minimal'))).toMatchObject({
      code: 0,
      stdout: 'Valid: 1 resource in 1 file (1 DnsCheck)\n',
    })
  })

  it('prints every problem and the count on stderr and exits 1, without a stack', async () => {
    const { code, stdout, stderr } = await monitors(['validate', '--config', 'duplicates/monitoring.config.ts'], FIXTURES)
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(stderr).toBe(
      [
        '✖ duplicates/b.check.ts › DnsCheck "shop-dns" › duplicate logical id: DnsCheck "shop-dns" is also declared at duplicates/a.check.ts:3; logical ids must be unique per kind',
        '✖ duplicates/b.check.ts › EnvVar "TOKEN" › duplicate key: EnvVar "TOKEN" is also declared at duplicates/a.check.ts:4; keys must be unique per kind',
        '✖ duplicates/b.check.ts › DnsCheck "has space" › logical id must be one or more of A-Z, a-z, 0-9 and _ - / # . (got "has space")',
        '✖ duplicates/b.check.ts › EnvVar "9LIVES" › key must be 1-128 characters of A-Z, a-z, 0-9 and _, not starting with a digit',
        '4 problems found; nothing was sent.',
        '',
      ].join('\n'),
    )
  })

  it('reports a syntax error with its line and a throw with its line', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'a.check.ts': `import { DnsCheck } from 'monitors-as-code'\nnew DnsCheck('a', { name: 'A' request: {} })\n`,
      'b.check.ts': `\n\nthrow new RangeError('out of range')\n`,
    })
    const { code, stderr } = await monitors(['validate'], dir)
    expect(code).toBe(1)
    const lines = stderr.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^✖ a\.check\.ts:2:\d+ › syntax error: /)
    expect(lines[1]).toBe('✖ b.check.ts:3 › threw RangeError: out of range')
    expect(lines[2]).toBe('2 problems found; nothing was sent.')
    expect(stderr).not.toMatch(/\bat .*:\d+:\d+\)/)
  })

  it('reports a missing config and a bad --config', async () => {
    const dir = tempProject({}, { link: false })
    const missing = await monitors(['validate'], dir)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe(
      `✖ no monitoring.config.ts (or checkly.config.ts) found in ${dir} or any parent directory: run "npx monitors init" to create one (with an example check file and a tsconfig.json), or pass --config <file>\n1 problem found; nothing was sent.\n`,
    )
    const bad = await monitors(['validate', '--config', 'elsewhere.ts'], dir)
    expect(bad).toMatchObject({ code: 1, stderr: '✖ config file elsewhere.ts does not exist (given by --config)\n1 problem found; nothing was sent.\n' })
  })
})
