import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { monitors as cli, monitorsProcess, repo } from '../helpers/cli.js'

function monitors(args: string[], cwd = repo) {
  return cli(cwd, args)
}

describe('command-line usage', () => {
  it('refuses an unknown flag with exit 1 and runs nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-usage-'))
    const result = await monitors(['plan', '--config', join(repo, 'monitoring.config.ts'), '--lock', join(dir, 'lock.json'), '--nope'], dir)
    expect(result.code).toBe(1)
    expect(result.output).toContain('Unknown argument: nope')
    expect(result.output).toContain('Run "monitors --help" for usage.')
    expect(result.output).not.toContain('Plan:')
    expect(existsSync(join(dir, 'lock.json'))).toBe(false)
  })

  it('refuses a value outside a flag’s choices, and a missing command', async () => {
    const format = await monitors(['plan', '--format', 'xml'])
    expect(format.code).toBe(1)
    expect(format.output).toContain('Choices: "text", "markdown", "json"')
    const none = await monitors([])
    expect(none.code).toBe(1)
    expect(none.output).toContain('Name a command')
  })

  it('answers --version and --help with exit 0', async () => {
    // a real process: --help and --version must end it with exit 0
    const version = await monitorsProcess(repo, ['--version'])
    expect(version.code).toBe(0)
    expect(version.output.trim()).toMatch(/^\d+\.\d+\.\d+$/)
    const help = await monitorsProcess(repo, ['--help'])
    expect(help.code).toBe(0)
    expect(help.output).toContain('monitors apply [plan]')
  })
})
