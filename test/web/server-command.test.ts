/** `monitors server` says where the dashboard and the status pages are, and serves them there. */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const bin = join(import.meta.dirname, '..', '..', 'bin', 'monitors.cjs')

describe('monitors server', () => {
  it('prints the dashboard address, which answers the log-in form', async () => {
    const child = spawn(
      process.execPath,
      [bin, 'server', '--port', '0', '--db', ':memory:', '--api-key', 'web-key-0123456789:acc-web', '--no-runner', '--quiet'],
      {
        env: { ...process.env, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setInterval(() => {
          const match = /^(?:[\dT:.-]+Z )?Dashboard at (http:\/\/\S+)\/ \(log in with one of its keys\); status pages at \1\/status\/\{url\}$/m.exec(output)
          if (match) {
            clearInterval(timer)
            resolve(match[1])
          }
        }, 20)
        void exited.then((code) => {
          clearInterval(timer)
          reject(new Error(`monitors server exited with ${code}: ${output}`))
        })
      })
      const home = await fetch(`${line}/`)
      expect(home.status).toBe(200)
      expect(await home.text()).toContain('action="/dashboard/login"')
      const login = await fetch(`${line}/dashboard/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'apiKey=web-key-0123456789',
      })
      expect(login.status).toBe(303)
    } finally {
      child.kill('SIGTERM')
      await exited
    }
  })
})
