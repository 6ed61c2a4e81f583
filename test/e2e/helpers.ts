import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
export const repo = resolve(import.meta.dirname, '../..')
const cli = join(repo, 'bin/monitors.js')

/** A project in a fresh folder; `monitors-as-code` resolves to this repository (built). */
export function makeProject(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'monitors-e2e-'))
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(repo, join(dir, 'node_modules', 'monitors-as-code'), 'dir')
  writeFiles(dir, { 'monitoring.config.ts': config('e2e'), ...files })
  return dir
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
}

export const config = (projectName: string) =>
  `import { defineConfig } from 'monitors-as-code'\nexport default defineConfig({ projectName: '${projectName}' })\n`

export interface CliResult {
  code: number
  stdout: string
  stderr: string
  output: string
}

/**
 * Runs the built CLI in `cwd`. MONITORING_* and CI come only from `env`: the suite itself runs
 * with CI=true in the pipeline, where the CLI refuses the embedded server unless asked for it,
 * and a test of a developer's machine must not inherit that. `bin`: another installed copy of the CLI.
 */
export async function monitors(cwd: string, args: string[], env: Record<string, string | undefined> = {}, bin = cli): Promise<CliResult> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MONITORING_') && key !== 'CI'))
  try {
    const out = await run(process.execPath, [bin, ...args], { cwd, env: { ...base, NO_COLOR: '1', ...env } })
    return { code: 0, stdout: out.stdout, stderr: out.stderr, output: out.stdout + out.stderr }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '', output: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}

/** No stack trace reached the user. */
export const STACK_LINE = /^\s+at .+:\d+:\d+\)?$/m
