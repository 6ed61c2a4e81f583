/**
 * `monitors server` as a user starts it: the built CLI in a child process on a free port. Its
 * `ready` resolves with the URL once it printed it (and `until` holds), or rejects when it exits.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'monitors.cjs')

/** Whether the CLI is built (the tests of the server command need dist/). */
export const serverBuilt = existsSync(join(root, 'dist', 'src', 'cli', 'commands', 'server.js'))

export interface ServerProcessOptions {
  env?: Record<string, string>
  /** what the output must show besides the URL before it counts as ready */
  until?: (output: string) => boolean
  /** a pause after that, for lines written in the same burst (the key line after the URL) */
  settleMs?: number
}

export function startServerProcess(args: string[], options: ServerProcessOptions = {}) {
  const { env = {}, until = () => true, settleMs = 50 } = options
  const child = spawn(process.execPath, [bin, 'server', '--port', '0', ...args], {
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1]
      if (url && until(output)) {
        clearInterval(timer)
        if (settleMs > 0) setTimeout(() => resolve(url), settleMs)
        else resolve(url)
      }
    }, 20)
    void exited.then((code) => {
      clearInterval(timer)
      reject(new Error(`monitors server exited with ${code}: ${output}`))
    })
  })
  return { child, ready, exited, output: () => output }
}
