import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const cli = resolve(import.meta.dirname, '../../bin/monitors.js')

async function init(dir: string, ...args: string[]) {
  try {
    const out = await run(process.execPath, [cli, 'init', dir, ...args], { env: { ...process.env, NO_COLOR: '1' } })
    return { code: 0, output: out.stdout + out.stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, output: e.stdout + e.stderr }
  }
}

describe('monitors init', () => {
  it('scaffolds a config, an example check and the .gitignore line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-init-'))
    const result = await init(dir, '--project-name', 'shop')
    expect(result.code).toBe(0)
    expect(readFileSync(join(dir, 'monitoring.config.ts'), 'utf8')).toContain("projectName: \"shop\"")
    expect(readFileSync(join(dir, 'checks/website.check.ts'), 'utf8')).toContain("new DnsCheck('website-dns'")
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('.monitors/\n')
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
