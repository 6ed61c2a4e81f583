/**
 * --format text|markdown|json and --detailed-exitcode for plan, apply and validate, against the
 * real local server: stdout carries only the document, human text goes to stderr.
 */
import { describe, expect, it } from 'vitest'
import { dnsCheck, file, makeProject, STACK_LINE, useServer, writeFiles } from '../helpers/use-server.js'

const api = useServer('formats')

describe('plan output formats', () => {
  const dir = makeProject({
    'shop.check.ts': file(
      dnsCheck('shop-dns', { frequency: 10, tags: ['a|b', 'x`y'] }),
      `new EnvVar('SHOP_TOKEN', { value: 'hunter2-format-secret', secret: true })\n`,
    ),
  })

  it('markdown with --detailed-exitcode writes only markdown to stdout and exits 2 on changes', async () => {
    const result = await api.cli(dir, ['plan', '--format', 'markdown', '--detailed-exitcode'])
    expect(result.code, result.output).toBe(2)
    expect(result.stdout.startsWith('### monitors plan\n')).toBe(true)
    expect(result.stdout).toContain('| Create | Update | Delete | Move | Drift |')
    expect(result.stdout).toContain('| 2 | 0 | 0 | 0 | 0 |')
    expect(result.stdout).toContain('<summary><code>+ dns-check shop-dns</code> create DNS shop-dns</summary>')
    // pipes and backticks sit in a fenced diff block as they are
    expect(result.stdout).toContain('```diff\n+ name: "DNS shop-dns"\n')
    expect(result.stdout).toContain('+ tags: ["a|b", "x`y"]')
    expect(result.stdout.match(/<details>/g)?.length).toBe(result.stdout.match(/<\/details>/g)?.length)
    expect(result.stdout).not.toContain('Plan:')
    expect(result.output).not.toContain('hunter2-format-secret')
    expect(result.output).not.toMatch(STACK_LINE)
  })

  it('json has formatVersion and every change with kind, logical id, action and field diffs', async () => {
    const result = await api.cli(dir, ['plan', '--format', 'json'])
    expect(result.code, result.output).toBe(0)
    const doc = JSON.parse(result.stdout)
    expect(doc.formatVersion).toBe(1)
    expect(doc.hasChanges).toBe(true)
    expect(doc.summary).toMatchObject({ create: 2, update: 0, delete: 0, move: 0, drift: 0 })
    const check = doc.changes.find((c: { logicalId: string }) => c.logicalId === 'shop-dns')
    expect(check).toMatchObject({ kind: 'dns-check', action: 'create', construct: 'DnsCheck', file: 'shop.check.ts' })
    expect(check.fieldDiffs).toContainEqual({ path: 'frequency', new: 10 })
    const token = doc.changes.find((c: { logicalId: string }) => c.logicalId === 'SHOP_TOKEN')
    expect(token.fieldDiffs).toContainEqual({ path: 'value', new: '(secret)' })
    expect(result.stdout).not.toContain('hunter2-format-secret')
  })

  it('apply --format json reports each operation as data; the log goes to stderr', async () => {
    const result = await api.cli(dir, ['apply', '--yes', '--format', 'json'])
    expect(result.code, result.output).toBe(0)
    const doc = JSON.parse(result.stdout)
    expect(doc).toMatchObject({ formatVersion: 1, ok: true })
    expect(doc.operations.map((o: { logicalId: string; result: string; ok: boolean }) => [o.logicalId, o.result, o.ok]).sort()).toEqual([
      ['SHOP_TOKEN', 'created', true],
      ['shop-dns', 'created', true],
    ])
    expect(doc.operations.find((o: { logicalId: string }) => o.logicalId === 'shop-dns').remoteId).toBe(api.lock(dir).resources['dns-check:shop-dns'].remoteId)
    expect(result.stderr).toContain('Apply complete: 2 created')
    expect(result.output).not.toContain('hunter2-format-secret')
  })

  it('exits 0 with --detailed-exitcode when nothing changes, in every format', async () => {
    for (const format of ['text', 'markdown', 'json']) {
      const result = await api.cli(dir, ['plan', '--format', format, '--detailed-exitcode'])
      expect(result.code, result.output).toBe(0)
    }
    const md = await api.cli(dir, ['plan', '--format', 'markdown'])
    expect(md.stdout).toContain('**No changes.**')
    const json = JSON.parse((await api.cli(dir, ['plan', '--format', 'json'])).stdout)
    expect(json).toMatchObject({ hasChanges: false, changes: [] })
  })

  it('destroy --format json reports the deletes as data, and a document even with nothing to destroy', async () => {
    const first = await api.cli(dir, ['destroy', '--yes', '--format', 'json'])
    expect(first.code, first.output).toBe(0)
    const doc = JSON.parse(first.stdout)
    expect(doc.operations.map((o: { logicalId: string; result: string }) => [o.logicalId, o.result]).sort()).toEqual([
      ['SHOP_TOKEN', 'deleted'],
      ['shop-dns', 'deleted'],
    ])
    const again = await api.cli(dir, ['destroy', '--format', 'json'])
    expect(again.code, again.output).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ formatVersion: 1, ok: true, operations: [], plan: { hasChanges: false } })
  })

  it('exits 1 on an error with --detailed-exitcode, and json stdout holds only the problems document', async () => {
    writeFiles(dir, { 'broken.check.ts': file(`new DnsCheck('bad', { name: 'Bad', request: { query: 'x.example.com' }, frequency: 7 })\n`) })
    const result = await api.cli(dir, ['plan', '--format', 'json', '--detailed-exitcode'])
    expect(result.code).toBe(1)
    const problems = JSON.parse(result.stdout)
    expect(problems).toMatchObject({ formatVersion: 1, ok: false })
    expect(problems.problems).toContainEqual(expect.objectContaining({ file: 'broken.check.ts', field: 'frequency' }))
    expect(result.stderr).toContain('broken.check.ts')

    const validate = await api.cli(dir, ['validate', '--format', 'json'])
    expect(validate.code).toBe(1)
    const doc = JSON.parse(validate.stdout)
    expect(doc).toMatchObject({ formatVersion: 1, valid: false })
    expect(doc.problems).toContainEqual(expect.objectContaining({ file: 'broken.check.ts', construct: 'DnsCheck', logicalId: 'bad', field: 'frequency' }))
  })
})

