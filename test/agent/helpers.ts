import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { repo } from '../helpers/cli.js'

/** A `monitors` command (the built CLI) running in the background, its output collected. */
export interface AgentProcess {
  child: ChildProcess
  /** Everything printed so far, stdout and stderr together. */
  output(): string
  stdout(): string
  stderr(): string
  /** Waits until the output matches `pattern` (rejects after `timeoutMs` or when the process exits first). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>
  /** Resolves with the exit code (or the signal that ended it). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** The health port the agent printed. */
  healthPort(): Promise<number>
}

/** `monitors agent …` in the background. */
export function spawnAgent(args: string[], env: Record<string, string | undefined> = {}): AgentProcess {
  return spawnMonitors(['agent', ...args], env)
}

/** `monitors …` in the background; MONITORING_* and AGENT_HEALTH_PORT come only from `env`. */
export function spawnMonitors(args: string[], env: Record<string, string | undefined> = {}): AgentProcess {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MONITORING_') && k !== 'AGENT_HEALTH_PORT'))
  const child = spawn(process.execPath, [join(repo, 'bin/monitors.cjs'), ...args], {
    env: { ...base, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  let all = ''
  const listeners = new Set<() => void>()
  const changed = () => listeners.forEach((l) => l())
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString()
    all += chunk.toString()
    changed()
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString()
    all += chunk.toString()
    changed()
  })
  let ended = false
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      // the last output may arrive after 'exit': wait for the streams to close
      child.on('close', () => {
        ended = true
        changed()
        resolve({ code, signal })
      })
    })
  })
  const waitFor = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = all.match(pattern)
        if (match) {
          cleanup()
          resolve(match)
        } else if (ended) {
          cleanup()
          reject(new Error(`the agent exited before printing ${pattern}:\n${all}`))
        }
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${all}`))
      }, timeoutMs)
      const cleanup = () => {
        clearTimeout(timer)
        listeners.delete(check)
      }
      listeners.add(check)
      check()
    })
  return {
    child,
    output: () => all,
    stdout: () => out,
    stderr: () => err,
    waitFor,
    exited,
    healthPort: async () => Number((await waitFor(/health probes on port (\d+)/))[1]),
  }
}

export interface Probe {
  status: number
  text: string
  contentType: string | null
}

export async function probe(port: number, path: string, method = 'GET'): Promise<Probe> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method })
  return { status: response.status, text: await response.text(), contentType: response.headers.get('content-type') }
}
