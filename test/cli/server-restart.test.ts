/**
 * `monitors server` prints its generated key once. Restarted on the same database without
 * --api-key, it says how to get a key that works, instead of leaving the user with none.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repo } from '../helpers/cli.js'

/** Runs `monitors server` until it listens, then stops it; resolves to everything it printed. */
function serverRun(args: string[], env: Record<string, string | undefined> = {}): Promise<string> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MONITORING_')))
  const child = spawn(process.execPath, [join(repo, 'bin/monitors.cjs'), 'server', '--port', '0', '--quiet', ...args], {
    env: { ...base, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const collect = (chunk: Buffer) => {
    output += chunk.toString()
    // every start-up line is written before the process waits for a signal
    if (/listening on/.test(output)) setTimeout(() => child.kill('SIGTERM'), 300)
  }
  child.stdout.on('data', collect)
  child.stderr.on('data', collect)
  return new Promise((resolve) => child.on('exit', () => resolve(output)))
}

describe('monitors server restarted on an existing database', () => {
  it('says how to get a working key when the stored one cannot be shown again', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'monitors-restart-')), 'server.db')
    const first = await serverRun(['--db', db])
    expect(first).toMatch(/API key \(shown once/)
    expect(first).not.toContain('Lost it?')

    const second = await serverRun(['--db', db])
    expect(second).not.toMatch(/API key \(shown once/)
    const hint = second.split('\n').find((l) => l.includes('cannot be shown again'))
    expect(hint, second).toBeDefined()
    expect(hint).toContain('--api-key KEY:local')
    expect(hint).toContain('MONITORING_SERVER_API_KEYS')
    expect(hint).toContain(`delete ${db}`)
  })

  it('says nothing of the kind when a key is given', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'monitors-restart-')), 'server.db')
    await serverRun(['--db', db])
    const given = await serverRun(['--db', db, '--api-key', 'mine:local'])
    expect(given).toContain('listening on')
    expect(given).not.toContain('cannot be shown again')
  })
})