describe('the markdown of a large plan', () => {
  it('stays under 60,000 characters for 500 changes, whole sections only, and counts the rest', async () => {
    const checks = Array.from({ length: 500 }, (_, i) =>
      dnsCheck(`check-${String(i).padStart(3, '0')}`, { tags: ['bulk', `team-${i % 7}`], locations: ['us-east-1', 'eu-west-1'] }),
    )
    const dir = makeProject({ 'bulk.check.ts': file(...checks) })
    const result = await api.cli(dir, ['plan', '--format', 'markdown', '--detailed-exitcode'])
    expect(result.code, result.stderr).toBe(2)
    const md = result.stdout
    expect(md.length).toBeLessThan(60_000)
    expect(md).toContain('| 500 | 0 | 0 | 0 | 0 |')
    const shown = md.match(/<details>/g)!.length
    expect(shown).toBeGreaterThan(10)
    expect(md.match(/<\/details>/g)!.length).toBe(shown)
    expect(md).toContain(`…and ${500 - shown} more changes (not shown: comment size limit); run \`monitors plan\` locally for the full list.`)
    // every table row that was started is complete
    for (const line of md.split('\n').filter((l) => l.startsWith('|'))) expect(line.endsWith('|')).toBe(true)
    console.log(`markdown of a 500-change plan: ${md.length} characters, ${shown} sections shown`)
  })
})
