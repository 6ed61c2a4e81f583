/**
 * The entries of a few resources read from a lock's bytes without parsing the rest (a plan of
 * edited check files from the plan memo): only from a lock in the form monitors writes, and
 * exactly what reading the whole lock gives for them.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isWrittenForm, lockEntriesOf, lockKey, readLock, writeLock, type LockEntry, type LockFile } from '../../src/state/lock.js'

const entry = (logicalId: string, extra: Partial<LockEntry> = {}): LockEntry => ({
  kind: 'dns-check',
  logicalId,
  remoteId: `id-${logicalId}`,
  appliedHash: `sha256:${logicalId}`,
  name: `Check "${logicalId}" \\ ü`,
  ...extra,
})
const lockOf = (extra: Partial<LockFile> = {}): LockFile => ({
  version: 1,
  environment: 'staging',
  target: { id: 'https://api.example.com', baseUrl: 'https://api.example.com', accountId: 'acc' },
  resources: Object.fromEntries(
    ['a', 'b', 'c:d', 'e'].map((id) => [lockKey('dns-check', id), entry(id, id === 'b' ? { protect: true, retainOnDelete: true } : {})]),
  ),
  ...extra,
})
const written = (lock: LockFile) => {
  const file = join(mkdtempSync(join(tmpdir(), 'lock-entries-')), 'monitoring.lock.json')
  writeLock(file, lock)
  return { file, bytes: readFileSync(file) }
}

describe('lockEntriesOf', () => {
  it('reads the entries asked for, as the whole lock reads them, with its target and environment', () => {
    const { file, bytes } = written(lockOf())
    const whole = readLock(file)!
    expect(isWrittenForm(whole, bytes)).toBe(true)
    const keys = ['dns-check:b', 'dns-check:c:d', 'dns-check:gone']
    const some = lockEntriesOf(bytes, keys)!
    expect(some.resources).toEqual({ 'dns-check:b': whole.resources['dns-check:b'], 'dns-check:c:d': whole.resources['dns-check:c:d'] })
    expect(some.target).toEqual(whole.target)
    expect(some.environment).toBe('staging')
    expect(lockEntriesOf(written(lockOf({ environment: undefined })).bytes, keys)!.environment).toBeUndefined()
  })

  it('reads nothing from a lock with pending creates, or whose entry is not the one its key names', () => {
    const pending = written(lockOf({ pending: { 'dns-check:f': { kind: 'dns-check', logicalId: 'f', appliedHash: 'sha256:f', match: { name: 'F' } } } }))
    expect(lockEntriesOf(pending.bytes, ['dns-check:a'])).toBeUndefined()
    const { bytes } = written(lockOf())
    const swapped = Buffer.from(bytes.toString('utf8').replace('"logicalId": "a"', '"logicalId": "x"'))
    expect(lockEntriesOf(swapped, ['dns-check:a'])).toBeUndefined()
  })

  it('tells a lock written otherwise (other spacing, keys in another order) from the written form', () => {
    const { file, bytes } = written(lockOf())
    const lock = readLock(file)!
    writeFileSync(file, JSON.stringify(lock, null, 4))
    expect(isWrittenForm(readLock(file)!, readFileSync(file))).toBe(false)
    writeFileSync(file, `${JSON.stringify({ resources: lock.resources, version: 1, target: lock.target, environment: 'staging' }, null, 2)}\n`)
    expect(isWrittenForm(readLock(file)!, readFileSync(file))).toBe(false)
    expect(isWrittenForm(lock, bytes)).toBe(true)
  })
})
