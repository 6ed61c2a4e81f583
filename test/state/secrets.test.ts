/**
 * Secret EnvVar values: never in output, lock or plan file; the lock keeps a salted scrypt hash
 * so that an unchanged secret never shows as a change and a changed one always does.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { file, makeProject, useServer, writeFiles } from '../helpers/use-server.js'

const api = useServer('secrets')
const SECRET = 'tok-first-0d9a7c-secret'
const CHANGED = 'tok-second-77e1b2-secret'
const vars = (value: string) => file(`new EnvVar('API_TOKEN', { value: '${value}', secret: true })\nnew EnvVar('PLAIN', { value: 'visible' })\n`)

describe('secret environment variables', () => {
  const dir = makeProject({ 'vars.check.ts': vars(SECRET) })

  it('are stored in the lock as a salted scrypt hash, never the value', async () => {
    const apply = await api.cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    const entry = api.lock(dir).resources['variable:API_TOKEN']
    expect(entry.secretHash).toMatch(/^scrypt:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]{43}$/)
    expect(api.lockText(dir)).not.toContain(SECRET)
    expect(apply.output).not.toContain(SECRET)
    // the service itself reads it back empty
    expect((await api.client.get<{ value: string }>('/v1/variables/API_TOKEN')).body.value).toBe('')
  })

  it('plan an unchanged secret as no changes, three runs in a row', async () => {
    for (let run = 0; run < 3; run++) {
      const plan = await api.cli(dir, ['plan', '--detailed-exitcode'])
      expect(plan.code, plan.output).toBe(0)
      expect(plan.stdout).toMatch(/^No changes\./)
    }
  })

  it('show a changed secret as (secret changed) in every format and the plan file, without the value', async () => {
    writeFiles(dir, { 'vars.check.ts': vars(CHANGED) })
    const text = await api.cli(dir, ['plan', '--detailed-exitcode', '--out', 'plan.json'])
    expect(text.code, text.output).toBe(2)
    expect(text.stdout).toContain('~ variable API_TOKEN')
    expect(text.stdout).toContain('~ value: (secret changed)')
    const md = await api.cli(dir, ['plan', '--format', 'markdown'])
    expect(md.stdout).toContain('~ value: (secret changed)')
    const json = JSON.parse((await api.cli(dir, ['plan', '--format', 'json'])).stdout)
    expect(json.changes).toEqual([
      expect.objectContaining({ logicalId: 'API_TOKEN', action: 'update', fieldDiffs: [{ path: 'value', secret: true, new: '(secret changed)' }] }),
    ])
    const saved = readFileSync(join(dir, 'plan.json'), 'utf8')
    for (const output of [text.output, md.output, JSON.stringify(json), saved]) {
      expect(output).not.toContain(CHANGED)
      expect(output).not.toContain(SECRET)
    }
  })

  it('record the new secret on apply; then no changes again', async () => {
    const before = api.lock(dir).resources['variable:API_TOKEN'].secretHash
    const apply = await api.cli(dir, ['apply', '--yes'])
    expect(apply.code, apply.output).toBe(0)
    expect(apply.stdout).toMatch(/^~ variable API_TOKEN updated/m)
    const after = api.lock(dir).resources['variable:API_TOKEN'].secretHash
    expect(after).not.toBe(before)
    expect(api.lockText(dir)).not.toContain(CHANGED)
    expect((await api.cli(dir, ['plan', '--detailed-exitcode'])).code).toBe(0)
  })
})
