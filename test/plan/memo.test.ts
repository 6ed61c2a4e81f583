/** The plan memo's file (src/plan/memo.ts) read back is the plan written, as JSON reads it back: no server needed. */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { joinHashes, readPlanMemo, splitHashes, writePlanMemo, type PlanMemo } from '../../src/plan/memo.js'
import type { Plan, PlanChange } from '../../src/plan/types.js'
import { tempDir } from './helpers.js'

const target = { id: 'https://api.example.com', baseUrl: 'https://api.example.com', accountId: 'acc' }

/** No-ops of every shape a plan has (packed or not), among other changes, in one order. */
function plan(): Plan {
  const noop = (i: number, file = 'checks/a.check.ts'): PlanChange => ({
    kind: 'dns-check',
    logicalId: `n${i}`,
    action: 'noop',
    name: `N ${i}`,
    construct: 'DnsCheck',
    file,
    remoteId: `id-${i}`,
  })
  const changes: PlanChange[] = [
    noop(1),
    {
      kind: 'dns-check',
      logicalId: 'u',
      action: 'update',
      name: 'U',
      construct: 'DnsCheck',
      file: 'checks/a.check.ts',
      remoteId: 'id-u',
      fieldDiffs: [{ path: 'name', old: 'X', new: 'U' }],
      payload: { name: 'U' },
      desiredHash: 'sha256:x',
    },
    noop(2, 'checks/b.check.ts'),
    // no name (displayName gave none): the key is there, undefined, as planResource leaves it
    { kind: 'dns-check', logicalId: 'nameless', action: 'noop', name: undefined, construct: 'DnsCheck', file: 'checks/a.check.ts', remoteId: 'id-x' },
    // a no-op with more than the usual keys: kept as it is
    { ...noop(3), dependsOn: ['check-group:g'] },
    { kind: 'check-group', logicalId: 'g', action: 'noop', name: 'G', construct: 'CheckGroup', file: 'checks/b.check.ts', remoteId: '7' },
    // the same keys in another order: kept as it is
    { remoteId: 'id-4', kind: 'dns-check', logicalId: 'n4', action: 'noop', name: 'N 4', construct: 'DnsCheck', file: 'checks/a.check.ts' },
    noop(5),
    { kind: 'dns-check', logicalId: 'gone', action: 'delete', remoteId: 'id-g', name: 'Gone' },
  ]
  return {
    version: 1,
    target,
    changes,
    unmanaged: { 'dns-check': 2 },
    summary: { create: 0, update: 1, delete: 1, move: 0, forget: 0, noop: 7, drift: 0, duplicate: 0 },
  }
}

describe('the plan memo file', () => {
  it('reads back the plan as written (as JSON reads it back, keys in their order), and the construct hashes', () => {
    const dir = tempDir()
    const file = join(dir, 'plan.test.cache')
    const memo: PlanMemo = {
      pages: [],
      plan: plan(),
      printed: { warnings: [] },
      files: { 'checks/a.check.ts': 'h' },
      constructs: { 'checks/a.check.ts': joinHashes(['0123456789abcdef', 'fedcba9876543210']) },
    }
    writePlanMemo(file, 'key', memo)
    const read = readPlanMemo(file, 'key')
    expect('memo' in read && read.memo).toBeTruthy()
    const back = (read as { memo: PlanMemo }).memo
    const json = JSON.parse(JSON.stringify(memo)) as PlanMemo
    expect(back).toEqual(json)
    expect(JSON.stringify(back)).toBe(JSON.stringify(json))
    expect(splitHashes(back.constructs['checks/a.check.ts'])).toEqual(['0123456789abcdef', 'fedcba9876543210'])
    // the plain no-ops take less room than their objects would
    expect(readFileSync(file, 'utf8')).not.toMatch(/"logicalId":"n1"/)
    expect(readPlanMemo(file, 'other')).toEqual({ miss: 'the build, config, lock, target or options changed' })
    // a change of the data is seen as damage
    writeFileSync(file, readFileSync(file, 'latin1').replace('"N 5"', '"N 6"'), 'latin1')
    expect(readPlanMemo(file, 'key')).toEqual({ miss: 'the file was damaged: ignored' })
  })
})
