/**
 * `monitors server` prints its generated key once. Restarted on the same database without
 * --api-key, it says how to get a key that works, instead of leaving the user with none.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { monitorsProcess, repo } from '../helpers/cli.js'

/**
 * Runs `monitors server` until it listens, then stops it; resolves to everything it printed.
 * With `key`, it logs requests and asks GET /v1/checks with that key first.
 */
function serverRun(args: string[], key?: string): Promise<string> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MONITORING_')))
  const child = spawn(process.execPath, [join(repo, 'bin/monitors.cjs'), 'server', '--port', '0', ...(key ? [] : ['--quiet']), ...args], {
    env: { ...base, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  let asked = false
  const collect = (chunk: Buffer) => {
    output += chunk.toString()
    const url = /listening on (http:\/\/\S+)/.exec(output)?.[1]
    if (!url || asked) return
    asked = true
    // every start-up line is written before the process waits for a signal
    const ask = key ? fetch(`${url}/v1/checks`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.text()) : Promise.resolve()
    void ask.catch(() => undefined).then(() => setTimeout(() => child.kill('SIGTERM'), 300))
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
    expect(hint).toContain('MONITORING_SERVER_API_KEYS=KEY:local')
    expect(hint).toContain('--api-keys-file')
    expect(hint).toContain('MONITORING_SERVER_API_KEYS')
    expect(hint).toContain(`delete ${db}`)

    // the command it names makes a key that works, without a restart of any server
    const command = /monitors (keys create --db \S+ --account local --role admin)/.exec(hint as string)?.[1]
    expect(command, hint).toBeDefined()
    const created = await monitorsProcess(repo, (command as string).split(' '))
    expect(created.code, created.output).toBe(0)
    const key = created.stdout.trim().split('\n').pop() as string
    const third = await serverRun(['--db', db], key)
    expect(third).toMatch(/GET \/v1\/checks 200/)
  })

  it('says nothing of the kind when a key is given', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'monitors-restart-')), 'server.db')
    await serverRun(['--db', db])
    const given = await serverRun(['--db', db, '--api-key', 'mine:local'])
    expect(given).toContain('listening on')
    expect(given).not.toContain('cannot be shown again')
  })
})
