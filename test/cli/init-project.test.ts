/** A project made by `monitors init` (the package linked in) validates and plans cleanly. */
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { monitors, repo } from '../helpers/cli.js'

describe("an init'ed project", () => {
  it('validates, plans with markdown only on stdout, applies on the embedded server, then has no changes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-review-init-'))
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(repo, join(dir, 'node_modules', 'monitors-as-code'), 'dir')
    expect((await monitors(dir, ['init', '.', '--project-name', 'fresh'])).code).toBe(0)
    const validate = await monitors(dir, ['validate'])
    expect(validate.code, validate.output).toBe(0)
    const plan = await monitors(dir, ['plan', '--format', 'markdown', '--detailed-exitcode'])
    expect(plan.code, plan.output).toBe(2)
    expect(plan.stdout.startsWith('### monitors plan\n')).toBe(true)
    expect(plan.stderr).toContain('Using the embedded local server')
    expect((await monitors(dir, ['apply', '--yes'])).code).toBe(0)
    expect((await monitors(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })
})
