import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { patchLiteral, transpileCounts, transpiled } from '../../src/project/transpile-patch.js'

// A check file edited in one value gets the last JavaScript with that value written anew: always
// exactly what sucrase makes of the new source, or nothing (then the file is transpiled whole).

const { transform } = createRequire(import.meta.url)('sucrase') as { transform: (code: string, options: object) => { code: string } }
const sucrase = (source: string) =>
  transform(source, { transforms: ['typescript', 'imports'], filePath: 'x.ts', disableESTransforms: true, production: true }).code

const checks = Array.from(
  { length: 40 },
  (_, i) => `new DnsCheck('dns-${i}', {
  name: 'DNS ${i}',
  request: { query: "host-${i}.example.com", assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }] },
  frequency: ${[1, 5, 10, 15, 30][i % 5]},
  tags: ['team-${i % 7}'],
})`,
).join('\n')
const project = `import { DnsCheck, CheckGroup } from 'monitors-as-code'
import type { DnsCheckProps } from 'monitors-as-code'

const region: 'eu' | 'us' = 'eu'
let n = 5 as 5
const base: Partial<DnsCheckProps> = { frequency: 10 }
// it's a comment with 'quotes' and a 0
/* 'DNS 3' in a block comment */
const title = \`Group \${region} {x}\`
export const group = new CheckGroup('g', { name: title, locations: [region === 'eu' ? 'eu-west-1' : 'us-east-1'] })
${checks}
new DnsCheck('typed', { name: 'Typed' as string, request: { query: 'typed.example.com' }, frequency: n as 5, ...base })
new DnsCheck('sum', { name: 'a' + region + 'b', request: { query: 'q' }, frequency: 1 + 0 })
`

/** The source with the first `from` replaced by `to`: patched when it can be, and then always exactly sucrase's JavaScript. */
function edit(from: string, to: string): 'patched' | 'refused' {
  expect(project).toContain(from)
  const after = project.replace(from, to)
  const out = patchLiteral(project, sucrase(project), after)
  if (out === undefined) return 'refused'
  expect(out).toBe(sucrase(after))
  return 'patched'
}

describe('patching the JavaScript of an edited check file', () => {
  it('writes a string or number literal anew, exactly as sucrase would', () => {
    expect(edit("name: 'DNS 3',", "name: 'DNS 3 changed',")).toBe('patched')
    expect(edit("name: 'DNS 30',", "name: 'DNS 3',")).toBe('patched')
    expect(edit("'dns-12'", "'dns-12b'")).toBe('patched')
    expect(edit('"host-7.example.com"', '"host-70.example.com"')).toBe('patched')
    expect(edit("target: 'NOERROR' }] },\n  frequency: 5,", "target: 'NXDOMAIN' }] },\n  frequency: 5,")).toBe('patched')
    expect(edit("name: 'DNS 4'", "name: ''")).toBe('patched')
    expect(edit("frequency: 15,\n  tags: ['team-3']", "frequency: 30,\n  tags: ['team-3']")).toBe('patched')
    expect(edit("frequency: 1,\n  tags: ['team-0']", "frequency: 10,\n  tags: ['team-0']")).toBe('patched')
  })

  it('refuses a literal whose line sucrase rewrote both before and after it (then it cannot tell the copy from what it wrote)', () => {
    expect(edit("name: 'Typed' as string", "name: 'Typed again' as string")).toBe('refused')
  })

  it('refuses what could change other code: code between two strings, types, imports, comments, templates, several places', () => {
    // `' + region + '` lies between two quotes, but is code (an identifier sucrase may rewrite)
    expect(edit("'a' + region + 'b'", "'a' + DnsCheck + 'b'")).toBe('refused')
    // literal types, which sucrase removes
    expect(edit("const region: 'eu' | 'us'", "const region: 'eu' | 'uk'")).toBe('refused')
    expect(edit('5 as 5', '5 as 6')).toBe('refused')
    // a module name
    expect(edit("from 'monitors-as-code'\nimport type", "from 'monitors-as-codes'\nimport type")).toBe('refused')
    // in comments and a template's text
    expect(edit("with 'quotes'", "with 'quote'")).toBe('refused')
    expect(edit("/* 'DNS 3' in", "/* 'DNS 4' in")).toBe('refused')
    expect(edit('Group ${region} {x}', 'Group ${region} {y}')).toBe('refused')
    // a number that is not a decimal number after the edit, or a word around the digits
    expect(edit('frequency: 1 + 0', 'frequency: 1 + 0x')).toBe('refused')
    expect(edit("'dns-1'", "'dns-1\\''")).toBe('refused')
    // two places at once
    expect(patchLiteral(project, sucrase(project), project.replace("'DNS 1'", "'DNS one'").replace("'DNS 2'", "'DNS two'"))).toBeUndefined()
    // a quote, or the end of a comment, in what changed
    expect(edit("name: 'DNS 5',", "name: 'DNS 5', x: 'y',")).toBe('refused')
  })

  it('keeps the last JavaScript per check file, and transpiles whole when it cannot patch', () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitors-transpile-'))
    const file = join(dir, 'x.check.ts')
    let whole = 0
    const run = (source: string) =>
      transpiled(dir, file, source, 'typescript,imports', () => {
        whole++
        return sucrase(source)
      })
    const before = transpileCounts()
    expect(run(project)).toBe(sucrase(project))
    expect(whole).toBe(1)
    const edited = project.replace("'DNS 3',", "'DNS 3 again',")
    expect(run(edited)).toBe(sucrase(edited))
    expect(whole).toBe(1)
    const twice = edited.replace("'DNS 1'", "'DNS one'").replace("'DNS 2'", "'DNS two'")
    expect(run(twice)).toBe(sucrase(twice))
    expect(whole).toBe(2)
    expect(transpileCounts().patched - before.patched).toBe(1)
    // a damaged entry is no entry
    const [entry] = readdirSync(dir).filter((n) => n.startsWith('transpiled.'))
    writeFileSync(join(dir, entry), 'monitors-transpiled-1 x y 1\nz')
    const third = twice.replace("'DNS 3 again'", "'DNS 3'")
    expect(run(third)).toBe(sucrase(third))
    expect(whole).toBe(3)
    // another file, or other transforms, never gets this file's JavaScript
    expect(transpiled(dir, join(dir, 'y.check.ts'), third.replace("'DNS 3'", "'DNS 4'"), 'typescript,imports', () => 'other')).toBe('other')
    expect(transpiled(dir, file, third.replace("'DNS 3'", "'DNS 4'"), 'imports', () => 'other')).toBe('other')
  })
})
