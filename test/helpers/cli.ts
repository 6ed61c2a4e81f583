import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
export const repo = resolve(import.meta.dirname, '../..')
const cli = join(repo, 'bin/monitors.cjs')

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

/** The environment a run sees: this one without MONITORING_* and CI, then NO_COLOR, then `env`. */
function runEnv(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MONITORING_') && key !== 'CI'))
  return { ...base, NO_COLOR: '1', ...env }
}

type Main = (argv: string[], io: Record<string, unknown>) => Promise<number>
let bundle: Promise<{ main: Main }> | undefined
/** In-process runs share the process's environment and working directory: one at a time. */
let queue: Promise<unknown> = Promise.resolve()

/**
 * Runs the built CLI (dist/cli/main.js, the bundle bin/monitors.cjs loads) in `cwd`, in this
 * process through `main(argv, io)`. MONITORING_* and CI come only from `env`: the suite itself
 * runs with CI=true in the pipeline, where the CLI refuses the embedded server unless asked for
 * it, and a test of a developer's machine must not inherit that. `bin`: another installed copy
 * of the CLI, run as a process. Signals, kill -9, prompts and the bin itself: `monitorsProcess`.
 */
export async function monitors(cwd: string, args: string[], env: Record<string, string | undefined> = {}, bin = cli): Promise<CliResult> {
  if (bin !== cli) return monitorsProcess(cwd, args, env, bin)
  const run = queue.then(() => inProcess(cwd, args, env))
  queue = run.catch(() => undefined)
  return run
}

/** Streams of an in-process run: a stderr or a stdout that says it is a terminal (a fake one: it records what is written). */
export interface InProcessStreams {
  stderrTTY?: boolean
  stdoutTTY?: boolean
  columns?: number
}

/** `monitors` in-process with streams of its own (see InProcessStreams). */
export async function monitorsWithStreams(cwd: string, args: string[], env: Record<string, string | undefined>, streams: InProcessStreams): Promise<CliResult> {
  const run = queue.then(() => inProcess(cwd, args, env, streams))
  queue = run.catch(() => undefined)
  return run
}

async function inProcess(cwd: string, args: string[], env: Record<string, string | undefined>, streams: InProcessStreams = {}): Promise<CliResult> {
  // externalized in vitest.config.ts: Node loads the bundle as bin/monitors.cjs does
  bundle ??= import(/* @vite-ignore */ pathToFileURL(join(repo, 'dist/cli/main.js')).href) as Promise<{ main: Main }>
  const { main } = await bundle
  let stdout = ''
  let stderr = ''
  const io = {
    stdout: {
      write: (text: string) => {
        stdout += text
        return true
      },
      ...(streams.stdoutTTY ? { isTTY: true, columns: streams.columns ?? 80 } : {}),
    },
    stderr: {
      write: (text: string) => {
        stderr += text
        return true
      },
      ...(streams.stderrTTY ? { isTTY: true, columns: streams.columns ?? 100 } : {}),
    },
    isTTY: streams.stdoutTTY === true,
    env: runEnv(env),
    cwd,
  }
  let code: number
  try {
    code = await main(args, io)
  } catch (error) {
    // what bin/monitors.cjs prints for a rejection
    stderr += `monitors: internal error: ${error instanceof Error ? error.message : String(error)}\n`
    code = 1
  }
  return { code, stdout, stderr, output: stdout + stderr }
}

/** Runs the CLI as its own process (`node bin/monitors.cjs ...`), as a user or a pipeline does. */
export async function monitorsProcess(cwd: string, args: string[], env: Record<string, string | undefined> = {}, bin = cli): Promise<CliResult> {
  try {
    const out = await run(process.execPath, [bin, ...args], { cwd, env: runEnv(env) })
    return { code: 0, stdout: out.stdout, stderr: out.stderr, output: out.stdout + out.stderr }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '', output: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}

/** No stack trace reached the user. */
export const STACK_LINE = /^\s+at .+:\d+:\d+\)?$/m
