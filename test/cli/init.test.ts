import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { monitors } from '../helpers/cli.js'

function init(dir: string, ...args: string[]) {
  return monitors(tmpdir(), ['init', dir, ...args])
}

describe('monitors init', () => {
  it('scaffolds a config, an example check and the .gitignore line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-init-'))
    const result = await init(dir, '--project-name', 'shop')
    expect(result.code).toBe(0)
    expect(readFileSync(join(dir, 'monitoring.config.ts'), 'utf8')).toContain('projectName: "shop"')
    expect(readFileSync(join(dir, 'checks/website.check.ts'), 'utf8')).toContain("new DnsCheck('website-dns'")
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('node_modules/\n.monitors/\n')
  })

  it('appends to an existing .gitignore once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-init-'))
    writeFileSync(join(dir, '.gitignore'), 'node_modules')
    expect((await init(dir)).code).toBe(0)
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('node_modules\n.monitors/\n')
  })

  it('refuses to overwrite, and writes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-init-'))
    writeFileSync(join(dir, 'monitoring.config.ts'), '// mine\n')
    const result = await init(dir)
    expect(result.code).toBe(1)
    expect(result.output).toContain('monitoring.config.ts already exists')
    expect(readFileSync(join(dir, 'monitoring.config.ts'), 'utf8')).toBe('// mine\n')
    expect(existsSync(join(dir, 'checks'))).toBe(false)
    expect(existsSync(join(dir, '.gitignore'))).toBe(false)
  })
})
