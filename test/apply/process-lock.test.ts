import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { acquireApplyLock, parseDuration } from '../../src/state/process-lock.js'

const lockModule = resolve(import.meta.dirname, '../../dist/src/state/process-lock.js')

/** Starts another process that takes the lock and holds it until killed; resolves once it holds it. */
function holdInChild(file: string) {
  const child = spawn(process.execPath, [
    '--input-type=module',
    '-e',
    `const { acquireApplyLock } = await import(${JSON.stringify(lockModule)});
     await acquireApplyLock(${JSON.stringify(file)}, { timeoutMs: 0, command: 'monitors apply (child)' });
     console.log('held'); setInterval(() => {}, 1000)`,
  ])
  const held = new Promise<void>((ok, fail) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('held') && ok())
    child.on('exit', (code) => fail(new Error(`child exited ${code}`)))
  })
  return { child, held }
}

describe('the apply lock', () => {
  it('records pid, host and start time, and is removed on release', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'apply-lock-')), '.monitors/apply.lock')
    const lock = await acquireApplyLock(file, { timeoutMs: 0, command: 'monitors apply' })
    const holder = JSON.parse(readFileSync(file, 'utf8'))
    expect(holder).toMatchObject({ pid: process.pid, host: hostname(), command: 'monitors apply' })
    expect(Date.parse(holder.startedAt)).toBeGreaterThan(Date.now() - 5000)
    lock.release()
    expect(existsSync(file)).toBe(false)
  })

  it('refuses a second apply at once by default, naming the holder', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'apply-lock-')), 'apply.lock')
    const { child, held } = holdInChild(file)
    await held
    try {
      await expect(acquireApplyLock(file, { timeoutMs: 0, command: 'monitors apply' })).rejects.toThrow(
        new RegExp(`another apply holds .*pid ${child.pid} on ${hostname()}.*--lock-timeout`),
      )
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('waits for the holder with a timeout, and gets the lock once it is gone', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'apply-lock-')), 'apply.lock')
    const { child, held } = holdInChild(file)
    await held
    setTimeout(() => child.kill('SIGKILL'), 300)
    const started = Date.now()
    const lock = await acquireApplyLock(file, { timeoutMs: 10_000, pollMs: 50, command: 'monitors apply' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
    expect(JSON.parse(readFileSync(file, 'utf8')).pid).toBe(process.pid)
    lock.release()
  })

  it('gives up after the timeout while the holder lives', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'apply-lock-')), 'apply.lock')
    const { child, held } = holdInChild(file)
    await held
    try {
      await expect(acquireApplyLock(file, { timeoutMs: 300, pollMs: 50, command: 'monitors apply' })).rejects.toThrow(/still holds/)
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('takes over a lock left by a killed process', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'apply-lock-')), 'apply.lock')
    const { child, held } = holdInChild(file)
    await held
    child.kill('SIGKILL')
    await new Promise((r) => child.on('exit', r))
    expect(existsSync(file)).toBe(true)
    const lock = await acquireApplyLock(file, { timeoutMs: 0, command: 'monitors apply' })
    expect(lock.tookOver?.pid).toBe(child.pid)
    lock.release()
  })

  it('takes over a lock file left empty by a crash mid-write, once it is old', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'apply-lock-')), 'apply.lock')
    writeFileSync(file, '')
    const { utimesSync } = await import('node:fs')
    utimesSync(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
    const lock = await acquireApplyLock(file, { timeoutMs: 0, command: 'monitors apply' })
    expect(JSON.parse(readFileSync(file, 'utf8')).pid).toBe(process.pid)
    lock.release()
  })

  it('reads --lock-timeout durations', () => {
    expect(parseDuration('0')).toBe(0)
    expect(parseDuration('30')).toBe(30_000)
    expect(parseDuration('500ms')).toBe(500)
    expect(parseDuration('5m')).toBe(300_000)
    expect(parseDuration('1.5h')).toBe(5_400_000)
    expect(parseDuration('soon')).toBeUndefined()
  })
})
