/**
 * A Playwright suite's binary files in a plan: the field diffs of two payloads (src/plan/diff.ts)
 * rendered (src/plan/render/view.ts). A binary file (`encoding: "base64"`) is shown by its size,
 * changed, added, removed or created, never as its base64; a text file keeps its line diff.
 */
import { describe, expect, it } from 'vitest'
import { fieldDiffs } from '../../src/plan/diff.js'
import { changeBody } from '../../src/plan/render/view.js'
import type { PlanChange } from '../../src/plan/types.js'

const png = (size: number) => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(size - 4, 7)])
const binary = (path: string, bytes: Buffer) => ({ path, content: bytes.toString('base64'), encoding: 'base64' })
const suite = (files: unknown[]) => ({ name: 'Suite', checkType: 'PLAYWRIGHT', files })
const config = { path: 'playwright.config.ts', content: 'export default {}\n' }

const rendered = (change: Pick<PlanChange, 'action' | 'fieldDiffs' | 'payload'>) =>
  changeBody({ kind: 'playwright-check', logicalId: 'suite', ...change } as PlanChange, {}).map((l) => `${l.sign} ${'  '.repeat(l.depth)}${l.text}`)

describe('binary files of a suite in a plan', () => {
  it('an update: a changed baseline by its new size, an added and a removed one by theirs; a text file as lines', () => {
    const remote = suite([config, binary('shots/a.png', png(100)), binary('old.bin', png(12)), { path: 'notes.txt', content: 'one\ntwo\n' }])
    const desired = suite([config, binary('shots/a.png', png(120)), binary('new.bin', png(9)), { path: 'notes.txt', content: 'one\nthree\n' }])
    const diffs = fieldDiffs(remote, desired)
    expect(diffs.find((d) => d.path === 'files[shots/a.png].content')?.binary).toEqual({ oldBytes: 100, newBytes: 120 })
    const lines = rendered({ action: 'update', fieldDiffs: diffs })
    expect(lines).toContain('~ files[shots/a.png].content: binary file changed (120 bytes)')
    expect(lines).toContain('+ files[new.bin]: binary file added (9 bytes)')
    expect(lines).toContain('- files[old.bin]: binary file removed (12 bytes)')
    expect(lines).toContain('~ files[notes.txt].content:')
    expect(lines).toContain('-   | two')
    expect(lines).toContain('+   | three')
    expect(lines.join('\n')).not.toContain(png(120).toString('base64').slice(0, 12))
  })

  it('a text file that becomes binary is a changed binary file; a create shows a binary file by its size', () => {
    const diffs = fieldDiffs(suite([config, { path: 'data', content: 'text\n' }]), suite([config, binary('data', png(30))]))
    const lines = rendered({ action: 'update', fieldDiffs: diffs })
    expect(lines).toContain('~ files[data].content: binary file changed (30 bytes)')
    expect(lines).toContain('+ files[data].encoding: "base64"')
    const created = rendered({ action: 'create', payload: suite([config, binary('shots/a.png', png(64))]) })
    expect(created).toContain('+     content: binary file (64 bytes)')
    expect(created).toContain('+     encoding: "base64"')
    expect(created.join('\n')).not.toContain(png(64).toString('base64').slice(0, 12))
  })
})
